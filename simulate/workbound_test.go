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
