package kernels

import (
	"bytes"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the generated files in testdata")

// truthEfficiencies is the "GPU" the synthetic tables are measured on: a
// roofline with efficiencies unlike the defaults, so a fit must move them.
var truthEfficiencies = map[opClass]Efficiency{
	classGEMM:      {Mem: 0.78, Compute: 0.72, Fixed: 5.5e-6, P: 3},
	classMoE:       {Mem: 0.55, Compute: 0.45, Fixed: 22e-6, P: 2.5},
	classAttention: {Mem: 0.68, Compute: 0.40, Fixed: 8e-6, P: 3, HalfUnits: 2},
	classGDN:       {Mem: 0.42, Compute: 0.30, Fixed: 6e-6, P: 3, HalfUnits: 2},
	classNorm:      {Mem: 0.70, Compute: 1, Fixed: 3.5e-6, P: 4},
	classLMHead:    {Mem: 0.74, Compute: 0.70, Fixed: 15e-6, P: 3},
	classCopy:      {Mem: 0.88, Compute: 1, Fixed: 2.5e-6, P: 4},
}

// wiggle is a smooth kernel-specific deviation from the roofline (a step
// of up to 12% where a kernel changes tiling or occupancy), different per
// line and non-decreasing in x, as latency in growing work is.
func wiggle(line int, x float64) float64 {
	center := 1 + float64(line%7)
	return 1 + 0.12/(1+math.Exp(-(math.Log(x)-center)/0.8))
}

func pow2s(lo, hi int) []int {
	var v []int
	for x := lo; x <= hi; x *= 2 {
		v = append(v, x)
	}
	return v
}

// syntheticShapes is the grid of the synthetic op table: the kinds of
// shapes the real collector measures, on lines along M, tokens, kv_len,
// batch and bytes.
func syntheticShapes() []OpRow {
	var rows []OpRow
	for _, dt := range []DType{BF16, FP8} {
		for _, nk := range [][2]int{{4096, 4096}, {7168, 2048}, {2048, 7168}, {1024, 7168}} {
			for _, m := range pow2s(1, 8192) {
				rows = append(rows, OpRow{Op: "gemm", DType: dt, M: m, N: nk[0], K: nk[1]})
			}
		}
	}
	for _, e := range [][4]int{{128, 8, 2048, 768}, {256, 8, 7168, 256}} {
		for _, t := range pow2s(1, 8192) {
			rows = append(rows, OpRow{Op: "moe", DType: BF16, Tokens: t, Experts: e[0], TopK: e[1], Hidden: e[2], Inter: e[3]})
		}
	}
	for _, b := range []int{1, 8, 32} {
		for _, q := range []int{1, 4} {
			for _, kv := range pow2s(1024, 131072) {
				rows = append(rows, OpRow{Op: "attention", DType: BF16, Batch: b, QLen: q, KVLen: kv, Heads: 32, KVHeads: 4, HeadDim: 128})
			}
		}
	}
	for _, q := range []int{1, 4} {
		for _, b := range pow2s(1, 256) {
			rows = append(rows, OpRow{Op: "gdn", DType: BF16, Batch: b, QLen: q, Heads: 32, KVHeads: 16, HeadDim: 128})
		}
	}
	for _, h := range []int{4096, 7168} {
		for _, t := range pow2s(1, 8192) {
			rows = append(rows, OpRow{Op: "rmsnorm", DType: BF16, Tokens: t, Hidden: h})
		}
	}
	for _, m := range pow2s(1, 256) {
		rows = append(rows, OpRow{Op: "lm_head", DType: BF16, M: m, N: 151936, K: 4096})
	}
	for _, n := range pow2s(1<<20, 1<<30) {
		rows = append(rows, OpRow{Op: "copy", DType: BF16, N: n})
	}
	return rows
}

// truthCoster prices with the truth efficiencies and no tables.
func truthCoster(t testing.TB) *Coster {
	c := newCoster(mustGPU(t, "h200"), nil, SourceRoofline)
	for class, e := range truthEfficiencies {
		for s := range numSlots {
			c.eff[class][s] = e
			if s == slotFP8 {
				c.eff[class][s].Compute *= 0.9
			}
		}
	}
	return c
}

// syntheticOps measures the grid on the truth GPU, with or without the
// per-line wiggle.
func syntheticOps(t testing.TB, withWiggle bool) []OpRow {
	c := truthCoster(t)
	lineIDs := map[lineID]int{}
	rows := syntheticShapes()
	for i, r := range rows {
		cost, err := c.PredictRow(r)
		if err != nil {
			t.Fatal(err)
		}
		k, c, _ := rowGrid(r)
		id := lineOf(k, c)
		if _, ok := lineIDs[id]; !ok {
			lineIDs[id] = len(lineIDs)
		}
		lat := cost.Seconds * 1e6
		if withWiggle {
			lat *= wiggle(lineIDs[id], c.v[0])
		}
		rows[i].LatencyUS = lat
	}
	return rows
}

var collectiveTruth = collectiveParams{Base: 7e-6, PerStep: 1.1e-6, BusEff: 0.78}

func syntheticCollectives(t testing.TB) []CollectiveRow { return syntheticCollectivesW(t, true) }

func syntheticCollectivesW(t testing.TB, withWiggle bool) []CollectiveRow {
	g := mustGPU(t, "h200")
	var rows []CollectiveRow
	line := 0
	for _, op := range CollectiveOps() {
		for _, n := range []int{2, 4, 8} {
			for b := 4 << 10; b <= 1<<30; b *= 4 {
				lat := collectiveTruth.time(op, float64(b), float64(n), g.NVLinkBandwidth)
				if withWiggle {
					lat *= wiggle(line, float64(b))
				}
				rows = append(rows, CollectiveRow{Op: op, DType: BF16, GPUs: n, Bytes: float64(b), LatencyUS: lat * 1e6})
			}
			line++
		}
	}
	return rows
}

func formatOpCSV(meta string, rows []OpRow) []byte {
	var b bytes.Buffer
	b.WriteString(meta)
	b.WriteString("op,dtype,m,n,k,tokens,experts,topk,hidden,inter,batch,q_len,kv_len,heads,kv_heads,head_dim,latency_us\n")
	cell := func(v int) string {
		if v == 0 {
			return ""
		}
		return strconv.Itoa(v)
	}
	for _, r := range rows {
		fmt.Fprintf(&b, "%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%.3f\n", r.Op, r.DType,
			cell(r.M), cell(r.N), cell(r.K), cell(r.Tokens), cell(r.Experts), cell(r.TopK), cell(r.Hidden), cell(r.Inter),
			cell(r.Batch), cell(r.QLen), cell(r.KVLen), cell(r.Heads), cell(r.KVHeads), cell(r.HeadDim), r.LatencyUS)
	}
	return b.Bytes()
}

// TestSyntheticTableFiles keeps the committed synthetic tables (used by the
// CLI tests) equal to what the generator makes; -update rewrites them.
func TestSyntheticTableFiles(t *testing.T) {
	meta := "# gpu: synthetic (roofline with known efficiencies times a smooth per-line wiggle; see synthetic_test.go)\n# method: generated by go test ./kernels -run TestSyntheticTableFiles -update\n"
	ops := formatOpCSV(meta, syntheticOps(t, true))
	var cb bytes.Buffer
	cb.WriteString(meta)
	cb.WriteString("op,dtype,gpus,bytes,latency_us\n")
	for _, r := range syntheticCollectives(t) {
		fmt.Fprintf(&cb, "%s,%s,%d,%.0f,%.3f\n", r.Op, r.DType, r.GPUs, r.Bytes, r.LatencyUS)
	}
	for name, want := range map[string][]byte{"synthetic_ops.csv": ops, "synthetic_collectives.csv": cb.Bytes()} {
		path := filepath.Join("testdata", name)
		if *update {
			if err := os.WriteFile(path, want, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		got, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (run go test ./kernels -run TestSyntheticTableFiles -update)", err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s differs from the generator; rerun with -update", path)
		}
	}
}

// With no wiggle the table is exactly a roofline: the fit must find the
// truth efficiencies where the grid identifies them.
func TestFitRecoversEfficiencies(t *testing.T) {
	g := mustGPU(t, "h200")
	cal := calibrate(g, syntheticOps(t, false), nil)
	for class, want := range map[opClass]Efficiency{classGEMM: truthEfficiencies[classGEMM], classAttention: truthEfficiencies[classAttention], classCopy: truthEfficiencies[classCopy]} {
		got := cal.eff[class][slotBF16]
		if !near(got.Mem, want.Mem, 0.03) || !near(got.Fixed, want.Fixed, 0.05) {
			t.Errorf("%s: fitted %v, want %v", class, got, want)
		}
		if class == classGEMM && !near(got.Compute, want.Compute, 0.03) {
			t.Errorf("%s: fitted compute %.3f, want %.3f", class, got.Compute, want.Compute)
		}
	}
}

// The held-out points of the wiggled table are interpolated back to within
// the linear-interpolation error of the wiggle, while the fitted roofline
// alone misses the wiggle. Interpolating linearly across a span h errs by
// at most h^2/8 times the second derivative: the step's logistic
// 0.12*s(u/0.8) has |f”| <= 0.12*0.096/0.64 = 0.018, so with h = 2 ln 2
// (every other power of two held out) about 0.4%, plus what the fitted
// roofline's curvature adds between two points (bounded here at 2.5%).
func TestInterpolationRecoversHeldout(t *testing.T) {
	g := mustGPU(t, "h200")
	rows := syntheticOps(t, true)
	v, err := ValidateOps(g, &OpTable{Name: "synthetic", Rows: rows}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if v.HeldoutPoints < len(rows)/3 {
		t.Errorf("held out %d of %d rows, want about 40%%", v.HeldoutPoints, len(rows))
	}
	for _, op := range v.Ops {
		if op.MaxAbsErr > 0.025 || op.MedianAbsErr > 0.01 {
			t.Errorf("%s: held-out median %.2f%% max %.2f%%, want < 1%% and < 2.5%%", op.Op, 100*op.MedianAbsErr, 100*op.MaxAbsErr)
		}
		if op.RooflineMedianAbsErr > 0.01 && op.RooflineMedianAbsErr < 2*op.MedianAbsErr {
			t.Errorf("%s: roofline alone %.2f%% is not clearly worse than interpolation %.2f%%", op.Op, 100*op.RooflineMedianAbsErr, 100*op.MedianAbsErr)
		}
	}
	// Measured points themselves are reproduced exactly.
	c := newCoster(g, calibrate(g, rows, nil), SourceRoofline)
	for _, r := range rows[:50] {
		got, _ := c.PredictRow(r)
		if !near(got.Seconds*1e6, r.LatencyUS, 1e-9) || got.Source != SourceMeasured {
			t.Fatalf("%+v: predicted %.4f us (%s), measured %.4f", r, got.Seconds*1e6, got.Source, r.LatencyUS)
		}
	}
}

func TestCollectiveFitAndInterpolation(t *testing.T) {
	g := mustGPU(t, "h200")
	rows := syntheticCollectives(t)
	v, err := ValidateCollectives(g, &CollectiveTable{Name: "synthetic", Rows: rows})
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(v.GPUCounts) != "[2 4 8]" {
		t.Errorf("gpu counts %v", v.GPUCounts)
	}
	// Sizes step by 4x, so a held-out size sits h = 2 ln 4 between fitted
	// ones: the step's interpolation error is at most
	// (2 ln 4)^2/8 * 0.018 = 1.7%.
	if v.MedianAbsErr > 0.015 || v.P90AbsErr > 0.025 {
		t.Errorf("held-out median %.2f%% p90 %.2f%%, want < 1.5%% and < 2.5%%", 100*v.MedianAbsErr, 100*v.P90AbsErr)
	}
	// A GPU count never fitted is predicted by the model within the wiggle.
	for _, ce := range v.CountHoldout {
		if ce.MedianAbsErr > 0.08 {
			t.Errorf("leaving out %d GPUs: median error %.1f%%, want < 8%%", ce.GPUs, 100*ce.MedianAbsErr)
		}
	}
}
