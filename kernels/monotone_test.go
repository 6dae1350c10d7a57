package kernels

import "testing"

// More work is never cheaper: along every shape dimension that adds work,
// latency does not decrease, for the default, the calibrated (with
// interpolation) and the carried-over Coster. Measured lines are made
// non-decreasing at their points (isotonic fit); between lines and points
// the residual interpolation may dip by a hair where the roofline is flat,
// so the calibrated Coster is allowed 0.5%, below the run-to-run noise of
// the measurements themselves.
func TestMonotoneInWork(t *testing.T) {
	g := mustGPU(t, "h200")
	costers := map[string]*Coster{
		"default":    newCoster(g, nil, SourceRoofline),
		"calibrated": newCoster(g, calibrate(g, syntheticOps(t, true), syntheticCollectives(t)), SourceRoofline),
		"gb300":      NewCoster(mustGPU(t, "gb300")),
	}
	for name, c := range costers {
		tol := 1e-12
		if name == "calibrated" {
			tol = 5e-3
		}
		check := func(what string, f func(x int) Cost, xs []int) {
			prev := 0.0
			for _, x := range xs {
				s := f(x).Seconds
				if s < prev*(1-tol) {
					t.Errorf("%s: %s at %d costs %.3f us, less than the smaller shape's %.3f us", name, what, x, s*1e6, prev*1e6)
				}
				prev = s
			}
		}
		steps := []int{1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192, 256, 384, 512, 1024, 2048, 4096, 8192}
		for _, dt := range []DType{BF16, FP8, NVFP4} {
			check("gemm M "+string(dt), func(m int) Cost { return must(t)(c.GEMM(dt, m, 4096, 4096)) }, steps)
			for _, k := range []MoEKernel{MoEFused, MoETorchGrouped} {
				check("moe tokens "+string(dt)+" "+string(k), func(n int) Cost {
					return must(t)(c.MoE(MoEShape{Tokens: n, Experts: 128, TopK: 8, Hidden: 2048, Inter: 768, DType: dt, Kernel: k}))
				}, steps)
			}
		}
		check("attention kv_len", func(n int) Cost {
			return must(t)(c.Attention(AttentionShape{Batch: 8, QLen: 4, KVLen: n * 64, Heads: 32, KVHeads: 4, HeadDim: 128}))
		}, steps)
		check("attention q_len", func(n int) Cost {
			return must(t)(c.Attention(AttentionShape{Batch: 8, QLen: n, KVLen: 8192 + n, Heads: 32, KVHeads: 4, HeadDim: 128}))
		}, steps[:12])
		check("gdn batch", func(n int) Cost {
			return must(t)(c.GatedDeltaNet(GDNShape{Batch: n, QLen: 4, KHeads: 16, VHeads: 32, KDim: 128, VDim: 128, KeepIntermediate: true}))
		}, steps)
		check("rmsnorm tokens", func(n int) Cost { return must(t)(c.Norm(n, 4096)) }, steps)
		check("lm_head tokens", func(n int) Cost { return must(t)(c.LMHeadSample(n, 4096, 151936, BF16)) }, steps)
		check("allreduce bytes", func(n int) Cost { return c.Collective(AllReduce, float64(n)*4096, 8) }, steps)
		check("allreduce gpus", func(n int) Cost { return c.Collective(AllReduce, 1<<20, n) }, []int{2, 3, 4, 8, 16, 32, 72, 144})
		check("alltoall gpus", func(n int) Cost { return c.Collective(AllToAll, 1<<24, n) }, []int{2, 4, 8, 16, 64, 72, 144})
	}
}

// Carried-over costs scale by the datasheet: a memory-bound op on a GPU
// with r times the bandwidth and the same efficiencies takes 1/r of the
// time above the fixed per-kernel cost.
func TestCarryOverRatios(t *testing.T) {
	h := newCoster(mustGPU(t, "h200"), calibrate(mustGPU(t, "h200"), syntheticOps(t, false), nil), SourceRoofline)
	b := newCoster(mustGPU(t, "b200"), &calibration{eff: h.eff}, SourceCarryOver)
	fixed := h.eff[classCopy][slotBF16].Fixed
	hc, bc := must(t)(h.Elementwise(4e9)), must(t)(b.Elementwise(4e9))
	if bc.Source != SourceCarryOver {
		t.Errorf("source %q, want %q", bc.Source, SourceCarryOver)
	}
	// Untabled Coster for the H200 to compare like with like.
	hp := *h
	hp.tables = nil
	hc = must(t)(hp.Elementwise(4e9))
	if got, want := (hc.Seconds-fixed)/(bc.Seconds-fixed), 8.0/4.8; !near(got, want, 1e-9) {
		t.Errorf("copy time ratio h200/b200 = %.4f, want the bandwidth ratio %.4f", got, want)
	}
	gf := h.eff[classGEMM][slotBF16].Fixed
	hg, bg := must(t)(hp.GEMM(BF16, 8192, 8192, 8192)), must(t)(b.GEMM(BF16, 8192, 8192, 8192))
	if got := (hg.Seconds - gf) / (bg.Seconds - gf); got < 2.0 || got > 2.2751 {
		t.Errorf("compute-bound GEMM time ratio h200/b200 = %.3f, want about the peak ratio 2250/989 = 2.275", got)
	}
	if bg.Source != SourceCarryOver || b.Collective(AllReduce, 1<<20, 8).Source != SourceCarryOver {
		t.Error("carried-over costs must say so in Source")
	}
}
