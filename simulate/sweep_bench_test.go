package simulate

import "testing"

// BenchmarkSweep72AgentX is issue 15's speed goal: the 72-GPU GB300 AgentX
// sweep (default concurrencies, k 0..6) with every frontier point
// event-simulated, on two workers. Run it alone:
//
//	go test -run XXX -bench Sweep72AgentX -benchtime 1x ./simulate
func BenchmarkSweep72AgentX(b *testing.B) {
	q := Query{GPU: "gb300", Workload: "agentx", Model: "Qwen3.5-397B-A17B", Precision: "fp4", SchedOverhead: -1, SpecOverhead: -1, Seed: 1}
	r, err := q.Resolve(testCurves, testCatalog)
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		res, err := Sweep(r, SweepSpace{GPUs: 72, StepsLo: 0, StepsHi: 6, Workers: 2}, nil)
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(res.Refined), "refined/op")
		b.ReportMetric(float64(len(res.Points)), "points/op")
	}
}
