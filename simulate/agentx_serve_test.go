package simulate

import "testing"

// At concurrency 704 the replay reaches a steady state on the 3P1D
// deployment: its window's halves agree within 10%, every lane is primed,
// and the window is the benchmark's 3600 s.
func TestAgentXSteady704(t *testing.T) {
	if testing.Short() {
		t.Skip("1.5 s replay")
	}
	r := resolved(t, agentx704Query())
	res, err := Predict(r, topo(t, "disagg:3xtp1pp4+1xdep8"), 704, 6)
	if err != nil {
		t.Fatal(err)
	}
	a := res.AgentX
	if a == nil || !a.Steady || a.WindowS != 3600 || a.Trees < 704 || a.WarmupRequests < 704 {
		t.Fatalf("agentx report %+v", a)
	}
	if res.Requests < 10000 {
		t.Errorf("only %d profiled requests at conc 704", res.Requests)
	}
}

// E2EL counts queueing: with one running slot, ten trees wait on each other
// and the p90 E2EL is longer than with ten slots; throughput per GPU is
// lower. The same trace requests are replayed in both runs (same seed).
func TestAgentXQueueingInE2EL(t *testing.T) {
	run := func(maxRunning int) *Result {
		q := Query{GPU: "gb300", Workload: "agentx", MaxRunning: maxRunning, AgentX: "duration=900"}
		res, err := Predict(resolved(t, q), topo(t, "agg:tp2"), 10, 6)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	one, ten := run(1), run(10)
	t.Logf("p90 E2EL %.2f s vs %.2f s, p90 TTFT %.0f vs %.0f ms", one.E2EL.P90, ten.E2EL.P90, one.TTFTp90ms, ten.TTFTp90ms)
	if !(one.E2EL.P90 > 1.2*ten.E2EL.P90) || !(one.TTFTp90ms > ten.TTFTp90ms) {
		t.Errorf("p90 E2EL %.2f s at max-running 1 vs %.2f s at 10; p90 TTFT %.0f vs %.0f ms", one.E2EL.P90, ten.E2EL.P90, one.TTFTp90ms, ten.TTFTp90ms)
	}
}
