package simulate

import (
	"errors"
	"fmt"
	"math"
	"sort"
)

// Point is one evaluated deployment of a sweep.
type Point struct {
	Result
}

// Frontier returns the Pareto frontier of points by InferenceX's rule for
// an x where smaller is better (E2EL): sort by x ascending (ties: larger y
// first) and keep each point whose y exceeds every y before it; a point
// with the same y at a larger x extends a plateau, one at the same x
// replaces the last. Points with non-positive or non-finite x or y are
// ignored. With higherX (interactivity) x is negated first.
func Frontier(points []Point, x func(*Point) float64, higherX bool) []Point {
	type cand struct {
		x, y float64
		i    int
	}
	var cs []cand
	for i := range points {
		xv, yv := x(&points[i]), points[i].TputPerGPU
		if !(xv > 0 && yv > 0) || math.IsInf(xv, 0) || math.IsInf(yv, 0) {
			continue
		}
		if higherX {
			xv = -xv
		}
		cs = append(cs, cand{xv, yv, i})
	}
	sort.SliceStable(cs, func(a, b int) bool {
		if cs[a].x != cs[b].x {
			return cs[a].x < cs[b].x
		}
		return cs[a].y > cs[b].y
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
	res := make([]Point, len(out))
	for i, c := range out {
		res[i] = points[c.i]
	}
	return res
}

// ByInteractivity is the x of the interactivity frontier.
func ByInteractivity(p *Point) float64 { return p.Interactivity }

// ByE2ELp90 is the x of the agentic frontier (p90 end-to-end latency).
func ByE2ELp90(p *Point) float64 { return p.E2EL.P90 }

// ByE2ELp50 is the x of the fixed-length frontier (median latency).
func ByE2ELp50(p *Point) float64 { return p.E2EL.P50 }

// SweepSpace is what a sweep enumerates.
type SweepSpace struct {
	GPUs        int   // total GPUs to deploy (topologies using at most this many)
	Concs       []int // closed-loop concurrencies
	StepsLo     int
	StepsHi     int
	Topologies  []Topology // explicit list; empty = enumerate for GPUs
	AllowDisagg bool
}

// DefaultConcs are the concurrencies a sweep tries by default (InferenceX
// conc lists step by powers of two).
func DefaultConcs() []int {
	return []int{1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024}
}

// EnumerateTopologies lists deployments of at most gpus GPUs: aggregated
// TP, TP with EP, DEP and TP x PP instances, and disaggregated pairs of
// prefill and decode groups built from the same instance shapes.
func EnumerateTopologies(gpus int) []Topology {
	var shapes []Parallel
	for tp := 1; tp <= gpus; tp *= 2 {
		shapes = append(shapes, Parallel{TP: tp, EP: 1, PP: 1})
		if tp > 1 {
			shapes = append(shapes, Parallel{TP: tp, EP: tp, PP: 1}, Parallel{TP: tp, EP: tp, PP: 1, DPAttention: true})
		}
		for pp := 2; tp*pp <= gpus && pp <= 8; pp *= 2 {
			shapes = append(shapes, Parallel{TP: tp, EP: 1, PP: pp})
		}
	}
	var out []Topology
	for _, s := range shapes {
		out = append(out, Topology{Agg: s})
	}
	if gpus >= 2 {
		for _, ps := range shapes {
			for _, ds := range shapes {
				for pw := 1; pw*ps.GPUs() < gpus; pw++ {
					left := gpus - pw*ps.GPUs()
					dw := left / ds.GPUs()
					if dw < 1 || dw > 8 || pw > 8 || ps.PP > 1 && ds.PP > 1 || ds.PP > 1 {
						continue
					}
					out = append(out, Topology{Disagg: true, PrefillWorkers: pw, Prefill: ps, DecodeWorkers: dw, Decode: ds})
				}
			}
		}
	}
	return out
}

// SweepResult is every feasible point and the frontiers.
type SweepResult struct {
	Points       []Point  `json:"points"`
	Frontier     []Point  `json:"frontier"`
	FrontierE2EL []Point  `json:"frontier_e2el"`
	FrontierMTP  []Point  `json:"frontier_mtp"`
	FrontierNone []Point  `json:"frontier_none"`
	Skipped      []string `json:"skipped"`
	Evaluated    int      `json:"evaluated"`
	Infeasible   int      `json:"infeasible"`
}

// Sweep evaluates every topology x concurrency x draft length with the
// mean-field estimate, then re-runs the frontier points through the event
// simulation (so their percentiles include AL variance) when refine is
// set. progress, when not nil, is called after each topology.
func Sweep(r *Resolved, space SweepSpace, refine bool, progress func(done, total int)) (*SweepResult, error) {
	topos := space.Topologies
	if len(topos) == 0 {
		if space.GPUs < 1 || space.GPUs > 1024 {
			return nil, fmt.Errorf("--gpus %d: want 1..1024", space.GPUs)
		}
		topos = EnumerateTopologies(space.GPUs)
	}
	concs := space.Concs
	if len(concs) == 0 {
		concs = DefaultConcs()
	}
	steps := max(space.StepsHi-space.StepsLo+1, 1)
	if err := checkSweepWork(r, len(topos)*steps*len(concs), concs); err != nil {
		return nil, err
	}
	res := &SweepResult{Skipped: []string{}}
	skipped := map[string]bool{}
	for ti, t := range topos {
		if progress != nil {
			progress(ti, len(topos))
		}
		for k := space.StepsLo; k <= space.StepsHi; k++ {
			if k > 0 && r.Model.Draft.Kind == "" {
				continue
			}
			// One plan per topology and k; concurrency only changes the load.
			for _, c := range concs {
				if t.Disagg && c < t.DecodeWorkers {
					continue
				}
				sc, err := r.Scenario(t, c, k)
				if err != nil {
					return nil, err
				}
				plan, err := NewPlan(sc, r.GPU)
				res.Evaluated++
				if err != nil {
					var inf *InfeasibleError
					if errors.As(err, &inf) {
						res.Infeasible++
						continue
					}
					msg := fmt.Sprintf("%s: %v", t, err)
					if !skipped[msg] {
						skipped[msg] = true
						res.Skipped = append(res.Skipped, msg)
					}
					break
				}
				pt, err := plan.Estimate()
				if err != nil {
					return nil, fmt.Errorf("%s conc %d k %d: %w", t, c, k, err)
				}
				res.Points = append(res.Points, Point{*pt})
			}
		}
	}
	if progress != nil {
		progress(len(topos), len(topos))
	}
	// Refining can move the frontier onto other points; repeat a few times
	// so that the frontier is (almost always) all event-simulated.
	rr := r
	if tw := r.Workload.Trace; tw != nil && tw.Replay.Duration > SweepAgentXWindow {
		// Frontier points replay the traces over AIPerf's shortest valid
		// window rather than the full benchmark duration.
		c := *r
		t2 := *tw
		t2.Replay.Duration = SweepAgentXWindow
		c.Workload.Trace = &t2
		rr = &c
	}
	for i := 0; refine && i < 3; i++ {
		if err := refineFrontier(rr, res); err != nil {
			return nil, err
		}
	}
	res.computeFrontiers(r.Workload.Name == "agentx")
	return res, nil
}

// refineFrontier replaces the points on either frontier by event-simulated
// ones.
func refineFrontier(r *Resolved, res *SweepResult) error {
	res.computeFrontiers(r.Workload.Name == "agentx")
	want := map[[3]any]bool{}
	for _, f := range [][]Point{res.Frontier, res.FrontierE2EL} {
		for _, p := range f {
			want[[3]any{p.Topology, p.Conc, p.Steps}] = true
		}
	}
	for i, p := range res.Points {
		if p.Sim == "event" || !want[[3]any{p.Topology, p.Conc, p.Steps}] {
			continue
		}
		t, err := ParseTopology(p.Topology)
		if err != nil {
			return err
		}
		sim, err := Predict(r, t, p.Conc, p.Steps)
		if err != nil {
			return fmt.Errorf("refining %s conc %d k %d: %w", p.Topology, p.Conc, p.Steps, err)
		}
		res.Points[i] = Point{*sim}
	}
	return nil
}

func (res *SweepResult) computeFrontiers(agentic bool) {
	res.Frontier = Frontier(res.Points, ByInteractivity, true)
	if agentic {
		res.FrontierE2EL = Frontier(res.Points, ByE2ELp90, false)
	} else {
		res.FrontierE2EL = Frontier(res.Points, ByE2ELp50, false)
	}
	var mtp, none []Point
	for _, p := range res.Points {
		if p.Steps > 0 {
			mtp = append(mtp, p)
		} else {
			none = append(none, p)
		}
	}
	res.FrontierMTP = Frontier(mtp, ByInteractivity, true)
	res.FrontierNone = Frontier(none, ByInteractivity, true)
}
