package agentx

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
)

// Config is the replay as InferenceX's build_replay_cmd
// (benchmarks/benchmark_lib.sh, InferenceX 843c6254, AIPerf pinned at
// utils/aiperf 754356e9) runs AIPerf's inferencex-agentx-mvp scenario.
type Config struct {
	// Conc is --concurrency: live session trees.
	Conc int
	// Duration is --benchmark-duration, the profiled window in seconds
	// (InferenceX workflow input "duration", default 3600; AIPerf's own
	// scenario default is 1800).
	Duration float64
	// StartMin and StartMax bound each lane's sampled start turn as a
	// fraction of the root conversation's turns
	// (--trajectory-start-min-ratio 0.25 / --trajectory-start-max-ratio 0.75).
	StartMin, StartMax float64
	// WarmupPerLane is --warmup-requests-per-lane (10): after the start-turn
	// primer, each lane advances by this many one-token requests with no
	// idle delay before profiling starts.
	WarmupPerLane int
	// SystemIdleCap is the scenario's --system-idle-gap-cap-seconds (10):
	// when nothing is in flight, every pending timer shifts so the next
	// request arrives within it.
	SystemIdleCap float64
	// TraceIdleCap is --trace-idle-gap-cap-seconds (InferenceX
	// AIPERF_TRACE_IDLE_GAP_CAP_SECONDS, 300): the same shift per session
	// tree while that tree has nothing in flight. +Inf turns it off.
	TraceIdleCap float64
	// MaxContext drops traces whose peak prompt+output exceeds it
	// (--max-context-length $MAX_MODEL_LEN); 0 keeps all.
	MaxContext int
	// MaxTraces is --num-dataset-entries (393): the loader keeps the first
	// that many traces. 0 keeps all.
	MaxTraces int
	// Seed is --random-seed (42): it fixes lanes, start turns and recycle
	// order.
	Seed uint64
}

// MaxDuration is the longest profiled window, in seconds: six days, so
// that the warm-up before it and the drain after it fit in the seven
// simulated days at which the simulation stops (simulate's maxSimSeconds).
const MaxDuration = 6 * 24 * 3600

// DefaultConfig is the replay InferenceX ran at concurrency conc.
func DefaultConfig(conc int) Config {
	return Config{Conc: conc, Duration: 3600, StartMin: 0.25, StartMax: 0.75, WarmupPerLane: 10,
		SystemIdleCap: 10, TraceIdleCap: 300, MaxContext: 0, MaxTraces: 393, Seed: 42}
}

// ConfigError is a Config number out of range: Key is the AgentX key that
// sets it ("duration", "start-min", ...; "conc" for Conc), Value what it
// held, Reason what is wanted.
type ConfigError struct {
	Key, Value, Reason string
}

func (e *ConfigError) Error() string {
	return fmt.Sprintf("agentx %s %s: %s", e.Key, e.Value, e.Reason)
}

// Validate checks the numbers; a bad one is a [*ConfigError].
func (c *Config) Validate() error {
	bad := func(key string, v float64, reason string) error {
		return &ConfigError{Key: key, Value: strconv.FormatFloat(v, 'g', -1, 64), Reason: reason}
	}
	switch {
	case c.Conc < 1 || c.Conc > 1<<16:
		return bad("conc", float64(c.Conc), fmt.Sprintf("want 1..%d session trees", 1<<16))
	case !(c.Duration > 0 && c.Duration <= MaxDuration):
		return bad("duration", c.Duration, fmt.Sprintf("want (0, %d] seconds (the simulation stops at 7 simulated days, which hold the warm-up and the drain too)", int(MaxDuration)))
	case !(c.StartMin >= 0 && c.StartMin <= 1):
		return bad("start-min", c.StartMin, "want [0, 1], at most start-max")
	case !(c.StartMax >= 0 && c.StartMax <= 1):
		return bad("start-max", c.StartMax, "want [0, 1], at least start-min")
	case c.StartMin > c.StartMax:
		return bad("start-min", c.StartMin, fmt.Sprintf("above start-max %g: want start-min <= start-max", c.StartMax))
	case c.WarmupPerLane < 0 || c.WarmupPerLane > 1<<20:
		return bad("warmup-per-lane", float64(c.WarmupPerLane), fmt.Sprintf("want 0..%d requests", 1<<20))
	case !(c.SystemIdleCap >= 0):
		return bad("system-idle-cap", c.SystemIdleCap, "want >= 0 seconds (off = no cap)")
	case !(c.TraceIdleCap >= 0):
		return bad("trace-idle-cap", c.TraceIdleCap, "want >= 0 seconds (off = no cap)")
	case c.MaxContext < 0:
		return bad("max-context", float64(c.MaxContext), "want >= 0 tokens (0 keeps all)")
	case c.MaxTraces < 0:
		return bad("max-traces", float64(c.MaxTraces), "want >= 0 (0 keeps all)")
	}
	return nil
}

// request states within a tree
const (
	stWaiting  uint8 = iota // predecessors outstanding
	stHeld                  // ready during warm-up, released when profiling starts
	stPending               // arrival scheduled
	stInFlight              // sent
	stDone                  // completed, or skipped before the lane's start
)

type traceInfo struct {
	idx   int
	k     int32 // index in Prepared.infos
	tr    *Trace
	nodes []node  // by position
	deps  []int32 // dependants of requests with more than one (see node)
	preds []int32 // how many predecessors each request has
	// sources are the requests without predecessors, in order.
	sources   []int32
	subagents int     // subagent sessions
	roots     []int32 // positions of the root's main chain
	lastRt    int32   // last root-chain position
}

// node is what a replay reads of one request once it is due: its
// TraceRequest's numbers, its turn in its session and its dependants, in
// 48 bytes (a TraceRequest alone takes 64).
type node struct {
	gap                                  float64
	session, in, out, shared, from, turn int32
	npred                                int32
	// deps is {d, -1} for one dependant d (most requests have one: the
	// session's next turn), else the range of info.deps that holds them.
	deps [2]int32
}

// dependants are the requests that wait on request p.
func (info *traceInfo) dependants(p int32) []int32 {
	return info.depsOf(&info.nodes[p].deps)
}

// depsOf are the dependants that a node's deps, or its copy d, name.
func (info *traceInfo) depsOf(d *[2]int32) []int32 {
	if d[1] < 0 {
		return d[:1]
	}
	return info.deps[d[0]:d[1]]
}

type tree struct {
	id, lane, sessBase int
	info               *traceInfo
	reqs               []reqState // by position in the trace
	cut                int32      // the last request skipped or primed at the lane's start; -1 on a recycled play
	remaining          int
	warmLeft           int
	// pending are the tree's requests emitted and not yet sent, in the
	// order emitted, among ones sent since (Pop leaves them for
	// pendingNow to drop); the lane's npend counts the first kind.
	pending []int // by ID
	held    []int32
}

// laneCount is what a lane's tree has in flight and emitted unsent. Only
// a lane's latest tree can have either: a lane takes a new tree once the
// old one's requests are all done.
type laneCount struct {
	inflight, npend int32
}

// pendingNow drops the sent requests from tr.pending and returns it.
func (r *Replay) pendingNow(tr *tree) []int {
	keep := tr.pending[:0]
	for _, id := range tr.pending {
		if r.req(id).state == stPending {
			keep = append(keep, id)
		}
	}
	tr.pending = keep
	return keep
}

// reqState is one request of a tree: what finish reads and writes
// together, side by side. From emitted until finished its state stays
// stPending (Pop does not touch it): the liveReq says whether it is sent.
type reqState struct {
	readyAt float64
	left    int32 // predecessors outstanding
	state   uint8
}

// liveReq is an emitted request: of its tree, r.trees[Tree], it is
// request pos. It holds no pointer, so the GC does not scan the chunks.
type liveReq struct {
	Request
	info  int32 // r.infos[info] is the tree's
	pos   int32
	deps  [2]int32 // its node's, for finish
	state uint8    // stPending, stInFlight or stDone
}

// liveChunk is how many liveReqs emit allocates at once.
const liveChunk = 512

// Replay is one AgentX client run: it emits Requests in arrival order and
// is told when each completes. The serving side drives it:
//
//	for !rp.Finished() {
//		if t, ok := rp.PeekTime(); ok && t <= nextServerEvent {
//			req := rp.Pop() // arrives at req.Arrival
//			...
//		} else {
//			... advance the server; for each request that ends:
//			rp.Complete(id, firstTokenTime, endTime)
//		}
//	}
type Replay struct {
	cfg      Config
	infos    []*traceInfo
	rng      *rand.Rand
	perm     []int
	drawn    int
	pend     pendHeap
	live     [][]liveReq // by ID, liveChunk to a chunk: see req
	nlive    int
	lanes    []*tree
	counts   []laneCount // by lane
	trees    []*tree     // by ID
	sessions int
	inflight int
	warming  bool
	t0, end  float64
	rec      records
	stats    Stats
}

// Stats counts what the client did.
type Stats struct {
	UsableTraces     int     `json:"usable_traces"`
	Trees            int     `json:"trees"`
	Sessions         int     `json:"sessions"`
	SubagentSessions int     `json:"subagent_sessions"`
	WarmupRequests   int     `json:"warmup_requests"`
	WarmupSeconds    float64 `json:"warmup_s"`
	IdleShifts       int     `json:"system_idle_shifts"`
	IdleShiftS       float64 `json:"system_idle_shift_s"`
	TreeShifts       int     `json:"tree_idle_shifts"`
	TreeShiftS       float64 `json:"tree_idle_shift_s"`
}

// NewReplay prepares a run over traces (in corpus order).
func NewReplay(traces []*Trace, cfg Config) (*Replay, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	p, err := Prepare(traces, cfg.MaxTraces, cfg.MaxContext)
	if err != nil {
		return nil, err
	}
	return p.replay(cfg), nil
}

// Prepared is a corpus made ready for replays under one MaxTraces and
// MaxContext: the usable traces and what a replay reads of each (their
// dependants, turn numbers, root chains), built once. Replays only read
// it, so any number of them, in any goroutines, can share it; the traces
// must not change while it is in use.
type Prepared struct {
	infos                 []*traceInfo
	maxTraces, maxContext int
}

// Prepare keeps the traces a replay under maxTraces and maxContext uses.
func Prepare(traces []*Trace, maxTraces, maxContext int) (*Prepared, error) {
	if maxTraces > 0 && len(traces) > maxTraces {
		traces = traces[:maxTraces]
	}
	p := &Prepared{maxTraces: maxTraces, maxContext: maxContext}
	for i, t := range traces {
		if maxContext > 0 && t.PeakContext() > maxContext {
			continue
		}
		info := newTraceInfo(i, t)
		if len(info.roots) < 2 { // AIPerf skips traces too short for a warm-up and a profiled turn
			continue
		}
		info.k = int32(len(p.infos))
		p.infos = append(p.infos, info)
	}
	if len(p.infos) == 0 {
		return nil, errors.New("agentx: no usable trace (each needs two root turns and a peak context within --max-context)")
	}
	return p, nil
}

// Replay starts a run over p under cfg, whose MaxTraces and MaxContext
// must be the ones p was prepared for.
func (p *Prepared) Replay(cfg Config) (*Replay, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.MaxTraces != p.maxTraces || cfg.MaxContext != p.maxContext {
		return nil, fmt.Errorf("agentx: replay with max-traces %d and max-context %d over a corpus prepared for %d and %d", cfg.MaxTraces, cfg.MaxContext, p.maxTraces, p.maxContext)
	}
	return p.replay(cfg), nil
}

func (p *Prepared) replay(cfg Config) *Replay {
	r := &Replay{cfg: cfg, rng: rand.New(rand.NewPCG(cfg.Seed, 0xa6e47)), warming: true, lanes: make([]*tree, cfg.Conc),
		counts: make([]laneCount, cfg.Conc), infos: p.infos}
	r.stats.UsableTraces = len(r.infos)
	for lane := range cfg.Conc {
		r.startTree(lane, r.draw(), 0, true)
	}
	r.maybeStartProfiling(0)
	return r
}

func newTraceInfo(idx int, t *Trace) *traceInfo {
	n := len(t.Requests)
	info := &traceInfo{idx: idx, tr: t, nodes: make([]node, n), preds: make([]int32, n), lastRt: -1}
	// Dependants in the order the requests list them, each request's in
	// one run of deps (a counting sort by predecessor).
	depOff := make([]int32, n+1)
	for p := range t.Requests {
		for _, d := range t.Requests[p].Preds {
			depOff[d+1]++
		}
	}
	for p := range n {
		depOff[p+1] += depOff[p]
	}
	info.deps = make([]int32, depOff[n])
	next := append([]int32(nil), depOff[:n]...)
	for p := range t.Requests {
		for _, d := range t.Requests[p].Preds {
			info.deps[next[d]] = int32(p)
			next[d]++
		}
	}
	for _, k := range t.Sessions {
		if k == KindSubagent {
			info.subagents++
		}
	}
	count := make([]int32, len(t.Sessions))
	for p := range t.Requests {
		q := &t.Requests[p]
		info.nodes[p] = node{gap: q.Gap, session: q.Session, in: q.In, out: q.Out, shared: q.Shared, from: q.From,
			turn: count[q.Session], npred: int32(len(q.Preds)), deps: [2]int32{depOff[p], depOff[p+1]}}
		if depOff[p+1]-depOff[p] == 1 {
			info.nodes[p].deps = [2]int32{info.deps[depOff[p]], -1}
		}
		info.preds[p] = int32(len(q.Preds))
		if len(q.Preds) == 0 {
			info.sources = append(info.sources, int32(p))
		}
		count[q.Session]++
		if t.Sessions[q.Session] == KindRoot {
			info.roots = append(info.roots, int32(p))
			info.lastRt = int32(p)
		}
	}
	return info
}

// draw is the dataset sampler: a seeded shuffle, every trace once per pass.
func (r *Replay) draw() *traceInfo {
	n := len(r.infos)
	if r.drawn%n == 0 {
		r.perm = r.rng.Perm(n)
	}
	i := r.perm[r.drawn%n]
	r.drawn++
	return r.infos[i]
}

func (r *Replay) startTree(lane int, info *traceInfo, now float64, warm bool) {
	t := info.tr
	n := len(t.Requests)
	var reqs []reqState
	if old := r.lanes[lane]; old != nil && cap(old.reqs) >= n {
		// The lane's last tree is done with its requests.
		reqs, old.reqs = old.reqs[:n], nil
	} else {
		reqs = make([]reqState, n)
	}
	tr := &tree{id: len(r.trees), lane: lane, sessBase: r.sessions, info: info, reqs: reqs, remaining: n, cut: -1}
	r.lanes[lane] = tr
	r.trees = append(r.trees, tr)
	r.sessions += len(t.Sessions)
	r.stats.SubagentSessions += info.subagents
	for p, k := range info.preds {
		tr.reqs[p] = reqState{readyAt: now, left: k}
	}
	if !warm {
		// A recycled play starts at turn 0; its first turn carries a fresh
		// cache-bust marker, so nothing of an earlier play is shared.
		for _, p := range info.sources {
			r.ready(tr, p, now)
		}
		return
	}
	tr.warmLeft = r.cfg.WarmupPerLane
	// The lane's start: root turn k sampled in [StartMin, StartMax] of the
	// root's turns, leaving at least one root turn to profile.
	nr := len(info.roots)
	u := r.cfg.StartMin + (r.cfg.StartMax-r.cfg.StartMin)*r.rng.Float64()
	k := max(0, min(int(u*float64(nr)), nr-2))
	cut := info.roots[k]
	tr.cut = cut
	// Requests up to the start are history: the latest of each session that
	// continues afterwards is replayed as a one-token warm-up primer with its
	// full prompt (nothing cached yet); the rest are skipped.
	last := make([]int32, len(t.Sessions)) // by session; read only where set
	for p := int32(0); p <= cut; p++ {
		last[t.Requests[p].Session] = p
	}
	continues := make([]bool, len(t.Sessions))
	for p := cut + 1; p < int32(n); p++ {
		continues[t.Requests[p].Session] = true
	}
	var primers []int32
	for p := int32(0); p <= cut; p++ {
		s := t.Requests[p].Session
		if last[s] == p && continues[s] {
			primers = append(primers, p)
			tr.reqs[p].state = stPending // keep dependants waiting
		}
	}
	for p := int32(0); p <= cut; p++ {
		if tr.reqs[p].state != stWaiting {
			continue
		}
		tr.reqs[p].state = stDone
		tr.remaining--
		for _, d := range info.dependants(p) {
			if d > cut {
				tr.reqs[d].left--
			}
		}
	}
	for p := cut + 1; p < int32(n); p++ {
		if tr.reqs[p].left == 0 {
			r.ready(tr, p, now)
		}
	}
	for _, p := range primers {
		r.emit(tr, p, now, Warmup, 1, 0)
	}
}

// ready is called when request p's predecessors are all done, the last at t.
func (r *Replay) ready(tr *tree, p int32, t float64) {
	if tr.reqs[p].state == stWaiting {
		r.release(tr, p, t)
	}
}

// release sends or holds p, which waited (its predecessors done, none
// left) and is ready at t.
func (r *Replay) release(tr *tree, p int32, t float64) {
	q := &tr.info.nodes[p]
	switch {
	case r.warming && tr.warmLeft > 0 && p != tr.info.lastRt:
		tr.warmLeft--
		tr.reqs[p] = reqState{readyAt: t, state: stPending}
		r.emit(tr, p, t, Warmup, 1, int(q.shared))
	case r.warming:
		tr.reqs[p] = reqState{readyAt: t, state: stHeld}
		tr.held = append(tr.held, p)
	default:
		tr.reqs[p] = reqState{readyAt: t, state: stPending}
		r.emit(tr, p, t+q.gap, Profile, int(q.out), int(q.shared))
	}
}

func (r *Replay) emit(tr *tree, p int32, at float64, ph Phase, out, shared int) {
	q := &tr.info.nodes[p]
	from := -1
	if q.from >= 0 && shared > 0 {
		from = tr.sessBase + int(q.from)
	}
	if r.nlive%liveChunk == 0 {
		r.live = append(r.live, make([]liveReq, liveChunk))
	}
	l := r.req(r.nlive)
	*l = liveReq{Request: Request{ID: r.nlive, Tree: tr.id, Lane: tr.lane, Session: tr.sessBase + int(q.session),
		Trace: tr.info.idx, Turn: int(q.turn), Arrival: at, Input: int(q.in), Output: max(out, 1),
		Shared: shared, From: from, Phase: ph}, info: tr.info.k, pos: p, deps: q.deps, state: stPending}
	tr.reqs[p].state = stPending
	if ph == Warmup {
		r.stats.WarmupRequests++
	}
	r.nlive++
	c := &r.counts[tr.lane]
	if len(tr.pending) >= 2*int(c.npend)+16 {
		r.pendingNow(tr)
	}
	tr.pending = append(tr.pending, l.ID)
	c.npend++
	r.pend.push(pendEntry{l.Arrival, l.ID})
}

// finish marks p done at t and releases its dependants deps (info is
// tr.info).
func (r *Replay) finish(tr *tree, info *traceInfo, p int32, deps []int32, t float64) {
	tr.reqs[p].state = stDone
	tr.remaining--
	for _, d := range deps {
		if info.nodes[d].npred == 1 && d > tr.cut {
			// d waited on p alone since the tree started (by t), so it
			// is waiting: its state need not be read.
			r.release(tr, d, t)
			continue
		}
		st := &tr.reqs[d]
		if st.state != stWaiting {
			continue
		}
		st.readyAt = max(st.readyAt, t)
		if st.left--; st.left == 0 {
			r.ready(tr, d, st.readyAt)
		}
	}
}

// maybeStartProfiling starts the profiled window at t once the warm-up has
// drained (AIPerf's warm-up barrier) and releases every turn held during
// the warm-up together. AIPerf (ai-dynamo/aiperf 01a1885,
// src/aiperf/timing/strategies/agentic_replay.py) does the same:
// AgenticReplayStrategy._execute_profiling resumes every lane at once after
// the barrier, and _snapshot_continuation_after_warmup dispatches each
// lane's first continuation immediately (next_dispatch_offset_ms 0), where
// a held turn here still keeps what is left of its recorded gap. InferenceX
// pins AIPerf 754356e9, which was not available to compare.
func (r *Replay) maybeStartProfiling(t float64) {
	if !r.warming || r.inflight > 0 || r.pend.Len() > 0 {
		return
	}
	r.warming = false
	r.t0 = t
	r.end = t + r.cfg.Duration
	r.stats.WarmupSeconds = t
	for _, tr := range r.lanes {
		held := tr.held
		tr.held = nil
		for _, p := range held {
			q := &tr.info.nodes[p]
			r.emit(tr, p, max(t, tr.reqs[p].readyAt+q.gap), Profile, int(q.out), int(q.shared))
		}
		r.capTree(tr, t)
	}
	r.capSystem(t)
}

// capTree applies the per-tree idle cap at t: when the tree has nothing in
// flight, its pending timers shift together so the next arrives within
// TraceIdleCap.
func (r *Replay) capTree(tr *tree, t float64) {
	if c := r.counts[tr.lane]; c.inflight > 0 || c.npend == 0 || math.IsInf(r.cfg.TraceIdleCap, 1) || r.closed(t) {
		return
	}
	pending := r.pendingNow(tr)
	first := math.Inf(1)
	for _, id := range pending {
		first = min(first, r.req(id).Arrival)
	}
	if ex := first - (t + r.cfg.TraceIdleCap); ex > 0 {
		for _, id := range pending {
			l := r.req(id)
			l.Arrival -= ex
			i := slices.IndexFunc(r.pend, func(e pendEntry) bool { return e.id == l.ID })
			r.pend[i].at = l.Arrival
			r.pend.fix(i)
		}
		r.stats.TreeShifts++
		r.stats.TreeShiftS += ex
	}
}

// closed reports that the profiled window ended by t.
func (r *Replay) closed(t float64) bool { return !r.warming && t >= r.end }

// capSystem applies the scenario's whole-system idle cap at t.
func (r *Replay) capSystem(t float64) {
	if r.inflight > 0 || r.pend.Len() == 0 || math.IsInf(r.cfg.SystemIdleCap, 1) || r.closed(t) {
		return
	}
	if ex := r.pend[0].at - (t + r.cfg.SystemIdleCap); ex > 0 {
		for i := range r.pend { // a uniform shift keeps the heap order
			l := r.req(r.pend[i].id)
			l.Arrival -= ex
			r.pend[i].at = l.Arrival
		}
		r.stats.IdleShifts++
		r.stats.IdleShiftS += ex
	}
}

// PeekTime is the arrival time of the next request, if one is due before
// the profiled window closes.
func (r *Replay) PeekTime() (float64, bool) {
	if r.pend.Len() == 0 {
		return 0, false
	}
	t := r.pend[0].at
	if !r.warming && t >= r.end {
		return 0, false // nothing new starts after the duration ends
	}
	return t, true
}

// Pop sends the next request; call it only when PeekTime says one is due.
func (r *Replay) Pop() Request {
	l := r.req(r.pend.pop())
	c := &r.counts[l.Lane]
	c.npend--
	c.inflight++
	l.state = stInFlight
	r.inflight++
	return l.Request
}

// Complete reports that request id produced its first token at first and
// its last at end (seconds). It releases the requests that waited on it,
// recycles a drained lane, and applies the idle caps.
func (r *Replay) Complete(id int, first, end float64) error {
	if id < 0 || id >= r.nlive {
		return fmt.Errorf("agentx: no request %d", id)
	}
	l := r.req(id)
	if l.state != stInFlight {
		return fmt.Errorf("agentx: request %d is not in flight", id)
	}
	if l.Phase == Profile {
		r.rec.add(Record{Request: l.Request, First: first, End: end})
	}
	// The tree and the trace's node table, both named by l, so that
	// their loads need not wait on each other.
	tr, info := r.trees[l.Tree], r.infos[l.info]
	l.state = stDone
	r.counts[l.Lane].inflight--
	r.inflight--
	r.finish(tr, info, l.pos, info.depsOf(&l.deps), end)
	if tr.remaining == 0 && r.lanes[tr.lane] == tr && (r.warming || end < r.end) {
		// The whole tree drained (nothing of it left to cap): the lane
		// takes the sampler's next trace.
		r.startTree(tr.lane, r.draw(), end, false)
		r.capTree(r.lanes[tr.lane], end)
	} else {
		r.capTree(tr, end)
	}
	r.maybeStartProfiling(end)
	r.capSystem(end)
	return nil
}

// req is the request with ID id.
func (r *Replay) req(id int) *liveReq { return &r.live[id/liveChunk][id%liveChunk] }

// Finished reports that the profiled window closed and every profiled
// request completed.
func (r *Replay) Finished() bool {
	if r.warming || r.inflight > 0 {
		return false
	}
	_, due := r.PeekTime()
	return !due
}

// InFlight is the number of requests sent and not completed.
func (r *Replay) InFlight() int { return r.inflight }

// Window is the profiled window [start, end) in simulated seconds; valid
// once profiling has started.
func (r *Replay) Window() (float64, float64, bool) { return r.t0, r.end, !r.warming }

// Records are the completed profiled requests.
func (r *Replay) Records() []Record { return r.rec.all() }

// Profiled is the number of completed profiled requests, len(Records()).
func (r *Replay) Profiled() int { return r.rec.n }

// Stats reports what the client did so far.
func (r *Replay) Stats() Stats {
	s := r.stats
	s.Trees, s.Sessions = len(r.trees), r.sessions
	return s
}

// pendHeap is the pending requests by arrival, then ID, each entry
// holding its keys: a binary heap that moves its elements exactly as
// container/heap's Push, Pop and Fix do (capSystem's uniform shift can
// round two arrivals equal, after which the order they pop in depends on
// where the heap holds them), with the element in hand kept out of the
// slice while it sifts. An entry names its request by ID (Replay.live),
// so the heap holds no pointer for the GC to track.
type pendHeap []pendEntry

type pendEntry struct {
	at float64 // l.Arrival
	id int     // l.ID
}

func (h pendHeap) Len() int { return len(h) }

func pendLess(a, b *pendEntry) bool {
	if a.at != b.at {
		return a.at < b.at
	}
	return a.id < b.id
}

func (h *pendHeap) push(e pendEntry) {
	*h = append(*h, pendEntry{})
	h.up(len(*h)-1, e)
}

// pop removes the first entry and returns its ID.
func (h *pendHeap) pop() int {
	s := *h
	n := len(s) - 1
	top := s[0].id
	if n > 0 {
		// container/heap swaps the root with the last element and sifts
		// that one down over s[:n].
		s[:n].down(0, n, s[n])
	}
	s[n] = pendEntry{}
	*h = s[:n]
	return top
}

// fix restores the order after h[i]'s arrival changed.
func (h pendHeap) fix(i int) {
	x := h[i]
	if !h.down(i, len(h), x) {
		h.up(i, x)
	}
}

// up sifts x, which belongs at j, toward the root.
func (h pendHeap) up(j int, x pendEntry) {
	for j > 0 {
		i := (j - 1) / 2
		if !pendLess(&x, &h[i]) {
			break
		}
		h[j] = h[i]
		j = i
	}
	h[j] = x
}

// down sifts x, which belongs at i0, toward the leaves of h[:n]; it
// reports whether x moved.
func (h pendHeap) down(i0, n int, x pendEntry) bool {
	i := i0
	for {
		j := 2*i + 1
		if j >= n || j < 0 {
			break
		}
		if j2 := j + 1; j2 < n && pendLess(&h[j2], &h[j]) {
			j = j2
		}
		if !pendLess(&h[j], &x) {
			break
		}
		h[i] = h[j]
		i = j
	}
	h[i] = x
	return i > i0
}

// records keeps completed records in fixed-size chunks: a 3600 s window at
// concurrency 704 profiles some 64,000 requests, and growing one slice
// reallocates and copies them over and over (append grows large slices by
// 1.25x).
type records struct {
	chunks [][]Record
	n      int
	flat   []Record // all(), until the next add
}

const recordChunk = 4096

func (rs *records) add(x Record) {
	if k := len(rs.chunks); k == 0 || len(rs.chunks[k-1]) == recordChunk {
		rs.chunks = append(rs.chunks, make([]Record, 0, recordChunk))
	}
	c := &rs.chunks[len(rs.chunks)-1]
	*c = append(*c, x)
	rs.n++
	rs.flat = nil
}

// all returns the records in completion order, in one slice.
func (rs *records) all() []Record {
	if rs.flat == nil && rs.n > 0 {
		rs.flat = make([]Record, 0, rs.n)
		for _, c := range rs.chunks {
			rs.flat = append(rs.flat, c...)
		}
	}
	return rs.flat
}
