package simulate

import "testing"

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
