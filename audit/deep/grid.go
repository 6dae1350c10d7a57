package deep

import (
	"math"
	"slices"
	"sort"

	"github.com/specsim/specsim/kernels/numfmt"
)

// A grid is a family of low-precision value sets: every value of a block
// of group consecutive elements (along the input dimension) is q*s for one
// shared scale s and levels q from levels (magnitudes, sorted, zero
// implied). A quantized-then-dequantized tensor stores round(q*s) in its
// 16-bit format, so a block is "on the grid" when some s puts every stored
// value's rounding interval around some q*s.
type grid struct {
	code  string // stable key: "nvfp4", "fp8_e4m3", ...
	label string // what the verdict says
	group int
	// levels are the allowed magnitudes of q (zero is always allowed).
	levels []float64
	// anchors are the levels the block's largest magnitude may sit on; the
	// scale candidates are amax/anchor. For asymmetric grids they are the
	// allowed spans (max-min)/s instead.
	anchors []float64
	lattice bool // levels are the integers 1..qmax
	asym    bool // integer zero point: values k*s with max k - min k <= span
	// bits is the storage cost per value of the format (value bits plus
	// scale bits per group): when several grids explain the values, the
	// cheapest one is the format they came from (MXFP4 values also sit on
	// an E5M2 grid, but cost half as much to store).
	bits float64
	// minRelGap is the smallest gap between neighbouring levels relative
	// to the upper one (table grids): the finest the grid ever gets.
	minRelGap float64
}

func tableGrid(code, label string, group int, bits float64, levels, anchors []float64) *grid {
	g := &grid{code: code, label: label, group: group, bits: bits, levels: levels, anchors: anchors}
	g.minRelGap = 1
	for i := 1; i < len(levels); i++ {
		g.minRelGap = min(g.minRelGap, (levels[i]-levels[i-1])/levels[i])
	}
	return g
}

func latticeGrid(code, label string, group, qmax int, bits float64, anchors []float64, asym bool) *grid {
	g := &grid{code: code, label: label, group: group, bits: bits, anchors: anchors, lattice: true, asym: asym}
	for q := 1; q <= qmax; q++ {
		g.levels = append(g.levels, float64(q))
	}
	return g
}

// positiveValues lists the distinct positive finite values of a small
// float format, sorted.
func positiveValues(n int, decode func(uint8) float32) []float64 {
	var out []float64
	for c := 1; c < n/2; c++ {
		v := float64(decode(uint8(c)))
		if !math.IsNaN(v) && !math.IsInf(v, 0) {
			out = append(out, v)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// topMantissas returns, for each distinct mantissa pattern of levels, its
// largest level: the places the block maximum can sit when the scale
// absorbs any power of two.
func topMantissas(levels []float64) []float64 {
	seen := map[float64]bool{}
	var out []float64
	for i := len(levels) - 1; i >= 0; i-- {
		m, _ := math.Frexp(levels[i])
		if !seen[m] {
			seen[m] = true
			out = append(out, levels[i])
		}
	}
	slices.Sort(out)
	return out
}

// Grid families tested on every block. The NVFP4 block scale is rounded to
// E4M3 before use, so the block maximum need not sit on 6: every E2M1
// level is a candidate. FP8 grids share one scale over a whole 128-wide
// row segment (true of per-tensor, per-channel and 128x128 block scales)
// or over 32 values (MXFP8). Integer group quantizers set s = amax/qmax
// (or amax/(qmax+1) when the negative end is used), or s = (max-min)/15
// with an integer zero point.
//
// The grids are ordered by group size within each family; logChance takes
// the smallest scale from the last anchor, so anchors are sorted.
var grids = func() []*grid {
	e2m1 := positiveValues(16, numfmt.E2M1)
	e4m3 := positiveValues(256, numfmt.E4M3)
	e5m2 := positiveValues(256, numfmt.E5M2)
	gs := []*grid{
		tableGrid("nvfp4", "values on an NVFP4 grid", 16, 4+8.0/16, e2m1, e2m1),
		tableGrid("fp8_e4m3", "values on an FP8 E4M3 grid", 128, 8, e4m3, topMantissas(e4m3)),
		tableGrid("fp8_e5m2", "values on an FP8 E5M2 grid", 128, 8, e5m2, topMantissas(e5m2)),
		tableGrid("fp8_e4m3_g32", "values on an FP8 E4M3 grid (32-value block scales)", 32, 8+8.0/32, e4m3, topMantissas(e4m3)),
	}
	for _, g := range []int{32, 64, 128} {
		gs = append(gs,
			latticeGrid("int4", "values on an INT4 grid (symmetric)", g, 8, 4+16/float64(g), []float64{7, 8}, false),
			latticeGrid("int4_asym", "values on an INT4 grid (asymmetric, integer zero point)", g, 15, 4+20/float64(g), []float64{14, 15}, true))
	}
	// INT8 scales are often per output channel (W8A16): a 128-value
	// segment's maximum then sits anywhere from about a quarter of the
	// range up, so every integer from 32 is a candidate anchor.
	var int8Anchors []float64
	for q := 32; q <= 128; q++ {
		int8Anchors = append(int8Anchors, float64(q))
	}
	gs = append(gs, latticeGrid("int8", "values on an INT8 grid (symmetric)", 128, 128, 8+16.0/128, int8Anchors, false))
	return gs
}()

// A fit is the outcome of one block against one grid.
type fit struct {
	informative bool    // at least two distinct nonzero magnitudes
	untestable  bool    // informative, but too dense on this grid to test
	onGrid      bool    // some scale puts every value on the grid
	scaleLo     float64 // feasible scales, when on the grid
	scaleHi     float64
	// logChance bounds the log probability that genuine values of this
	// block would land on the grid (see grid.logChance).
	logChance float64
}

// fitter holds scratch space so that testing a block allocates nothing.
type fitter struct {
	cands  []interval
	events []event
	cover  []int
}

type interval struct {
	lo, hi float64
	owner  int
}

type event struct {
	at    float64
	start bool
	owner int
}

// A summary of one block, shared by every grid with that group size.
// Summaries of adjacent blocks merge into the summary of their union.
type summary struct {
	informative bool    // at least two distinct nonzero magnitudes
	first       float64 // some nonzero magnitude (0 if none)
	iMaxAbs     int     // largest magnitude
	iMinAbs     int     // smallest nonzero magnitude
	iMax, iMin  int     // largest and smallest signed value
	nonzero     int
	sumLogRel   float64 // sum of logRelULP over nonzero values
	maxLogRel   float64
}

func summarize(block []elem) summary {
	s := summary{maxLogRel: math.Inf(-1)}
	maxAbs, minAbs, maxV, minV := -1.0, math.Inf(1), math.Inf(-1), math.Inf(1)
	for i, e := range block {
		if e.v == 0 {
			continue
		}
		s.nonzero++
		s.sumLogRel += e.logRelULP
		s.maxLogRel = max(s.maxLogRel, e.logRelULP)
		a := math.Abs(e.v)
		if s.first == 0 {
			s.first = a
		} else if a != s.first {
			s.informative = true
		}
		if a > maxAbs {
			s.iMaxAbs, maxAbs = i, a
		}
		if a < minAbs {
			s.iMinAbs, minAbs = i, a
		}
		if e.v > maxV {
			s.iMax, maxV = i, e.v
		}
		if e.v < minV {
			s.iMin, minV = i, e.v
		}
	}
	return s
}

// merge combines the summaries of block[:n] (a) and block[n:] (b).
func merge(block []elem, a, b summary, n int) summary {
	if b.nonzero == 0 {
		return a
	}
	b.iMaxAbs, b.iMinAbs, b.iMax, b.iMin = b.iMaxAbs+n, b.iMinAbs+n, b.iMax+n, b.iMin+n
	if a.nonzero == 0 {
		return b
	}
	s := a
	s.informative = a.informative || b.informative || a.first != b.first
	s.nonzero += b.nonzero
	s.sumLogRel += b.sumLogRel
	s.maxLogRel = max(a.maxLogRel, b.maxLogRel)
	if math.Abs(block[b.iMaxAbs].v) > math.Abs(block[a.iMaxAbs].v) {
		s.iMaxAbs = b.iMaxAbs
	}
	if math.Abs(block[b.iMinAbs].v) < math.Abs(block[a.iMinAbs].v) {
		s.iMinAbs = b.iMinAbs
	}
	if block[b.iMax].v > block[a.iMax].v {
		s.iMax = b.iMax
	}
	if block[b.iMin].v < block[a.iMin].v {
		s.iMin = b.iMin
	}
	return s
}

// test fits one block of elements against one grid.
func (f *fitter) test(g *grid, block []elem, sum *summary) fit {
	if !sum.informative {
		return fit{}
	}
	iMax, iMin := sum.iMaxAbs, sum.iMin
	if g.asym {
		iMax = sum.iMax
	}
	out := fit{informative: true, logChance: g.logChance(block, sum, iMax, iMin)}
	if out.logChance > maxLogChance {
		// Values this dense on the grid's scale land on it by chance half
		// the time: fitting (expensive here, every value admitting several
		// levels) could show nothing either way worth its cost.
		return fit{untestable: true}
	}
	for _, anchor := range g.anchors {
		var sLo, sHi float64
		if g.asym {
			spanLo := signedLo(block[iMax]) - signedHi(block[iMin])
			spanHi := signedHi(block[iMax]) - signedLo(block[iMin])
			if spanLo <= 0 {
				continue
			}
			sLo, sHi = spanLo/anchor, spanHi/anchor
		} else {
			sLo, sHi = block[iMax].lo/anchor, block[iMax].hi/anchor
		}
		// On a lattice the smallest magnitude is the most selective value:
		// its multiple of s is small, so few scales leave it near an integer.
		if g.lattice {
			e := block[sum.iMinAbs]
			if math.Ceil(e.lo/sHi) > math.Floor(e.hi/sLo) {
				continue
			}
		}
		if lo, hi, ok := f.feasible(g, block, sLo, sHi); ok {
			if g.asym && !spanOK(block, (lo+hi)/2, int(g.levels[len(g.levels)-1])) {
				continue
			}
			out.onGrid, out.scaleLo, out.scaleHi = true, lo, hi
			return out
		}
	}
	return out
}

func signedLo(e elem) float64 {
	if e.v < 0 {
		return -e.hi
	}
	return e.lo
}

func signedHi(e elem) float64 {
	if e.v < 0 {
		return -e.lo
	}
	return e.hi
}

// spanOK checks the integer zero-point constraint: the levels k = v/s used
// by the block span at most qmax steps.
func spanOK(block []elem, s float64, qmax int) bool {
	kMin, kMax := 0.0, 0.0
	for i, e := range block {
		k := math.Round(e.v / s)
		if i == 0 || k < kMin {
			kMin = k
		}
		if i == 0 || k > kMax {
			kMax = k
		}
	}
	return kMax-kMin <= float64(qmax)
}

// feasible finds a scale s in [sLo, sHi] that puts every nonzero value of
// the block within its rounding interval of some level times s. Each value
// allows s in the union over levels q of [lo/q, hi/q]; the answer is a
// point covered by one interval of every value (a sweep over endpoints).
func (f *fitter) feasible(g *grid, block []elem, sLo, sHi float64) (lo, hi float64, ok bool) {
	f.cands = f.cands[:0]
	owners, ambiguous := 0, false
	for _, e := range block {
		if e.v == 0 {
			continue
		}
		qLo, qHi := e.lo/sHi, e.hi/sLo
		var j int
		switch {
		case qLo > g.levels[len(g.levels)-1]:
			return 0, 0, false
		case g.lattice: // levels[j] = j+1
			j = max(0, int(math.Ceil(qLo))-1)
		default:
			j = sort.SearchFloat64s(g.levels, qLo)
		}
		n := 0
		for ; j < len(g.levels) && g.levels[j] <= qHi; j++ {
			q := g.levels[j]
			a, b := max(e.lo/q, sLo), min(e.hi/q, sHi)
			if a <= b {
				f.cands = append(f.cands, interval{a, b, owners})
				n++
			}
		}
		if n == 0 {
			return 0, 0, false
		}
		ambiguous = ambiguous || n > 1
		owners++
	}
	if !ambiguous { // one interval per value: intersect
		lo, hi = sLo, sHi
		for _, c := range f.cands {
			lo, hi = max(lo, c.lo), min(hi, c.hi)
		}
		return lo, hi, lo <= hi
	}
	f.events = f.events[:0]
	for _, c := range f.cands {
		f.events = append(f.events, event{c.lo, true, c.owner}, event{c.hi, false, c.owner})
	}
	slices.SortFunc(f.events, func(x, y event) int {
		switch {
		case x.at < y.at:
			return -1
		case x.at > y.at:
			return 1
		case x.start == y.start:
			return 0
		case x.start: // closed intervals: starts before ends
			return -1
		}
		return 1
	})
	f.cover = slices.Grow(f.cover[:0], owners)[:owners]
	clear(f.cover)
	covered := 0
	for i, ev := range f.events {
		if !ev.start {
			f.cover[ev.owner]--
			if f.cover[ev.owner] == 0 {
				covered--
			}
			continue
		}
		if f.cover[ev.owner] == 0 {
			covered++
		}
		f.cover[ev.owner]++
		if covered == owners {
			return ev.at, f.events[i+1].at, true
		}
	}
	return 0, 0, false
}

// logChance bounds (as a natural log) the probability that genuine
// values land on the grid by accident. Model: a genuine value's code is
// equally likely to be any code within one grid gap around it (its
// density is smooth on the scale of the grid spacing). For a fixed anchor
// the feasible scales span at most one code of the anchor value, so a grid
// point q*s is within rounding of at most 3 codes, and a value hits with
// probability at most 3*ulp/gap. Multiplying over the values other than
// the anchors (independent draws) and summing over anchors gives the bound.
// Table grids use their smallest relative gap, so the bound does not
// depend on the scale; lattices use the smallest scale any anchor allows.
func (g *grid) logChance(block []elem, sum *summary, iMax, iMin int) float64 {
	logP := math.Log(float64(len(g.anchors)))
	if !g.lattice {
		// log(3*ulp/|v|/gap) per value, clamped at log 1; when no value
		// needs the clamp, the sum is known from the summary.
		base := math.Log(3 / g.minRelGap)
		if base+sum.maxLogRel <= 0 {
			logP += float64(sum.nonzero-1)*base + sum.sumLogRel - block[iMax].logRelULP
			return min(0, logP)
		}
		for i, e := range block {
			if e.v != 0 && i != iMax {
				logP += min(0, base+e.logRelULP)
			}
		}
		return min(0, logP)
	}
	// The scales the anchors allow: [sLo, sHi].
	var sLo, sHi float64
	first, last := g.anchors[0], g.anchors[len(g.anchors)-1]
	if g.asym {
		sLo = (signedLo(block[iMax]) - signedHi(block[iMin])) / last
		sHi = (signedHi(block[iMax]) - signedLo(block[iMin])) / first
	} else {
		sLo, sHi = block[iMax].lo/last, block[iMax].hi/first
	}
	if sLo <= 0 {
		return 0
	}
	// Every factor is at most 1, so a product over some of the values is
	// still a bound; maxChanceFactors of them keep the cost down. A value
	// beyond the largest level under every allowed scale cannot hit.
	// An asymmetric anchor fixes the scale only as well as the span is
	// known: a value k steps out may then sit anywhere in k times that
	// uncertainty, which widens its target.
	prod, used, inv := 1.0, 0, 1/sLo
	spread := 0.0
	if g.asym {
		spread = (sHi*first/last - sLo) / sLo
	}
	qmax := g.levels[len(g.levels)-1]
	for i, e := range block {
		if used == maxChanceFactors {
			break
		}
		if e.v != 0 && i != iMax && !(g.asym && i == iMin) {
			if e.lo/sHi > qmax+0.5 {
				return math.Inf(-1)
			}
			prod *= min(1, (3*e.ulp+math.Abs(e.v)*spread)*inv)
			used++
			if prod < 1e-200 {
				if prod == 0 {
					return math.Inf(-1)
				}
				logP, prod = logP+math.Log(prod), 1
			}
		}
	}
	return min(0, logP+math.Log(prod))
}

// maxLogChance is the largest chance bound (as a log) at which a block is
// still fitted.
var maxLogChance = math.Log(0.5)

// maxChanceFactors caps the values multiplied into a lattice block's
// chance bound (each at most 1; 16 of them already give ample strength).
const maxChanceFactors = 16

// maxResidualValues caps the values whose median makes a block's residual.
const maxResidualValues = 32

// residual is the median distance, in units of the storage format's code
// spacing, from each nonzero value to the nearest grid point under scale s.
func (g *grid) residual(block []elem, s float64, buf *[]float64) float64 {
	scratch := (*buf)[:0]
	defer func() { *buf = scratch }()
	for _, e := range block {
		if e.v == 0 {
			continue
		}
		a := math.Abs(e.v) / s
		var q float64
		if g.lattice {
			q = math.Min(math.Round(a), g.levels[len(g.levels)-1])
			if g.asym {
				q = math.Round(a)
			}
		} else {
			j := sort.SearchFloat64s(g.levels, a)
			switch {
			case j == len(g.levels):
				q = g.levels[j-1]
			case j == 0:
				q = g.levels[0]
				if a < q/2 {
					q = 0
				}
			default:
				q = g.levels[j]
				if a-g.levels[j-1] < q-a {
					q = g.levels[j-1]
				}
			}
		}
		scratch = append(scratch, math.Abs(math.Abs(e.v)-q*s)/e.ulp)
		if len(scratch) == maxResidualValues {
			break
		}
	}
	if len(scratch) == 0 {
		return 0
	}
	slices.Sort(scratch)
	return scratch[len(scratch)/2]
}
