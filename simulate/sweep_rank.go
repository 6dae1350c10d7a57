package simulate

import (
	"fmt"
	"math"
	"sort"
	"strings"
)

// RefineBy says how a sweep's refinement judges the candidates it has not
// event-simulated yet.
type RefineBy string

const (
	// RefineByEstimate (the default) judges unsimulated points by their
	// mean-field estimates as they are: refinement goes on until no
	// estimate reaches a frontier.
	RefineByEstimate RefineBy = "estimate"
	// RefineByCorrected judges an unsimulated point by its estimate
	// corrected, figure by figure, by what the simulations already run
	// say about the estimate's error for deployments that share the pool
	// the figure depends on (corrected), and simulates one deployment of
	// each decode pool near the interactivity frontier first
	// (decodeScouts): about half the simulation time of RefineByEstimate,
	// with points the estimate alone would have sent to the simulation
	// judged losers unchecked (and some of them frontier points: README,
	// sweep, has the measured loss); SweepResult.EstimateContenders counts
	// them.
	RefineByCorrected RefineBy = "corrected"
	// RefineByAll judges no point by its estimate: it event-simulates
	// every point of the sweep, in one round, and its frontiers are the
	// true frontiers of the space (of the event simulation). One
	// simulation a point: the 72-GPU GB300 AgentX sweep's 15,371 took
	// about 40 s on 16 cores, and would take about ten minutes on two
	// (TestExhaustiveSweep's per-point times). The frontiers of the other
	// modes fall short of these (README, sweep, has the measured shortfall).
	RefineByAll RefineBy = "all"
)

// ParseRefineBy reads --refine-by.
func ParseRefineBy(s string) (RefineBy, error) {
	switch RefineBy(s) {
	case "", RefineByEstimate:
		return RefineByEstimate, nil
	case RefineByCorrected, RefineByAll:
		return RefineBy(s), nil
	}
	return "", fmt.Errorf("--refine-by %q: want estimate, corrected or all", s)
}

// rankedFigures are the figures of a Result that finish reads to build the
// frontiers, apply the SLA limits and pick Top: what a correction scales.
// higher says a larger value is the better one.
var rankedFigures = []struct {
	get    func(r *Result) *float64
	higher bool
}{
	{func(r *Result) *float64 { return &r.TputPerGPU }, true},
	{func(r *Result) *float64 { return &r.Interactivity }, true},
	{func(r *Result) *float64 { return &r.NormalizedInteractivity }, true},
	{func(r *Result) *float64 { return &r.E2EL.P90 }, false},
	{func(r *Result) *float64 { return &r.E2EL.P50 }, false},
	{func(r *Result) *float64 { return &r.TTFTp90ms }, false},
	{func(r *Result) *float64 { return &r.TPOTp90ms }, false},
}

// figurePools says, for each of rankedFigures, which pool of a
// disaggregated deployment the estimate's error of that figure follows:
// 'd' the decode pool (interactivity and TPOT: the decode batch and its
// step), 'p' the prefill pool (throughput, latencies and TTFT: the
// prefill queue in front of the decode pool). Over every point of the
// 72-GPU GB300 AgentX sweep at concurrency 256-1024, the spread (median
// absolute deviation) of log(event/estimate) among deployments sharing
// that pool was 0.002-0.009 for interactivity (0.013-0.034 over all) and
// 0.02-0.03 for p90 E2EL (0.12-0.19 over all): agentx-log.md, "Pooled
// corrections".
var figurePools = [...]byte{'p', 'd', 'p', 'p', 'p', 'p', 'd'}

// poolOf names the pool (p prefill, d decode) of a deployment that its
// figures' estimate errors follow (figurePools): a disaggregated
// deployment's prefill or decode part; an aggregated one is a pool of its
// own, both roles in one instance.
func poolOf(topology string, which byte) string {
	if rest, ok := strings.CutPrefix(topology, "disagg:"); ok {
		if pre, dec, ok := strings.Cut(rest, "+"); ok {
			if which == 'd' {
				return "d:" + dec
			}
			return "p:" + pre
		}
	}
	return topology
}

// poolKey is a pool (poolOf) at one concurrency and draft length: the
// deployments whose estimate errors corrected shares.
type poolKey struct {
	name        string
	conc, steps int
}

func poolKeyOf(p *Point, which byte) poolKey {
	return poolKey{poolOf(p.Topology, which), p.Conc, p.Steps}
}

// corrected returns a copy of points in which every point not yet
// event-simulated carries its estimate corrected by RefineByCorrected's
// rule: each figure is scaled by the most favourable event/estimate ratio
// among the simulated points at the same concurrency and draft length
// whose deployment shares the pool that figure's error follows
// (figurePools), promoting or demoting it; without such a point the
// figure keeps its estimate. The most favourable ratio keeps a point a
// candidate where the sharers disagree (a near-tie demoted by a sharer's
// worse ratio would be lost unchecked). It reads only the points'
// estimates and simulations, so the rounds stay a function of them (Merge
// relies on it).
func corrected(points []Point) []Point {
	// best[pool][f] is the most favourable log(event/estimate) of figure
	// f among the pool's simulated points (NaN: none).
	best := map[poolKey][]float64{}
	for i := range points {
		p := &points[i]
		if p.Sim != "event" || p.Estimate == nil {
			continue
		}
		for f, fig := range rankedFigures {
			ev, est := *fig.get(&p.Result), *fig.get(p.Estimate)
			if !(ev > 0 && est > 0) || math.IsInf(ev, 0) || math.IsInf(est, 0) {
				continue
			}
			lr := math.Log(ev / est)
			k := poolKeyOf(p, figurePools[f])
			b := best[k]
			if b == nil {
				b = make([]float64, len(rankedFigures))
				for j := range b {
					b[j] = math.NaN()
				}
				best[k] = b
			}
			if math.IsNaN(b[f]) || (fig.higher && lr > b[f]) || (!fig.higher && lr < b[f]) {
				b[f] = lr
			}
		}
	}
	out := append([]Point(nil), points...)
	for i := range out {
		p := &out[i]
		if p.Sim == "event" {
			continue
		}
		for f, fig := range rankedFigures {
			b := best[poolKeyOf(p, figurePools[f])]
			if b == nil || math.IsNaN(b[f]) {
				continue
			}
			if v := fig.get(&p.Result); *v > 0 && !math.IsInf(*v, 0) {
				*v *= math.Exp(b[f])
			}
		}
	}
	return out
}

// scoutMargin is how much better than its estimate a deployment's
// interactivity may turn out: decodeScouts simulates a decode pool whose
// best deployment would reach the interactivity frontier that much
// better. On the 72-GPU GB300 AgentX sweep the event simulation's
// interactivity is within 3% of the estimate for 90-100% of the points up
// to concurrency 64 and 49-74% at 128-1024, and more than 3% better for
// 0-9% and 11-22% of them (agentx-log.md, "Pooled corrections").
const scoutMargin = 0.03

// decodeScouts returns, for each decode pool (at a concurrency and draft
// length) that no simulated deployment shares yet, the deployment of
// highest throughput among the pool's that would reach the interactivity
// frontier with interactivity scoutMargin better than its figure in kept:
// positions in kept, ascending. A pool's interactivity error is shared by
// its deployments (figurePools); without a simulation of one, an estimate
// a little pessimistic for the whole pool would hide every one of them
// from the corrected search, which corrected promotes once one is
// simulated. points are the sweep's, which say which pools are
// simulated; in are the positions in kept that the frontiers consider.
func decodeScouts(points, kept []Point, in []int) []int {
	seen := map[poolKey]bool{}
	for i := range points {
		if p := &points[i]; p.Sim == "event" {
			seen[poolKeyOf(p, 'd')] = true
		}
	}
	unseen := func(p *Point) bool {
		return p.Sim != "event" && strings.HasPrefix(p.Topology, "disagg:") && !seen[poolKeyOf(p, 'd')]
	}
	optimistic := func(p *Point) float64 {
		if unseen(p) {
			return p.Interactivity * (1 + scoutMargin)
		}
		return p.Interactivity
	}
	best := map[poolKey]int{}
	for _, i := range frontierOf(kept, in, optimistic, true) {
		p := &kept[i]
		if !unseen(p) {
			continue
		}
		k := poolKeyOf(p, 'd')
		if j, ok := best[k]; !ok || p.TputPerGPU > kept[j].TputPerGPU || (p.TputPerGPU == kept[j].TputPerGPU && i < j) {
			best[k] = i
		}
	}
	out := make([]int, 0, len(best))
	for _, i := range best {
		out = append(out, i)
	}
	sort.Ints(out)
	return out
}
