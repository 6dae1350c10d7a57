package kernels

import (
	"errors"
	"math"
	"strings"
	"testing"
)

// idealCoster prices the plain datasheet roofline: every efficiency 1, no
// fixed time, a hard max, no tables.
func idealCoster(t testing.TB, gpu string) *Coster {
	t.Helper()
	g, err := lookupGPU(gpu)
	if err != nil {
		t.Fatal(err)
	}
	c := newCoster(g, nil, SourceRoofline)
	for i := range c.eff {
		for j := range c.eff[i] {
			c.eff[i][j] = Efficiency{Mem: 1, Compute: 1, Fixed: 0, P: math.Inf(1)}
		}
	}
	return c
}

func near(a, b, rel float64) bool { return math.Abs(a-b) <= rel*math.Max(math.Abs(a), math.Abs(b)) }

func TestGEMMRooflineByHand(t *testing.T) {
	const h200BW, h200BF16 = 4.8e12, 989e12
	const b200FP4 = 9000e12
	tests := []struct {
		name             string
		gpu              string
		dt               DType
		m, n, k          int
		bytes, flops, us float64
		bound            string
	}{
		// Weights 4096*4096*2, x 1*4096*2, y 1*4096*2.
		{"decode bf16", "h200", BF16, 1, 4096, 4096, 33570816, 33554432, 33570816 / h200BW * 1e6, "memory"},
		// Weights 8192*8192*2 + x 8192*8192*2 + y 8192*8192*2; 2*8192^3 FLOPs.
		{"prefill bf16", "h200", BF16, 8192, 8192, 8192, 3 * 134217728, 1099511627776, 1099511627776 / h200BF16 * 1e6, "compute"},
		// FP8 weights and activations (1 byte), BF16 output; per-tensor
		// scales (the measured op): the whole traffic at full bandwidth.
		{"fp8 per-tensor", "h200", FP8, 16, 1024, 2048, 2048*1024 + 16*2048 + 16*1024*2, 2 * 16 * 1024 * 2048, (2048*1024 + 16*2048 + 16*1024*2) / h200BW * 1e6, "memory"},
		// Block-scaled FP8 on Hopper: the 2 MiB of weights alone at 52% of
		// 4.8 TB/s (the rate measured for cuBLASLt's block-scaled GEMM,
		// data/h200/fp8_blockscaled.csv) is slower than the full traffic at 100%.
		{"fp8 block-scaled", "h200", FP8, 16, 1024, 2048, 2048*1024 + 16*2048 + 16*1024*2, 2 * 16 * 1024 * 2048, 2048 * 1024 / (h200BW * 0.52) * 1e6, "memory"},
		// Blackwell scales in the MMA: no floor.
		{"fp8 block-scaled on b200", "b200", FP8, 16, 1024, 2048, 2048*1024 + 16*2048 + 16*1024*2, 2 * 16 * 1024 * 2048, (2048*1024 + 16*2048 + 16*1024*2) / 8e12 * 1e6, "memory"},
		// NVFP4 on Hopper: 0.5625 B/weight, BF16 activations, BF16 rate.
		{"nvfp4 on hopper", "h200", NVFP4, 4096, 4096, 4096, 4096*4096*0.5625 + 4096*4096*2 + 4096*4096*2, 2 * 4096 * 4096 * 4096.0, 2 * 4096 * 4096 * 4096.0 / h200BF16 * 1e6, "compute"},
		// NVFP4 on Blackwell: W4A4 at the FP4 rate.
		{"nvfp4 on b200", "b200", NVFP4, 8192, 8192, 8192, 8192*8192*0.5625*2 + 8192*8192*2, 1099511627776, 1099511627776 / b200FP4 * 1e6, "compute"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ideal := idealCoster(t, tc.gpu)
			c := must(t)(ideal.GEMM(tc.dt, tc.m, tc.n, tc.k))
			if strings.HasSuffix(tc.name, "per-tensor") {
				c = ideal.tensorScaledGEMM(tc.dt, tc.m, tc.n, tc.k)
			}
			if !near(c.Bytes, tc.bytes, 1e-12) || !near(c.FLOPs, tc.flops, 1e-12) {
				t.Errorf("bytes, flops = %.0f, %.0f; want %.0f, %.0f", c.Bytes, c.FLOPs, tc.bytes, tc.flops)
			}
			if !near(c.Seconds*1e6, tc.us, 1e-9) {
				t.Errorf("latency = %.4f us, want %.4f", c.Seconds*1e6, tc.us)
			}
			if c.Bound != tc.bound {
				t.Errorf("bound = %s, want %s", c.Bound, tc.bound)
			}
		})
	}
}

func TestEfficiencyTime(t *testing.T) {
	e := Efficiency{Mem: 0.5, Compute: 0.25, Fixed: 2e-6, P: 2}
	// tm = 4e-6/0.5 = 8e-6, tc = 1.5e-6/0.25 = 6e-6: sqrt(8^2+6^2) = 10 us, plus 2 us.
	got, bound := e.time(4e-6, 1.5e-6)
	if !near(got, 12e-6, 1e-12) || bound != "memory" {
		t.Errorf("time = %g %s, want 12e-6 memory", got, bound)
	}
	got, bound = Efficiency{Mem: 1, Compute: 1, Fixed: 5e-6, P: 4}.time(1e-6, 0)
	if !near(got, 6e-6, 1e-12) || bound != "latency" {
		t.Errorf("time = %g %s, want 6e-6 latency", got, bound)
	}
}

func TestMoEByHand(t *testing.T) {
	c := idealCoster(t, "h200")
	// One token, top-2 of 8 experts: 2 experts touched, each 3*16*32 BF16
	// weights. Rows = 2; per row x 16*2 + gate_up out 64*2 + act in 64*2 +
	// act out 32*2 + down in 32*2 + down out 16*2 = 448 bytes; gather and
	// combine 16*2*2 = 64 bytes.
	s := MoEShape{Tokens: 1, Experts: 8, TopK: 2, Hidden: 16, Inter: 32, DType: BF16}
	got := must(t)(c.MoE(s))
	wantBytes := 2*3*16*32*2.0 + 2*448 + 64
	if !near(got.Bytes, wantBytes, 1e-12) {
		t.Errorf("bytes = %v, want %v", got.Bytes, wantBytes)
	}
	if want := 2 * 2 * 3 * 16 * 32.0; got.FLOPs != want {
		t.Errorf("useful flops = %v, want %v", got.FLOPs, want)
	}
	// Rows are padded to a 16-row tile per touched expert: 2*16 rows.
	if want := math.Max(wantBytes/4.8e12, 2*32*3*16*32/989e12); !near(got.Seconds, want, 1e-9) {
		t.Errorf("latency = %v, want %v", got.Seconds, want)
	}
	// Decode-sized batch on a real layer: only touched experts' weights.
	// A prefill-sized batch on the torch path: 8192*2 rows plus half a
	// 64-row tile for each of the 8 experts, compute-bound (1.7 ms of
	// compute against 0.4 ms of traffic).
	prefill := MoEShape{Tokens: 8192, Experts: 8, TopK: 2, Hidden: 4096, Inter: 4096, DType: BF16, Kernel: MoETorchGrouped}
	if got, want := must(t)(c.MoE(prefill)).Seconds, 2*(8192*2+8*32.0)*3*4096*4096/989e12; !near(got, want, 1e-9) {
		t.Errorf("prefill latency = %v, want %v", got, want)
	}
	big := MoEShape{Tokens: 4, Experts: 256, TopK: 8, Hidden: 7168, Inter: 2048, DType: FP8}
	d := 256 * (1 - math.Pow(1-8.0/256, 4))
	if got := must(t)(c.MoE(big)); got.Bytes < d*3*7168*2048 || got.Bytes > d*3*7168*2048*1.01 {
		t.Errorf("bytes = %v, want about %v (weights of %.2f experts)", got.Bytes, d*3*7168*2048, d)
	}
	// Block-scaled FP8 experts on Hopper stream their weights at 52% of
	// HBM bandwidth; on the ideal roofline that floor is the whole time.
	if got, want := must(t)(c.MoE(big)).Seconds, d*3*7168*2048/(4.8e12*0.52); !near(got, want, 1e-9) {
		t.Errorf("block-scaled FP8 latency = %v, want %v", got, want)
	}
}

func TestAttentionByHand(t *testing.T) {
	c := idealCoster(t, "h200")
	tests := []struct {
		name         string
		s            AttentionShape
		bytes, flops float64
	}{
		// KV 2*8*128 values per token, 4096 tokens, 2 sequences, BF16;
		// Q and O 2*1*64*128*2 each.
		{"decode gqa", AttentionShape{Batch: 2, QLen: 1, KVLen: 4096, Heads: 64, KVHeads: 8, HeadDim: 128},
			2*4096*2*8*128*2 + 2*64*256*2, 2 * 2 * 64 * 1 * 4096 * 256},
		// Verify with 4 queries reads KV once; FP8 KV halves it.
		{"verify fp8 kv", AttentionShape{Batch: 2, QLen: 4, KVLen: 4096, Heads: 64, KVHeads: 8, HeadDim: 128, KVDType: FP8},
			2*4096*2*8*128 + 2*4*64*256*2, 2 * 2 * 64 * 4 * 4096 * 256},
		// MLA: one 576-wide latent per token, value width 512.
		{"decode mla", AttentionShape{Batch: 1, QLen: 1, KVLen: 1000, Heads: 16, KVHeads: 1, HeadDim: 576, MLA: true},
			1000*576*2 + 16*(576+512)*2, 2 * 16 * 1000 * (576 + 512)},
		// Causal prefill of 1000 new tokens after 24 cached: each query sees
		// 24 + (i+1) keys, mean 24 + 500.5.
		{"prefill", AttentionShape{Batch: 1, QLen: 1000, KVLen: 1024, Heads: 8, KVHeads: 8, HeadDim: 64, Prefill: true},
			1024*2*8*64*2 + 1000*8*128*2, 2 * 8 * 1000 * 524.5 * 128},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := must(t)(c.Attention(tc.s))
			if !near(got.Bytes, tc.bytes, 1e-12) || !near(got.FLOPs, tc.flops, 1e-12) {
				t.Errorf("bytes, flops = %v, %v; want %v, %v", got.Bytes, got.FLOPs, tc.bytes, tc.flops)
			}
			// Decode compute is padded to 64 query rows per KV head: the GQA
			// group of 8 (x4 queries) and MLA's 16 heads fill 8/64, 32/64 and
			// 16/64 of the tile; prefill is not padded.
			pad := map[string]float64{"decode gqa": 8, "verify fp8 kv": 2, "decode mla": 4, "prefill": 1}[tc.name]
			if want := math.Max(tc.bytes/4.8e12, pad*tc.flops/989e12); !near(got.Seconds, want, 1e-9) {
				t.Errorf("latency = %v, want %v", got.Seconds, want)
			}
		})
	}
}

func TestGatedDeltaNetByHand(t *testing.T) {
	c := idealCoster(t, "h200")
	base := GDNShape{Batch: 4, QLen: 3, KHeads: 16, VHeads: 32, KDim: 128, VDim: 128}
	state := 4 * 32 * 128 * 128 * 4.0 // FP32 state per batch
	io := 4 * 3 * (2*16*128 + 2*32*128 + 2*32) * 2.0
	got := must(t)(c.GatedDeltaNet(base))
	if want := 2*state + io; !near(got.Bytes, want, 1e-12) {
		t.Errorf("no rollback: bytes = %v, want %v", got.Bytes, want)
	}
	keep := base
	keep.KeepIntermediate = true
	got = must(t)(c.GatedDeltaNet(keep))
	if want := 4*state + io; !near(got.Bytes, want, 1e-12) {
		t.Errorf("rollback: bytes = %v, want %v (one read, three writes)", got.Bytes, want)
	}
}

func TestSimpleOpsByHand(t *testing.T) {
	c := idealCoster(t, "h200")
	if got, want := must(t)(c.Norm(10, 100)).Bytes, 10*100*4+200.0; got != want {
		t.Errorf("norm bytes = %v, want %v", got, want)
	}
	if got, want := must(t)(c.Elementwise(4.8e9)).Seconds, 1e-3; !near(got, want, 1e-12) {
		t.Errorf("elementwise 4.8 GB = %v s, want %v", got, want)
	}
	lm := must(t)(c.LMHeadSample(2, 1024, 1000, BF16))
	if want := 1000*1024*2 + 2*1024*2 + 2*1000*2 + 2*1000*4.0; lm.Bytes != want {
		t.Errorf("lm_head bytes = %v, want %v", lm.Bytes, want)
	}
	if got := c.Launch(10, false).Seconds; !near(got, 60e-6, 1e-12) {
		t.Errorf("eager launch of 10 = %v, want 60us", got)
	}
	if c.Launch(100, true).Seconds >= c.Launch(100, false).Seconds {
		t.Error("a CUDA graph should launch 100 kernels faster than eager launches")
	}
}

// TestBadShapesAreErrors replaces TestZeroShapesCostNothing, which pinned
// a defect: a shape no kernel runs (a zero or negative dimension, query
// heads the KV heads do not divide, topk above experts) priced as zero
// seconds. Such a shape is now a ShapeError, from its Validate, from
// PredictRow and from every op method of the Coster; good shapes still
// validate.
func TestBadShapesAreErrors(t *testing.T) {
	c := NewCoster(mustGPU(t, "h200"))
	for name, err := range map[string]error{
		"gemm m=0":            ValidateGEMM(0, 10, 10),
		"gemm k<0":            ValidateGEMM(1, 10, -1),
		"moe tokens=0":        MoEShape{Tokens: 0, Experts: 8, TopK: 2, Hidden: 8, Inter: 8}.Validate(),
		"moe topk>experts":    MoEShape{Tokens: 1, Experts: 2, TopK: 3, Hidden: 8, Inter: 8}.Validate(),
		"attention empty":     AttentionShape{Batch: 0}.Validate(),
		"attention 10 over 4": AttentionShape{Batch: 1, QLen: 1, KVLen: 8, Heads: 10, KVHeads: 4, HeadDim: 64}.Validate(),
		"gdn empty":           GDNShape{}.Validate(),
		"gdn 6 over 4":        GDNShape{Batch: 1, QLen: 1, KHeads: 4, VHeads: 6, KDim: 128, VDim: 128}.Validate(),
		"norm tokens=0":       ValidateNorm(0, 1),
		"lm_head vocab=0":     ValidateLMHead(1, 8, 0),
	} {
		var se *ShapeError
		if !errors.As(err, &se) {
			t.Errorf("%s: err = %v, want a ShapeError", name, err)
		}
	}
	for _, r := range []OpRow{
		{Op: "gemm", M: 0, N: 10, K: 10},
		{Op: "moe", Tokens: 1, Experts: 2, TopK: 3, Hidden: 8, Inter: 8},
		{Op: "attention", Batch: 1, QLen: 1, KVLen: 8, Heads: 10, KVHeads: 4, HeadDim: 64},
		{Op: "gdn", Batch: 1, QLen: 1, Heads: 6, KVHeads: 4, HeadDim: 128},
		{Op: "rmsnorm", Tokens: 0, Hidden: 1},
		{Op: "copy", N: -1},
	} {
		if cost, err := c.PredictRow(r); err == nil {
			t.Errorf("PredictRow(%+v) = %v s, want an error", r, cost.Seconds)
		}
		if _, _, ok := rowGrid(r); ok {
			t.Errorf("rowGrid(%+v) placed a bad row", r)
		}
	}
	for name, err := range map[string]error{
		"gemm":      ValidateGEMM(1, 1, 1),
		"moe":       MoEShape{Tokens: 1, Experts: 2, TopK: 2, Hidden: 8, Inter: 8}.Validate(),
		"attention": AttentionShape{Batch: 1, QLen: 1, KVLen: 8, Heads: 8, HeadDim: 64}.Validate(),
		"gdn":       GDNShape{Batch: 1, QLen: 1, KHeads: 4, VHeads: 8, KDim: 128, VDim: 128}.Validate(),
	} {
		if err != nil {
			t.Errorf("%s: good shape rejected: %v", name, err)
		}
	}
	// The Coster's op methods refuse the same shapes, with no cost.
	opErr := func(_ Cost, err error) error { return err }
	for name, err := range map[string]error{
		"GEMM m=0":               opErr(c.GEMM(FP8, 0, 10, 10)),
		"MoE topk>experts":       opErr(c.MoE(MoEShape{Tokens: 1, Experts: 2, TopK: 3, Hidden: 8, Inter: 8})),
		"Attention 10 over 4":    opErr(c.Attention(AttentionShape{Batch: 1, QLen: 1, KVLen: 8, Heads: 10, KVHeads: 4, HeadDim: 64})),
		"GatedDeltaNet empty":    opErr(c.GatedDeltaNet(GDNShape{})),
		"GatedDeltaNetReference": opErr(c.GatedDeltaNetReference(GDNShape{Batch: 1, QLen: 1, KHeads: 4, VHeads: 6, KDim: 128, VDim: 128})),
		"Norm hidden<0":          opErr(c.Norm(1, -1)),
		"LMHeadSample tokens=0":  opErr(c.LMHeadSample(0, 8, 8, BF16)),
		"Elementwise bytes=0":    opErr(c.Elementwise(0)),
		"Elementwise bytes=NaN":  opErr(c.Elementwise(math.NaN())),
		"Elementwise bytes=+Inf": opErr(c.Elementwise(math.Inf(1))),
		"GDN decode of no batch": func() error { _, err := c.GDN(GDNShape{QLen: 1, VHeads: 8, KDim: 8, VDim: 8}, GDNDecode); return err }(),
	} {
		var se *ShapeError
		if !errors.As(err, &se) {
			t.Errorf("%s: err = %v, want a ShapeError", name, err)
		}
	}
	// The collective's single-GPU case is no bad shape: nothing to reduce.
	if s := c.Collective(AllReduce, 1024, 1).Seconds; s != 0 {
		t.Errorf("allreduce over one GPU costs %v s", s)
	}
}

// must fails tb on a shape error and returns the cost.
func must(tb testing.TB) func(Cost, error) Cost {
	return func(c Cost, err error) Cost {
		if err != nil {
			tb.Helper()
			tb.Fatal(err)
		}
		return c
	}
}

func mustGPU(t testing.TB, name string) *GPU {
	t.Helper()
	g, err := lookupGPU(name)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func TestMoEKernels(t *testing.T) {
	c := newCoster(mustGPU(t, "h200"), nil, SourceRoofline)
	tiny := MoEShape{Tokens: 1, Experts: 8, TopK: 2, Hidden: 16, Inter: 32, DType: BF16}
	// A tiny layer costs only the fixed time: three fused kernels at the
	// GEMM's fixed time, or the reference path's fitted fixed time.
	if got, want := must(t)(c.MoE(tiny)).Seconds, 3*c.eff[classGEMM][slotBF16].Fixed; !near(got, want, 0.01) {
		t.Errorf("fused tiny MoE = %v, want %v", got, want)
	}
	tiny.Kernel = MoETorchGrouped
	if got, want := must(t)(c.MoE(tiny)).Seconds, c.eff[classMoE][slotBF16].Fixed; !near(got, want, 0.01) {
		t.Errorf("torch-grouped tiny MoE = %v, want %v", got, want)
	}
	// PredictRow prices what the collector measured.
	r := OpRow{Op: "moe", DType: BF16, Tokens: 1, Experts: 8, TopK: 2, Hidden: 16, Inter: 32}
	if got, _ := c.PredictRow(r); got.Seconds != must(t)(c.MoE(tiny)).Seconds {
		t.Errorf("PredictRow(moe) = %v, want the torch-grouped price %v", got.Seconds, must(t)(c.MoE(tiny)).Seconds)
	}
}

// TestMLADecodeOnBlackwell: a compute-bound MLA verify (512 sequences, 4
// queries, 128 heads, 4k context) runs at FlashMLA's 660 TFLOP/s on the
// H200 and at 660 x 350/410 = 563 TFLOP/s on the B200 (FlashMLA's own
// B200/H800 decode ratio), so the B200 takes 410/350 = 1.17x as long
// despite its 2.27x BF16 peak; memory time is a third of compute or less
// on both, so the blend adds under 2%.
func TestMLADecodeOnBlackwell(t *testing.T) {
	s := AttentionShape{Batch: 512, QLen: 4, KVLen: 4096, Heads: 128, KVHeads: 1, HeadDim: 576, KVDType: BF16, MLA: true}
	flops := 2.0 * 512 * 128 * 4 * 4096 * (576 + 512)
	h := must(t)(NewCoster(mustGPU(t, "h200")).Attention(s))
	b := must(t)(NewCoster(mustGPU(t, "b200")).Attention(s))
	if want := flops / 660e12; h.Seconds < want || h.Seconds > 1.03*want {
		t.Errorf("h200: %.3f ms, want %.3f ms (+3%%)", h.Seconds*1e3, want*1e3)
	}
	if want := flops / (660e12 * 350 / 410); b.Seconds < want || b.Seconds > 1.03*want {
		t.Errorf("b200: %.3f ms, want %.3f ms (+3%%)", b.Seconds*1e3, want*1e3)
	}
	if r := b.Seconds / h.Seconds; math.Abs(r-410.0/350) > 0.03 {
		t.Errorf("b200/h200 = %.3f, want %.3f", r, 410.0/350)
	}
}

// TestBlockScaledFP8Source: where the block-scaled weight stream sets an
// H200 FP8 GEMM's time, the cost is no longer the measured per-tensor
// interpolation and must not claim to be.
func TestBlockScaledFP8Source(t *testing.T) {
	g, err := lookupGPU("h200")
	if err != nil {
		t.Fatal(err)
	}
	c := NewCoster(g)
	// o_proj of DeepSeek-V3 at TP8, 4 tokens: 14.7 MB of FP8 weights, on
	// the measured grid (N 7168, K 2048).
	tensor := c.tensorScaledGEMM(FP8, 4, 7168, 2048)
	block := must(t)(c.GEMM(FP8, 4, 7168, 2048))
	if tensor.Source != SourceMeasured {
		t.Fatalf("per-tensor source %q, want %q", tensor.Source, SourceMeasured)
	}
	floor := c.eff[classGEMM][slotFP8].Fixed + 7168*2048/(4.8e12*0.52)
	if !(block.Seconds > tensor.Seconds) || !near(block.Seconds, floor, 1e-9) || block.Source == SourceMeasured {
		t.Errorf("block-scaled %.2f us (%s), per-tensor %.2f us: want the %.2f us weight-stream floor, not labelled measured",
			block.Seconds*1e6, block.Source, tensor.Seconds*1e6, floor*1e6)
	}
	// BF16 is untouched.
	if a, b := must(t)(c.GEMM(BF16, 4, 7168, 2048)), c.tensorScaledGEMM(BF16, 4, 7168, 2048); a != b {
		t.Errorf("BF16 GEMM changed: %+v vs %+v", a, b)
	}
}
