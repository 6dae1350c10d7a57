package enginelog

import "testing"

// TestDisagrees: exit 1 only for a judged disagreement.
func TestDisagrees(t *testing.T) {
	sum := func(mean float64, n int) *Summary {
		return &Summary{AcceptLen: &Distribution{Mean: mean, Samples: n, StdErr: 0.01}}
	}
	if s := sum(3.0, minAgreeSample); s.Agree(3.5) == nil || !s.Disagrees() {
		t.Error("3.0 against 3.5 over enough samples must disagree")
	}
	if s := sum(3.0, minAgreeSample); s.Agree(3.01) == nil || s.Disagrees() {
		t.Error("3.0 against 3.01 must agree")
	}
	if s := sum(3.0, minAgreeSample-1); s.Agree(3.5) == nil || s.Disagrees() {
		t.Error("too few samples must not count as a disagreement")
	}
	if s := (&Summary{}); s.Agree(3) == nil || s.Disagrees() {
		t.Error("no samples must not count as a disagreement")
	}
	if (&Summary{}).Disagrees() {
		t.Error("no target: no disagreement")
	}
}
