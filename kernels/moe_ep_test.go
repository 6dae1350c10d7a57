package kernels

import (
	"errors"
	"math"
	"slices"
	"strings"
	"testing"
)

// ep8Note is what moe_triton_ep8.csv says its kernels_us is.
const ep8Note = "busiest of 8 ranks, derived from per-rank measurements (kernels/collect/merge_ep.py)"

// TestMoEEPKey: an EP rank's measured line (moe_triton_ep8.csv: one rank of
// Qwen3.5-397B-A17B's 512 experts at EP8, 64 local, top-10 of 512, block
// FP8) prices only an EP8 rank; a plain layer of 64 experts with top-10 of
// them, or an EP4 rank of the same local shape, is not that measurement.
func TestMoEEPKey(t *testing.T) {
	c := h200Coster(t)
	rank := MoEShape{Tokens: 64, Experts: 64, TopK: 10, Hidden: 4096, Inter: 1024, DType: FP8, Kernel: MoETriton}
	for _, tc := range []struct {
		name     string
		ep       int
		measured bool
		wantUS   float64 // measured: the CSV's kernels_us at 64 tokens
	}{
		{"plain 64 experts", 0, false, 0},
		{"ep 1", 1, false, 0},
		{"ep4 rank", 4, false, 0},
		{"ep8 rank", 8, true, 190.551},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := rank
			s.EP = tc.ep
			got := must(t)(c.MoE(s))
			measured := got.Source == SourceMeasured || got.Source == SourceExtrapolated
			if measured != tc.measured {
				t.Fatalf("source %s (%.2f us), want measured %v", got.Source, got.Seconds*1e6, tc.measured)
			}
			note := c.MoETableNote(s)
			if tc.measured && (math.Abs(got.Seconds*1e6-tc.wantUS) > 1e-6 || !strings.HasPrefix(note, ep8Note)) {
				t.Errorf("%.3f us, note %q; want %.3f us, note %q", got.Seconds*1e6, note, tc.wantUS, ep8Note)
			}
			if !tc.measured && note != "" {
				t.Errorf("note %q on an unmeasured shape", note)
			}
		})
	}
	// the plain layer keeps its full top-10 roofline, which the EP8 rank's
	// measurement used to stand for: 64 tokens x 10 picks over 64 experts
	plain := must(t)(c.MoE(rank))
	if want := 2 * 640 * 3 * 4096 * 1024.0; plain.FLOPs != want {
		t.Errorf("plain layer FLOPs %.4g, want %.4g", plain.FLOPs, want)
	}
	// moe_triton.csv says nothing of its figures
	if n := c.MoETableNote(MoEShape{Tokens: 40, Experts: 512, TopK: 10, Hidden: 4096, Inter: 256, DType: BF16, Kernel: MoETriton}); n != "" {
		t.Errorf("moe_triton.csv note %q", n)
	}
}

// TestMoEEPRankBytes: an EP8 rank's bytes and FLOPs, by hand. A token picks
// each of the 512 experts with probability 10/512, so each of the rank's 64
// is touched by 64 tokens with probability 1-(1-10/512)^64; it computes
// 64 x 10 / 8 = 80 routed rows; it gathers and combines every token's row.
func TestMoEEPRankBytes(t *testing.T) {
	c := h200Coster(t)
	s := MoEShape{Tokens: 64, Experts: 64, TopK: 10, Hidden: 4096, Inter: 1024, DType: FP8, EP: 8}
	touched := 64 * (1 - math.Pow(1-10.0/512, 64))
	// second method: collect_moe_ep.py counted 45.79 distinct local experts
	// per call at 64 tokens (moe_triton_ep8.csv touched_mean, mean of 8 ranks
	// over 32 uniform routings)
	if e := math.Abs(touched-45.79) / 45.79; e > 0.01 {
		t.Fatalf("touched %.2f, counted 45.79 (%.1f%% off)", touched, 100*e)
	}
	const h, in = 4096.0, 1024.0
	weights := touched * 3 * h * in * 1 // FP8 gate_up (2I x H) and down (H x I)
	// per routed row: x in (FP8), gate_up out 2I (BF16), activation in 2I and
	// out I (BF16), down in I (FP8), down out H (BF16)
	perRow := h*1 + 2*in*2 + 2*in*2 + in*2 + in*1 + h*2
	tokenRows := 64 * h * 2 * 2 // every token's row gathered and combined (BF16)
	wantBytes := weights + 80*perRow + tokenRows
	wantFLOPs := 2 * 80 * 3 * h * in
	for _, k := range []MoEKernel{MoEFused, MoETriton} {
		s.Kernel = k
		got := must(t)(c.MoE(s))
		if math.Abs(got.Bytes-wantBytes) > 1e-9*wantBytes || math.Abs(got.FLOPs-wantFLOPs) > 1e-9*wantFLOPs {
			t.Errorf("%s: bytes %.6g flops %.6g, want %.6g and %.6g", k, got.Bytes, got.FLOPs, wantBytes, wantFLOPs)
		}
	}
}

func TestMoEEPShapeErrors(t *testing.T) {
	base := MoEShape{Tokens: 64, Experts: 64, TopK: 10, Hidden: 4096, Inter: 1024, DType: FP8}
	for _, tc := range []struct {
		name string
		edit func(*MoEShape)
		dims []string // nil: valid
	}{
		{"ep8 uniform", func(s *MoEShape) { s.EP = 8 }, nil},
		{"ep8 topk above local experts", func(s *MoEShape) { s.EP, s.TopK = 8, 100 }, nil},
		{"ep8 topk above the layer", func(s *MoEShape) { s.EP, s.TopK = 8, 513 }, []string{"topk", "experts", "ep"}},
		{"ep1 topk above experts", func(s *MoEShape) { s.EP, s.TopK = 1, 65 }, []string{"topk", "experts"}},
		{"negative ep", func(s *MoEShape) { s.EP = -1 }, []string{"ep"}},
		{"ep too large", func(s *MoEShape) { s.EP = maxMoEEP + 1 }, []string{"ep"}},
		{"experts x ep overflow", func(s *MoEShape) { s.EP, s.Experts = maxMoEEP, math.MaxInt32 }, []string{"experts", "ep"}},
		{"skew on an ep rank", func(s *MoEShape) { s.EP, s.Skew = 8, 0.5 }, []string{"skew", "ep"}},
		{"skew without ep", func(s *MoEShape) { s.Skew = 0.5 }, nil},
	} {
		s := base
		tc.edit(&s)
		err := s.Validate()
		var se *ShapeError
		switch {
		case tc.dims == nil && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.dims != nil && (!errors.As(err, &se) || !slices.Equal(se.Dims, tc.dims)):
			t.Errorf("%s: %v, want a ShapeError on %v", tc.name, err, tc.dims)
		}
	}
}

func TestParseMoEKernelTableEP(t *testing.T) {
	head := "kernel,dtype,tokens,experts,topk,hidden,inter,ep,config,kernels_us\n"
	rows, err := ParseMoEKernelTable("m.csv", []byte("# kernels_us: the busiest rank\n"+head+"k,fp8,1,64,10,4096,1024,8,c,37\nk,fp8,2,64,10,4096,1024,,c,47\n"))
	if err != nil || len(rows) != 2 || rows[0].EP != 8 || rows[1].EP != 1 || rows[0].Note != "the busiest rank" {
		t.Fatalf("rows %+v, %v", rows, err)
	}
	// moe_triton.csv has no ep column: every row is EP 1
	tb, err := EmbeddedEngineTables("h200")
	if err != nil {
		t.Fatal(err)
	}
	eps := map[int]int{}
	for _, r := range tb.MoE {
		eps[r.EP]++
	}
	if eps[1] != 184 || eps[8] != 19 || len(eps) != 2 {
		t.Errorf("rows by ep %v; want 184 at 1 (moe_triton.csv), 19 at 8 (moe_triton_ep8.csv)", eps)
	}
	for _, tc := range []struct{ row, want string }{
		{"k,fp8,1,64,10,4096,1024,0,c,37\n", "m.csv:2: column ep"},
		{"k,fp8,1,64,10,4096,1024,x,c,37\n", "m.csv:2: column ep"},
		{"k,fp8,1,64,10,4096,1024,65537,c,37\n", "m.csv:2: column ep"},
		{"k,fp8,1,64,600,4096,1024,8,c,37\n", "m.csv:2: topk 600 exceeds the layer's experts 64 x ep 8"},
	} {
		if _, err := ParseMoEKernelTable("m.csv", []byte(head+tc.row)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v, want %q", tc.row, err, tc.want)
		}
	}
}

// TestAICEPRows: AIConfigurator's moe rows of moe_ep_size 8 are an EP
// rank's (num_experts / 8 local, the layer's topk) and price only an EP8
// rank.
func TestAICEPRows(t *testing.T) {
	head := "framework,version,device,op_name,kernel_source,moe_dtype,num_tokens,hidden_size,inter_size,topk,num_experts,moe_tp_size,moe_ep_size,distribution,latency\n"
	imp, err := ParseAICTables(map[string][]byte{"moe_perf.txt": []byte(head +
		"SGLang,1,NVIDIA B200,moe,k,bfloat16,16,4096,1024,10,512,1,8,uniform,0.05\n" +
		"SGLang,1,NVIDIA B200,moe,k,bfloat16,64,4096,1024,10,512,1,8,uniform,0.08\n")})
	if err != nil {
		t.Fatal(err)
	}
	if r := imp.Engine.FusedMoE[0]; len(imp.Engine.FusedMoE) != 2 || r.Experts != 64 || r.TopK != 10 || r.EP != 8 || r.Inter != 1024 {
		t.Fatalf("rows %+v", imp.Engine.FusedMoE)
	}
	c := CosterFromAIC(mustGPU(t, "b200"), imp)
	s := MoEShape{Tokens: 64, Experts: 64, TopK: 10, Hidden: 4096, Inter: 1024, DType: BF16, EP: 8}
	if got := must(t)(c.MoE(s)); math.Abs(got.Seconds*1e6-80) > 1e-9 || got.Source != SourceMeasured {
		t.Errorf("EP8 rank %.3f us (%s), want 80 measured", got.Seconds*1e6, got.Source)
	}
	s.EP = 1
	if got := must(t)(c.MoE(s)); got.Source == SourceMeasured {
		t.Errorf("a plain 64-expert layer priced from EP8 rows (%.3f us)", got.Seconds*1e6)
	}
	if _, err := ParseAICTables(map[string][]byte{"moe_perf.txt": []byte(head +
		"SGLang,1,NVIDIA B200,moe,k,bfloat16,16,4096,1024,10,131072,1,131072,uniform,0.05\n")}); err == nil || !strings.Contains(err.Error(), "moe_ep_size 131072") {
		t.Errorf("ep beyond bound: %v", err)
	}
}

// TestPredictOpEPNote: kernels predict says what an EP rank's measured
// figure is.
func TestPredictOpEPNote(t *testing.T) {
	c := h200Coster(t)
	row := OpRow{Op: "moe", Tokens: 64, Experts: 64, TopK: 10, Hidden: 4096, Inter: 1024, DType: FP8}
	p, err := c.PredictOp(OpQuery{Row: row, MoEKernel: MoETriton, EP: 8})
	if err != nil || math.Abs(p.Seconds*1e6-190.551) > 1e-6 || !strings.HasPrefix(p.Note, ep8Note) {
		t.Errorf("ep8: %+v, %v", p, err)
	}
	p, err = c.PredictOp(OpQuery{Row: row, MoEKernel: MoETriton})
	if err != nil || p.Source == SourceMeasured || p.Note != "" {
		t.Errorf("plain: %+v, %v", p, err)
	}
	var se *ShapeError
	if _, err := c.PredictOp(OpQuery{Row: row, MoEKernel: MoETriton, EP: 8, Skew: 1}); !errors.As(err, &se) {
		t.Errorf("skew on an EP rank: %v", err)
	}
}

// TestMoEEPTPEquivalent: an EP8 rank of Qwen3.5-397B-A17B (64 of 512
// experts at inter 1024, block FP8) past moe_triton_ep8.csv's 1-512 tokens
// is priced from the TP shard with the same expert work per rank, 512
// experts at inter 128 (moe_triton.csv), labelled measured-tp-equivalent:
// the figures are that table's kernels_us rows, proportional past its 8192
// tokens; no longer the EP table's extrapolation (2.4 ms at 4096 tokens).
// Bytes and FLOPs stay the EP rank's own picks: 2 x rows x 3 x H x I with
// rows = tokens x 10 / 8.
func TestMoEEPTPEquivalent(t *testing.T) {
	c := h200Coster(t)
	for _, tc := range []struct {
		tokens int
		source string
		wantUS float64 // kernels_us of the CSV row named
	}{
		{512, SourceMeasured, 301.790},            // moe_triton_ep8.csv, 512 tokens
		{768, SourceTPEquivalent, 413.312},        // moe_triton.csv, fp8 512 experts inter 128, 768 tokens
		{1024, SourceTPEquivalent, 431.701},       // same line, 1024 tokens
		{4096, SourceTPEquivalent, 900.021},       // same line, 4096 tokens
		{16384, SourceTPEquivalent, 2 * 1465.259}, // 8192 tokens' 1465.259, proportional
	} {
		s := MoEShape{Tokens: tc.tokens, Experts: 64, TopK: 10, Hidden: 4096, Inter: 1024, DType: FP8, Kernel: MoETriton, EP: 8}
		got := must(t)(c.MoE(s))
		if got.Source != tc.source || math.Abs(got.Seconds*1e6-tc.wantUS) > 1e-6 {
			t.Errorf("%d tokens: %.3f us %s, want %.3f us %s", tc.tokens, got.Seconds*1e6, got.Source, tc.wantUS, tc.source)
		}
		if want := 2 * float64(tc.tokens) * 10 / 8 * 3 * 4096 * 1024; math.Abs(got.FLOPs-want) > 1e-6*want {
			t.Errorf("%d tokens: FLOPs %.6g, want the rank's %.6g", tc.tokens, got.FLOPs, want)
		}
		note := c.MoETableNote(s)
		if tc.source == SourceTPEquivalent && !strings.HasPrefix(note, "outside the EP8 table's measured 1-512 tokens: priced from the TP shard of the same expert work per rank (512 experts at inter 128") {
			t.Errorf("%d tokens: note %q", tc.tokens, note)
		}
		p, err := c.PredictOp(OpQuery{Row: OpRow{Op: "moe", Tokens: tc.tokens, Experts: 64, TopK: 10, Hidden: 4096, Inter: 1024, DType: FP8},
			MoEKernel: MoETriton, EP: 8})
		if err != nil || p.Source != got.Source || p.Note != note {
			t.Errorf("%d tokens: kernels predict says %s %q (%v)", tc.tokens, p.Source, p.Note, err)
		}
	}
	// An inter the EP size does not divide has no TP-equivalent line.
	if _, ok := (MoEShape{Experts: 64, Inter: 1001, EP: 8}).tpEquivalent(); ok {
		t.Error("inter 1001 over EP 8 gave a TP shard")
	}
}
