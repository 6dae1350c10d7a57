package simulate

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
)

// Point is one evaluated deployment of a sweep.
type Point struct {
	Result
	// Index is the point's configuration in the unsharded enumeration
	// (topology, then k, then concurrency), so that shards merge in the
	// order one sweep would have produced.
	Index int `json:"index"`
	// MultiNode marks a deployment with an instance larger than one node
	// (the GPU catalog's gpus_per_node): it needs a multi-node launch.
	MultiNode bool `json:"multi_node"`
	// Estimate is the mean-field estimate of a point that was then
	// event-simulated (Merge starts again from it).
	Estimate *Result `json:"estimate,omitempty"`
	// Notes is NotesFor the sweep's workload: "multi-node", "queued: ROLE
	// runs N of M", "unsteady".
	Notes []string `json:"notes,omitempty"`
}

func (p *Point) key() string { return fmt.Sprintf("%s|%d|%d", p.Topology, p.Conc, p.Steps) }

// Frontier returns the Pareto frontier of points by InferenceX's rule for
// an x where smaller is better (E2EL): sort by x ascending (ties: larger y
// first) and keep each point whose y exceeds every y before it; a point
// with the same y at a larger x extends a plateau, one at the same x
// replaces the last. Points with non-positive or non-finite x or y are
// ignored. With higherX (interactivity) x is negated first.
func Frontier(points []Point, x func(*Point) float64, higherX bool) []Point {
	all := make([]int, len(points))
	for i := range all {
		all[i] = i
	}
	return pick(points, frontierOf(points, all, x, higherX))
}

// frontierOf is Frontier of the points at positions in (ascending), as
// positions.
func frontierOf(points []Point, in []int, x func(*Point) float64, higherX bool) []int {
	type cand struct {
		x, y float64
		i    int
	}
	cs := make([]cand, 0, len(in))
	for _, i := range in {
		xv, yv := x(&points[i]), points[i].TputPerGPU
		if !(xv > 0 && yv > 0) || math.IsInf(xv, 0) || math.IsInf(yv, 0) {
			continue
		}
		if higherX {
			xv = -xv
		}
		cs = append(cs, cand{xv, yv, i})
	}
	// By x, then larger y, then position: the order a stable sort of
	// the positions in ascending order gives.
	slices.SortFunc(cs, func(a, b cand) int {
		if c := cmp.Compare(a.x, b.x); c != 0 {
			return c
		}
		if c := cmp.Compare(b.y, a.y); c != 0 {
			return c
		}
		return cmp.Compare(a.i, b.i)
	})
	var out []cand
	maxY := math.Inf(-1)
	for _, c := range cs {
		plateau := len(out) > 0 && c.y == maxY && c.x > out[len(out)-1].x
		if c.y > maxY || plateau {
			if len(out) > 0 && c.x == out[len(out)-1].x {
				out[len(out)-1] = c
			} else {
				out = append(out, c)
			}
			maxY = c.y
		}
	}
	res := make([]int, len(out))
	for i, c := range out {
		res[i] = c.i
	}
	return res
}

// pick is the points at positions at, in that order.
func pick(points []Point, at []int) []Point {
	out := make([]Point, len(at))
	for i, j := range at {
		out[i] = points[j]
	}
	return out
}

// ByInteractivity is the x of the interactivity frontier.
func ByInteractivity(p *Point) float64 { return p.Interactivity }

// ByE2ELp90 is the x of the agentic frontier (p90 end-to-end latency).
func ByE2ELp90(p *Point) float64 { return p.E2EL.P90 }

// ByE2ELp50 is the x of the fixed-length frontier (median latency).
func ByE2ELp50(p *Point) float64 { return p.E2EL.P50 }

// ByNormalizedInteractivity is the x of the E2E normalized interactivity
// frontier (output tokens over p90 E2EL, see Result).
func ByNormalizedInteractivity(p *Point) float64 { return p.NormalizedInteractivity }

// Scope narrows the enumerated topologies.
type Scope string

// Scopes a sweep accepts.
const (
	ScopeAll    Scope = "all"
	ScopeAgg    Scope = "agg"
	ScopeDisagg Scope = "disagg"
)

// ParseScope reads --scope.
func ParseScope(s string) (Scope, error) {
	switch Scope(s) {
	case "", ScopeAll:
		return ScopeAll, nil
	case ScopeAgg, ScopeDisagg:
		return Scope(s), nil
	}
	return "", fmt.Errorf("--scope %q: want agg, disagg or all", s)
}

// Shard selects a deterministic 1/Count of a sweep's topologies: those
// whose enumeration index is Index modulo Count. The zero value is the
// whole sweep.
type Shard struct {
	Index int `json:"index"`
	Count int `json:"count"`
}

// ParseShard reads "I/N" (0 <= I < N <= 4096).
func ParseShard(s string) (Shard, error) {
	i, n, ok := strings.Cut(s, "/")
	a, errA := strconv.Atoi(i)
	b, errB := strconv.Atoi(n)
	if !ok || errA != nil || errB != nil || b < 1 || b > 4096 || a < 0 || a >= b || strings.ContainsAny(s, " +") {
		return Shard{}, fmt.Errorf("--shard %q: want I/N with 0 <= I < N <= 4096, e.g. 0/4", s)
	}
	return Shard{Index: a, Count: b}, nil
}

func (s Shard) whole() bool    { return s.Count <= 1 }
func (s Shard) has(i int) bool { return s.whole() || i%s.Count == s.Index }

// String is "I/N", or "" for the whole sweep.
func (s Shard) String() string {
	if s.whole() {
		return ""
	}
	return fmt.Sprintf("%d/%d", s.Index, s.Count)
}

// SweepSpace is what a sweep enumerates.
type SweepSpace struct {
	GPUs int // total GPUs to deploy (topologies using at most this many)
	// MinPoolGPUs leaves out enumerated deployments with a pool (the
	// aggregated instance, or a disaggregated prefill or decode pool) of
	// fewer GPUs; 0 keeps every one.
	MinPoolGPUs int
	Concs       []int // closed-loop concurrencies
	StepsLo     int
	StepsHi     int
	Topologies  []Topology // explicit list; empty = enumerate for GPUs
	Scope       Scope      // "" = all
	SLA         SLA
	Top         int // also event-simulate and report the Top best points by tokens/s/GPU
	Shard       Shard
	Workers     int // parallel workers; 0 = GOMAXPROCS
	// MaxRefine bounds how many candidates are event-simulated; 0 means
	// DefaultMaxRefine, a negative value no bound. When the bound stops
	// refinement before the frontiers settle, the frontiers are built from
	// the event-simulated points alone and SweepResult.RefineStopped says so.
	MaxRefine int
	// RefineBy ranks the candidates not yet simulated ("": estimate).
	RefineBy RefineBy
}

// DefaultMaxRefine is the refinement budget of a sweep: with AgentX replays
// of a few tenths of a second each, about a minute on two cores.
const DefaultMaxRefine = 400

// DefaultConcs are the concurrencies a sweep tries by default (InferenceX
// conc lists step by powers of two).
func DefaultConcs() []int {
	return []int{1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024}
}

// EnumerateTopologies lists the deployments of at most gpus GPUs that
// engine ("sglang", "vllm", "trtllm"; "" is SGLang) deploys for model m
// (nil: a model with experts): aggregated TP, TP with EP, DEP and TP x PP
// instances, and disaggregated pairs of prefill and decode groups built
// from the same instance shapes (see layoutsOf for each engine's rules).
// Pairs whose pools hold fewer than minPool GPUs each are left out, and
// so are instance shapes that cannot hold m (Parallel.fits: a TP that does
// not divide its attention heads, an EP its experts; the engines refuse
// them at start-up).
func EnumerateTopologies(engine string, gpus int, m *Model, minPool int) []Topology {
	l := layoutsOf(engine)
	var shapes []Parallel
	for _, s := range l.instanceShapes(gpus, m) {
		if m == nil || s.fits(m) == nil {
			shapes = append(shapes, s)
		}
	}
	var out []Topology
	for _, s := range shapes {
		if s.GPUs() >= minPool {
			out = append(out, Topology{Agg: s})
		}
	}
	if gpus >= 2 {
		for _, ps := range shapes {
			for _, ds := range shapes {
				if ds.PP > 1 && !l.ppDecode {
					continue
				}
				for pw := 1; pw*ps.GPUs() < gpus && pw <= 8; pw++ {
					dw := (gpus - pw*ps.GPUs()) / ds.GPUs()
					if dw < 1 || dw > 8 || pw*ps.GPUs() < minPool || dw*ds.GPUs() < minPool {
						continue
					}
					out = append(out, Topology{Disagg: true, PrefillWorkers: pw, Prefill: ps, DecodeWorkers: dw, Decode: ds})
				}
			}
		}
	}
	return out
}

// SweepTopologies is the topology list a sweep of space walks for engine
// and model m, before sharding: the explicit list or the enumeration,
// narrowed by scope.
func SweepTopologies(space SweepSpace, engine string, m *Model) ([]Topology, error) {
	topos := space.Topologies
	if space.GPUs < 1 || space.GPUs > 1024 {
		return nil, fmt.Errorf("--gpus %d: want 1..1024", space.GPUs)
	}
	if space.MinPoolGPUs < 0 || space.MinPoolGPUs > space.GPUs {
		return nil, fmt.Errorf("--min-pool-gpus %d: want 0..--gpus (%d)", space.MinPoolGPUs, space.GPUs)
	}
	for _, t := range topos {
		if t.GPUs() > space.GPUs {
			return nil, fmt.Errorf("--topologies %s uses %d GPUs, more than --gpus %d", t, t.GPUs(), space.GPUs)
		}
		// An explicit list is what the user asked for: a topology below
		// --min-pool-gpus is refused, not dropped.
		if pool := smallestPool(t); pool < space.MinPoolGPUs {
			return nil, fmt.Errorf("--topologies %s has a pool of %d GPUs, fewer than --min-pool-gpus %d: drop one of the two", t, pool, space.MinPoolGPUs)
		}
	}
	if len(topos) == 0 {
		topos = EnumerateTopologies(engine, space.GPUs, m, space.MinPoolGPUs)
		if len(topos) == 0 {
			return nil, fmt.Errorf("--min-pool-gpus %d leaves no deployment of at most %d GPUs", space.MinPoolGPUs, space.GPUs)
		}
	}
	scope := space.Scope
	if scope == "" {
		scope = ScopeAll
	}
	var out []Topology
	for _, t := range topos {
		if scope == ScopeAll || (scope == ScopeDisagg) == t.Disagg {
			out = append(out, t)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("--scope %s leaves no topology to sweep", scope)
	}
	return out, nil
}

// smallestPool is the GPUs of t's aggregated instance, or of the smaller
// of its prefill and decode pools (EnumerateTopologies' minPool rule).
func smallestPool(t Topology) int {
	if !t.Disagg {
		return t.Agg.GPUs()
	}
	return min(t.PrefillWorkers*t.Prefill.GPUs(), t.DecodeWorkers*t.Decode.GPUs())
}

// SweepResult is every feasible point and the frontiers.
type SweepResult struct {
	Points []Point `json:"points"`
	// Frontiers, all of event-simulated points (see Sweep).
	Frontier           []Point `json:"frontier"`
	FrontierE2EL       []Point `json:"frontier_e2el"`
	FrontierNormalized []Point `json:"frontier_normalized_interactivity"`
	FrontierMTP        []Point `json:"frontier_mtp"`
	FrontierNone       []Point `json:"frontier_none"`
	// Top is the --top best points by tokens/s/GPU (event-simulated).
	Top []Point `json:"top"`
	// E2ELMetric names FrontierE2EL's x: "p90" (agentic) or "p50".
	E2ELMetric string `json:"e2el_metric"`
	// Refined counts the candidates run through the event simulation.
	Refined int `json:"refined"`
	// Rounds is how many refinement rounds it took the frontiers to settle.
	Rounds int `json:"refine_rounds"`
	// RefineStopped is set when the refinement budget ran out before the
	// frontiers settled: the frontiers are then of event-simulated points
	// only, and a candidate left unsimulated might still beat them.
	RefineStopped bool `json:"refine_budget_reached"`
	// EstimateContenders counts, under RefineByCorrected, the points left
	// unsimulated whose uncorrected mean-field estimate would still reach
	// a frontier: the candidates RefineByEstimate would go on to simulate,
	// and the ones that might still beat the frontiers printed.
	EstimateContenders int `json:"estimate_contenders"`
	// Removed says how many points each SLA limit removed.
	Removed    []SLARemoval `json:"sla_removed"`
	Skipped    []string     `json:"skipped"`
	Evaluated  int          `json:"evaluated"`
	Infeasible int          `json:"infeasible"`
	MultiNode  int          `json:"multi_node_points"`
	// NotRun counts the enumerated points the engine does not deploy
	// (NotRunWhy says which rule, with its source).
	NotRun    int    `json:"not_run,omitempty"`
	NotRunWhy string `json:"not_run_why,omitempty"`
	// Overloaded counts the frontier and top points whose Overload notes
	// say they measure an overloaded server (queued or unsteady).
	Overloaded int `json:"overloaded_frontier_points"`
}

// Progress reports a stage's work: done of total units. Sweep calls it
// from one goroutine at a time.
type Progress func(stage string, done, total int)

// Sweep prices every topology x draft length x concurrency with the
// mean-field estimate, then event-simulates frontier candidates until
// every point of every frontier (and of Top) is event-simulated: a
// candidate that loses once simulated drops out and the next one is
// simulated in the following round. SLA limits filter points before the
// frontiers. Work is spread over space.Workers goroutines, each with its
// own engines (an Engine's memo is not safe for concurrent use); results do
// not depend on the number of workers.
func Sweep(r *Resolved, space SweepSpace, progress Progress) (*SweepResult, error) {
	topos, err := SweepTopologies(space, r.Engine.EngineName, r.Model)
	if err != nil {
		return nil, err
	}
	concs := space.Concs
	if len(concs) == 0 {
		concs = DefaultConcs()
	}
	steps := max(space.StepsHi-space.StepsLo+1, 1)
	if err := checkSweepWork(r, topos, steps, concs); err != nil {
		return nil, err
	}
	if progress == nil {
		progress = func(string, int, int) {}
	}
	workers := space.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	var mine []int
	for i := range topos {
		if space.Shard.has(i) {
			mine = append(mine, i)
		}
	}
	type topoOut struct {
		points     []Point
		evaluated  int
		infeasible int
		unrun      int
		skipped    string
		err        error
		inf        *InfeasibleError // the first infeasible point's
	}
	outs := make([]topoOut, len(mine))
	node := r.GPU.Node()
	layouts := layoutsOf(r.Engine.EngineName)
	done := 0
	var mu sync.Mutex
	progress("pricing", 0, len(mine))
	parallel(workers, len(mine), func(rw *Resolved, j int) {
		ti := mine[j]
		t := topos[ti]
		o := &outs[j]
		for k := space.StepsLo; k <= space.StepsHi; k++ {
			if k > 0 && r.Model.Draft.Kind == "" {
				continue
			}
			if !layouts.runs(t, k) {
				o.unrun += len(concs)
				continue
			}
			for ci, c := range concs {
				if t.Disagg && c < t.DecodeWorkers {
					continue
				}
				sc, err := rw.Scenario(t, c, k)
				if err != nil {
					o.err = err
					return
				}
				plan, err := NewPlan(sc, rw.GPU)
				o.evaluated++
				if err != nil {
					var inf *InfeasibleError
					if errors.As(err, &inf) {
						o.infeasible++
						if o.inf == nil {
							o.inf = inf
						}
						continue
					}
					o.skipped = fmt.Sprintf("%s: %v", t, err)
					return
				}
				pt, err := plan.Estimate()
				if err != nil {
					o.err = fmt.Errorf("%s conc %d k %d: %w", t, c, k, err)
					return
				}
				idx := (ti*steps+(k-space.StepsLo))*len(concs) + ci
				o.points = append(o.points, Point{Result: *pt, Index: idx, MultiNode: nodeSpan(t, node) > 1})
			}
		}
		mu.Lock()
		done++
		progress("pricing", done, len(mine))
		mu.Unlock()
	}, refineWindow(r))
	res := &SweepResult{Skipped: []string{}}
	seen := map[string]bool{}
	unrun := 0
	var nearest *InfeasibleError
	nearestGPUs := 0
	for j, o := range outs {
		if o.err != nil {
			return nil, o.err
		}
		if g := topos[mine[j]].GPUs(); o.inf != nil && g > nearestGPUs {
			nearest, nearestGPUs = o.inf, g
		}
		unrun += o.unrun
		res.Points = append(res.Points, o.points...)
		res.Evaluated += o.evaluated
		res.Infeasible += o.infeasible
		if o.skipped != "" && !seen[o.skipped] {
			seen[o.skipped] = true
			res.Skipped = append(res.Skipped, o.skipped)
		}
	}
	if unrun > 0 {
		res.NotRun, res.NotRunWhy = unrun, layouts.why
	}
	if len(res.Points) == 0 && res.Infeasible > 0 && res.Infeasible == res.Evaluated && space.Shard.whole() {
		return nil, &NothingFitsError{Evaluated: res.Evaluated, Nearest: nearest, Hint: weightsHint(r, space, nearestGPUs)}
	}
	sort.Strings(res.Skipped)
	sim := func(rw *Resolved, p *Point) (*Result, error) {
		t, err := ParseTopology(p.Topology)
		if err != nil {
			return nil, err
		}
		return Predict(rw, t, p.Conc, p.Steps)
	}
	if err := res.refine(refineWindow(r), space.SLA, space.Top, space.MaxRefine, space.RefineBy, r.Workload.Name == "agentx", workers, progress, sim); err != nil {
		return nil, err
	}
	progress("refining", res.Refined, res.Refined)
	res.annotate(r.Workload.Name == "agentx", space.SLA)
	for _, p := range res.Points {
		if p.MultiNode {
			res.MultiNode++
		}
	}
	return res, nil
}

// SweepReplayWindow is the replay window, in seconds, a sweep of r runs
// its event simulations over, and the window r's query asks for (they
// differ when the query asks for more than SweepAgentXWindow); both are 0
// for a workload that replays no traces. `predict --agentx
// duration=<window>` reproduces a sweep point.
func SweepReplayWindow(r *Resolved) (window, asked float64) {
	tw := r.Workload.Trace
	if tw == nil {
		return 0, 0
	}
	return refineWindow(r).Workload.Trace.Replay.Duration, tw.Replay.Duration
}

// refineWindow is r with an AgentX trace replay shortened to
// SweepAgentXWindow: frontier points replay the traces over AIPerf's
// shortest valid window rather than the full benchmark duration (a
// 3600 s replay costs about 3x the 900 s one: README, sweep).
func refineWindow(r *Resolved) *Resolved {
	tw := r.Workload.Trace
	if tw == nil || tw.Replay.Duration <= SweepAgentXWindow {
		return r
	}
	c := *r
	t2 := *tw
	t2.Replay.Duration = SweepAgentXWindow
	c.Workload.Trace = &t2
	return &c
}

// refine event-simulates frontier and top candidates round after round,
// with sim on copies of r (nil r: sim needs none), until every frontier
// and top point is event-simulated or the budget (0: DefaultMaxRefine;
// negative: none) is spent. by says how the points not yet simulated are
// judged (RefineBy). A refined point keeps its mean-field estimate in
// Estimate. The rounds depend only on the points' estimates and the
// simulation of each point, so any run over the same points takes the
// same rounds (what Merge relies on).
func (res *SweepResult) refine(r *Resolved, sla SLA, top, budget int, by RefineBy, agentic bool, workers int, progress Progress, sim func(rw *Resolved, p *Point) (*Result, error)) error {
	if budget == 0 {
		budget = DefaultMaxRefine
	}
	mode := rankEstimate
	if by == RefineByCorrected {
		mode = rankCorrected
	}
	// The workers' copies of r live through every round: their engines'
	// memos return what a recomputation would (enginememo.go), so a
	// warm memo changes no figure.
	var pool *refinePool
	defer func() {
		if pool != nil {
			pool.close()
		}
	}()
	for {
		need := res.finish(sla, top, agentic, mode)
		if by == RefineByAll {
			// Every point not yet simulated, whatever its estimate (a
			// budget stops it like any other round: RefineStopped).
			need = need[:0]
			for i := range res.Points {
				if res.Points[i].Sim != "event" {
					need = append(need, i)
				}
			}
		}
		if len(need) == 0 {
			if mode == rankCorrected {
				// Settled on the corrected figures: the frontiers are of
				// simulated points (the same frontiers, since every point
				// on them is simulated); count what the estimates alone
				// would still send to the simulation.
				res.EstimateContenders = len(res.finish(sla, top, agentic, rankEstimate))
				res.finish(sla, top, agentic, eventOnly)
			}
			break
		}
		if budget > 0 && res.Refined >= budget {
			res.RefineStopped = true
			res.finish(sla, top, agentic, eventOnly)
			break
		}
		if budget > 0 && res.Refined+len(need) > budget {
			need = res.mainFrontierFirst(need)[:budget-res.Refined]
			sort.Ints(need)
		}
		res.Rounds++
		errs := make([]error, len(need))
		base := res.Refined
		commit := func(j int, out *Result, err error) {
			p := &res.Points[need[j]]
			if err == nil {
				est := p.Result
				p.Estimate, p.Result = &est, *out
			} else {
				errs[j] = fmt.Errorf("refining %s conc %d k %d: %w", p.Topology, p.Conc, p.Steps, err)
			}
			res.Refined++
			// Another round may follow (one more, at least), except
			// under RefineByAll, whose one round is all of it.
			more := 1
			if by == RefineByAll {
				more = 0
			}
			progress("refining", res.Refined, base+len(need)+more)
		}
		if r == nil {
			for j := range need {
				out, err := sim(nil, &res.Points[need[j]])
				commit(j, out, err)
			}
		} else {
			if pool == nil {
				pool = newRefinePool(workerCopies(r, workers), res.Points, sim)
			}
			ahead := func() []int {
				next := res.nextIfLost(sla, top, agentic, mode, need)
				return positions(next, costliestFirst(res.Points, next))
			}
			pool.round(positions(need, costliestFirst(res.Points, need)), ahead, func(pos int, out *Result, err error) {
				commit(sort.SearchInts(need, pos), out, err)
			})
		}
		if err := errors.Join(errs...); err != nil {
			return err
		}
	}
	return nil
}

// positions is need reordered by order (indexes into need).
func positions(need, order []int) []int {
	out := make([]int, len(order))
	for i, j := range order {
		out[i] = need[j]
	}
	return out
}

// nextIfLost is the round that would follow need if every point of need
// lost once simulated (dropped out of every frontier): the positions of
// the unsimulated points the frontiers would then ask for. Most
// candidates lose (about 93% in the settled 72-GPU GB300 AgentX sweep),
// so a worker idle at a round's tail starts on these (refinePool).
func (res *SweepResult) nextIfLost(sla SLA, top int, agentic bool, mode finishMode, need []int) []int {
	skip := make(map[int]bool, len(need))
	for _, i := range need {
		skip[i] = true
	}
	_, next := res.frontiers(sla, top, agentic, mode, skip)
	return next
}

// refinePool runs a sweep's event simulations on one goroutine per worker
// copy of the query, kept through the rounds. A round's simulations go
// first; a worker that finds none left to start (the round's tail, where
// it would idle until the slowest simulation ends) simulates the next
// round's likely candidates (nextIfLost) ahead of time. A simulation
// depends only on its point, so one run ahead is the one the later round
// would run: the rounds, and every figure, are those of running each
// round's simulations alone; only the wall time and the CPU spent on
// guesses that no round asks for change.
type refinePool struct {
	mu      sync.Mutex
	cond    *sync.Cond
	points  []Point // read by workers, written by the round's commit, under mu
	sim     func(rw *Resolved, p *Point) (*Result, error)
	jobs    []int // this round's positions not started, in order
	ahead   []int // likely next-round positions, in order
	running map[int]bool
	want    map[int]bool      // this round's positions not finished
	done    map[int]refineOut // finished, not yet committed
	closed  bool
	wg      sync.WaitGroup
}

type refineOut struct {
	res *Result
	err error
}

func newRefinePool(rws []*Resolved, points []Point, sim func(rw *Resolved, p *Point) (*Result, error)) *refinePool {
	p := &refinePool{points: points, sim: sim, running: map[int]bool{}, want: map[int]bool{}, done: map[int]refineOut{}}
	p.cond = sync.NewCond(&p.mu)
	for _, rw := range rws {
		p.wg.Add(1)
		go p.work(rw)
	}
	return p
}

// next takes the next position to simulate: the round's first, else,
// while some of the round's simulations still run, a guess (one worker
// alone never guesses, nor does any between rounds). ok is false once
// the pool is closed. Called with mu held.
func (p *refinePool) next() (pos int, ok bool) {
	for !p.closed {
		for i, q := range []*[]int{&p.jobs, &p.ahead} {
			for len(*q) > 0 && (i == 0 || p.roundRunning()) {
				pos := (*q)[0]
				*q = (*q)[1:]
				if _, fin := p.done[pos]; !fin && !p.running[pos] && p.points[pos].Sim != "event" {
					return pos, true
				}
			}
		}
		p.cond.Wait()
	}
	return 0, false
}

// roundRunning says whether one of the round's simulations is running
// (it may have started as a guess). Called with mu held.
func (p *refinePool) roundRunning() bool {
	for pos := range p.running {
		if p.want[pos] {
			return true
		}
	}
	return false
}

func (p *refinePool) work(rw *Resolved) {
	defer p.wg.Done()
	p.mu.Lock()
	defer p.mu.Unlock()
	for {
		pos, ok := p.next()
		if !ok {
			return
		}
		p.running[pos] = true
		pt := p.points[pos]
		p.mu.Unlock()
		out, err := p.sim(rw, &pt)
		p.mu.Lock()
		delete(p.running, pos)
		p.done[pos] = refineOut{out, err}
		p.cond.Broadcast()
	}
}

// round simulates the positions of jobs (those already simulated ahead
// are not run again), then calls commit for each in the order they
// finish, with mu held (commit may write the point). ahead, called once
// the workers have the jobs (it may read the points but not write them),
// gives the guesses that replace the round before's.
func (p *refinePool) round(jobs []int, ahead func() []int, commit func(pos int, out *Result, err error)) {
	p.mu.Lock()
	p.jobs, p.ahead = jobs, nil
	p.want = make(map[int]bool, len(jobs))
	for _, pos := range jobs {
		p.want[pos] = true
	}
	p.cond.Broadcast()
	p.mu.Unlock()
	guesses := ahead()
	p.mu.Lock()
	defer p.mu.Unlock()
	p.ahead = guesses
	p.cond.Broadcast()
	for len(p.want) > 0 {
		for pos := range p.want {
			if o, fin := p.done[pos]; fin {
				delete(p.done, pos)
				delete(p.want, pos)
				commit(pos, o.res, o.err)
			}
		}
		if len(p.want) > 0 {
			p.cond.Wait()
		}
	}
}

// close stops the workers once their simulations end (a simulation run
// ahead that no round asked for is dropped).
func (p *refinePool) close() {
	p.mu.Lock()
	p.closed = true
	p.cond.Broadcast()
	p.mu.Unlock()
	p.wg.Wait()
}

// parallel runs f(rw, j) for j in [0, n) on up to workers goroutines, each
// with its own copy of r (fresh engine memo). The jobs go out as the
// workers' shares of [0, n) interleaved (interleave), so that the jobs
// running at once lie apart: a sweep's neighbouring topologies share
// their prefill instance, whose moments one worker prices while the
// others wait (sweepMemo.moment).
func parallel(workers, n int, f func(rw *Resolved, j int), r *Resolved) {
	rws := workerCopies(r, min(workers, n))
	runOn(rws, interleave(n, len(rws)), f)
}

// interleave is 0..n-1 cut into k runs of ceil(n/k) (the last shorter),
// taken one from each run in turn: for n 5 and k 2, 0 3 1 4 2.
func interleave(n, k int) []int {
	run := (n + k - 1) / max(k, 1)
	order := make([]int, 0, n)
	for i := range run {
		for j := i; j < n; j += run {
			order = append(order, j)
		}
	}
	return order
}

// workerCopies is n copies of r (at least one), each with its own engines
// (an Engine's memo is not safe for concurrent use), sharing a sweepMemo.
func workerCopies(r *Resolved, n int) []*Resolved {
	rws := make([]*Resolved, max(n, 1))
	shared := newSweepMemo()
	for i := range rws {
		rw := *r
		rw.engines, rw.shared = nil, shared
		rws[i] = &rw
	}
	return rws
}

// runOn runs f(rw, j) for every j of order, in that order, on one
// goroutine per copy in rws (no more than there are jobs). A goroutine
// takes its next job from a shared counter, not from a goroutine handing
// them out, which on a busy machine keeps the workers waiting for it.
func runOn(rws []*Resolved, order []int, f func(rw *Resolved, j int)) {
	var next atomic.Int64
	var wg sync.WaitGroup
	for _, rw := range rws[:max(1, min(len(rws), len(order)))] {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := next.Add(1) - 1; i < int64(len(order)); i = next.Add(1) - 1 {
				f(rw, order[i])
			}
		}()
	}
	wg.Wait()
}

// costliestFirst orders the jobs 0..len(need)-1 of a round, need[j]
// being a position in points, so that the simulations likely to take
// longest start first (more sessions, then more GPUs: more requests and
// instances to replay) and the round does not end on one long simulation
// while the other workers idle. Only the order of work changes.
func costliestFirst(points []Point, need []int) []int {
	order := make([]int, len(need))
	for j := range order {
		order[j] = j
	}
	sort.SliceStable(order, func(a, b int) bool {
		pa, pb := &points[need[order[a]]], &points[need[order[b]]]
		if pa.Conc != pb.Conc {
			return pa.Conc > pb.Conc
		}
		return pa.GPUs > pb.GPUs
	})
	return order
}

// finishMode says which points finish builds the frontiers of.
type finishMode int

const (
	rankEstimate  finishMode = iota // every point as it is (estimate or simulation)
	rankCorrected                   // unsimulated points corrected (RefineByCorrected)
	eventOnly                       // the simulated points alone
)

// finish filters the points by sla, computes the frontiers and Top, and
// returns the indexes (into Points) of the frontier and Top points that are
// not event-simulated yet, in ascending order. SLARemoval counts are of
// the points as they are, whatever the mode.
func (res *SweepResult) finish(sla SLA, top int, agentic bool, mode finishMode) []int {
	_, res.Removed = sla.Filter(res.Points)
	fs, need := res.frontiers(sla, top, agentic, mode, nil)
	res.Frontier = pick(fs.points, fs.main)
	res.E2ELMetric = "p50"
	if agentic {
		res.E2ELMetric = "p90"
	}
	res.FrontierE2EL = pick(fs.points, fs.e2el)
	res.FrontierNormalized = pick(fs.points, fs.norm)
	res.FrontierMTP = pick(fs.points, fs.mtp)
	res.FrontierNone = pick(fs.points, fs.none)
	res.Top = nil
	if top > 0 {
		res.Top = pick(fs.points, fs.top)
	}
	return need
}

// frontierSet is the frontiers and Top of points, as positions into it.
type frontierSet struct {
	points                           []Point
	main, e2el, norm, mtp, none, top []int
}

// frontiers computes finish's frontiers without setting them, leaving
// out the points at the positions of skip, and returns with them the
// positions in Points of the frontier and Top points not yet
// event-simulated, in ascending order.
func (res *SweepResult) frontiers(sla SLA, top int, agentic bool, mode finishMode, skip map[int]bool) (frontierSet, []int) {
	src := res.Points
	if mode == rankCorrected {
		src = corrected(res.Points)
	}
	// While the search runs, a limit removes simulated points only: a
	// point whose estimate breaks it stays a candidate, and is removed
	// once its simulation breaks it too.
	var kept []Point
	if mode == eventOnly {
		kept, _ = sla.Filter(src)
	} else {
		kept = sla.filterSimulated(src)
	}
	// Filter keeps the order and drops points: where it dropped none,
	// positions in kept are positions in Points.
	posOf := func(i int) int { return i }
	if len(kept) != len(res.Points) {
		pos := make(map[int]int, len(res.Points))
		for i, p := range res.Points {
			pos[p.Index] = i
		}
		posOf = func(i int) int { return pos[kept[i].Index] }
	}
	var in, mtp, none []int
	for i := range kept {
		if (mode == eventOnly && kept[i].Sim != "event") || (skip != nil && skip[posOf(i)]) {
			continue
		}
		in = append(in, i)
		if kept[i].Steps > 0 {
			mtp = append(mtp, i)
		} else {
			none = append(none, i)
		}
	}
	fs := frontierSet{points: kept}
	fs.main = frontierOf(kept, in, ByInteractivity, true)
	by := ByE2ELp50
	if agentic {
		by = ByE2ELp90
	}
	fs.e2el = frontierOf(kept, in, by, false)
	fs.norm = frontierOf(kept, in, ByNormalizedInteractivity, true)
	fs.mtp = frontierOf(kept, mtp, ByInteractivity, true)
	fs.none = frontierOf(kept, none, ByInteractivity, true)
	if top > 0 {
		fs.top = topOf(kept, in, top)
	}
	want := map[int]bool{}
	for _, f := range [][]int{fs.main, fs.e2el, fs.norm, fs.mtp, fs.none, fs.top} {
		for _, i := range f {
			if kept[i].Sim != "event" {
				want[posOf(i)] = true
			}
		}
	}
	if mode == rankCorrected {
		for _, i := range decodeScouts(res.Points, kept, in) {
			want[posOf(i)] = true
		}
	}
	need := make([]int, 0, len(want))
	for i := range want {
		need = append(need, i)
	}
	sort.Ints(need)
	return fs, need
}

// mainFrontierFirst orders the positions of need so that the points on the
// interactivity frontier come first (then by position): when the budget
// allows only part of a round, the headline frontier is checked first.
func (res *SweepResult) mainFrontierFirst(need []int) []int {
	onMain := map[int]bool{}
	for _, p := range res.Frontier {
		onMain[p.Index] = true
	}
	out := append([]int(nil), need...)
	sort.SliceStable(out, func(a, b int) bool {
		ma, mb := onMain[res.Points[out[a]].Index], onMain[res.Points[out[b]].Index]
		if ma != mb {
			return ma
		}
		return out[a] < out[b]
	})
	return out
}

// TopPoints is the n points of highest tokens/s/GPU (ties: lower index).
func TopPoints(points []Point, n int) []Point {
	all := make([]int, len(points))
	for i := range all {
		all[i] = i
	}
	return pick(points, topOf(points, all, n))
}

// topOf is TopPoints of the points at positions in (ascending), as
// positions.
func topOf(points []Point, in []int, n int) []int {
	s := slices.Clone(in)
	slices.SortStableFunc(s, func(a, b int) int { return cmp.Compare(points[b].TputPerGPU, points[a].TputPerGPU) })
	return s[:min(n, len(s))]
}

// Unchecked is the number of frontier or Top points that are not
// event-simulated (zero after Sweep and Merge).
func (res *SweepResult) Unchecked() int {
	n := 0
	for _, f := range [][]Point{res.Frontier, res.FrontierE2EL, res.FrontierNormalized, res.FrontierMTP, res.FrontierNone, res.Top} {
		for _, p := range f {
			if p.Sim != "event" {
				n++
			}
		}
	}
	return n
}

// NotesFor is what a reader of the point must know beside its figures:
// "multi-node", then the result's Overload notes. agentic says the
// sweep's workload is AgentX.
func (p *Point) NotesFor(agentic bool) []string {
	var out []string
	if p.MultiNode {
		out = append(out, "multi-node")
	}
	return append(out, p.Result.Overload(agentic)...)
}

// Overload says whether a result measures an overloaded server: "queued"
// and "unsteady" (nil when neither). A result is queued when a role
// admits fewer running requests than the sessions it serves (conc over
// its workers) and the wait shows: in a closed-loop fixed-length
// benchmark every session always has one request outstanding, so the
// excess always waits in the role's queue and TTFT counts the wait; an
// AgentX session thinks between turns, so there the wait must also be
// more than half of the p90 end-to-end latency (TTFT p90 > E2EL p90 / 2).
// "unsteady": an AgentX replay whose window halves differ by more than
// 10% (AgentXReport.Steady). agentic says the workload is AgentX. sweep
// and predict both judge by it.
func (r *Result) Overload(agentic bool) []string {
	var out []string
	waited := !agentic || r.TTFTp90ms/1e3 > r.E2EL.P90/2
	if t, err := ParseTopology(r.Topology); err == nil && waited {
		workers := map[string]int{"agg": 1, "prefill": max(t.PrefillWorkers, 1), "decode": max(t.DecodeWorkers, 1)}
		for _, c := range r.Limits {
			share := (r.Conc + workers[c.Role] - 1) / workers[c.Role]
			if c.Running > 0 && c.Running < share {
				out = append(out, fmt.Sprintf("queued: %s runs %d of %d", c.Role, c.Running, share))
				break
			}
		}
	}
	if r.AgentX != nil && !r.AgentX.Steady {
		out = append(out, "unsteady")
	}
	return out
}

// annotate sets every point's Notes (frontier and top copies included):
// NotesFor, and for a point an SLA limit removed before the frontiers,
// "outside SLA: <limit> <value>" (the first limit it breaks, as Removed
// counts it). It counts the overloaded frontier and top points.
func (res *SweepResult) annotate(agentic bool, sla SLA) {
	res.Overloaded = 0
	over := map[int]bool{}
	for _, f := range [][]Point{res.Points, res.Frontier, res.FrontierE2EL, res.FrontierNormalized, res.FrontierMTP, res.FrontierNone, res.Top} {
		for i := range f {
			f[i].Notes = f[i].NotesFor(agentic)
			if l, ok := sla.broken(&f[i]); ok {
				f[i].Notes = append(f[i].Notes, fmt.Sprintf("outside SLA: --%s %g", l.flag, l.value))
			}
		}
	}
	for _, f := range [][]Point{res.Frontier, res.FrontierE2EL, res.FrontierNormalized, res.FrontierMTP, res.FrontierNone, res.Top} {
		for _, p := range f {
			if len(p.Result.Overload(agentic)) > 0 && !over[p.Index] {
				over[p.Index] = true
				res.Overloaded++
			}
		}
	}
}

// NothingFitsError: no configuration of a sweep fits in memory. Nearest
// is the refusal of the one with the most GPUs (the nearest miss), with
// its arithmetic; Hint says what to change.
type NothingFitsError struct {
	Evaluated int
	Nearest   *InfeasibleError
	Hint      string
}

func (e *NothingFitsError) Error() string {
	msg := fmt.Sprintf("none of the %d configurations fits in memory", e.Evaluated)
	if e.Nearest != nil {
		msg += "; the largest, " + e.Nearest.Error()
	}
	if e.Hint != "" {
		msg += "\n" + e.Hint
	}
	return msg
}

// weightsHint names the smallest GPU count whose memory holds the
// weights (target and draft, counted at TP1 and split evenly: a lower
// bound, before any KV cache), as the power of two a topology takes, and
// what to change: --gpus where the sweep stopped below it, otherwise the
// rest of the arithmetic.
func weightsHint(r *Resolved, space SweepSpace, largest int) string {
	e, err := NewEngine(r.Model, r.GPU.withDomain(), Parallel{TP: 1, EP: 1, PP: 1}, r.Engine)
	if err != nil {
		return ""
	}
	total := e.weightBytes()
	if space.StepsHi > 0 && r.Model.Draft.Kind != "" {
		total += e.draftBytes()
	}
	frac := r.Q.MemFraction
	if frac <= 0 {
		frac = DefaultMemFraction
	}
	usable := e.GPU.HBMBytes * frac
	need := int(math.Ceil(total / usable))
	pow := 1
	for pow < need {
		pow *= 2
	}
	head := fmt.Sprintf("  the weights alone take %.1f GiB (%s %s, draft included), %d GPUs' worth of %s's %.1f GiB usable (HBM x mem-fraction %.2f) before any KV cache",
		total/gib, r.Model.Name, strings.ToUpper(string(r.Precision)), need, strings.ToUpper(e.GPU.Name), usable/gib, frac)
	if largest < pow {
		return fmt.Sprintf("%s; the sweep went up to %d GPU(s) per instance: give --gpus %d or more, a GPU with more memory (--gpu) or a lower --precision", head, largest, pow)
	}
	return head + "; the weights fit at the largest size tried, so the arithmetic above says what else does not (KV cache, state): give --gpus above it, shorter contexts or a higher --mem-fraction"
}
