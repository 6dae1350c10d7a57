package acceptance

import (
	"fmt"
	"math"
	"strings"

	"github.com/specsim/specsim/golden"
)

// Target is where the acceptance of a run comes from: a sampling method and
// the lengths it aims at, from a golden curve, a fixed acceptance length, a
// measured histogram, or a combination (a histogram with a curve or a fixed
// AL gives the empirical draws a target to be compared with). Every command
// that needs the acceptance at a draft length asks [Target.At].
type Target struct {
	Method string        // one of [Methods]; "" is [SGLangMatchExpected]
	Curve  *golden.Curve // golden AL(k); nil when none applies
	AL     float64       // fixed acceptance length, bonus token included; 0 = unset
	Hist   *Histogram    // measured lengths, for [Empirical]
}

// Point is a [Target] at one draft length.
type Point struct {
	K  int
	AL float64 // the target acceptance length, bonus token included
	// Dist is P(L = l) at index l-1 for the methods that draw from a
	// distribution ([Chain] and [Empirical]); nil otherwise.
	Dist []float64
	// Source says where AL comes from: "al", "histogram mean", or
	// "golden MODEL thinking MODE k=K".
	Source string
}

// Source values of [Point.Source] other than a golden curve's.
const (
	SourceAL            = "al"
	SourceHistogramMean = "histogram mean"
)

func (t Target) method() string {
	if t.Method == "" {
		return SGLangMatchExpected
	}
	return t.Method
}

// Check reports what makes t unusable at every draft length: an unknown
// method, a fixed AL below one token, a histogram for a method that does not
// draw from one, or a method missing what it draws from.
func (t Target) Check() error {
	m := t.method()
	if !validMethod(m) {
		return &Error{Field: FieldMethod, Value: m, Reason: "unknown method; methods: " + strings.Join(Methods(), ", ")}
	}
	if t.AL != 0 && (math.IsNaN(t.AL) || math.IsInf(t.AL, 0)) {
		return &Error{Field: FieldAL, Value: fmt.Sprint(t.AL), Reason: "must be a finite number of tokens, at least 1"}
	}
	if t.AL != 0 && t.AL < 1 {
		return &Error{Field: FieldAL, Value: fmt.Sprint(t.AL), Reason: "must be >= 1: the acceptance length counts the bonus token"}
	}
	switch {
	case m == Empirical && t.Hist == nil:
		return &Error{Field: FieldHistogram, Reason: "method empirical needs a histogram (CSV length,count)"}
	case m != Empirical && t.Hist != nil:
		return &Error{Field: FieldHistogram, Value: t.Hist.Name, Reason: "a histogram applies to method empirical only: add --method empirical"}
	case m == Chain && t.AL != 0:
		return &Error{Field: FieldAL, Value: fmt.Sprint(t.AL), Reason: "a fixed AL does not apply to method chain: it draws from the golden distribution"}
	case m == Chain && t.Curve == nil:
		return &Error{Field: FieldMethod, Value: m, Reason: "method chain needs a golden curve"}
	}
	return nil
}

// At is the target at draft length k (1..[MaxDraftLength]). A fixed AL
// wins over the curve; the empirical method's AL, with neither, is the
// histogram's mean. A fixed AL above k+1, a histogram longer than k+1 and a
// curve without k are errors.
func (t Target) At(k int) (Point, error) {
	if err := t.Check(); err != nil {
		return Point{}, err
	}
	if k < 1 || k > MaxDraftLength {
		return Point{}, &Error{Field: FieldSteps, Value: fmt.Sprint(k), Reason: fmt.Sprintf("draft length outside 1..%d", MaxDraftLength)}
	}
	p := Point{K: k}
	m := t.method()
	if m == Empirical {
		if len(t.Hist.Counts) > k+1 {
			return p, &Error{Field: FieldHistogram, Value: t.Hist.Name,
				Reason: fmt.Sprintf("lengths up to %d do not fit %d draft steps (at most k+1 = %d)", len(t.Hist.Counts), k, k+1)}
		}
		p.Dist = t.Hist.Distribution()
	}
	switch {
	case t.AL != 0:
		if t.AL > float64(k+1) {
			return p, &Error{Field: FieldAL, Value: fmt.Sprint(t.AL), Reason: fmt.Sprintf("outside [1, %d]: at %d draft steps at most k+1 tokens are accepted", k+1, k)}
		}
		p.AL, p.Source = t.AL, SourceAL
	case t.Curve != nil:
		al, err := t.Curve.At(k)
		if err != nil {
			return p, fmt.Errorf("golden curve %s (thinking %s): %w", t.Curve.Model, t.Curve.Thinking, err)
		}
		p.AL, p.Source = al, fmt.Sprintf("golden %s thinking %s k=%d", t.Curve.Model, t.Curve.Thinking, k)
	case p.Dist != nil:
		p.AL, p.Source = meanOf(p.Dist), SourceHistogramMean
	default:
		return p, &Error{Field: FieldAL, Reason: "no acceptance length: no golden curve and no fixed AL"}
	}
	if m == Chain {
		d, err := t.Curve.Distribution(k)
		if err != nil {
			return p, err
		}
		p.Dist = d
	}
	return p, nil
}

// Sampler builds the sampler of t's method at draft length k.
func (t Target) Sampler(k int, seed uint64) (Sampler, Point, error) {
	p, err := t.At(k)
	if err != nil {
		return nil, p, err
	}
	c := Config{Method: t.method(), K: k, Seed: seed, Dist: p.Dist}
	if p.Dist == nil {
		c.TargetAL = p.AL
	}
	s, err := New(c)
	return s, p, err
}

// Field names of [Error]: the setting an error is about, for a command to
// map to its flag.
const (
	FieldMethod    = "method"
	FieldAL        = "al"
	FieldHistogram = "histogram"
	FieldSteps     = "steps"
)

// Error is a setting of a [Target] that cannot be used.
type Error struct {
	Field  string // one of the Field constants
	Value  string // the value given, "" when the setting is missing
	Reason string
}

func (e *Error) Error() string {
	if e.Value == "" {
		return e.Field + ": " + e.Reason
	}
	return fmt.Sprintf("%s %s: %s", e.Field, e.Value, e.Reason)
}

func validMethod(m string) bool {
	for _, x := range Methods() {
		if x == m {
			return true
		}
	}
	return false
}
