package golden

import "fmt"

// Load is the embedded curves merged with a directory of curve files
// (dir "" for none) and then with each file, later ones winning.
func Load(dir string, files []string) (*Set, error) {
	s, err := Default()
	if err != nil {
		return nil, fmt.Errorf("embedded golden curves: %w", err)
	}
	if dir != "" {
		d, err := LoadDir(dir)
		if err != nil {
			return nil, err
		}
		s.Merge(d)
	}
	for _, f := range files {
		o, err := LoadFile(f)
		if err != nil {
			return nil, err
		}
		s.Merge(o)
	}
	return s, nil
}

// Report is one curve as "specsim golden show" reports it: the curve
// (extended where asked), its consistent repair and, at a draft length,
// the distribution of the accepted length, with every warning.
type Report struct {
	Curve, Consistent *Curve
	Repair            Repair
	// At Steps > 0: AL at Steps, the distribution of L (Dist[l-1] =
	// P(L = l)) and its moments, from the consistent curve.
	Steps          int
	AL             float64
	Dist           []float64
	Mean, Variance float64
	Warnings       []string
}

// DraftLengthError is a draft length a curve report cannot give: outside
// 1..MaxDraftLength, or past the measured lengths when extrapolation was
// not asked for (Extrapolable).
type DraftLengthError struct {
	Steps        int
	Reason       string
	Extrapolable bool
}

func (e *DraftLengthError) Error() string {
	return fmt.Sprintf("draft length %d: %s", e.Steps, e.Reason)
}

// ReportCurve reports the curve of model and thinking mode t; steps 0 for
// the curve alone. steps past the measured draft lengths are an error
// unless extrapolate is set (Extrapolate); both are a [DraftLengthError].
func (s *Set) ReportCurve(model string, t Thinking, steps int, extrapolate bool) (*Report, error) {
	if steps < 0 || steps > MaxDraftLength {
		return nil, &DraftLengthError{Steps: steps, Reason: fmt.Sprintf("outside 1..%d", MaxDraftLength)}
	}
	curve, err := s.Curve(model, t)
	if err != nil {
		return nil, err
	}
	r := &Report{Warnings: curve.Check()}
	if steps > curve.MaxK() {
		if !extrapolate {
			return nil, &DraftLengthError{Steps: steps, Extrapolable: true, Reason: fmt.Sprintf("%s thinking %s has no golden AL at k=%d; measured draft lengths are 1..%d (%s)",
				curve.Model, t, steps, curve.MaxK(), curve.Source)}
		}
		if curve, err = curve.Extrapolate(steps); err != nil {
			return nil, err
		}
		r.Warnings = append(r.Warnings, fmt.Sprintf("AL at k=%d..%d is extrapolated, not measured: %s", curve.Measured+1, steps, curve.Extrapolation))
	}
	r.Curve = curve
	r.Consistent, r.Repair = curve.Consistent()
	if steps == 0 {
		return r, nil
	}
	r.Steps = steps
	r.AL, _ = curve.At(steps)
	if r.Dist, err = curve.Distribution(steps); err != nil {
		return nil, err
	}
	r.Mean, r.Variance = Moments(r.Dist)
	if r.Repair.Touches(steps) {
		r.Warnings = append(r.Warnings, fmt.Sprintf("distribution at k=%d comes from the consistent curve: its mean is %.3f, the measured AL %.3f; see \"consistent\"",
			steps, r.Consistent.AL[steps-1], r.AL))
	}
	return r, nil
}
