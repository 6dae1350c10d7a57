package simulate

import (
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestExhaustiveSweep (SPECSIM_EXHAUSTIVE_IN=sweep.json[.gz],
// SPECSIM_EXHAUSTIVE_OUT=all.json[.gz]) event-simulates every point of a
// sweep's JSON output that the sweep left to its estimate, as refinement
// simulates them (refineWindow), on GOMAXPROCS workers, and writes the
// sweep back with every point simulated and its estimate kept. Its
// frontiers are then the true frontiers of the sweep's space, against
// which TestRefineReplayDiag (fed the output) measures what a search by
// estimate finds and misses. Hours on two cores; minutes on many.
func TestExhaustiveSweep(t *testing.T) {
	in, out := os.Getenv("SPECSIM_EXHAUSTIVE_IN"), os.Getenv("SPECSIM_EXHAUSTIVE_OUT")
	if in == "" || out == "" {
		t.Skip("SPECSIM_EXHAUSTIVE_IN or _OUT unset")
	}
	so := readSweepFile(t, in)
	r, err := so.Inputs.Query.ToQuery().Resolve(testCurves, testCatalog)
	if err != nil {
		t.Fatal(err)
	}
	r = refineWindow(r)
	var todo []int
	for i, p := range so.Points {
		if p.Sim != "event" {
			todo = append(todo, i)
		}
	}
	// Costliest first (the longest simulations start early): by
	// concurrency, descending.
	costs := costliestFirst(so.Points, todo)
	order := make([]int, len(costs))
	for i, j := range costs {
		order[i] = todo[j]
	}
	// SPECSIM_EXHAUSTIVE_SECONDS stops starting simulations after that
	// long; the output then holds the ones done.
	var deadline time.Duration
	if s := os.Getenv("SPECSIM_EXHAUSTIVE_SECONDS"); s != "" {
		secs, err := strconv.Atoi(s)
		if err != nil {
			t.Fatal(err)
		}
		deadline = time.Duration(secs) * time.Second
	}
	workers := runtime.GOMAXPROCS(0)
	rws := workerCopies(r, workers)
	took := make([]time.Duration, len(so.Points)) // each point's simulation, wall
	var next, done, failed atomic.Int64
	var mu sync.Mutex
	var firstErr error
	start := time.Now()
	var wg sync.WaitGroup
	for _, rw := range rws {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				j := int(next.Add(1)) - 1
				if j >= len(order) || (deadline > 0 && time.Since(start) > deadline) {
					return
				}
				p := &so.Points[order[j]]
				topo, err := ParseTopology(p.Topology)
				if err == nil {
					var res *Result
					t0 := time.Now()
					res, err = Predict(rw, topo, p.Conc, p.Steps)
					took[order[j]] = time.Since(t0)
					if err == nil {
						est := p.Result
						mu.Lock()
						p.Estimate, p.Result = &est, *res
						mu.Unlock()
					}
				}
				if err != nil {
					failed.Add(1)
					mu.Lock()
					if firstErr == nil {
						firstErr = err
					}
					mu.Unlock()
				}
				if n := done.Add(1); n%500 == 0 {
					t.Logf("%d of %d simulated (%s)", n, len(order), time.Since(start).Round(time.Second))
				}
			}
		}()
	}
	wg.Wait()
	// A point the simulation refuses (an overloaded deployment past the
	// replay's caps) keeps its estimate and says why.
	t.Logf("simulated %d of %d points in %s on %d workers; %d refused (first: %v)", done.Load()-failed.Load(), len(order), time.Since(start).Round(time.Second), workers, failed.Load(), firstErr)
	so.Refined += len(order)
	// SPECSIM_EXHAUSTIVE_TIMES: each simulation's wall time, CSV.
	if path := os.Getenv("SPECSIM_EXHAUSTIVE_TIMES"); path != "" {
		var b strings.Builder
		b.WriteString("index,topology,conc,steps,ms\n")
		for _, i := range order {
			p := &so.Points[i]
			fmt.Fprintf(&b, "%d,%s,%d,%d,%.3f\n", p.Index, p.Topology, p.Conc, p.Steps, float64(took[i].Microseconds())/1000)
		}
		if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	w, err := os.Create(out)
	if err != nil {
		t.Fatal(err)
	}
	var wr io.Writer = w
	var gz *gzip.Writer
	if strings.HasSuffix(out, ".gz") {
		gz = gzip.NewWriter(w)
		wr = gz
	}
	if err := json.NewEncoder(wr).Encode(so); err != nil {
		t.Fatal(err)
	}
	if gz != nil {
		if err := gz.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}
