package simulate

import (
	"strings"
	"testing"
)

// The bounds by hand: a fixed 1000-token prompt, half cached, in chunks of
// 100 is ceil(500/100) = 5 forwards a request, so 400000 requests make
// exactly MaxPrefillForwards; 100 output tokens at AL 2 are 50 steps, so
// 1000000 requests make exactly MaxDecodeSteps.
func TestCheckWork(t *testing.T) {
	w := Workload{Name: "fixed", ISL: 1000, OSL: 10, RangeRatio: 1, CachedFraction: 0.5}
	if err := checkWork(w, 400_000, 100, Spec{}); err != nil {
		t.Errorf("at the prefill bound: %v", err)
	}
	err := checkWork(w, 400_001, 100, Spec{})
	if err == nil || !strings.Contains(err.Error(), "400001 requests x ceil(500 uncached prompt tokens / --chunk 100) = 400001 x 5") {
		t.Errorf("past the prefill bound: %v", err)
	}
	w = Workload{Name: "fixed", ISL: 1, OSL: 100, RangeRatio: 1}
	spec := Spec{Steps: 3, AL: 2}
	if err := checkWork(w, 1_000_000, 0, spec); err != nil {
		t.Errorf("at the decode bound: %v", err)
	}
	err = checkWork(w, 1_000_001, 0, spec)
	if err == nil || !strings.Contains(err.Error(), "1000001 requests x 100 mean output tokens / AL 2.00") {
		t.Errorf("past the decode bound: %v", err)
	}
	// without speculation every output token is a step
	if err := checkWork(w, 500_001, 0, Spec{}); err == nil {
		t.Error("50000100 decode steps without speculation accepted")
	}
}

// TestCheckSweepWork: the sweep bound by hand. The estimates price each
// prefill engine's draw once per concurrency and speculative-prefill
// variant: agg:tp1, agg:tp2 and a disaggregated pool whose prefill workers
// are tp1 are 2 engines; 3 concurrencies at one k are 6 variants of 2 x
// meanFieldSamples prefills. A 1000-token prompt, half cached, in chunks
// of 100 is 5 chunks: 6 x 2048 x 5 = 61,440 chunks; in chunks of 1 it is
// 500 a prefill, 6,144,000 chunks, past MaxPrefillForwards.
func TestCheckSweepWork(t *testing.T) {
	var topos []Topology
	for _, s := range []string{"agg:tp1", "agg:tp2", "disagg:1xtp1+1xtp2"} {
		tp, err := ParseTopology(s)
		if err != nil {
			t.Fatal(err)
		}
		topos = append(topos, tp)
	}
	r := &Resolved{Workload: Workload{Name: "random", ISL: 1000, OSL: 10, RangeRatio: 1, CachedFraction: 0.5}}
	for _, c := range []struct {
		chunk int
		want  string // "" = accepted
	}{
		{100, ""},
		{1, "about 6.14e+06 prefill chunks (2 prefill engines x 3 concurrencies x 1 speculative-prefill variants x 2048 sampled prefills x 500 chunks of --chunk 1)"},
	} {
		r.Q.Chunk = c.chunk
		err := checkSweepWork(r, topos, 1, []int{1, 2, 4})
		switch {
		case c.want == "" && err != nil:
			t.Errorf("chunk %d: %v", c.chunk, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("chunk %d: %v, want %q", c.chunk, err, c.want)
		}
	}
}
