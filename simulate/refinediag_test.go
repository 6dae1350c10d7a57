package simulate

import (
	"fmt"
	"os"
	"slices"
	"sort"
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
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	so, err := ReadSweepOutput(path, f)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
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
}
