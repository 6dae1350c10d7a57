package simulate

import (
	"errors"
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"
)

func resolved(t testing.TB, q Query) *Resolved {
	t.Helper()
	if q.Model == "" {
		q.Model = "Qwen3.5-397B-A17B"
	}
	if q.Precision == "" {
		q.Precision = "fp4"
	}
	if q.Workload == "" {
		q.Workload, q.ISL, q.OSL, q.RangeRatio = "fixed", 1024, 1024, 0.8
	}
	q.SchedOverhead, q.SpecOverhead, q.Seed = -1, -1, 1
	r, err := q.Resolve(testCurves, testCatalog)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func topo(t testing.TB, s string) Topology {
	t.Helper()
	tp, err := ParseTopology(s)
	if err != nil {
		t.Fatal(err)
	}
	return tp
}

// TestSpeedupNeverAboveAL: speculation can at best emit AL tokens per
// iteration for the price of one plain step, so output throughput at k
// over k = 0 never exceeds AL(k).
func TestSpeedupNeverAboveAL(t *testing.T) {
	for _, c := range []struct {
		gpu, topo string
		conc      int
	}{{"gb300", "agg:tp2", 1}, {"gb300", "agg:tp2", 64}, {"b200", "agg:tp8ep8", 256}, {"b200", "agg:dep8", 32}} {
		r := resolved(t, Query{GPU: c.gpu})
		tp := topo(t, c.topo)
		base, err := EstimatePoint(r, tp, c.conc, 0)
		if err != nil {
			t.Fatal(err)
		}
		for k := 1; k <= 8; k++ {
			res, err := EstimatePoint(r, tp, c.conc, k)
			if err != nil {
				t.Fatal(err)
			}
			if s := res.OutputPerGPU / base.OutputPerGPU; s > res.AL {
				t.Errorf("%s %s conc %d k %d: speedup %.2f above AL %.2f", c.gpu, c.topo, c.conc, k, s, res.AL)
			}
		}
	}
}

// TestConcurrencyNeverLowersThroughput: with KV to spare, more sessions
// give larger decode batches, and a larger batch never produces fewer
// tokens per second (each iteration costs at most proportionally more).
func TestConcurrencyNeverLowersThroughput(t *testing.T) {
	for _, k := range []int{0, 3} {
		r := resolved(t, Query{GPU: "b200"})
		tp := topo(t, "agg:tp8")
		prev := 0.0
		for _, c := range []int{1, 2, 4, 8, 16, 32, 64, 128, 256} {
			res, err := EstimatePoint(r, tp, c, k)
			if err != nil {
				t.Fatal(err)
			}
			if res.TputPerGPU < prev*0.99 {
				t.Errorf("k %d: conc %d gives %.0f tok/s/GPU, below %.0f at half the concurrency (step %.2f ms, batch %.1f)",
					k, c, res.TputPerGPU, prev, res.StepMS.Total, res.DecodeBatch)
			}
			prev = res.TputPerGPU
		}
	}
}

// TestEventAgreesWithMeanField compares the two methods on fixed lengths:
// the event simulation (second method) within 25% of the mean-field
// estimate in throughput and TPOT.
func TestEventAgreesWithMeanField(t *testing.T) {
	for _, c := range []struct {
		gpu, prec, topo string
		conc, k         int
	}{{"h200", "fp8", "agg:tp8", 64, 0}, {"h200", "fp8", "agg:tp8", 64, 3}, {"b200", "fp4", "agg:tp4", 4, 3}, {"gb300", "fp4", "agg:tp1pp4", 16, 3}, {"b200", "fp4", "agg:tp4", 128, 2}} {
		r := resolved(t, Query{GPU: c.gpu, Precision: c.prec, Requests: 150})
		tp := topo(t, c.topo)
		ev, err := Predict(r, tp, c.conc, c.k)
		if err != nil {
			t.Fatal(err)
		}
		mf, err := EstimatePoint(r, tp, c.conc, c.k)
		if err != nil {
			t.Fatal(err)
		}
		if !near(ev.TputPerGPU, mf.TputPerGPU, 0.25) || !near(ev.TPOTms, mf.TPOTms, 0.25) {
			t.Errorf("%s %s conc %d k %d: event %.0f tok/s/GPU, TPOT %.2f ms; mean-field %.0f, %.2f", c.gpu, c.topo, c.conc, c.k,
				ev.TputPerGPU, ev.TPOTms, mf.TputPerGPU, mf.TPOTms)
		}
	}
}

// TestSimulationIdentities checks accounting that holds in any run: the
// realized AL matches the sampler's mean, total throughput is output plus
// input (ISL/OSL in the ratio the workload gives), and a batch of one at
// k = 0 has TPOT equal to its decode iteration time.
func TestSimulationIdentities(t *testing.T) {
	r := resolved(t, Query{GPU: "b200", Requests: 100})
	res, err := Predict(r, topo(t, "agg:tp4"), 8, 4)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(res.ALRealized-res.AL) > 0.1 {
		t.Errorf("realized AL %.3f, target %.2f", res.ALRealized, res.AL)
	}
	// ISL and OSL share one range ratio, so total = 2 x output.
	if !near(res.TputPerGPU, 2*res.OutputPerGPU, 0.03) {
		t.Errorf("total %.0f vs output %.0f", res.TputPerGPU, res.OutputPerGPU)
	}
	one, err := Predict(resolved(t, Query{GPU: "b200", Requests: 20, RangeRatio: 1, ISL: 1024, OSL: 1024, Workload: "fixed"}), topo(t, "agg:tp4"), 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	if !near(one.TPOTms, one.StepMS.Total, 0.02) {
		t.Errorf("batch 1 TPOT %.3f ms vs step %.3f ms", one.TPOTms, one.StepMS.Total)
	}
}

func TestDeterministic(t *testing.T) {
	q := Query{Workload: "agentx", GPU: "gb300", Requests: 60}
	a, err := Predict(resolved(t, q), topo(t, "agg:tp2"), 7, 6)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := Predict(resolved(t, q), topo(t, "agg:tp2"), 7, 6)
	if !reflect.DeepEqual(a, b) {
		t.Errorf("same seed, different results:\n%+v\n%+v", a, b)
	}
	q.Seed = 2
	r := resolved(t, q)
	r.Q.Seed = 2
	c, _ := Predict(r, topo(t, "agg:tp2"), 7, 6)
	if c.E2EL == a.E2EL {
		t.Errorf("a different seed gave identical latencies")
	}
}

func TestDisaggRuns(t *testing.T) {
	r := resolved(t, Query{GPU: "gb300", Workload: "agentx", Requests: 80})
	res, err := Predict(r, topo(t, "disagg:1xtp4+1xtp4"), 16, 3)
	if err != nil {
		t.Fatal(err)
	}
	if res.GPUs != 8 || res.TputPerGPU <= 0 || res.TTFTms <= 0 {
		t.Errorf("disagg result %+v", res)
	}
}

func TestFrontier(t *testing.T) {
	pt := func(x, y float64) Point {
		return Point{Result: Result{Interactivity: x, TputPerGPU: y, E2EL: Percentiles{P90: 1000 / x}}}
	}
	// Interactivity (higher better): (100, 50) dominates (90, 40); (50, 80)
	// and (20, 120) extend the frontier; (30, 80) equals (50, 80)'s
	// throughput further along x, a plateau InferenceX's rule keeps;
	// (10, 100) is dominated by (20, 120); invalid x or y are dropped.
	pts := []Point{pt(90, 40), pt(100, 50), pt(50, 80), pt(30, 80), pt(20, 120), pt(10, 100), pt(-1, 500), pt(60, 0)}
	f := Frontier(pts, ByInteractivity, true)
	want := [][2]float64{{100, 50}, {50, 80}, {30, 80}, {20, 120}}
	if len(f) != len(want) {
		t.Fatalf("frontier %v, want %v", f, want)
	}
	for i, w := range want {
		if f[i].Interactivity != w[0] || f[i].TputPerGPU != w[1] {
			t.Errorf("frontier[%d] = (%g, %g), want %v", i, f[i].Interactivity, f[i].TputPerGPU, w)
		}
	}
	// E2EL (lower better) by InferenceX's rule keeps an equal-y plateau at
	// larger x: (10 s, 80) after (5 s, 80).
	e := Frontier([]Point{
		{Result: Result{TputPerGPU: 80, E2EL: Percentiles{P90: 5}}},
		{Result: Result{TputPerGPU: 80, E2EL: Percentiles{P90: 10}}},
		{Result: Result{TputPerGPU: 60, E2EL: Percentiles{P90: 7}}},
		{Result: Result{TputPerGPU: 90, E2EL: Percentiles{P90: 12}}},
	}, ByE2ELp90, false)
	if len(e) != 3 || e[0].E2EL.P90 != 5 || e[1].E2EL.P90 != 10 || e[2].E2EL.P90 != 12 {
		t.Errorf("E2EL frontier %+v", e)
	}
}

// TestRunningHint: a closed-loop concurrency whose default --max-running
// (the sessions) leaves no KV page is refused with the largest cap that
// fits, and that cap is the boundary the planner itself draws: predicting
// with it runs, with one more it is refused.
func TestRunningHint(t *testing.T) {
	q := Query{GPU: "b200"}
	r := resolved(t, q)
	_, err := Predict(r, topo(t, "agg:tp2"), 256, 3)
	var inf *InfeasibleError
	if !errors.As(err, &inf) {
		t.Fatalf("conc 256 on B200 TP2, k=3: err %v, want InfeasibleError", err)
	}
	var n int
	i := strings.Index(inf.Error(), "at most ")
	if i < 0 {
		t.Fatalf("no cap named in %q", inf.Error())
	}
	if _, err := fmt.Sscanf(inf.Error()[i:], "at most %d fit", &n); err != nil || n < 1 || n >= 256 {
		t.Fatalf("cap %d (%v) in %q", n, err, inf.Error())
	}
	for _, c := range []struct {
		run  int
		fits bool
	}{{n, true}, {n + 1, false}} {
		q.MaxRunning = c.run
		_, err := Predict(resolved(t, q), topo(t, "agg:tp2"), 256, 3)
		if got := !errors.As(err, &inf); got != c.fits {
			t.Errorf("--max-running %d: fits %v (err %v), want %v", c.run, got, err, c.fits)
		}
	}
	q.MaxRunning = 300 // set by the user: no hint
	if _, err := Predict(resolved(t, q), topo(t, "agg:tp2"), 256, 3); err == nil || strings.Contains(err.Error(), "at most") {
		t.Errorf("--max-running 300: err %v, want a refusal without a hint", err)
	}
}

// TestDecodeRouting: a disaggregated pool routes decode requests over its
// decode workers' DP ranks as Dynamo's decode router does. Sixteen new
// sessions with equal prompts spread two to each of the eight targets of
// two DEP4 workers (the load counts what was routed, so simultaneous
// requests do not pile onto one worker); a session's later request keeps
// its target even when that target is now the most loaded; finished work
// leaves the load. SGLang chooses the decode target on arrival (bootstrap),
// the others once the prefill is done; an aggregated pool has no decode
// router.
func TestDecodeRouting(t *testing.T) {
	for _, c := range []struct {
		engine     string
		atDispatch bool
	}{{"sglang", true}, {"vllm", false}, {"trtllm", false}} {
		r := resolved(t, Query{GPU: "gb300", Engine: c.engine})
		sc, err := r.Scenario(topo(t, "disagg:1xtp4+2xdep4"), 64, 3)
		if err != nil {
			t.Fatal(err)
		}
		p, err := NewPlan(sc, r.GPU)
		if err != nil {
			t.Fatalf("%s: %v", c.engine, err)
		}
		inst, entry, decodeIdx, err := p.lanes()
		if err != nil {
			t.Fatal(err)
		}
		srv := p.newServer(inst, entry, decodeIdx)
		if len(srv.decodeInst) != 8 || srv.decodeAtDispatch != c.atDispatch {
			t.Fatalf("%s: %d decode targets, on arrival %v; want 8, %v", c.engine, len(srv.decodeInst), srv.decodeAtDispatch, c.atDispatch)
		}
		per := map[[2]int]int{}
		first := -1
		for s := range 16 {
			tg := srv.drt.route(s, 1000, 0)
			if s == 0 {
				first = tg
			}
			if in := inst[srv.decodeInst[tg]]; in.role != roleDecode || srv.decodeRank[tg] >= in.ranks {
				t.Fatalf("%s: target %d is lane %d rank %d, not a decode rank", c.engine, tg, srv.decodeInst[tg], srv.decodeRank[tg])
			}
			per[[2]int{srv.decodeInst[tg], srv.decodeRank[tg]}]++
		}
		if len(per) != 8 {
			t.Errorf("%s: 16 sessions on %d targets, want all 8: %v", c.engine, len(per), per)
		}
		for k, n := range per {
			if n != 2 {
				t.Errorf("%s: lane %d rank %d got %d sessions, want 2", c.engine, k[0], k[1], n)
			}
		}
		if tg := srv.drt.route(0, 1000, 1); tg != first {
			t.Errorf("%s: session 0's second request went to target %d, its first to %d", c.engine, tg, first)
		}
		srv.drt.done(first, 1000)
		srv.drt.done(first, 1000)
		srv.drt.done(first, 1000)
		if tg := srv.drt.route(99, 1000, 2); tg != first {
			t.Errorf("%s: a new session went to target %d, not to %d, the one with no load left", c.engine, tg, first)
		}
	}
	r := resolved(t, Query{GPU: "gb300"})
	sc, err := r.Scenario(topo(t, "agg:tp4"), 8, 3)
	if err != nil {
		t.Fatal(err)
	}
	p, err := NewPlan(sc, r.GPU)
	if err != nil {
		t.Fatal(err)
	}
	inst, entry, decodeIdx, err := p.lanes()
	if err != nil {
		t.Fatal(err)
	}
	if srv := p.newServer(inst, entry, decodeIdx); srv.drt != nil || srv.decodeAtDispatch {
		t.Errorf("agg:tp4 has a decode router")
	}
}

// TestDisaggFirstTokenAtJoin: a disaggregated request's first token reaches
// the client when the decode worker takes it into its running batch, so a
// request waiting for a decode slot waits in its TTFT, not its TPOT. With one
// running slot and six sessions every request decodes alone: p90 TPOT is the
// single session's (within 3%), and TTFT carries the queue (its p50 more than
// three times the single session's). Both engines' paths are checked: SGLang
// holds the slot from arrival (preallocation), vLLM from the transfer.
func TestDisaggFirstTokenAtJoin(t *testing.T) {
	for _, engine := range []string{"sglang", "vllm"} {
		run := func(conc, maxRunning int) *Result {
			q := Query{GPU: "gb300", Engine: engine, MaxRunning: maxRunning, Workload: "fixed", ISL: 1024, OSL: 256, RangeRatio: 1}
			res, err := Predict(resolved(t, q), topo(t, "disagg:1xtp4+1xtp4"), conc, 3)
			if err != nil {
				t.Fatalf("%s: %v", engine, err)
			}
			return res
		}
		alone, queued := run(1, 0), run(6, 1)
		if r := queued.TPOTp90ms / alone.TPOTp90ms; r < 0.97 || r > 1.03 {
			t.Errorf("%s: p90 TPOT %.2f ms with six sessions on one decode slot, %.2f ms alone (x%.3f): the wait for the slot leaked into TPOT", engine, queued.TPOTp90ms, alone.TPOTp90ms, r)
		}
		if queued.TTFTms < 3*alone.TTFTms {
			t.Errorf("%s: TTFT p50 %.0f ms with six sessions on one decode slot, %.0f ms alone: the wait is not in TTFT", engine, queued.TTFTms, alone.TTFTms)
		}
	}
}
