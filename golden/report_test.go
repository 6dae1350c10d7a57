package golden

import (
	"errors"
	"math"
	"strings"
	"testing"
)

// ReportCurve on hand-worked curves. AL 1.8, 2.4, 2.8 has prefix
// acceptance 0.8, 0.6, 0.4, so at k=2 P(L=1) = 0.2, P(L=2) = 0.2,
// P(L=3) = 0.6 (mean 2.4, variance 0.64). AL 1.5, 2.2 has p = 0.5, 0.7,
// rising: the projection pools them to 0.6, 0.6 (AL 1.6, 2.2) and warns.
func TestReportCurve(t *testing.T) {
	s, err := Parse("good.yaml", []byte("good-1b:\n  thinking_on: {1: 1.8, 2: 2.4, 3: 2.8}\n"))
	if err != nil {
		t.Fatal(err)
	}
	bad, err := Parse("bad.yaml", []byte("bad-1b:\n  thinking_on: {1: 1.5, 2: 2.2}\n"))
	if err != nil {
		t.Fatal(err)
	}
	s.Merge(bad)
	r, err := s.ReportCurve("good-1b", ThinkingOn, 2, false)
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []float64{0.2, 0.2, 0.6} {
		if math.Abs(r.Dist[i]-want) > 1e-12 {
			t.Errorf("P(L=%d) = %v, want %v", i+1, r.Dist[i], want)
		}
	}
	if math.Abs(r.Mean-2.4) > 1e-12 || math.Abs(r.Variance-0.64) > 1e-12 || r.AL != 2.4 || len(r.Warnings) != 0 || r.Repair.Changed {
		t.Errorf("k=2: AL %v mean %v variance %v warnings %q repair %v; want 2.4, 2.4, 0.64, none, unchanged", r.AL, r.Mean, r.Variance, r.Warnings, r.Repair.Changed)
	}
	r, err = s.ReportCurve("bad-1b", ThinkingOn, 2, false)
	if err != nil {
		t.Fatal(err)
	}
	if !r.Repair.Changed || math.Abs(r.Consistent.AL[0]-1.6) > 1e-12 || math.Abs(r.Consistent.AL[1]-2.2) > 1e-12 || len(r.Warnings) < 2 {
		t.Errorf("bad-1b: consistent %v, warnings %q; want 1.6, 2.2 and a check warning plus the distribution warning", r.Consistent.AL, r.Warnings)
	}
	var de *DraftLengthError
	if _, err := s.ReportCurve("good-1b", ThinkingOn, 5, false); !errors.As(err, &de) || !de.Extrapolable || de.Steps != 5 || !strings.Contains(err.Error(), "1..3") {
		t.Errorf("k=5 without extrapolate: err = %v, want an extrapolable DraftLengthError naming 1..3", err)
	}
	// Extrapolated: r = p_3/p_2 = 2/3, so AL(4) = 2.8 + 0.4*2/3.
	r, err = s.ReportCurve("good-1b", ThinkingOn, 4, true)
	if err != nil || math.Abs(r.AL-(2.8+0.4*2.0/3)) > 1e-12 || r.Curve.Measured != 3 {
		t.Errorf("k=4 extrapolated: AL %v, err %v; want %v", r.AL, err, 2.8+0.4*2.0/3)
	}
	if _, err := s.ReportCurve("good-1b", ThinkingOn, -1, false); !errors.As(err, &de) || de.Extrapolable {
		t.Errorf("steps -1: err = %v, want a DraftLengthError", err)
	}
}
