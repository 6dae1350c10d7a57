package simulate

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"testing"
)

// rankPoint is a point of a hand-made sweep: estimate est and, when ev is
// set, the event simulation's figures (tput/GPU, interactivity, p90 E2EL).
func rankPoint(topo string, conc int, est, ev [3]float64, simulated bool) Point {
	fill := func(f [3]float64, sim string) Result {
		return Result{Topology: topo, Conc: conc, Steps: 6, TputPerGPU: f[0], Interactivity: f[1], E2EL: Percentiles{P90: f[2]}, Sim: sim}
	}
	p := Point{Result: fill(est, "mean-field")}
	if simulated {
		e := p.Result
		p.Estimate, p.Result = &e, fill(ev, "event")
	}
	return p
}

func TestCorrectedByHand(t *testing.T) {
	est := [3]float64{100, 50, 1}
	otherK := rankPoint("disagg:5xtp1+2xtp8", 64, est, [3]float64{}, false)
	otherK.Steps = 3
	pts := []Point{
		// Two simulated deployments at conc 64 share the prefill pool
		// 1xtp2: throughput 0.8x and 0.9x the estimate, p90 E2EL 2x and
		// 3x; their decode pools 2xtp8 and 1xtp4 have interactivity
		// 1.1x and 0.9x.
		rankPoint("disagg:1xtp2+2xtp8", 64, est, [3]float64{80, 55, 2}, true),
		rankPoint("disagg:1xtp2+1xtp4", 64, est, [3]float64{90, 45, 3}, true),
		// Decode pool 2xtp8 simulated, prefill pool 3xtp1 not:
		// interactivity promoted 1.1x, the rest as estimated.
		rankPoint("disagg:3xtp1+2xtp8", 64, est, [3]float64{}, false),
		// Prefill pool 1xtp2: the most favourable ratios, throughput
		// 0.9x and E2EL 2x; decode pool 4xtp4 unseen.
		rankPoint("disagg:1xtp2+4xtp4", 64, est, [3]float64{}, false),
		// Decode pool 1xtp4: interactivity 0.9x (a demotion).
		rankPoint("disagg:2xtp2+1xtp4", 64, est, [3]float64{}, false),
		// Another concurrency, another draft length, an aggregated
		// deployment (a pool of its own): as estimated.
		rankPoint("disagg:1xtp2+2xtp8", 128, est, [3]float64{}, false),
		otherK,
		rankPoint("agg:tp8", 64, est, [3]float64{70, 70, 7}, true),
		rankPoint("agg:tp4", 64, est, [3]float64{}, false),
	}
	got := corrected(pts)
	for _, tc := range []struct {
		i                int
		tput, inter, e2e float64
	}{
		{2, 100, 55, 1},
		{3, 90, 50, 2},
		{4, 100, 45, 1},
		{5, 100, 50, 1},
		{6, 100, 50, 1},
		{8, 100, 50, 1},
		// simulated points are untouched.
		{0, 80, 55, 2},
		{7, 70, 70, 7},
	} {
		r := got[tc.i].Result
		if math.Abs(r.TputPerGPU-tc.tput) > 1e-9 || math.Abs(r.Interactivity-tc.inter) > 1e-9 || math.Abs(r.E2EL.P90-tc.e2e) > 1e-9 {
			t.Errorf("%s conc %d k %d: tput %g interactivity %g e2el %g, want %g %g %g", r.Topology, r.Conc, got[tc.i].Steps, r.TputPerGPU, r.Interactivity, r.E2EL.P90, tc.tput, tc.inter, tc.e2e)
		}
	}
	if pts[3].TputPerGPU != 100 {
		t.Error("corrected changed its input")
	}
}

// TestPoolOf: the pool a figure's error follows is the prefill or decode
// part of a disaggregated deployment; an aggregated one is its own.
func TestPoolOf(t *testing.T) {
	for _, tc := range []struct {
		topo  string
		which byte
		want  string
	}{
		{"disagg:3xtp1pp2+8xtp8", 'p', "p:3xtp1pp2"},
		{"disagg:3xtp1pp2+8xtp8", 'd', "d:8xtp8"},
		{"disagg:1xdep4+1xdep32", 'd', "d:1xdep32"},
		{"agg:tp4ep4", 'p', "agg:tp4ep4"},
		{"agg:tp4ep4", 'd', "agg:tp4ep4"},
	} {
		if got := poolOf(tc.topo, tc.which); got != tc.want {
			t.Errorf("poolOf(%q, %c) = %q, want %q", tc.topo, tc.which, got, tc.want)
		}
	}
}

// TestRefineByCorrected: the corrected search settles with every frontier
// point simulated, simulates no more than the estimate's, counts the
// estimates it left unchecked, and its shards merge to it.
func TestRefineByCorrected(t *testing.T) {
	r := resolved(t, Query{GPU: "b200", ISL: 1024, OSL: 1024, Requests: 48})
	space := SweepSpace{GPUs: 4, Concs: []int{2, 16, 128}, StepsLo: 0, StepsHi: 2, Workers: 2, Top: 2}
	byEst, err := Sweep(r, space, nil)
	if err != nil {
		t.Fatal(err)
	}
	space.RefineBy = RefineByCorrected
	byCorr, err := Sweep(r, space, nil)
	if err != nil {
		t.Fatal(err)
	}
	if byCorr.RefineStopped || byCorr.Unchecked() != 0 || len(byCorr.Frontier) == 0 {
		t.Fatalf("corrected: stopped %v, %d frontier points unchecked of %d", byCorr.RefineStopped, byCorr.Unchecked(), len(byCorr.Frontier))
	}
	if byCorr.Refined > byEst.Refined || byEst.EstimateContenders != 0 {
		t.Errorf("refined %d corrected vs %d by estimate; estimate contenders %d (want 0 by estimate)", byCorr.Refined, byEst.Refined, byEst.EstimateContenders)
	}
	// The contenders are what the estimate's search still finds to do.
	cp := *byCorr
	cp.Points = append([]Point(nil), byCorr.Points...)
	if n := len(cp.finish(SLA{}, 2, false, rankEstimate)); n != byCorr.EstimateContenders {
		t.Errorf("estimate contenders %d, the estimate's search finds %d", byCorr.EstimateContenders, n)
	}
	var outs []*SweepOutput
	var names []string
	for i := range 2 {
		sp := space
		sp.Shard = Shard{Index: i, Count: 2}
		part, err := Sweep(r, sp, nil)
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		if err := json.NewEncoder(&buf).Encode(SweepOutput{Inputs: NewSweepInputs("test", r, sp), SweepResult: part}); err != nil {
			t.Fatal(err)
		}
		o, err := ReadSweepOutput("shard", &buf)
		if err != nil {
			t.Fatal(err)
		}
		outs, names = append(outs, o), append(names, "shard")
	}
	m, err := Merge(names, outs, func(SweepInputs) (*Resolved, error) { return r, nil }, nil)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := json.Marshal(m.SweepResult)
	want, _ := json.Marshal(byCorr)
	if !bytes.Equal(got, want) {
		t.Errorf("merged corrected sweep differs from the unsharded one")
	}
	if m.Inputs.RefineBy != RefineByCorrected {
		t.Errorf("merged inputs refine_by %q", m.Inputs.RefineBy)
	}
}

// TestRefineByAll: every point is event-simulated, in one round, and the
// frontiers are those of all the points; a point the estimate's search
// simulated has the same figures in both (a simulation depends only on
// its point).
func TestRefineByAll(t *testing.T) {
	r := resolved(t, Query{GPU: "b200", ISL: 1024, OSL: 1024, Requests: 48})
	space := SweepSpace{GPUs: 4, Concs: []int{2, 16, 128}, StepsLo: 0, StepsHi: 2, Workers: 2, MaxRefine: -1}
	byEst, err := Sweep(r, space, nil)
	if err != nil {
		t.Fatal(err)
	}
	space.RefineBy = RefineByAll
	all, err := Sweep(r, space, nil)
	if err != nil {
		t.Fatal(err)
	}
	if all.RefineStopped || all.Rounds != 1 || all.Refined != len(all.Points) {
		t.Fatalf("all: stopped %v, %d rounds, %d refined of %d points", all.RefineStopped, all.Rounds, all.Refined, len(all.Points))
	}
	for _, p := range all.Points {
		if p.Sim != "event" {
			t.Fatalf("%s conc %d k %d not simulated", p.Topology, p.Conc, p.Steps)
		}
	}
	want := Frontier(all.Points, ByInteractivity, true)
	if len(want) != len(all.Frontier) {
		t.Fatalf("frontier of %d points, want %d", len(all.Frontier), len(want))
	}
	for i := range want {
		if want[i].Index != all.Frontier[i].Index {
			t.Errorf("frontier point %d: index %d, want %d", i, all.Frontier[i].Index, want[i].Index)
		}
	}
	// A budget stops it short, and says so.
	space.MaxRefine = 5
	part, err := Sweep(r, space, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !part.RefineStopped || part.Refined != 5 {
		t.Errorf("all under --max-refine 5: stopped %v after %d simulations, want stopped after 5", part.RefineStopped, part.Refined)
	}
	byIndex := map[int]Result{}
	for _, p := range all.Points {
		byIndex[p.Index] = p.Result
	}
	for _, p := range byEst.Points {
		if p.Sim == "event" && byIndex[p.Index].TputPerGPU != p.TputPerGPU {
			t.Errorf("%s conc %d k %d: %g tok/s/GPU by estimate's search, %g by all", p.Topology, p.Conc, p.Steps, p.TputPerGPU, byIndex[p.Index].TputPerGPU)
		}
	}
}

// TestSLAChecksEstimates: a limit removes a point on its estimate alone
// only when the point would not reach a frontier even inside the limit. A
// points whose estimate breaks --max-ttft-ms but whose simulation keeps to
// it is simulated and lands on the frontier; B, whose estimate breaks the
// limit and would lose anyway, is removed unsimulated and counted so.
func TestSLAChecksEstimates(t *testing.T) {
	pt := func(idx int, tput, inter, ttft float64) Point {
		return Point{Index: idx, Result: Result{Topology: fmt.Sprintf("agg:tp%d", idx+1), Conc: 8, TputPerGPU: tput, Interactivity: inter, TTFTp90ms: ttft, E2EL: Percentiles{P50: 1, P90: 2}, NormalizedInteractivity: inter, Sim: "mean-field"}}
	}
	// Estimates: A (index 0) 7,000 ms; B (1) 9,000 ms and dominated by C;
	// C (2) keeps to the limit.
	points := []Point{pt(0, 300, 100, 7000), pt(1, 100, 50, 9000), pt(2, 200, 150, 1000)}
	events := map[int]Result{0: points[0].Result, 1: points[1].Result, 2: points[2].Result}
	a := events[0]
	a.TTFTp90ms, a.Sim = 4900, "event"
	events[0] = a
	for i, r := range events {
		r.Sim = "event"
		events[i] = r
	}
	simulated := map[int]bool{}
	sim := func(_ *Resolved, p *Point) (*Result, error) {
		simulated[p.Index] = true
		r := events[p.Index]
		return &r, nil
	}
	res := &SweepResult{Points: points}
	sla := SLA{MaxTTFTms: 5000}
	if err := res.refine(nil, sla, 0, -1, RefineByEstimate, true, 1, func(string, int, int) {}, sim); err != nil {
		t.Fatal(err)
	}
	if !simulated[0] || simulated[1] {
		t.Errorf("simulated %v: want A (0) simulated, B (1) not", simulated)
	}
	var onFrontier []int
	for _, p := range res.Frontier {
		onFrontier = append(onFrontier, p.Index)
	}
	if !slices.Equal(onFrontier, []int{2, 0}) && !slices.Equal(onFrontier, []int{0, 2}) {
		t.Errorf("frontier %v, want A (0) and C (2)", onFrontier)
	}
	want := []SLARemoval{{Limit: "max-ttft-ms", Value: 5000, Removed: 1, OnEstimate: 1}}
	if !slices.Equal(res.Removed, want) {
		t.Errorf("removed %+v, want %+v", res.Removed, want)
	}
}

// TestDecodeScouts: at one concurrency the simulated disagg:1xtp2+2xtp8
// (interactivity 50, 100 tokens/s/GPU) is the interactivity frontier;
// made 3% better, the unsimulated points of decode pools no simulation
// shares reach it or not (hand-computed: 49 x 1.03 = 50.47, 48 x 1.03 =
// 49.44, 47 x 1.03 = 48.41, 49.2 x 1.03 = 50.68, 49.1 x 1.03 = 50.57).
func TestDecodeScouts(t *testing.T) {
	pt := func(topo string, inter, tput float64, sim string) Point {
		return Point{Result: Result{Topology: topo, Conc: 64, Steps: 6, Interactivity: inter, TputPerGPU: tput, Sim: sim}}
	}
	pts := []Point{
		pt("disagg:1xtp2+2xtp8", 50, 100, "event"),
		pt("disagg:1xtp2+1xtp4", 49, 99.95, "mean-field"), // 1: pool 1xtp4 reaches it
		pt("disagg:2xtp2+1xtp4", 48, 98.5, "mean-field"),  // same pool, does not
		pt("disagg:1xtp2+4xtp4", 47, 99, "mean-field"),    // pool 4xtp4 does not
		pt("disagg:2xtp2+2xtp8", 49, 99, "mean-field"),    // pool 2xtp8 is simulated
		pt("agg:tp8", 49.5, 99.5, "mean-field"),           // aggregated: no decode pool
		pt("disagg:3xtp1+8xtp8", 49.2, 99.8, "mean-field"),
		pt("disagg:4xtp1+8xtp8", 49.1, 99.9, "mean-field"), // 7: pool 8xtp8's best
	}
	in := []int{0, 1, 2, 3, 4, 5, 6, 7}
	if got, want := decodeScouts(pts, pts, in), []int{1, 7}; !slices.Equal(got, want) {
		t.Errorf("scouts %v, want %v", got, want)
	}
	// Another concurrency's simulation does not make the pool seen.
	other := append(slices.Clone(pts), pt("disagg:9xtp1+8xtp8", 10, 10, "event"))
	other[8].Conc = 128
	if got, want := decodeScouts(other, other, in), []int{1, 7}; !slices.Equal(got, want) {
		t.Errorf("with a simulation at another concurrency: scouts %v, want %v", got, want)
	}
	// Once a deployment of pool 8xtp8 is simulated there, it has none.
	pts[6].Sim = "event"
	if got, want := decodeScouts(pts, pts, in), []int{1}; !slices.Equal(got, want) {
		t.Errorf("pool 8xtp8 simulated: scouts %v, want %v", got, want)
	}
	if pts[1].Interactivity != 49 {
		t.Error("decodeScouts changed its input")
	}
}
