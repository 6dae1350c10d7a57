package acceptance

import (
	"errors"
	"math"
	"strings"
	"testing"
)

func TestTargetAt(t *testing.T) {
	c := qwenCurve(t)
	// 1 x1, 2 x2, 3 x1: mean (1+4+3)/4 = 2.
	h := &Histogram{Name: "h.csv", Counts: []float64{1, 2, 1}, Total: 4}
	for _, tt := range []struct {
		name   string
		target Target
		k      int
		al     float64
		source string
		dist   bool
	}{
		{"curve", Target{Curve: c}, 6, 4.80, "golden qwen3.5-397b-a17b-nvfp4 thinking on k=6", false},
		{"fixed AL wins over the curve", Target{Curve: c, AL: 2.5}, 6, 2.5, SourceAL, false},
		{"chain draws from the curve", Target{Method: Chain, Curve: c}, 6, 4.80, "golden qwen3.5-397b-a17b-nvfp4 thinking on k=6", true},
		{"empirical, histogram mean", Target{Method: Empirical, Hist: h}, 2, 2, SourceHistogramMean, true},
		{"empirical against the curve", Target{Method: Empirical, Hist: h, Curve: c}, 6, 4.80, "golden qwen3.5-397b-a17b-nvfp4 thinking on k=6", true},
		{"empirical against --al", Target{Method: Empirical, Hist: h, AL: 2.2}, 3, 2.2, SourceAL, true},
	} {
		p, err := tt.target.At(tt.k)
		if err != nil {
			t.Errorf("%s: %v", tt.name, err)
			continue
		}
		if math.Abs(p.AL-tt.al) > 1e-9 || p.Source != tt.source || (p.Dist != nil) != tt.dist || p.K != tt.k {
			t.Errorf("%s: got %+v; want AL %v from %q, dist %v", tt.name, p, tt.al, tt.source, tt.dist)
		}
	}
	for _, tt := range []struct {
		name   string
		target Target
		k      int
		field  string
		want   string
	}{
		{"AL above k+1", Target{AL: 5}, 3, FieldAL, "outside [1, 4]"},
		{"AL below 1", Target{AL: 0.5}, 3, FieldAL, ">= 1"},
		{"chain with a fixed AL", Target{Method: Chain, Curve: c, AL: 3}, 3, FieldAL, "does not apply"},
		{"chain without a curve", Target{Method: Chain}, 3, FieldMethod, "needs a golden curve"},
		{"empirical without a histogram", Target{Method: Empirical}, 3, FieldHistogram, "needs a histogram"},
		{"histogram for another method", Target{Hist: h, AL: 2}, 3, FieldHistogram, "empirical only"},
		{"histogram longer than k+1", Target{Method: Empirical, Hist: h}, 1, FieldHistogram, "do not fit"},
		{"nothing to aim at", Target{}, 3, FieldAL, "no acceptance length"},
		{"k too large", Target{AL: 2}, MaxDraftLength + 1, FieldSteps, "outside 1..64"},
		{"unknown method", Target{Method: "eagle", AL: 2}, 3, FieldMethod, "unknown method"},
	} {
		_, err := tt.target.At(tt.k)
		var e *Error
		if !errors.As(err, &e) || e.Field != tt.field || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: error %v; want field %s and %q", tt.name, err, tt.field, tt.want)
		}
	}
	if _, err := (Target{Curve: c}).At(9); err == nil || !strings.Contains(err.Error(), "qwen3.5") {
		t.Errorf("curve without k=9: %v", err)
	}
}

// cycle hands batch slot i the length i+1 in every step.
type cycle struct{}

func (cycle) Step(out []int) {
	for i := range out {
		out[i] = i + 1
	}
}
func (cycle) ExpectedMean() float64 { return 2 }

func TestDraw(t *testing.T) {
	// Slots 1, 2, 3 over 5 steps: 5 draws of each length, mean 2,
	// variance (1+0+1)/3, per-request means 1, 2, 3.
	d := Draw(cycle{}, 2, 3, 5)
	if got := d.Counts; len(got) != 4 || got[1] != 5 || got[2] != 5 || got[3] != 5 {
		t.Errorf("counts %v", got)
	}
	if d.Mean != 2 || math.Abs(d.Std-math.Sqrt(2.0/3)) > 1e-15 {
		t.Errorf("mean %v std %v", d.Mean, d.Std)
	}
	if r := d.PerRequest; r.Min != 1 || r.P50 != 2 || r.Max != 3 {
		t.Errorf("per request %+v", r)
	}
	// An even batch's median is the mean of the middle two: slots 1..4.
	if r := Draw(cycle{}, 3, 4, 2).PerRequest; r.P50 != 2.5 {
		t.Errorf("even-batch median %v, want 2.5", r.P50)
	}
}
