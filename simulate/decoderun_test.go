package simulate

import (
	"encoding/json"
	"testing"
)

// TestDecodeRunsIdentical: computing decode iterations ahead (decoderun.go)
// gives every figure the one-event-per-iteration loop gives, on
// deployments where runs are long (AgentX decode lanes at a batch of one
// or two), cut often (DP attention ranks, many arrivals), absent
// (samplers that draw per request), and without speculation.
func TestDecodeRunsIdentical(t *testing.T) {
	agentx := refineWindow(resolved(t, Query{GPU: "gb300", Workload: "agentx"}))
	fixed := resolved(t, Query{GPU: "b200"})
	vllm := resolved(t, Query{GPU: "b200", Engine: "vllm"})
	// KV-bound pools that retract (admission.go): runs stop before an
	// iteration the pool cannot take.
	long := resolved(t, Query{GPU: "h200", Precision: "fp8", Workload: "fixed", ISL: 1024, OSL: 8192, RangeRatio: 0.8})
	longVLLM := resolved(t, Query{GPU: "h200", Precision: "fp8", Engine: "vllm", Workload: "fixed", ISL: 1024, OSL: 8192, RangeRatio: 0.8})
	cases := []struct {
		r     *Resolved
		topo  string
		conc  int
		steps int
	}{
		{agentx, "disagg:5xtp1pp2+7xtp8", 128, 6},
		{agentx, "disagg:3xtp1pp4+1xdep8", 256, 6},
		{agentx, "disagg:2xtp2+3xtp4", 64, 0},
		{agentx, "agg:tp4", 32, 6},
		{agentx, "agg:dep8", 128, 6},
		{fixed, "agg:tp2", 64, 3},
		{fixed, "disagg:1xtp2+1xdep4", 128, 3},
		{vllm, "agg:tp4", 16, 3},
		{long, "agg:tp8", 512, 6},
		{long, "agg:tp8", 512, 0},
		{longVLLM, "agg:tp8", 512, 6},
		{long, "disagg:1xtp8+1xtp8", 512, 6},
	}
	for _, c := range cases {
		run := func(on bool) string {
			was := decodeRuns
			decodeRuns = on
			defer func() { decodeRuns = was }()
			res, err := Predict(c.r, topo(t, c.topo), c.conc, c.steps)
			if err != nil {
				t.Fatalf("%s c%d k%d: %v", c.topo, c.conc, c.steps, err)
			}
			b, err := json.Marshal(res)
			if err != nil {
				t.Fatal(err)
			}
			return string(b)
		}
		if on, off := run(true), run(false); on != off {
			t.Errorf("%s c%d k%d: decode runs change the result:\n on: %s\noff: %s", c.topo, c.conc, c.steps, on, off)
		}
	}
}
