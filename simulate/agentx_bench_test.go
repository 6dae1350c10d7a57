package simulate

import (
	"fmt"
	"testing"
)

// BenchmarkAgentX704 is one AgentX predict of the 3600 s window at
// concurrency 704 (3P1D: three TP1 PP4 prefill workers and one DEP8 decode
// worker on GB300, MTP k = 6, recipe memory settings), the corpus's Resolve
// included. Goal: < 2 s.
func BenchmarkAgentX704(b *testing.B) {
	for b.Loop() {
		r := resolved(b, agentx704Query())
		if _, err := Predict(r, topo(b, "disagg:3xtp1pp4+1xdep8"), 704, 6); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPredictDefault is what a plain `specsim predict` runs: the
// AgentX replay on agg:tp2 at concurrency 7 on GB300, MTP k = 6. Goal: < 0.5 s.
func BenchmarkPredictDefault(b *testing.B) {
	for b.Loop() {
		r := resolved(b, Query{GPU: "gb300", Workload: "agentx"})
		if _, err := Predict(r, topo(b, "agg:tp2"), 7, 6); err != nil {
			b.Fatal(err)
		}
	}
}

// agentx704Query is the 3P1D deployment as the GB300 AgentX recipes set
// their memory: mem-fraction-static 0.8 and prefill HiCache at
// --hicache-ratio 0.9 (reference recipes, schema2 disagg variants).
func agentx704Query() Query {
	q := Query{GPU: "gb300", Workload: "agentx", MemFraction: 0.8}
	q.Server.HiCacheRatio = 0.9
	return q
}

// BenchmarkAgentXSim is one AgentX event simulation of the kind a GB300
// sweep refines (Qwen3.5 FP4, MTP k = 6, 3600 s window), the table fit
// done once before timing: what bounds issue 15's settled 72-GPU sweep.
func BenchmarkAgentXSim(b *testing.B) {
	for _, c := range []struct {
		topo string
		conc int
	}{{"agg:tp4", 64}, {"agg:dep8", 256}} {
		b.Run(fmt.Sprintf("%s/c%d", c.topo, c.conc), func(b *testing.B) {
			run := func() {
				r := resolved(b, Query{GPU: "gb300", Workload: "agentx"})
				if _, err := Predict(r, topo(b, c.topo), c.conc, 6); err != nil {
					b.Fatal(err)
				}
			}
			run()
			for b.Loop() {
				run()
			}
		})
	}
}

// BenchmarkRefineSim is one event simulation as a sweep's refinement runs
// it (the 900 s window, refineWindow) of the deployments that dominate
// issue 15's settled 72-GPU GB300 sweep: disaggregated pools at
// concurrency 128, 512 and 1024 (at stop 25, 3e8c918: 451 of its 994
// simulations, and most of their CPU: the 295 at 1024; 977 at the stop's
// end).
func BenchmarkRefineSim(b *testing.B) {
	for _, c := range []struct {
		topo string
		conc int
	}{{"disagg:5xtp1pp2+1xdep32", 1024}, {"disagg:5xtp1pp2+7xtp8", 512}, {"disagg:7xtp2pp2+5xtp8ep8", 128}} {
		b.Run(fmt.Sprintf("%s/c%d", c.topo, c.conc), func(b *testing.B) {
			r := refineWindow(resolved(b, Query{GPU: "gb300", Workload: "agentx"}))
			t := topo(b, c.topo)
			if _, err := Predict(r, t, c.conc, 6); err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				if _, err := Predict(r, t, c.conc, 6); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
