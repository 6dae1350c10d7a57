package simulate

import "testing"

// benchSweep runs the AgentX sweep `specsim sweep --gpu gb300 --gpus N`
// runs by default (Qwen3.5 FP4, default concurrencies, k 6, budget 400)
// on two workers and reports how much it refined and whether it settled.
func benchSweep(b *testing.B, gpus int) {
	q := Query{GPU: "gb300", Workload: "agentx", Model: "Qwen3.5-397B-A17B", Precision: "fp4", SchedOverhead: -1, SpecOverhead: -1, Seed: 1}
	r, err := q.Resolve(testCurves, testCatalog)
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		res, err := Sweep(r, SweepSpace{GPUs: gpus, StepsLo: 6, StepsHi: 6, Workers: 2}, nil)
		if err != nil {
			b.Fatal(err)
		}
		settled := 1.0
		if res.RefineStopped {
			settled = 0
		}
		b.ReportMetric(float64(res.Refined), "refined/op")
		b.ReportMetric(float64(len(res.Points)), "points/op")
		b.ReportMetric(settled, "settled")
	}
}

// BenchmarkSweepDefaultAgentX is `specsim sweep` (8 x GB300).
func BenchmarkSweepDefaultAgentX(b *testing.B) { benchSweep(b, 8) }

// BenchmarkSweep72AgentX is issue 15's speed goal: the 72-GPU GB300 AgentX
// sweep with every frontier point event-simulated (settled 1) in under
// 10 s on two cores. Run it alone:
//
//	go test -run XXX -bench Sweep72AgentX -benchtime 1x ./simulate
func BenchmarkSweep72AgentX(b *testing.B) { benchSweep(b, 72) }
