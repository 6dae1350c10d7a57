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
	// demoted, figure by figure, by what the simulations already run say
	// about the estimate's error (corrected): far fewer simulations, but
	// points the estimate would have sent to the simulation are judged
	// losers unchecked, and some of them are frontier points (README,
	// sweep, has the measured loss); SweepResult.EstimateContenders counts
	// them. The ratio event/estimate of each figure is taken from the
	// point's own deployment (topology and draft length), interpolated in
	// log(concurrency) between its nearest simulated concurrencies below
	// and above, or kept from the nearest below above the last; without
	// one below, from its class (aggregated or disaggregated) at the same
	// concurrency, the classQuantile-th most favourable ratio once
	// classMin points of the class are simulated. A ratio that would make
	// a figure better than the estimate is not applied.
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

// Class corrections: a deployment without a simulated concurrency at or
// below the point's takes, figure by figure, the classQuantile-th most
// favourable event/estimate ratio among the simulated points of its class
// (aggregated or disaggregated) at the same concurrency, once there are
// classMin of them.
const (
	classQuantile = 0.9
	classMin      = 5
)

// corrected returns a copy of points in which every point not yet
// event-simulated carries its estimate corrected by RefineByCorrected's
// rule. It reads only the points' estimates and simulations, so the rounds
// stay a function of them (Merge relies on it).
func corrected(points []Point) []Point {
	type series struct {
		topo  string
		steps int
	}
	type class struct {
		disagg bool
		conc   int
	}
	// logRatio[f] of one simulated point: log(event/estimate) of figure
	// f, NaN where either is not a positive finite number.
	type anchor struct {
		logConc  float64
		logRatio []float64
	}
	anchors := map[series][]anchor{}
	byClass := map[class][][]float64{} // figure -> log ratios
	for i := range points {
		p := &points[i]
		if p.Sim != "event" || p.Estimate == nil {
			continue
		}
		a := anchor{logConc: math.Log(float64(p.Conc)), logRatio: make([]float64, len(rankedFigures))}
		c := class{strings.HasPrefix(p.Topology, "disagg"), p.Conc}
		if byClass[c] == nil {
			byClass[c] = make([][]float64, len(rankedFigures))
		}
		for f, fig := range rankedFigures {
			ev, est := *fig.get(&p.Result), *fig.get(p.Estimate)
			a.logRatio[f] = math.NaN()
			if ev > 0 && est > 0 && !math.IsInf(ev, 0) && !math.IsInf(est, 0) {
				a.logRatio[f] = math.Log(ev / est)
				byClass[c][f] = append(byClass[c][f], a.logRatio[f])
			}
		}
		s := series{p.Topology, p.Steps}
		anchors[s] = append(anchors[s], a)
	}
	for _, as := range anchors {
		sort.SliceStable(as, func(a, b int) bool { return as[a].logConc < as[b].logConc })
	}
	classRatio := map[class][]float64{}
	for c, figs := range byClass {
		q := make([]float64, len(figs))
		for f, v := range figs {
			q[f] = math.NaN()
			if len(v) < classMin {
				continue
			}
			sort.Float64s(v)
			at := classQuantile
			if !rankedFigures[f].higher {
				at = 1 - classQuantile
			}
			q[f] = v[min(len(v)-1, int(at*float64(len(v))))]
		}
		classRatio[c] = q
	}
	out := append([]Point(nil), points...)
	for i := range out {
		p := &out[i]
		if p.Sim == "event" {
			continue
		}
		as := anchors[series{p.Topology, p.Steps}]
		cr := classRatio[class{strings.HasPrefix(p.Topology, "disagg"), p.Conc}]
		x := math.Log(float64(p.Conc))
		for f, fig := range rankedFigures {
			// The nearest anchors below and above with a ratio for f.
			lo, hi := -1, -1
			for j, a := range as {
				if math.IsNaN(a.logRatio[f]) {
					continue
				}
				if a.logConc <= x {
					lo = j
				} else if hi < 0 {
					hi = j
				}
			}
			lr := math.NaN()
			switch {
			case lo >= 0 && hi >= 0:
				w := (x - as[lo].logConc) / (as[hi].logConc - as[lo].logConc)
				lr = (1-w)*as[lo].logRatio[f] + w*as[hi].logRatio[f]
			case lo >= 0:
				// Above the last simulated concurrency the ratio kept
				// there: the estimate's optimism grows with load.
				lr = as[lo].logRatio[f]
			case cr != nil:
				lr = cr[f]
			}
			// A correction only ever demotes: the figure is taken no
			// better than the estimate says.
			if fig.higher {
				lr = min(lr, 0)
			} else {
				lr = max(lr, 0)
			}
			if v := fig.get(&p.Result); !math.IsNaN(lr) && *v > 0 && !math.IsInf(*v, 0) {
				*v *= math.Exp(lr)
			}
		}
	}
	return out
}
