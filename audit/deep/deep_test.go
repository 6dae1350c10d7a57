package deep

import (
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"

	"github.com/specsim/specsim/kernels/numfmt"
)

func TestVerdicts(t *testing.T) {
	const rows, cols = 256, 512
	g := gaussian(rows, cols, 0.02, 1)
	tr := trainedLike(rows, cols, 2)
	cases := []struct {
		name   string
		dtype  string
		m      matrix
		grid   string
		group  int
		detail string // substring
	}{
		{"genuine gaussian", "BF16", g, "none", 0, ""},
		{"genuine trained-like", "BF16", tr, "none", 0, ""},
		{"genuine F16", "F16", tr, "none", 0, ""},
		{"genuine F32", "F32", g, "none", 0, ""},
		{"genuine norm-like, near 1", "BF16", nearOne(rows, cols, 4), "none", 0, "not testable against int8"},
		{"nvfp4 gaussian", "BF16", nvfp4(g), "nvfp4", 16, "two-level"},
		{"nvfp4 trained-like", "BF16", nvfp4(tr), "nvfp4", 16, "two-level"},
		{"nvfp4 as F16", "F16", nvfp4(tr), "nvfp4", 16, "two-level"},
		{"nvfp4, scale rounded to BF16", "BF16", nvfp4Dequant(tr, true, amax(tr.v)/(6*448)), "nvfp4", 16, "two-level"},
		{"mxfp4", "BF16", mxfp4(tr), "mxfp4", 16, "power-of-two"},
		{"fp8 per-tensor", "BF16", fp8(tr, rows, cols, false), "fp8_e4m3", 128, "per-tensor"},
		{"fp8 per-channel", "BF16", fp8(tr, 1, cols, false), "fp8_e4m3", 128, "per-channel"},
		{"fp8 128x128 blocks", "BF16", fp8(tr, 128, 128, false), "fp8_e4m3", 128, "128x128 tile"},
		{"fp8 e5m2 per-tensor", "BF16", fp8(g, rows, cols, true), "fp8_e5m2", 128, "per-tensor"},
		{"mxfp8 (e4m3, 32-value scales)", "BF16", mxfp8(tr), "mxfp8", 32, "E8M0"},
		{"fp8 e4m3 with 32-value float scales", "BF16", fp8(tr, 1, 32, false), "fp8_e4m3_g32", 32, "not powers of two"},
		{"int4 symmetric g128", "BF16", int4Sym(tr, 128), "int4", 128, ""},
		{"int4 symmetric g32", "BF16", int4Sym(g, 32), "int4", 32, ""},
		{"int4 asymmetric g128", "BF16", int4Asym(tr, 128), "int4_asym", 128, ""},
		{"int4 asymmetric g64", "BF16", int4Asym(g, 64), "int4_asym", 64, ""},
		{"int8 symmetric g128", "BF16", int8Sym(tr, 128), "int8", 128, ""},
		{"int8 symmetric g128, gaussian", "BF16", int8Sym(g, 128), "int8", 128, ""},
		{"int8 symmetric per-channel", "BF16", int8Sym(tr, cols), "int8", 128, ""},
		{"nvfp4 in a quarter of the rows", "BF16", partly(tr, nvfp4(tr), rows/4), "nvfp4", 16, "two-level"},
		{"all zeros", "BF16", constant(rows, cols, 0), "", 0, ""},
		{"five values", "BF16", fewValues(rows, cols, []float32{-0.02, -0.01, 0, 0.01, 0.03}), "", 0, ""},
		{"constant", "BF16", constant(rows, cols, 0.0125), "", 0, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res := auditOne(t, matrixTensor("mtp.fc.weight", c.dtype, c.m), DefaultBudget)
			t.Logf("%-32s %-5s %-58s blocks %5d on-grid %5.3f residual %6.2f false-alarm %s %s", c.name, c.dtype, res.Verdict, res.BlocksTested, res.OnGridFraction, res.MedianResidualULP, FormatProbability(res.FalseAlarmLog10), res.Detail)
			if res.Grid != c.grid {
				t.Fatalf("grid %q (%s), want %q; %+v", res.Grid, res.Verdict, c.grid, res)
			}
			switch {
			case c.grid == "none":
				if res.Verdict != "genuine "+c.dtype || res.OnGridFraction > 0.01 || res.MedianResidualULP < 1 || !strings.Contains(res.Detail, c.detail) {
					t.Fatalf("genuine: %+v", res)
				}
			case c.grid == "":
				if res.Verdict != VerdictInconclusive {
					t.Fatalf("verdict %q, want inconclusive", res.Verdict)
				}
			case strings.Contains(c.name, "quarter"):
				if math.Abs(res.OnGridFraction-0.25) > 0.05 || !strings.Contains(res.Verdict, "(partly: 2") {
					t.Fatalf("partly quantized: %+v", res)
				}
			default:
				if res.OnGridFraction != 1 || res.MedianResidualULP > 0.5 || res.GroupSize != c.group ||
					res.FalseAlarmLog10 > -40 || !strings.Contains(res.Detail, c.detail) {
					t.Fatalf("quantized: %+v", res)
				}
			}
			if res.BlocksTested == 0 && c.grid != "" {
				t.Fatalf("no blocks tested: %+v", res)
			}
		})
	}
}

// TestNoFalseAlarm runs genuine tensors of several distributions (Gaussian
// at many scales, trained-like, norm-like near 1, uniform) in all three
// storage formats over many seeds.
func TestNoFalseAlarm(t *testing.T) {
	dir := t.TempDir()
	var ts []fixtureTensor
	for seed := range uint64(120) {
		dtype := []string{"BF16", "F16", "BF16", "F32"}[seed%4]
		var m matrix
		switch seed % 5 {
		case 0:
			m = gaussian(128, 256, 0.001*float64(seed+1), 100+seed)
		case 1, 3:
			m = trainedLike(128, 256, 100+seed)
		case 2:
			m = nearOne(128, 256, seed)
		case 4: // uniform in [-a, a]
			r := rand.New(rand.NewPCG(seed, 5))
			m = matrix{128, 256, make([]float32, 128*256)}
			for i := range m.v {
				m.v[i] = float32((2*r.Float64() - 1) * 0.05)
			}
		}
		ts = append(ts, matrixTensor(fmt.Sprintf("mtp.layers.0.mlp.experts.%d.down_proj.weight", seed), dtype, m))
	}
	tensors := writeSafetensors(t, filepath.Join(dir, "genuine.safetensors"), ts)
	rep, err := Audit(tensors, Options{Budget: 16 << 20})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Tensors) != 120 {
		t.Fatalf("%d tensors", len(rep.Tensors))
	}
	for _, r := range rep.Tensors {
		if r.Grid != "none" {
			t.Errorf("%s (%s): %s, on-grid %.3f, false-alarm %g", r.Name, r.DType, r.Verdict, r.OnGridFraction, r.FalseAlarmLog10)
		}
	}
	if len(rep.Findings) != 0 {
		t.Errorf("findings on genuine weights: %+v", rep.Findings)
	}
	if len(rep.Modules) != 1 || rep.Modules[0].Name != "mtp.layers.0.mlp.experts.*.down_proj" || rep.Modules[0].Grid != "none" {
		t.Errorf("modules: %+v", rep.Modules)
	}
}

func TestFindingPerModule(t *testing.T) {
	dir := t.TempDir()
	tr := trainedLike(128, 256, 7)
	tensors := writeSafetensors(t, filepath.Join(dir, "m.safetensors"), []fixtureTensor{
		matrixTensor("mtp.fc.weight", "BF16", tr),
		matrixTensor("mtp.layers.0.mlp.experts.0.up_proj.weight", "BF16", nvfp4(tr)),
		matrixTensor("mtp.layers.0.mlp.experts.1.up_proj.weight", "BF16", tr),
		matrixTensor("mtp.norm.weight", "BF16", constant(1, 256, 1)),
		{"mtp.layers.0.mlp.experts.0.up_proj.weight_scale", "F8_E4M3", []int64{128, 16}, make([]byte, 128*16)},
		{"mtp.layers.0.mlp.experts.0.up_proj.weight_scale_2", "F32", []int64{}, make([]byte, 4)},
		{"mtp.layers.0.self_attn.k_scale", "F32", []int64{64}, make([]byte, 4*64)},
		{"mtp.layers.0.narrow.weight", "BF16", []int64{64, 8}, make([]byte, 2*64*8)},
	})
	rep, err := Audit(tensors, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Tensors) != 4 {
		t.Fatalf("%d tensors tested, want 4 (F8_E4M3, scales and the 8-wide tensor skipped)", len(rep.Tensors))
	}
	want := map[string]string{"mtp.fc": "none", "mtp.layers.0.mlp.experts.*.up_proj": "nvfp4", "mtp.norm": ""}
	for _, m := range rep.Modules {
		if want[m.Name] != m.Grid {
			t.Errorf("module %s: grid %q, want %q", m.Name, m.Grid, want[m.Name])
		}
	}
	if len(rep.Findings) != 1 || rep.Findings[0].Code != FindingQuantized || rep.Findings[0].Severity != "error" ||
		rep.Findings[0].Location != "mtp.layers.0.mlp.experts.0.up_proj.weight" {
		t.Fatalf("findings: %+v", rep.Findings)
	}
	t.Log(rep.Findings[0].Message)
}

func TestBudget(t *testing.T) {
	dir := t.TempDir()
	var ts []fixtureTensor
	// Quantized weights: a grid never gets ruled out, so the audit reads
	// everything it planned (genuine weights stop early; see below).
	for i := range 6 {
		ts = append(ts, matrixTensor(fmt.Sprintf("mtp.t%d.weight", i), "BF16", nvfp4(gaussian(256, 1024, 0.02, uint64(i)))))
	}
	tensors := writeSafetensors(t, filepath.Join(dir, "m.safetensors"), ts)
	for _, budget := range []int64{1 << 10, 40 << 10, 300 << 10, 3 << 20, 64 << 20} {
		rep, err := Audit(tensors, Options{Budget: budget})
		if err != nil {
			t.Fatal(err)
		}
		var sum int64
		for _, r := range rep.Tensors {
			sum += r.BytesRead
		}
		if rep.BytesRead > budget || sum != rep.BytesRead {
			t.Errorf("budget %d: read %d (tensor sum %d)", budget, rep.BytesRead, sum)
		}
		// Whole segments only: a multiple of 256 bytes (128 BF16 values).
		if rep.BytesRead%256 != 0 {
			t.Errorf("budget %d: read %d bytes, not whole segments", budget, rep.BytesRead)
		}
		if total := int64(6 * 256 * 1024 * 2); budget >= 40<<10 && rep.BytesRead < min(budget/4, total) {
			t.Errorf("budget %d: read only %d", budget, rep.BytesRead)
		}
	}
}

// TestGenuineStopsEarly: once every grid has more than half its planned
// blocks off the grid, the rest of a genuine tensor is not read.
func TestGenuineStopsEarly(t *testing.T) {
	x := matrixTensor("mtp.fc.weight", "BF16", gaussian(512, 1024, 0.02, 9))
	res := auditOne(t, x, DefaultBudget)
	if res.Grid != "none" || res.BytesRead == 0 || res.BytesRead > int64(len(x.data))*3/4 {
		t.Fatalf("read %d of %d bytes: %+v", res.BytesRead, len(x.data), res)
	}
}

func TestBadInput(t *testing.T) {
	dir := t.TempDir()
	tensors := writeSafetensors(t, filepath.Join(dir, "m.safetensors"), []fixtureTensor{matrixTensor("a", "BF16", gaussian(4, 128, 1, 1))})
	bad := []Tensor{tensors[0], tensors[0], tensors[0], tensors[0]}
	bad[0].End += 2         // shape mismatch
	bad[1].Begin += 1 << 20 // past the end
	bad[1].End += 1 << 20
	bad[2].Path += ".missing"
	bad[3].Shape = []int64{-1, 128}
	for i, b := range bad {
		if _, err := Audit([]Tensor{b}, Options{}); err == nil || !strings.Contains(err.Error(), "a") {
			t.Errorf("case %d: err = %v", i, err)
		}
	}
}

// TestFitBlock checks the grid test on hand-made blocks: exact NVFP4
// products rounded to BF16 are on the grid; moving one value by one BF16
// code takes the block off it.
func TestFitBlock(t *testing.T) {
	scale := float32(0.013) * numfmt.E4M3(numfmt.ToE4M3(1.37))
	levels := []float32{6, -4, 3, 2, -1.5, 1, 0.5, 0, -6, 4, 3, -2, 1.5, 1, -0.5, 6}
	codes := make([]uint16, 16)
	for i, q := range levels {
		codes[i] = numfmt.ToBF16(q * scale)
	}
	nv := grids[0]
	var f fitter
	block := func(codes []uint16) []elem {
		raw := make([]byte, 2*len(codes))
		for i, c := range codes {
			raw[2*i], raw[2*i+1] = byte(c), byte(c>>8)
		}
		out := make([]elem, len(codes))
		storages["BF16"].decodeElems(raw, out)
		return out
	}
	sum := func(b []elem) *summary { s := summarize(b); return &s }
	ft := f.test(nv, block(codes), sum(block(codes)))
	if !ft.onGrid || float64(scale) < ft.scaleLo || float64(scale) > ft.scaleHi {
		t.Fatalf("exact NVFP4 block: %+v (scale %v)", ft, scale)
	}
	// The chance bound, computed by hand: 7 anchors, 14 other nonzero
	// values, each 3*ulp/|v| / (1/4).
	want := math.Log(7)
	for i, e := range block(codes) {
		if e.v != 0 && i != 0 {
			want += math.Log(3 * e.ulp / math.Abs(e.v) * 4)
		}
	}
	if math.Abs(ft.logChance-want) > 1e-9 || ft.logChance/math.Ln10 > -15 {
		t.Fatalf("logChance %v, want %v", ft.logChance, want)
	}
	for i := range codes {
		if levels[i] == 0 {
			continue
		}
		// One code can be absorbed by sliding the scale within the
		// rounding intervals of the other values; four cannot.
		for _, d := range []int{-4, 4} {
			moved := append([]uint16(nil), codes...)
			moved[i] = uint16(int(moved[i]) + d)
			if f.test(nv, block(moved), sum(block(moved))).onGrid {
				t.Errorf("value %d moved by %d code: still on the grid", i, d)
			}
		}
	}
	// Two distinct magnitudes are the minimum to say anything.
	b := block([]uint16{codes[0], codes[0], 0, 0})
	if f.test(nv, b, sum(b)).informative {
		t.Error("block with one magnitude counted as informative")
	}
}

func TestParseHelpers(t *testing.T) {
	for in, want := range map[string]string{
		"mtp.layers.0.mlp.experts.17.gate_proj.weight": "mtp.layers.0.mlp.experts.*.gate_proj",
		"model.layers.61.mlp.experts.3.w1.weight":      "model.layers.61.mlp.experts.*.w1",
		"mtp.fc.weight": "mtp.fc",
		"lm_head":       "lm_head",
	} {
		if got := ModuleOf(in); got != want {
			t.Errorf("ModuleOf(%q) = %q, want %q", in, got, want)
		}
	}
	for l, want := range map[float64]string{-40.5: "< 1e-40", -9: "< 1e-8", -1e6: "< 1e-999999", 0: "<= 1"} {
		if got := FormatProbability(l); got != want {
			t.Errorf("FormatProbability(%v) = %q, want %q", l, got, want)
		}
	}
}

func TestParseBudget(t *testing.T) {
	for in, want := range map[string]int64{
		"64MiB": 64 << 20, "1GiB": 1 << 30, "123456": 123456, "1.5 gib": 3 << 29, "500KB": 500000, "4096b": 4096, "2TB": 0, "1tib": 1 << 40,
		"": 0, "MiB": 0, "12 parsecs": 0, "-64MiB": 0, "1KiB": 0, "NaNMiB": 0,
	} {
		got, err := ParseBudget(in)
		if (err != nil) != (want == 0) || got != want {
			t.Errorf("ParseBudget(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
}

// TestAllInconclusiveWarns: tensors that are all zeros or one constant
// carry fewer than minDistinct (8) distinct nonzero magnitudes, so every
// verdict is inconclusive; the report must then warn, not stay silent.
func TestAllInconclusiveWarns(t *testing.T) {
	dir := t.TempDir()
	tensors := writeSafetensors(t, filepath.Join(dir, "m.safetensors"), []fixtureTensor{
		matrixTensor("mtp.fc.weight", "BF16", constant(128, 256, 0)),
		matrixTensor("mtp.norm.weight", "BF16", constant(1, 256, 1)),
		matrixTensor("mtp.layers.0.mlp.up_proj.weight", "BF16", fewValues(128, 256, []float32{0.5, -0.25})),
	})
	rep, err := Audit(tensors, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Tensors) != 3 {
		t.Fatalf("%d tensors tested, want 3", len(rep.Tensors))
	}
	if len(rep.Findings) != 1 || rep.Findings[0].Code != FindingInconclusive || rep.Findings[0].Severity != "warning" ||
		!strings.Contains(rep.Findings[0].Message, "all 3 tensors tested are inconclusive (3 with fewer than 8") ||
		!strings.Contains(rep.Findings[0].Message, "not a pass") {
		t.Fatalf("findings: %+v", rep.Findings)
	}
}
