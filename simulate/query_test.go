package simulate

import (
	"errors"
	"testing"

	"github.com/specsim/specsim/simulate/acceptance"
)

// TestResolveErrors: each bad setting is a typed error naming its Query
// field, so that a command can name its own flag.
func TestResolveErrors(t *testing.T) {
	base := Query{Model: "Qwen3.5-397B-A17B", Precision: "fp4", GPU: "b200", Workload: "fixed", ISL: 1024, OSL: 1024,
		SchedOverhead: -1, SpecOverhead: -1}
	for _, tt := range []struct {
		field string
		edit  func(*Query)
	}{
		{"GPU", func(q *Query) { q.GPU = "a100" }},
		{"GPUsPerNode", func(q *Query) { q.GPUsPerNode = -1 }},
		{"Workload", func(q *Query) { q.Workload = "chat" }},
		{"KVDType", func(q *Query) { q.KVDType = "nvfp4" }},
		{"SchedOverhead", func(q *Query) { q.SchedOverhead = 5000 }},
		{"MoESkew", func(q *Query) { q.MoESkew = 9 }},
		{"Spec", func(q *Query) { q.Spec = "eagle" }},
		{"Requests", func(q *Query) { q.Requests = -1 }},
		{"Chunk", func(q *Query) { q.Chunk = -1 }},
		{"Histogram", func(q *Query) { q.Histogram, q.AL, q.Method = "h.csv", 2, acceptance.Empirical }},
		{"AL", func(q *Query) { q.Model = "DeepSeek-V3" }},
		// Qwen3.5's max_position_embeddings is 262144 (its config.json):
		// 4194304 + 10 tokens is 16x past it, and 262134 + 10 = 262144
		// reaches it, which SGLang refuses (input + new >= context_len).
		{"ISL", func(q *Query) { q.ISL, q.OSL = 4194304, 10 }},
		{"ISL", func(q *Query) { q.ISL, q.OSL = 262134, 10 }},
		// The replay's max-context one token past Qwen3.5's 262144, and
		// 500000 (which kept 371 traces instead of 322 before it was
		// refused), for both agentx workloads.
		{"AgentX.max-context", func(q *Query) { q.Workload, q.AgentX = "agentx", "max-context=262145" }},
		{"AgentX.max-context", func(q *Query) { q.Workload, q.AgentX = "agentx-synthetic", "max-context=500000" }},
		// AgentX keys with the fixed workload would be silently unused,
		// and so would the synthetic workload's keys in the trace replay.
		{"AgentX", func(q *Query) { q.AgentX = "duration=600" }},
		{"AgentX", func(q *Query) { q.Workload, q.AgentX = "agentx", "duration=900,cache-hit=0.5" }},
		{"AgentX", func(q *Query) { q.Workload, q.AgentX = "agentx", "isl-median=5000" }},
		{"AgentX.duration", func(q *Query) { q.Workload, q.AgentX = "agentx-synthetic", "duration=NaN" }},
	} {
		q := base
		tt.edit(&q)
		_, err := q.Resolve(testCurves, testCatalog)
		var e *Error
		if !errors.As(err, &e) || e.Field != tt.field {
			t.Errorf("%s: error %v, want a *simulate.Error on %s", tt.field, err, tt.field)
		}
	}
	// One token below the context length is served.
	q0 := base
	q0.ISL, q0.OSL = 262133, 10
	if _, err := q0.Resolve(testCurves, testCatalog); err != nil {
		t.Errorf("ISL 262133 + OSL 10 = 262143 < 262144: %v", err)
	}
	// A max-context equal to the context length is what InferenceX passes.
	q1 := base
	q1.Workload, q1.AgentX = "agentx-synthetic", "max-context=262144"
	if _, err := q1.Resolve(testCurves, testCatalog); err != nil {
		t.Errorf("agentx max-context=262144 (Qwen3.5's context length): %v", err)
	}
	// Acceptance settings are acceptance.Errors.
	q := base
	q.AL = 0.5
	var ae *acceptance.Error
	if _, err := q.Resolve(testCurves, testCatalog); !errors.As(err, &ae) || ae.Field != acceptance.FieldAL {
		t.Errorf("--al 0.5: %v", err)
	}
	if _, err := base.Resolve(nil, testCatalog); err == nil {
		t.Error("no curves and no fixed AL accepted")
	}
	if _, err := base.Resolve(testCurves, nil); err == nil {
		t.Error("no catalog accepted")
	}
}

// GoldenModel takes the AL from another model's golden curve: DeepSeek-V3
// has none of its own, deepseek-v4-pro's gives 2.49 at k = 3 with thinking
// on (golden/data/dsv4_mtp.yaml); an unknown curve name is an error.
func TestResolveGoldenModel(t *testing.T) {
	q := Query{Model: "DeepSeek-V3", Precision: "fp8", GPU: "h200", Workload: "fixed", ISL: 1024, OSL: 1024, RangeRatio: 0.8,
		Spec: "mtp", SchedOverhead: -1, SpecOverhead: -1, GoldenModel: "deepseek-v4-pro"}
	r, err := q.Resolve(testCurves, testCatalog)
	if err != nil {
		t.Fatal(err)
	}
	if p, err := r.Target.At(3); err != nil || p.AL != 2.49 {
		t.Errorf("AL at k=3 %g (%v), want 2.49", p.AL, err)
	}
	q.GoldenModel = "no-such-model"
	if _, err := q.Resolve(testCurves, testCatalog); err == nil {
		t.Error("an unknown golden model resolved")
	}
}

// TestEngineSpellingsPriceAlike: every spelling CheckEngine accepts
// resolves to the canonical engine, so it prices the same.
func TestEngineSpellingsPriceAlike(t *testing.T) {
	for _, tc := range []struct{ spelled, canonical string }{
		{"SGLang", "sglang"}, {" sglang ", "sglang"}, {"TensorRT-LLM", "trtllm"}, {"trt-llm", "trtllm"}, {"vLLM", "vllm"},
	} {
		r := resolved(t, Query{GPU: "b200", Engine: tc.spelled})
		if r.Q.Engine != tc.canonical {
			t.Errorf("%q resolves to engine %q, want %q", tc.spelled, r.Q.Engine, tc.canonical)
		}
		rc := resolved(t, Query{GPU: "b200", Engine: tc.canonical})
		a, errA := Predict(r, topo(t, "agg:tp4"), 8, 3)
		b, errB := Predict(rc, topo(t, "agg:tp4"), 8, 3)
		if errA != nil || errB != nil || a.TputPerGPU != b.TputPerGPU {
			t.Errorf("%q: %v tok/s/GPU (%v), %q: %v (%v)", tc.spelled, a, errA, tc.canonical, b, errB)
		}
	}
}
