package agentx

import (
	"container/heap"
	"math"
	"slices"
	"testing"
)

// fakeServer serves every request at once, independently: the first token
// after 1 s + 1 ms per uncached prompt token (it holds each session's
// previous prompt, so the uncached part is Input - Shared), then 10 ms per
// further output token.
type fakeEnd struct {
	t, first float64
	id       int
}
type fakeHeap []fakeEnd

func (h fakeHeap) Len() int { return len(h) }
func (h fakeHeap) Less(i, j int) bool {
	return h[i].t < h[j].t || (h[i].t == h[j].t && h[i].id < h[j].id)
}
func (h fakeHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *fakeHeap) Push(x any)   { *h = append(*h, x.(fakeEnd)) }
func (h *fakeHeap) Pop() any     { o := *h; x := o[len(o)-1]; *h = o[:len(o)-1]; return x }

type fakeRun struct {
	rp       *Replay
	sent     []Request
	maxTrees int
}

func runFake(t testing.TB, traces []*Trace, edit func(*Config)) *fakeRun {
	t.Helper()
	cfg := DefaultConfig(1)
	if edit != nil {
		edit(&cfg)
	}
	rp, err := NewReplay(traces, cfg)
	if err != nil {
		t.Fatal(err)
	}
	fr := &fakeRun{rp: rp}
	var h fakeHeap
	live := map[int]int{} // tree -> in flight
	treeOf := map[int]int{}
	for steps := 0; !rp.Finished(); steps++ {
		if steps > 10_000_000 {
			t.Fatal("replay does not finish")
		}
		ta, ok := rp.PeekTime()
		if ok && (h.Len() == 0 || ta <= h[0].t) {
			r := rp.Pop()
			if r.Arrival != ta {
				t.Fatalf("popped arrival %g, peeked %g", r.Arrival, ta)
			}
			fr.sent = append(fr.sent, r)
			treeOf[r.ID] = r.Tree
			live[r.Tree]++
			fr.maxTrees = max(fr.maxTrees, len(live))
			first := r.Arrival + 1 + 1e-3*float64(r.Uncached())
			heap.Push(&h, fakeEnd{t: first + 1e-2*float64(r.Output-1), first: first, id: r.ID})
			continue
		}
		if h.Len() == 0 {
			t.Fatal("nothing in flight and nothing due, yet not finished")
		}
		e := heap.Pop(&h).(fakeEnd)
		tree := treeOf[e.id]
		if live[tree]--; live[tree] == 0 {
			delete(live, tree)
		}
		if err := rp.Complete(e.id, e.first, e.t); err != nil {
			t.Fatal(err)
		}
	}
	return fr
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-6 }

// One lane over the fixture, worked by hand (see TestParseTraceFixture for
// the trace): start turn 0, so the first request is a one-token warm-up
// primer; profiling starts when it ends; the 10 s system idle cap pulls the
// next turn in; the subagent runs after the turn that spawns it; the last
// root turn waits for it; the drained lane recycles the trace cold.
func TestReplayByHand(t *testing.T) {
	tr := loadFixture(t)
	fr := runFake(t, []*Trace{tr}, func(c *Config) {
		c.StartMin, c.StartMax, c.WarmupPerLane, c.Duration = 0, 0, 0, 45
	})
	type want struct {
		session, input, output, shared int
		arrival                        float64
		phase                          Phase
	}
	wants := []want{
		{0, 640, 1, 0, 0, Warmup},           // primer: ends at 1.64, profiling starts
		{0, 1000, 50, 640, 11.64, Profile},  // 1.64 + 15 s gap, shifted 5 s by the 10 s system cap
		{1, 300, 20, 0, 14.49, Profile},     // spawning turn ends 13.49, + 1 s offset from the spawn
		{1, 400, 30, 300, 22.98, Profile},   // 15.98 + 7
		{0, 1200, 10, 1000, 34.37, Profile}, // join at 24.37 + 17, shifted 7 s
		{2, 640, 100, 0, 35.66, Profile},    // recycled play, cold, turn 0
	}
	if len(fr.sent) != len(wants) {
		t.Fatalf("sent %d requests, want %d: %+v", len(fr.sent), len(wants), fr.sent)
	}
	for i, w := range wants {
		s := fr.sent[i]
		if s.Session != w.session || s.Input != w.input || s.Output != w.output || s.Shared != w.shared || !near(s.Arrival, w.arrival) || s.Phase != w.phase {
			t.Errorf("request %d: got %+v, want %+v", i, s, w)
		}
	}
	st := fr.rp.Stats()
	// Shifts: 5 s and 7 s above, then 5 s at 38.29 (the recycled turn 1,
	// due at 53.29, moves to 48.29: past the window, so it is not sent).
	if st.IdleShifts != 3 || !near(st.IdleShiftS, 17) || st.Trees != 2 || st.WarmupRequests != 1 {
		t.Errorf("stats %+v: want 3 idle shifts of 17 s in all, 2 trees, 1 warm-up request", st)
	}
	t0, t1, ok := fr.rp.Window()
	if !ok || !near(t0, 1.64) || !near(t1, 46.64) {
		t.Errorf("window [%g, %g)", t0, t1)
	}
	m := Measure(fr.rp.Records(), t0, t1)
	// E2EL of the five profiled requests: 1.85, 1.49, 1.39, 1.29, 2.63 s.
	if m.Requests != 5 || !near(m.E2EL.P50, 1.49) || !near(m.E2EL.P90, 1.85+0.6*(2.63-1.85)) {
		t.Errorf("metrics %+v", m.E2EL)
	}
	// (3540 in + 210 out) tokens over 38.29 - 11.64 s.
	if !near(m.TotalTPS, 3750/(38.29-11.64)) {
		t.Errorf("total tokens/s %g, want %g", m.TotalTPS, 3750/(38.29-11.64))
	}
}

// Without the system cap, the 300 s tree cap bounds a long think time.
func TestReplayTreeIdleCap(t *testing.T) {
	tr := loadFixture(t)
	tr.Requests[1].Gap = 1000
	fr := runFake(t, []*Trace{tr}, func(c *Config) {
		c.StartMin, c.StartMax, c.WarmupPerLane, c.Duration = 0, 0, 0, 400
		c.SystemIdleCap = math.Inf(1)
	})
	if got := fr.sent[1].Arrival; !near(got, 1.64+300) {
		t.Errorf("second request at %g s, want %g", got, 1.64+300)
	}
}

// At concurrency well above the trace count, exactly conc trees are live
// (lanes wrap-fill the pool), warm-up primes every lane, and a run over the
// embedded corpus reaches a steady state: total tokens/s in the last two
// quarters of the window within 15% of each other.
func TestReplayDefaultCorpusSteady(t *testing.T) {
	ts, err := DefaultTraces()
	if err != nil {
		t.Fatal(err)
	}
	fr := runFake(t, ts, func(c *Config) { c.Conc, c.Duration = 704, 1800 })
	if fr.maxTrees > 704 {
		t.Errorf("%d trees live at once, more than --conc 704", fr.maxTrees)
	}
	st := fr.rp.Stats()
	if st.UsableTraces > 393 || st.Trees <= 704 {
		t.Errorf("stats %+v", st)
	}
	t0, t1, _ := fr.rp.Window()
	m := Measure(fr.rp.Records(), t0, t1)
	q := m.QuarterTPS
	if q[3] == 0 || math.Abs(q[2]/q[3]-1) > 0.15 {
		t.Errorf("quarters %v: not steady", q)
	}
	if m.SharedTokens == 0 || float64(m.SharedTokens)/float64(m.InputTokens) < 0.8 {
		t.Errorf("shared %d of %d input tokens", m.SharedTokens, m.InputTokens)
	}
	t.Logf("%d profiled requests, stats %+v, quarters %v, shared %.3f, p90 E2EL %.2f s", m.Requests, st, q, float64(m.SharedTokens)/float64(m.InputTokens), m.E2EL.P90)
}

// TestPreparedReplay checks that replays started from one Prepared corpus
// send and record what NewReplay's do, and that a config the corpus was not
// prepared for is refused.
func TestPreparedReplay(t *testing.T) {
	traces, err := DefaultTraces()
	if err != nil {
		t.Fatal(err)
	}
	cfg := DefaultConfig(16)
	cfg.Duration = 600
	p, err := Prepare(traces, cfg.MaxTraces, cfg.MaxContext)
	if err != nil {
		t.Fatal(err)
	}
	// run answers every request 1.5 s after it is sent.
	run := func(rp *Replay, err error) []Record {
		if err != nil {
			t.Fatal(err)
		}
		var fl doneHeap
		for !rp.Finished() {
			if at, ok := rp.PeekTime(); ok && (len(fl) == 0 || at <= fl[0].t) {
				q := rp.Pop()
				heap.Push(&fl, done{q.Arrival + 1.5, q.ID})
				continue
			}
			if len(fl) == 0 {
				break
			}
			d := heap.Pop(&fl).(done)
			if err := rp.Complete(d.id, d.t, d.t); err != nil {
				t.Fatal(err)
			}
		}
		return rp.Records()
	}
	want := run(NewReplay(traces, cfg))
	for range 2 { // a second replay reads the same Prepared
		got := run(p.Replay(cfg))
		if len(got) == 0 || !slices.Equal(got, want) {
			t.Fatalf("prepared replay recorded %d requests, NewReplay %d (or they differ)", len(got), len(want))
		}
	}
	bad := cfg
	bad.MaxContext = 100000
	if _, err := p.Replay(bad); err == nil {
		t.Error("a replay with another max-context over the prepared corpus was accepted")
	}
}

// newTraceInfo's per-request table, on a tree worked by hand: a root
// chain 0, 2, 4 that spawns subagent chain 1, 3 at turn 0 and joins it at
// turn 2, and a side chain of one request, 5.
func TestTraceInfoByHand(t *testing.T) {
	tr := &Trace{Sessions: []uint8{KindRoot, KindSubagent, KindSide}, Requests: []TraceRequest{
		{Session: 0, In: 100, Out: 10, From: -1, Gap: 0.5},
		{Session: 1, In: 50, Out: 5, Shared: 40, From: 0, Gap: 1, Preds: []int32{0}},
		{Session: 0, In: 200, Out: 20, Shared: 100, From: -1, Gap: 2, Preds: []int32{0}},
		{Session: 1, In: 80, Out: 8, Shared: 50, From: -1, Gap: 3, Preds: []int32{1}},
		{Session: 0, In: 300, Out: 30, Shared: 200, From: -1, Gap: 4, Preds: []int32{2, 3}},
		{Session: 2, In: 60, Out: 6, From: -1, Gap: 5},
	}}
	info := newTraceInfo(7, tr)
	for p, w := range []struct {
		dependants  []int32
		turn, preds int32
	}{
		{[]int32{1, 2}, 0, 0},
		{[]int32{3}, 0, 1},
		{[]int32{4}, 1, 1},
		{[]int32{4}, 1, 1},
		{nil, 2, 2},
		{nil, 0, 0},
	} {
		q, n := &tr.Requests[p], info.nodes[p]
		if got := info.dependants(int32(p)); !slices.Equal(got, w.dependants) {
			t.Errorf("request %d: dependants %v, want %v", p, got, w.dependants)
		}
		if n.turn != w.turn || info.preds[p] != w.preds || n.npred != w.preds {
			t.Errorf("request %d: turn %d, %d (node %d) preds; want %d, %d", p, n.turn, info.preds[p], n.npred, w.turn, w.preds)
		}
		if n.gap != q.Gap || n.session != q.Session || n.in != q.In || n.out != q.Out || n.shared != q.Shared || n.from != q.From {
			t.Errorf("request %d: node %+v does not carry %+v", p, n, *q)
		}
	}
	if !slices.Equal(info.sources, []int32{0, 5}) || !slices.Equal(info.roots, []int32{0, 2, 4}) || info.lastRt != 4 ||
		info.subagents != 1 || info.idx != 7 {
		t.Errorf("sources %v, roots %v, last root %d, %d subagents, index %d; want [0 5], [0 2 4], 4, 1, 7",
			info.sources, info.roots, info.lastRt, info.subagents, info.idx)
	}
}

// BenchmarkReplay1024 is the client side of one refinement simulation
// (900 s window at concurrency 1024 over the embedded corpus, prepared
// once) against a server that answers each request alone: the first
// token 1 s + 1 ms per uncached prompt token after it is sent, then 10 ms
// per further token.
func BenchmarkReplay1024(b *testing.B) {
	traces, err := DefaultTraces()
	if err != nil {
		b.Fatal(err)
	}
	cfg := DefaultConfig(1024)
	cfg.Duration = 900
	p, err := Prepare(traces, cfg.MaxTraces, cfg.MaxContext)
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		rp, err := p.Replay(cfg)
		if err != nil {
			b.Fatal(err)
		}
		var fl fakeHeap
		for !rp.Finished() {
			if at, ok := rp.PeekTime(); ok && (len(fl) == 0 || at <= fl[0].t) {
				q := rp.Pop()
				first := q.Arrival + 1 + 1e-3*float64(q.Uncached())
				heap.Push(&fl, fakeEnd{t: first + 1e-2*float64(q.Output-1), first: first, id: q.ID})
				continue
			}
			e := heap.Pop(&fl).(fakeEnd)
			if err := rp.Complete(e.id, e.first, e.t); err != nil {
				b.Fatal(err)
			}
		}
		t0, t1, _ := rp.Window()
		rp.Measure(t0, t1)
	}
}
