package kernels

import (
	"math"
	"sort"

	"gonum.org/v1/gonum/interp"
)

// lineKey holds the shape dimensions that stay fixed along one measured
// line of a table (N and K of a GEMM line over M, for example).
type lineKey struct{ a, b, c, d, e int }

type tableKey struct {
	class opClass
	slot  dtypeSlot
	key   lineKey
}

// residualLine interpolates, along one measured line, the log of measured
// latency over the fitted roofline's, piecewise linearly in log of the
// varying dimension. Interpolating the residual rather than the latency
// keeps the roofline's shape between measured points and reproduces the
// measurements at them.
type residualLine struct {
	lo, hi float64 // range of log x covered
	pl     interp.PiecewiseLinear
	single float64 // the residual when the line has one point
}

type point struct{ x, y float64 }

// newResidualLine builds a line from (log x, residual) points; equal x are
// averaged. It returns nil for no points.
func newResidualLine(pts []point) *residualLine {
	if len(pts) == 0 {
		return nil
	}
	sort.Slice(pts, func(i, j int) bool { return pts[i].x < pts[j].x })
	xs := make([]float64, 0, len(pts))
	ys := make([]float64, 0, len(pts))
	for i := 0; i < len(pts); {
		j, sum := i, 0.0
		for ; j < len(pts) && pts[j].x == pts[i].x; j++ {
			sum += pts[j].y
		}
		xs = append(xs, pts[i].x)
		ys = append(ys, sum/float64(j-i))
		i = j
	}
	l := &residualLine{lo: xs[0], hi: xs[len(xs)-1]}
	if len(xs) == 1 {
		l.single = ys[0]
		return l
	}
	if err := l.pl.Fit(xs, ys); err != nil {
		return nil
	}
	return l
}

// at returns the residual at log x, and false outside the measured range.
func (l *residualLine) at(lx float64) (float64, bool) {
	if lx < l.lo || lx > l.hi {
		return 0, false
	}
	if l.lo == l.hi {
		return l.single, true
	}
	return l.pl.Predict(lx), true
}

// opTables are the residual lines of one GPU's measured op table.
type opTables struct {
	lines map[tableKey]*residualLine
}

// adjust replaces a roofline cost by the measured-table interpolation when
// x lies on a measured line within its range.
func (t *opTables) adjust(cost *Cost, class opClass, dt DType, key lineKey, x int) {
	if t == nil || x <= 0 {
		return
	}
	l, ok := t.lines[tableKey{class, slotOf(dt), key}]
	if !ok {
		return
	}
	r, ok := l.at(math.Log(float64(x)))
	if !ok {
		return
	}
	cost.Seconds *= math.Exp(r)
	cost.Source = SourceMeasured
}

type collKey struct{ op, gpus int }

// collectiveTable are the residual lines of a measured collective table,
// one per (op, GPU count) over log bytes.
type collectiveTable struct {
	lines map[collKey]*residualLine
}

func (t *collectiveTable) adjust(cost *Cost, op CollectiveOp, gpus int, bytes float64) {
	if t == nil {
		return
	}
	l, ok := t.lines[collKey{collectiveIndex(op), gpus}]
	if !ok {
		return
	}
	r, ok := l.at(math.Log(bytes))
	if !ok {
		return
	}
	cost.Seconds *= math.Exp(r)
	cost.Source = SourceMeasured
}
