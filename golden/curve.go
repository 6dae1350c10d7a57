package golden

import (
	"fmt"
	"math"
	"strconv"
)

// Curve is one golden AL curve: the mean accepted length per verify step,
// bonus token included, at each draft length k = 1..MaxK.
type Curve struct {
	Model    string
	Thinking Thinking
	Source   string    // file it came from
	AL       []float64 // AL[k-1] = AL at draft length k, k = 1..MaxK

	// Measured is how many leading values of AL were measured; the rest
	// were added by Extrapolate. Zero means every value was measured.
	Measured int
	// Extrapolation describes how values past Measured were made ("" if none).
	Extrapolation string
}

// ProjectionMethod names the repair Consistent applies.
const ProjectionMethod = "least-squares projection of the prefix acceptance p onto " +
	"{1 >= p_1 >= ... >= p_K >= 0}: non-increasing isotonic regression " +
	"(pool-adjacent-violators, equal weights), then clipping to [0, 1]"

// tolerance absorbs float noise from differencing two-decimal values
// (4.73 - 4.48 is 0.25000000000000044).
const tolerance = 1e-9

// MaxK is the largest draft length the curve covers.
func (c *Curve) MaxK() int { return len(c.AL) }

// measured is the number of measured values.
func (c *Curve) measured() int {
	if c.Measured > 0 && c.Measured < len(c.AL) {
		return c.Measured
	}
	return len(c.AL)
}

// At returns AL(k). AL(0) is 1 (no drafts, the bonus token only); k outside
// 0..MaxK is an error naming the range that exists.
func (c *Curve) At(k int) (float64, error) {
	if k == 0 {
		return 1, nil
	}
	if k < 1 || k > len(c.AL) {
		return 0, fmt.Errorf("%s thinking %s: no golden AL at k=%d; draft lengths 1..%d exist (%s)",
			c.Model, c.Thinking, k, len(c.AL), c.Source)
	}
	return c.AL[k-1], nil
}

// PrefixAcceptance returns p_j = AL(j) - AL(j-1), j = 1..MaxK, with
// AL(0) = 1, as measured (not repaired).
func (c *Curve) PrefixAcceptance() []float64 {
	p := make([]float64, len(c.AL))
	prev := 1.0
	for j, v := range c.AL {
		p[j] = v - prev
		prev = v
	}
	return p
}

// Check reports every violation of 1 <= AL(k) <= k+1, of AL non-decreasing
// in k, and of the prefix acceptance being non-increasing, as warnings
// naming model, thinking mode and k. Extrapolated values are not checked.
func (c *Curve) Check() []string {
	var w []string
	name := fmt.Sprintf("%s thinking %s", c.Model, c.Thinking)
	n := c.measured()
	for k := 1; k <= n; k++ {
		al := c.AL[k-1]
		if al < 1-tolerance || al > float64(k+1)+tolerance {
			w = append(w, fmt.Sprintf("%s k=%d: AL %s outside [1, %d]", name, k, num(al), k+1))
		}
	}
	for k := 2; k <= n; k++ {
		if c.AL[k-1] < c.AL[k-2]-tolerance {
			w = append(w, fmt.Sprintf("%s k=%d: AL drops from %s at k=%d to %s at k=%d",
				name, k, num(c.AL[k-2]), k-1, num(c.AL[k-1]), k))
		}
	}
	p := c.PrefixAcceptance()
	for j := 2; j <= n; j++ {
		if p[j-1] > p[j-2]+tolerance {
			w = append(w, fmt.Sprintf("%s k=%d: prefix acceptance rises from p_%d = %s to p_%d = %s (AL gains %s at k=%d after %s at k=%d)",
				name, j, j-1, num(p[j-2]), j, num(p[j-1]), num(p[j-1]), j, num(p[j-2]), j-1))
		}
	}
	return w
}

// num formats a value without float noise: 0.25000000000000044 -> "0.25".
func num(x float64) string {
	return strconv.FormatFloat(math.Round(x*1e9)/1e9, 'f', -1, 64)
}

// Repair says how Consistent changed a curve.
type Repair struct {
	Projection string    // the projection used (ProjectionMethod)
	Changed    bool      // whether any AL moved
	Moved      []float64 // consistent AL(k) - measured AL(k), k = 1..MaxK
}

// Touches reports whether the repair moved any AL(1..k), that is any
// prefix acceptance the distribution at k uses.
func (r Repair) Touches(k int) bool {
	for j := 0; j < k && j < len(r.Moved); j++ {
		if r.Moved[j] != 0 {
			return true
		}
	}
	return false
}

// Consistent returns the closest consistent curve and how far each AL moved.
// "Closest" is least squares on the prefix acceptance p: the projection of p
// onto {1 >= p_1 >= ... >= p_K >= 0}. Isotonic regression by
// pool-adjacent-violators gives the projection onto the non-increasing
// sequences; clipping that to [0, 1] gives the projection onto their
// intersection with the box (for constant bounds the two steps commute with
// the projection). A consistent curve comes back unchanged, values intact.
func (c *Curve) Consistent() (*Curve, Repair) {
	p := c.PrefixAcceptance()
	q := c.consistentPrefix()
	out := *c
	out.AL = make([]float64, len(c.AL))
	r := Repair{Projection: ProjectionMethod, Moved: make([]float64, len(c.AL))}
	moved := 0.0
	for k := range c.AL {
		moved += q[k] - p[k]
		if math.Abs(moved) < 1e-12 {
			moved = 0
		}
		r.Moved[k] = moved
		out.AL[k] = c.AL[k] + moved
		r.Changed = r.Changed || moved != 0
	}
	return &out, r
}

// consistentPrefix is the projected prefix acceptance q (see Consistent).
// Derived quantities use q itself rather than differencing the repaired AL
// again, which would bring back float noise.
func (c *Curve) consistentPrefix() []float64 {
	return clip01(isotonicNonIncreasing(c.PrefixAcceptance()))
}

// isotonicNonIncreasing is the least-squares non-increasing fit to y
// (pool-adjacent-violators with equal weights). Violations below
// tolerance are float noise and are left alone.
func isotonicNonIncreasing(y []float64) []float64 {
	type block struct {
		sum float64
		n   int
	}
	mean := func(b block) float64 { return b.sum / float64(b.n) }
	var st []block
	for _, v := range y {
		st = append(st, block{v, 1})
		for len(st) > 1 && mean(st[len(st)-1]) > mean(st[len(st)-2])+tolerance {
			last := st[len(st)-1]
			st = st[:len(st)-1]
			st[len(st)-1].sum += last.sum
			st[len(st)-1].n += last.n
		}
	}
	out := make([]float64, 0, len(y))
	for _, b := range st {
		if b.n == 1 {
			out = append(out, b.sum) // keep an untouched value bit for bit
			continue
		}
		m := mean(b)
		for range b.n {
			out = append(out, m)
		}
	}
	return out
}

func clip01(p []float64) []float64 {
	for i, v := range p {
		p[i] = min(1, max(0, v))
	}
	return p
}

// ConditionalAcceptance returns c_j = p_j / p_(j-1), j = 1..MaxK (p_0 = 1),
// of the consistent curve: the probability that draft j is accepted given
// that drafts 1..j-1 were. Where p_(j-1) = 0 no request gets that far and
// c_j is 0, as vLLM defines it for its synthetic rates.
func (c *Curve) ConditionalAcceptance() []float64 {
	p := c.consistentPrefix()
	out := make([]float64, len(p))
	prev := 1.0
	for j, v := range p {
		if prev > 0 {
			out[j] = min(1, max(0, v/prev))
		}
		prev = v
	}
	return out
}

// Distribution returns P(L = l) at index l-1, l = 1..k+1, for draft length
// k, from the consistent curve: P(L = 1+j) = p_j - p_(j+1) for j < k and
// P(L = 1+k) = p_k. Its mean is the consistent AL(k).
func (c *Curve) Distribution(k int) ([]float64, error) {
	if k < 1 || k > len(c.AL) {
		return nil, fmt.Errorf("%s thinking %s: no distribution at k=%d; draft lengths 1..%d exist (%s)",
			c.Model, c.Thinking, k, len(c.AL), c.Source)
	}
	p := c.consistentPrefix()
	d := make([]float64, k+1)
	prev := 1.0
	for j := 0; j < k; j++ {
		d[j] = max(0, prev-p[j])
		prev = p[j]
	}
	d[k] = max(0, prev)
	return d, nil
}

// Moments returns the mean and variance of a length distribution given as
// P(L = l) at index l-1.
func Moments(dist []float64) (mean, variance float64) {
	for i, p := range dist {
		mean += float64(i+1) * p
	}
	for i, p := range dist {
		d := float64(i+1) - mean
		variance += d * d * p
	}
	return mean, variance
}

// Extrapolate returns a copy of the curve extended to maxK with a geometric
// tail: past the last measured k = K, each further draft is accepted with
// the last measured conditional acceptance r = p_K / p_(K-1) of the
// consistent curve (p_1 when K = 1), so p_(K+m) = p_K r^m and
// AL(K+m) = AL'(K) + p_K (r + ... + r^m), where AL' is the consistent curve.
// This assumes acceptance per position keeps decaying at its last rate,
// which is what a chain draft with a fixed per-token match rate does;
// measured values are kept as they are. The copy records Measured and the
// method in Extrapolation. maxK <= MaxK returns an unchanged copy.
func (c *Curve) Extrapolate(maxK int) (*Curve, error) {
	if maxK > MaxDraftLength {
		return nil, fmt.Errorf("%s thinking %s: cannot extrapolate to k=%d, beyond %d", c.Model, c.Thinking, maxK, MaxDraftLength)
	}
	out := *c
	out.AL = append([]float64(nil), c.AL...)
	n := c.measured()
	if maxK <= len(c.AL) {
		return &out, nil
	}
	out.AL = out.AL[:n]
	cc, _ := c.Consistent()
	q := c.consistentPrefix()
	r := c.ConditionalAcceptance()[n-1]
	p := q[n-1]
	al := cc.AL[n-1]
	for k := n + 1; k <= maxK; k++ {
		p *= r
		al += p
		out.AL = append(out.AL, al)
	}
	out.Measured = n
	out.Extrapolation = fmt.Sprintf("geometric tail past k=%d: p_(%d+m) = p_%d * r^m with p_%d = %s and r = p_%d/p_%d = %s (last conditional acceptance of the consistent curve)",
		n, n, n, n, num(q[n-1]), n, n-1, num(r))
	return &out, nil
}
