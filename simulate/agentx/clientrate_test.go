package agentx

import (
	"math"
	"testing"
)

// ClientRate on a four-turn chain (gaps 2 s, 100 tokens in, 10 out), one
// lane from turn 0 without warm-up turns or idle caps, over a 12 s window,
// worked by hand: the primer (turn 0) ends at svc and opens the window;
// turns 1-3 follow each 2 s after the previous ends; the drained tree
// restarts cold at turn 0 with no gap; nothing arrives at or after the
// window's end.
func TestClientRateByHand(t *testing.T) {
	tr := &Trace{Name: "chain", Sessions: []uint8{KindRoot}}
	for i := range 4 {
		q := TraceRequest{Session: 0, In: 100, Out: 10, From: -1, Gap: 2}
		if i == 0 {
			q.Gap = 0
		} else {
			q.Preds = []int32{int32(i - 1)}
		}
		tr.Requests = append(tr.Requests, q)
	}
	cfg := Config{Conc: 1, Duration: 12, SystemIdleCap: math.Inf(1), TraceIdleCap: math.Inf(1), Seed: 1}
	for _, c := range []struct {
		svc, rate float64
		n         int
	}{
		// Window [1, 13): arrivals 3, 6, 9, then the restart at 10 (ends 11).
		{1, 4.0 / (11 - 3), 4},
		// Window [0, 12): arrivals 2, 4, 6, 6 (restart), 8, 10.
		{0, 6.0 / (10 - 2), 6},
	} {
		rate, recs, err := ClientRate([]*Trace{tr}, cfg, c.svc)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(rate-c.rate) > 1e-9 || len(recs) != c.n {
			t.Errorf("svc %g: rate %g over %d requests, want %g over %d", c.svc, rate, len(recs), c.rate, c.n)
		}
		for _, r := range recs {
			if r.Input != 100 || r.Output != 10 || r.Phase != Profile {
				t.Errorf("svc %g: profiled %+v, want 100 in, 10 out", c.svc, r.Request)
			}
		}
	}
}
