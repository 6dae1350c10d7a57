package simulate

import (
	"strings"
	"testing"
)

// TestWholeOutputNote checks when a vLLM decode worker's limits say that
// the simulation's whole-output reservation runs fewer requests than vLLM
// would: the pool of the 8 x H200 FP8 TP8 instance of
// `predict --precision fp8 --gpu h200 --topology agg:tp8 --isl 1024 --osl
// 8192 --conc 512` (3,111,232 tokens) over requests of 0.9 x (1024 +
// 8192) = 8294.4 tokens (range ratio 0.8) holds 375 whole reservations.
func TestWholeOutputNote(t *testing.T) {
	tp8 := Parallel{TP: 8, EP: 1, PP: 1}
	dep8 := Parallel{TP: 8, EP: 8, PP: 1, DPAttention: true}
	mem := Memory{TokensFit: 3_111_232}
	for _, c := range []struct {
		name    string
		r       role
		engine  string
		par     Parallel
		running int
		reserve float64
		want    string // a substring; "" for no note
	}{
		{"vllm decode worker binds", roleDecode, "vllm", tp8, 512, 8294.4, "at most 375 run at once; vLLM"},
		{"up to the role's cap", roleDecode, "vllm", tp8, 400, 8294.4, "would run up to 400"},
		// 3,111,232 / 8294.4 = 375 a rank, 3,000 over eight DP ranks.
		{"dp ranks", roleDecode, "vllm", dep8, 4096, 8294.4, "at most 3000 run at once"},
		{"fits", roleDecode, "vllm", tp8, 375, 8294.4, ""},
		// SGLang's decode workers and aggregated instances run their
		// engine's own rule (admission.go).
		{"sglang decode workers reserve as SGLang does", roleDecode, "sglang", tp8, 512, 8294.4, ""},
		{"aggregated instances run the engine's own rule", roleAgg, "vllm", tp8, 512, 8294.4, ""},
		{"trtllm reserves whole outputs itself", roleDecode, "trtllm", tp8, 512, 8294.4, ""},
		{"prefill role reserves no output", rolePrefill, "vllm", tp8, 512, 8294.4, ""},
		{"agentic workloads", roleDecode, "vllm", tp8, 512, 0, ""},
	} {
		e := &Engine{EngineName: c.engine, Par: c.par}
		got := wholeOutputNote(c.r, e, mem, c.running, c.reserve)
		if c.want == "" && got != "" || c.want != "" && !strings.Contains(got, c.want) {
			t.Errorf("%s: note %q, want %q", c.name, got, c.want)
		}
	}
}

// TestMeanReservation: prompt plus whole output at the range ratio's mean
// length, none for the agentic workloads.
func TestMeanReservation(t *testing.T) {
	for _, c := range []struct {
		w    Workload
		want float64
	}{
		{Workload{Name: "fixed", ISL: 1024, OSL: 8192}, 9216},
		{Workload{Name: "fixed", ISL: 1024, OSL: 8192, RangeRatio: 0.8}, 8294.4},
		{Workload{Trace: &TraceWorkload{}}, 0},
	} {
		if got := c.w.MeanReservation(); got < c.want-1e-9 || got > c.want+1e-9 {
			t.Errorf("%+v: %v, want %v", c.w, got, c.want)
		}
	}
}
