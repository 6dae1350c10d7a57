package agentx

import (
	"math"
	"math/bits"
	"slices"
	"sort"
)

// Record is one completed profiled request: sent at Request.Arrival, first
// token at First, last token at End (seconds).
type Record struct {
	Request
	First, End float64
}

// Dist summarizes a per-request metric.
type Dist struct {
	Mean float64 `json:"mean"`
	P50  float64 `json:"p50"`
	P75  float64 `json:"p75"`
	P90  float64 `json:"p90"`
	P95  float64 `json:"p95"`
}

// Metrics is what InferenceX reports from an AgentX run
// (utils/agentic/aggregation/request_metrics.py): percentiles over profiled
// requests (linear interpolation between order statistics, as its
// aggregation_common.percentile), E2EL = request latency from send to last
// token, queueing included, and throughput = (sum ISL + sum OSL) / (last end
// - first start) (compute_throughput_stats). Per-GPU figures divide by the
// GPU count outside.
type Metrics struct {
	Requests     int     `json:"requests"`
	DurationS    float64 `json:"duration_s"` // last end - first start
	InputTokens  int64   `json:"input_tokens"`
	OutputTokens int64   `json:"output_tokens"`
	// SharedTokens are prompt tokens the client re-sends from the same
	// session's previous prompt: the most any prefix cache could hit.
	SharedTokens int64   `json:"shared_tokens"`
	TotalTPS     float64 `json:"total_tokens_per_s"`
	OutputTPS    float64 `json:"output_tokens_per_s"`
	E2EL         Dist    `json:"e2el_s"`
	TTFT         Dist    `json:"ttft_s"`
	TPOT         Dist    `json:"tpot_s"`
	ISL          Dist    `json:"isl"`
	OSL          Dist    `json:"osl"`
	// E2ENormInteractivity is 1 / p90 over requests of E2EL_i / OSL_i
	// (tokens/s/user; _e2e_normalized_interactivity_stats), the AgentX
	// frontier's x axis.
	E2ENormInteractivity float64 `json:"e2e_norm_interactivity_p90"`
	// QuarterTPS is total tokens/s of requests ending in each quarter of
	// the profiled window: flat when the run is in steady state.
	QuarterTPS [4]float64 `json:"quarter_tokens_per_s"`
}

// Measure computes the metrics of records; window is the profiled window
// [t0, t1) that QuarterTPS splits.
func Measure(rs []Record, t0, t1 float64) Metrics {
	return measure([][]Record{rs}, len(rs), t0, t1, false)
}

// Measure is Measure(r.Records(), t0, t1) over the records where they
// are kept, without gathering them into one slice.
func (r *Replay) Measure(t0, t1 float64) Metrics {
	return measure(r.rec.chunks, r.rec.n, t0, t1, false)
}

// Brief is r.Measure(t0, t1) without the percentiles a serving report
// leaves out, which stay zero: of ISL and OSL, E2EL's P95, and TTFT's and
// TPOT's P75 and P95. A percentile it does compute is Measure's.
func (r *Replay) Brief(t0, t1 float64) Metrics {
	return measure(r.rec.chunks, r.rec.n, t0, t1, true)
}

// measure is Measure over the n records of chunks, in order (brief:
// Brief's).
func measure(chunks [][]Record, n int, t0, t1 float64, brief bool) Metrics {
	var m Metrics
	m.Requests = n
	if n == 0 {
		return m
	}
	e2el := make([]float64, 0, n)
	ttft := make([]float64, 0, n)
	tpot := make([]float64, 0, n)
	norm := make([]float64, 0, n)
	isl := make([]float64, 0, n)
	osl := make([]float64, 0, n)
	first, last := math.Inf(1), math.Inf(-1)
	var q [4]float64
	for _, c := range chunks {
		for i := range c {
			r := &c[i]
			e := r.End - r.Arrival
			e2el = append(e2el, e)
			ttft = append(ttft, r.First-r.Arrival)
			if r.Output > 1 {
				tpot = append(tpot, (r.End-r.First)/float64(r.Output-1))
			}
			if e > 0 {
				norm = append(norm, e/float64(r.Output))
			}
			isl = append(isl, float64(r.Input))
			osl = append(osl, float64(r.Output))
			m.InputTokens += int64(r.Input)
			m.OutputTokens += int64(r.Output)
			m.SharedTokens += int64(r.Shared)
			first = min(first, r.Arrival)
			last = max(last, r.End)
			if t1 > t0 {
				k := int(4 * (r.End - t0) / (t1 - t0))
				if k >= 0 && k < 4 {
					q[k] += float64(r.Input + r.Output)
				}
			}
		}
	}
	m.DurationS = last - first
	if m.DurationS > 0 {
		m.TotalTPS = float64(m.InputTokens+m.OutputTokens) / m.DurationS
		m.OutputTPS = float64(m.OutputTokens) / m.DurationS
	}
	if t1 > t0 {
		for k := range q {
			m.QuarterTPS[k] = q[k] / ((t1 - t0) / 4)
		}
	}
	if brief {
		m.E2EL, m.TTFT, m.TPOT = dist(e2el, 0.5, 0.75, 0.9), dist(ttft, 0.5, 0.9), dist(tpot, 0.5, 0.9)
		m.ISL, m.OSL = dist(isl), dist(osl)
	} else {
		all := []float64{0.5, 0.75, 0.9, 0.95}
		m.E2EL, m.TTFT, m.TPOT = dist(e2el, all...), dist(ttft, all...), dist(tpot, all...)
		m.ISL, m.OSL = dist(isl, all...), dist(osl, all...)
	}
	if p := quantiles(norm, 0.9)[0]; p > 0 {
		m.E2ENormInteractivity = 1 / p
	}
	return m
}

// dist is the mean of xs and its quantiles qs (ascending, among 0.5,
// 0.75, 0.9 and 0.95; the others stay zero).
func dist(xs []float64, qs ...float64) Dist {
	if len(xs) == 0 {
		return Dist{}
	}
	s := 0.0
	for _, x := range xs {
		s += x
	}
	d := Dist{Mean: s / float64(len(xs))}
	if len(qs) == 0 {
		return d
	}
	p := quantiles(xs, qs...)
	for i, q := range qs {
		switch q {
		case 0.5:
			d.P50 = p[i]
		case 0.75:
			d.P75 = p[i]
		case 0.9:
			d.P90 = p[i]
		case 0.95:
			d.P95 = p[i]
		}
	}
	return d
}

// quantiles returns Quantile(xs, q) for each q (ascending), reordering
// xs: the order statistics each reads are found by selection, not a full
// sort. With a NaN or a negative zero in xs (whose place among equal
// values a sort and a selection may choose differently) it sorts.
func quantiles(xs []float64, qs ...float64) [4]float64 {
	var out [4]float64
	if len(xs) == 0 {
		return out
	}
	for _, x := range xs {
		if x != x || (x == 0 && math.Signbit(x)) {
			for i, q := range qs {
				out[i] = Quantile(xs, q)
			}
			return out
		}
	}
	// Without NaN and -0, equal floats are the same bits, so the k-th
	// smallest value is one number however ties are ordered.
	if len(xs) >= bracketMin {
		if out, ok := bracketed(xs, qs); ok {
			return out
		}
	}
	done := 0 // xs[:done] hold the done smallest values
	for i, q := range qs {
		pos := q * float64(len(xs)-1)
		lo := int(pos)
		hi := min(lo+1, len(xs)-1)
		for _, k := range [2]int{lo, hi} {
			if k >= done {
				selectKth(xs[done:], k-done)
				done = k + 1
			}
		}
		out[i] = xs[lo] + (pos-float64(lo))*(xs[hi]-xs[lo])
	}
	return out
}

// bracketMin is the smallest input bracketed takes: below it, a sample
// big enough to bracket the quantiles tightly costs more than selection.
const bracketMin = 4096

// bracketed is quantiles (no NaN or -0 in xs) without reordering xs: it
// brackets each quantile's two order statistics between values of a
// sorted sample, counts in one pass the values below each bracket and
// keeps those inside it, and selects within what it kept. If a bracket
// misses its order statistics (an unlucky sample) it reports false.
func bracketed(xs []float64, qs []float64) ([4]float64, bool) {
	// A sample rank's standard deviation is at most sqrt(m)/2 = 16 (the
	// median's); a bracket spans three of them each side.
	const m, half = 1024, 48
	var out [4]float64
	n := len(xs)
	sample := make([]float64, m)
	for i := range sample {
		sample[i] = xs[i*n/m]
	}
	slices.Sort(sample)
	type bracket struct {
		lo, hi float64 // the values kept: lo <= x <= hi
		below  int     // values < lo
		in     []float64
	}
	var bs [4]bracket
	for i, q := range qs {
		r := int(q*float64(n-1)) * m / n // the quantile's rank in the sample
		lo, hi := math.Inf(-1), math.Inf(1)
		if r-half >= 0 {
			lo = sample[r-half]
		}
		if r+half+1 < m {
			hi = sample[r+half+1]
		}
		below, in := 0, make([]float64, 0, n/m*(2*half+2)*5/4)
		for _, x := range xs {
			// Flags, not branches: half the values fall on either side
			// of a median's bracket.
			under, upto := 0, 0
			if x < lo {
				under = 1
			}
			if x <= hi {
				upto = 1
			}
			below += under
			if upto > under {
				in = append(in, x)
			}
		}
		bs[i] = bracket{lo, hi, below, in}
	}
	for i, q := range qs {
		b := &bs[i]
		pos := q * float64(n-1)
		lo := int(pos)
		hi := min(lo+1, n-1)
		if lo < b.below || hi >= b.below+len(b.in) {
			return out, false
		}
		in := b.in
		selectKth(in, lo-b.below)
		vlo, vhi := in[lo-b.below], in[lo-b.below]
		if hi > lo {
			vhi = slices.Min(in[lo-b.below+1:])
		}
		out[i] = vlo + (pos-float64(lo))*(vhi-vlo)
	}
	return out, true
}

// selectKth reorders xs (no NaN) so that xs[k] is its k-th smallest value,
// nothing after it smaller and nothing before it larger: quickselect with
// a three-way partition (runs of equal values end it at once), sorting
// what is left when the partitions keep coming out lopsided.
func selectKth(xs []float64, k int) {
	budget := 2 * bits.Len(uint(len(xs)))
	for len(xs) > 16 {
		if budget--; budget < 0 {
			slices.Sort(xs)
			return
		}
		n := len(xs)
		a, b, c := xs[0], xs[n/2], xs[n-1]
		if a > b {
			a, b = b, a
		}
		if b > c {
			b = c
			if a > b {
				b = a
			}
		}
		pivot := b
		// xs[:lt] < pivot, xs[lt:i] == pivot, xs[gt:] > pivot.
		lt, i, gt := 0, 0, n
		for i < gt {
			switch x := xs[i]; {
			case x < pivot:
				xs[lt], xs[i] = x, xs[lt]
				lt++
				i++
			case x > pivot:
				gt--
				xs[gt], xs[i] = x, xs[gt]
			default:
				i++
			}
		}
		switch {
		case k < lt:
			xs = xs[:lt]
		case k >= gt:
			xs, k = xs[gt:], k-gt
		default:
			return
		}
	}
	slices.Sort(xs)
}

// Quantile of xs by linear interpolation between order statistics (R type
// 7, numpy's default, InferenceX's aggregation_common.percentile); xs is
// sorted in place.
func Quantile(xs []float64, q float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	sort.Float64s(xs)
	pos := q * float64(len(xs)-1)
	lo := int(pos)
	hi := min(lo+1, len(xs)-1)
	return xs[lo] + (pos-float64(lo))*(xs[hi]-xs[lo])
}
