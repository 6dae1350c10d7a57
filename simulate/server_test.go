package simulate

import "testing"

func replayPlan(t *testing.T, q Query, topology string, conc int, dur float64) *Plan {
	t.Helper()
	r := resolved(t, q)
	if r.Workload.Trace == nil {
		t.Fatal("agentx workload without traces")
	}
	tw := *r.Workload.Trace
	tw.Replay.Duration = dur
	r.Workload.Trace = &tw
	sc, err := r.Scenario(topo(t, topology), conc, 6)
	if err != nil {
		t.Fatal(err)
	}
	p, err := NewPlan(sc, r.GPU)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestReplayPrefixCache: with a pool far larger than five sessions'
// contexts, the cache hits (nearly) everything the client re-sends; with the
// cache off nothing hits and the first tokens come later.
func TestReplayPrefixCache(t *testing.T) {
	q := Query{Workload: "agentx", GPU: "gb300", MaxRunning: 1}
	on, err := replayPlan(t, q, "agg:tp2", 5, 600).Simulate()
	if err != nil {
		t.Fatal(err)
	}
	if on.Cache == nil || on.AgentX == nil {
		t.Fatal("no cache or AgentX report")
	}
	bound := on.AgentX.SharedFraction
	if h := on.Cache.HitRate; h < 0.9*bound || h > 1 {
		t.Errorf("hit rate %.3f with room to spare; the client re-sent %.3f of its prompt tokens", h, bound)
	}
	q.Server.NoPrefixCache = true
	off, err := replayPlan(t, q, "agg:tp2", 5, 600).Simulate()
	if err != nil {
		t.Fatal(err)
	}
	if off.Cache != nil {
		t.Errorf("cache report with the cache off: %+v", off.Cache)
	}
	if off.TTFTms <= on.TTFTms {
		t.Errorf("TTFT p50 %.0f ms without the cache, %.0f ms with it", off.TTFTms, on.TTFTms)
	}
	// The default host tier extends the prefix cache: none without one.
	if on.Limits[0].HostTokens == 0 || off.Limits[0].HostTokens != 0 {
		t.Errorf("host tokens per rank %d with the cache, %d without", on.Limits[0].HostTokens, off.Limits[0].HostTokens)
	}
}

// TestDPRanks: under DP attention requests spread over ranks, each rank
// draws its own acceptance, and the imbalance is reported (>= 1); without
// DP attention there is none.
func TestDPRanks(t *testing.T) {
	q := Query{Workload: "agentx", GPU: "gb300", AgentX: "duration=300"}
	dep, err := Predict(resolved(t, q), topo(t, "agg:dep4"), 32, 6)
	if err != nil {
		t.Fatal(err)
	}
	if dep.RankImbalance < 1 || dep.RankImbalance > 4 {
		t.Errorf("dep4 rank imbalance %.3f, want within [1, 4]", dep.RankImbalance)
	}
	if !near(dep.ALRealized, dep.AL, 0.05) {
		t.Errorf("per-rank draws realized AL %.3f, target %.2f", dep.ALRealized, dep.AL)
	}
	tp, err := Predict(resolved(t, q), topo(t, "agg:tp4"), 32, 6)
	if err != nil {
		t.Fatal(err)
	}
	if tp.RankImbalance != 0 {
		t.Errorf("tp4 rank imbalance %.3f, want 0 (no DP attention)", tp.RankImbalance)
	}
}
