package simulate

import (
	"compress/gzip"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"sort"
	"strings"
	"testing"
)

// TestRefineReplayDiag (SPECSIM_REFINE_DIAG=sweep.json, a settled sweep's
// JSON output): replays the sweep's refinement rounds with refine itself,
// taking each event simulation from the file as Merge does, and reports
// how many simulations the rounds take and the floor any search by the
// same rule needs: the frontier points, plus every point whose estimate
// still reaches a frontier once those are simulated. With
// SPECSIM_REFINE_REPRICE=1 every point is priced again with the current
// estimate first (a change to estimate.go judged by the simulations it
// would cost, in seconds); a point the rounds then ask for that the file
// did not simulate is event-simulated here, and the frontiers are compared
// with the file's point by point.
func TestRefineReplayDiag(t *testing.T) {
	path := os.Getenv("SPECSIM_REFINE_DIAG")
	if path == "" {
		t.Skip("SPECSIM_REFINE_DIAG unset")
	}
	so := readSweepFile(t, path)
	in := so.Inputs
	r, err := in.Query.ToQuery().Resolve(testCurves, testCatalog)
	if err != nil {
		t.Fatal(err)
	}
	r = refineWindow(r)
	reprice := os.Getenv("SPECSIM_REFINE_REPRICE") == "1"
	events := map[int]Result{}
	fresh := 0
	sim := func(_ *Resolved, p *Point) (*Result, error) {
		if ev, ok := events[p.Index]; ok {
			return &ev, nil
		}
		t, err := ParseTopology(p.Topology)
		if err != nil {
			return nil, err
		}
		fresh++
		out, err := Predict(r, t, p.Conc, p.Steps)
		if err == nil {
			events[p.Index] = *out
		}
		return out, err
	}
	start := func(reprice bool) *SweepResult {
		res := &SweepResult{Points: slices.Clone(so.Points)}
		for i := range res.Points {
			p := &res.Points[i]
			if p.Sim == "event" {
				events[p.Index] = p.Result
				p.Result, p.Estimate = *p.Estimate, nil
			}
			if reprice {
				topo, err := ParseTopology(p.Topology)
				if err != nil {
					t.Fatal(err)
				}
				est, err := EstimatePoint(r, topo, p.Conc, p.Steps)
				if err != nil {
					t.Fatal(err)
				}
				p.Result = *est
			}
		}
		return res
	}
	agentic := in.Workload == "agentx"
	none := func(string, int, int) {}
	// The file's own rounds (its stored estimates; the same rounds and
	// frontiers, since a simulation depends only on its point).
	base := start(false)
	if err := base.refine(nil, in.SLA, in.Top, in.MaxRefine, in.RefineBy, agentic, 1, none, sim); err != nil {
		t.Fatal(err)
	}
	t.Logf("%s: the file refined %d in %d rounds; its replay %d in %d rounds", path, so.Refined, so.Rounds, base.Refined, base.Rounds)
	res := base
	if reprice {
		res = start(true)
		if err := res.refine(nil, in.SLA, in.Top, in.MaxRefine, in.RefineBy, agentic, 1, none, sim); err != nil {
			t.Fatal(err)
		}
		t.Logf("repriced with the current estimate: %d in %d rounds, %d of them points the file did not simulate", res.Refined, res.Rounds, fresh)
	}
	key := func(p Point) string { return fmt.Sprintf("%s c%d k%d", p.Topology, p.Conc, p.Steps) }
	simulatedNow, simulatedThen := map[int]bool{}, map[int]bool{}
	for _, p := range so.Points {
		simulatedThen[p.Index] = p.Sim == "event"
	}
	for _, p := range res.Points {
		if p.Sim == "event" {
			simulatedNow[p.Index] = true
		}
	}
	for _, c := range []struct {
		name     string
		was, now []Point
		x        func(*Point) float64
		higherX  bool
	}{{"interactivity", base.Frontier, res.Frontier, ByInteractivity, true}, {"E2EL", base.FrontierE2EL, res.FrontierE2EL, ByE2ELp90, false}, {"normalized interactivity", base.FrontierNormalized, res.FrontierNormalized, ByNormalizedInteractivity, true}, {"MTP", base.FrontierMTP, res.FrontierMTP, ByInteractivity, true}, {"none", base.FrontierNone, res.FrontierNone, ByInteractivity, true}, {"top", base.Top, res.Top, ByInteractivity, true}} {
		was, now := map[string]bool{}, map[string]bool{}
		for _, p := range c.was {
			was[key(p)] = true
		}
		for _, p := range c.now {
			now[key(p)] = true
		}
		// A point of the file's frontier that is not on the new one is
		// either beaten by a point the new search found (dominated) or
		// missed: the new frontier's best throughput at an x at least as
		// good as its event x is lower than its own by gap.
		var beaten, missed, found []string
		for _, p := range c.was {
			if now[key(p)] {
				continue
			}
			best := 0.0
			for _, q := range c.now {
				if xq, xp := c.x(&q), c.x(&p); (c.higherX && xq >= xp) || (!c.higherX && xq <= xp) {
					best = max(best, q.TputPerGPU)
				}
			}
			if best >= p.TputPerGPU {
				beaten = append(beaten, key(p))
				continue
			}
			missed = append(missed, fmt.Sprintf("%s (simulated %v, gap %.1f%%)", key(p), simulatedNow[p.Index], 100*(1-best/p.TputPerGPU)))
		}
		// A point of the new frontier the file never simulated is one the
		// file's search missed, by the same gap against the file's frontier.
		var fileMissed []string
		for _, p := range c.now {
			if was[key(p)] {
				continue
			}
			found = append(found, key(p))
			if simulatedThen[p.Index] {
				continue
			}
			best := 0.0
			for _, q := range c.was {
				if xq, xp := c.x(&q), c.x(&p); (c.higherX && xq >= xp) || (!c.higherX && xq <= xp) {
					best = max(best, q.TputPerGPU)
				}
			}
			fileMissed = append(fileMissed, fmt.Sprintf("%s (gap %.1f%%)", key(p), 100*max(0, 1-best/p.TputPerGPU)))
		}
		sort.Strings(fileMissed)
		sort.Strings(beaten)
		sort.Strings(missed)
		sort.Strings(found)
		t.Logf("frontier %s: %d points, %d in the file's; beaten by points found now %v; missed %v; new on it %v, of them the file never simulated %v", c.name, len(c.now), len(c.was), beaten, missed, found, fileMissed)
	}
	// The floor: the replay's settled frontier points simulated first.
	onFrontier := map[int]bool{}
	for _, fr := range [][]Point{res.Frontier, res.FrontierE2EL, res.FrontierNormalized, res.FrontierMTP, res.FrontierNone, res.Top} {
		for _, p := range fr {
			onFrontier[p.Index] = true
		}
	}
	floor := start(reprice)
	for i := range floor.Points {
		p := &floor.Points[i]
		if onFrontier[p.Index] {
			est := p.Result
			p.Estimate, p.Result = &est, events[p.Index]
		}
	}
	if err := floor.refine(nil, in.SLA, in.Top, -1, in.RefineBy, agentic, 1, none, sim); err != nil {
		t.Fatal(err)
	}
	t.Logf("floor: %d frontier points + %d whose estimate still reaches a frontier = %d simulations", len(onFrontier), floor.Refined, len(onFrontier)+floor.Refined)
	// A file in which every point is simulated (TestExhaustiveSweep) has
	// the true frontiers: how far below them the search's frontiers fall.
	for _, p := range so.Points {
		if p.Sim != "event" {
			return
		}
	}
	for _, by := range []RefineBy{RefineByEstimate, RefineByCorrected} {
		// With SPECSIM_REFINE_REPRICE=1, the current estimate's search.
		found := start(reprice)
		if err := found.refine(nil, in.SLA, in.Top, -1, by, agentic, 1, none, sim); err != nil {
			t.Fatal(err)
		}
		t.Logf("search by %s (repriced %v): %d simulations in %d rounds", by, reprice, found.Refined, found.Rounds)
		for _, c := range []struct {
			name string
			x    func(*Point) float64
			high bool
		}{{"interactivity", ByInteractivity, true}, {"p90 E2EL", ByE2ELp90, false}, {"normalized interactivity", ByNormalizedInteractivity, true}} {
			r := frontierRecall(so.Points, found.Points, c.x, c.high, 0.02)
			t.Logf("  %s: %d true frontier points; %d of them more than 2%% above the search's frontier within 2%% of their x (worst: the search's frontier at %.3f of it) %v", c.name, r.n, r.below, r.worst, r.missed)
		}
	}
}

// recallOf is how a search's frontier (of its simulated points) covers
// the true frontier (of every point simulated).
type recallOf struct {
	n, below int     // true frontier points; those the search's frontier falls short of
	worst    float64 // the lowest ratio of the search's throughput to the true point's
	missed   []string
}

// frontierRecall compares, for each point of all's frontier (every point
// event-simulated) by x, the best throughput of found's frontier (its
// event-simulated points only) among points whose x is within tol of the
// true point's or better, with the true point's throughput: below counts
// the true points where that is under 1-tol of it.
func frontierRecall(all, found []Point, x func(*Point) float64, higherX bool, tol float64) recallOf {
	var sim []int
	for i := range found {
		if found[i].Sim == "event" {
			sim = append(sim, i)
		}
	}
	truth := Frontier(all, x, higherX)
	got := pick(found, frontierOf(found, sim, x, higherX))
	r := recallOf{n: len(truth), worst: 1}
	for i := range truth {
		xt, yt := x(&truth[i]), truth[i].TputPerGPU
		best := 0.0
		for j := range got {
			xj := x(&got[j])
			if (higherX && xj >= xt*(1-tol)) || (!higherX && xj <= xt*(1+tol)) {
				best = math.Max(best, got[j].TputPerGPU)
			}
		}
		ratio := best / yt
		if ratio < 1-tol {
			r.below++
			r.missed = append(r.missed, fmt.Sprintf("%s c%d (%.3f)", truth[i].Topology, truth[i].Conc, ratio))
		}
		r.worst = math.Min(r.worst, ratio)
	}
	return r
}

// TestFrontierRecall checks frontierRecall on hand-made frontiers: the
// truth is A (x 10, y 100), B (x 20, y 50), C (x 30, y 10), by higher x.
func TestFrontierRecall(t *testing.T) {
	pt := func(x, y float64, sim string) Point {
		return Point{Result: Result{Interactivity: x, TputPerGPU: y, Sim: sim}}
	}
	all := []Point{pt(10, 100, "event"), pt(20, 50, "event"), pt(30, 10, "event"), pt(15, 40, "event")}
	for _, c := range []struct {
		name  string
		found []Point
		want  recallOf
	}{
		{"all found", all, recallOf{n: 3, below: 0, worst: 1}},
		// B missed: at x >= 19.6 the best found is C's 10 (0.2 of B).
		{"B not simulated", []Point{all[0], pt(20, 50, "mean-field"), all[2], all[3]}, recallOf{n: 3, below: 1, worst: 0.2}},
		// B found at 49.5 (x 19.7, within 2%): 0.99 of B, not below.
		{"B nearly", []Point{all[0], pt(19.7, 49.5, "event"), all[2]}, recallOf{n: 3, below: 0, worst: 0.99}},
		// Nothing reaches C's x: the search's frontier is at 0 of it.
		{"C unreached", []Point{all[0], all[1]}, recallOf{n: 3, below: 1, worst: 0}},
	} {
		got := frontierRecall(all, c.found, ByInteractivity, true, 0.02)
		if got.n != c.want.n || got.below != c.want.below || math.Abs(got.worst-c.want.worst) > 1e-12 {
			t.Errorf("%s: got %+v, want %+v", c.name, got, c.want)
		}
	}
}

// readSweepFile reads a sweep's JSON output, gzipped when its name ends
// in .gz.
func readSweepFile(t *testing.T, path string) *SweepOutput {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var rd io.Reader = f
	if strings.HasSuffix(path, ".gz") {
		if rd, err = gzip.NewReader(f); err != nil {
			t.Fatal(err)
		}
	}
	so, err := ReadSweepOutput(path, rd)
	if err != nil {
		t.Fatal(err)
	}
	return so
}
