package kernels

import (
	"math"
	"sort"
	"sync"
)

// maxGridDims is the most continuous dimensions a measured grid has
// (attention: kv_len, batch, q_len).
const maxGridDims = 3

// lineKey holds the categorical shape dimensions of a measured grid: those
// that must match exactly (N and K of a GEMM, the head layout of
// attention, a MoE layer's experts and sizes).
type lineKey struct{ a, b, c, d, e int }

type gridKey struct {
	class opClass
	slot  dtypeSlot
	key   lineKey
}

// coords are the continuous dimensions of a point in a grid, the first
// being the line's varying dimension (M, tokens, kv_len, batch, bytes).
type coords struct {
	n int
	v [maxGridDims]float64
}

func coords1(a int) coords    { return coords{1, [maxGridDims]float64{float64(a)}} }
func coords2(a, b int) coords { return coords{2, [maxGridDims]float64{float64(a), float64(b)}} }
func coords3(a, b, c int) coords {
	return coords{3, [maxGridDims]float64{float64(a), float64(b), float64(c)}}
}

// residualGrid interpolates the log of measured latency over the fitted
// roofline's, multilinearly in the logs of the continuous dimensions.
// Interpolating the residual rather than the latency keeps the roofline's
// shape between measured points (the kink where a GEMM turns
// compute-bound) and reproduces the measurements at them. Cells the table
// lacks are NaN; corners that are missing are left out and the remaining
// weights renormalised.
type residualGrid struct {
	dims   int
	axes   [maxGridDims][]float64 // sorted distinct log values
	stride [maxGridDims]int
	vals   []float64
}

type gridPoint struct {
	c coords
	r float64 // residual
}

// maxGridCells bounds a grid built from a hostile table.
const maxGridCells = 1 << 22

func newResidualGrid(pts []gridPoint) *residualGrid {
	if len(pts) == 0 {
		return nil
	}
	g := &residualGrid{dims: pts[0].c.n}
	cells := 1
	for d := 0; d < g.dims; d++ {
		seen := map[float64]bool{}
		for _, p := range pts {
			seen[math.Log(p.c.v[d])] = true
		}
		for v := range seen {
			g.axes[d] = append(g.axes[d], v)
		}
		sort.Float64s(g.axes[d])
	}
	for d := g.dims - 1; d >= 0; d-- {
		g.stride[d] = cells
		cells *= len(g.axes[d])
		if cells > maxGridCells {
			return nil
		}
	}
	g.vals = make([]float64, cells)
	sum := make([]float64, cells)
	count := make([]int, cells)
	for _, p := range pts {
		idx := 0
		for d := 0; d < g.dims; d++ {
			idx += sort.SearchFloat64s(g.axes[d], math.Log(p.c.v[d])) * g.stride[d]
		}
		sum[idx] += p.r
		count[idx]++
	}
	for i := range g.vals {
		if count[i] == 0 {
			g.vals[i] = math.NaN()
		} else {
			g.vals[i] = sum[i] / float64(count[i])
		}
	}
	return g
}

// at returns the interpolated residual at c; inside reports whether c lies
// within the measured range in every dimension with at least half the
// interpolation weight on measured cells (outside, each coordinate is
// clamped to the edge: the residual is held constant beyond the table).
func (g *residualGrid) at(c coords) (r float64, inside, ok bool) {
	var lo [maxGridDims]int
	var frac [maxGridDims]float64
	inside = true
	for d := 0; d < g.dims; d++ {
		ax := g.axes[d]
		x := math.Log(c.v[d])
		switch {
		case len(ax) == 1:
			lo[d], frac[d] = 0, 0
			if x != ax[0] {
				inside = false
			}
		case x <= ax[0]:
			lo[d], frac[d] = 0, 0
			inside = inside && x == ax[0]
		case x >= ax[len(ax)-1]:
			lo[d], frac[d] = len(ax)-2, 1
			inside = inside && x == ax[len(ax)-1]
		default:
			i := sort.SearchFloat64s(ax, x) - 1
			lo[d], frac[d] = i, (x-ax[i])/(ax[i+1]-ax[i])
		}
	}
	var sum, wsum float64
	for corner := 0; corner < 1<<g.dims; corner++ {
		w, idx := 1.0, 0
		for d := 0; d < g.dims; d++ {
			i := lo[d]
			if corner>>d&1 == 1 {
				if len(g.axes[d]) == 1 {
					w = 0
					break
				}
				i++
				w *= frac[d]
			} else {
				w *= 1 - frac[d]
			}
			idx += i * g.stride[d]
		}
		if w == 0 {
			continue
		}
		v := g.vals[idx]
		if math.IsNaN(v) {
			continue
		}
		sum += w * v
		wsum += w
	}
	if wsum < 1e-12 {
		return 0, false, false
	}
	return sum / wsum, inside && wsum >= 0.5, true
}

// opTables are the residual grids of one GPU's measured op table.
type opTables struct {
	// inside is the Source of a cost interpolated inside a grid:
	// SourceMeasured on the GPU that was measured, SourceCarryOver on a
	// GPU of the same silicon that borrows the grids (see NewCoster).
	inside string
	grids  map[gridKey]*residualGrid
	// groups lists the grids of each op class and dtype with their
	// categorical keys in log space, for the nearest-shape lookup.
	groups map[[2]int][]keyedGrid
	// near memoises nearest-shape lookups (nil when none is within reach);
	// a sweep asks for the same few unmeasured shapes again and again.
	nearMu sync.RWMutex
	near   map[gridKey]*residualGrid
}

// withInside is a copy of t sharing its grids whose interpolated costs
// carry the given Source.
func (t *opTables) withInside(source string) *opTables {
	return &opTables{inside: source, grids: t.grids, groups: t.groups, near: map[gridKey]*residualGrid{}}
}

// maxNearMemo bounds the memo of nearest-shape lookups.
const maxNearMemo = 4096

func (t *opTables) nearestMemo(k gridKey) *residualGrid {
	t.nearMu.RLock()
	g, ok := t.near[k]
	t.nearMu.RUnlock()
	if ok {
		return g
	}
	g = t.nearest(k.class, k.slot, k.key)
	t.nearMu.Lock()
	if len(t.near) < maxNearMemo {
		t.near[k] = g
	}
	t.nearMu.Unlock()
	return g
}

type keyedGrid struct {
	key  lineKey
	logs [5]float64
	grid *residualGrid
}

func keyValues(k lineKey) [5]int { return [5]int{k.a, k.b, k.c, k.d, k.e} }

func newOpTables(grids map[gridKey]*residualGrid) *opTables {
	t := &opTables{inside: SourceMeasured, grids: grids, groups: map[[2]int][]keyedGrid{}, near: map[gridKey]*residualGrid{}}
	for k, g := range grids {
		kg := keyedGrid{key: k.key, grid: g}
		for i, v := range keyValues(k.key) {
			if v > 0 {
				kg.logs[i] = math.Log(float64(v))
			}
		}
		id := [2]int{int(k.class), int(k.slot)}
		t.groups[id] = append(t.groups[id], kg)
	}
	for _, gs := range t.groups {
		// Deterministic order, so ties resolve the same way every run.
		sort.Slice(gs, func(i, j int) bool {
			a, b := keyValues(gs[i].key), keyValues(gs[j].key)
			for x := range a {
				if a[x] != b[x] {
					return a[x] < b[x]
				}
			}
			return false
		})
	}
	return t
}

// maxNearestDistance bounds how far (Euclidean, in logs of the categorical
// dimensions) a measured shape may be to lend its residual: a factor of 16
// in one dimension.
var maxNearestDistance = math.Log(16)

// nearest finds the measured grid of a class and dtype whose categorical
// key is closest to key; keys must agree on which dimensions are present
// (a GDN verify grid never stands in for a decode one).
func (t *opTables) nearest(class opClass, slot dtypeSlot, key lineKey) *residualGrid {
	want := keyValues(key)
	var wantLogs [5]float64
	for i, v := range want {
		if v > 0 {
			wantLogs[i] = math.Log(float64(v))
		}
	}
	var best *residualGrid
	bestD := maxNearestDistance * maxNearestDistance
	for _, kg := range t.groups[[2]int{int(class), int(slot)}] {
		have := keyValues(kg.key)
		var d float64
		for i := range want {
			switch {
			case want[i] > 0 && have[i] > 0:
				x := wantLogs[i] - kg.logs[i]
				d += x * x
			case want[i] != have[i]:
				d = math.Inf(1)
			}
		}
		if d <= bestD {
			if d < bestD || best == nil {
				best, bestD = kg.grid, d
			}
		}
	}
	return best
}

// has reports whether t holds a measured grid of an op class and dtype.
func (t *opTables) has(class opClass, slot dtypeSlot) bool {
	return t != nil && len(t.groups[[2]int{int(class), int(slot)}]) > 0
}

// adjust anchors a fitted-roofline cost to the measured table: inside the
// measured range it becomes the interpolation (Source
// "measured-interpolated"); beyond the edge of a matching grid the
// residual at the edge is kept, so the cost joins the table continuously.
// A shape whose categorical dimensions were not measured (a GEMM's N and
// K, a MoE layer's sizes) borrows the residual of the nearest measured
// shape at the same continuous coordinates and keeps Source "roofline":
// kernels of similar shapes miss the roofline in similar ways, and on the
// H200 table this cuts the error of unmeasured GEMM shapes from a 10% to a
// 4% median (leave-one-shape-out).
func (t *opTables) adjust(cost *Cost, k gridKey, c coords) {
	if t == nil {
		return
	}
	for d := 0; d < c.n; d++ {
		if !(c.v[d] > 0) {
			return
		}
	}
	g, exact := t.grids[k]
	if !exact {
		g = t.nearestMemo(k)
	}
	if g == nil || g.dims != c.n {
		return
	}
	r, inside, ok := g.at(c)
	if !ok {
		return
	}
	cost.Seconds *= math.Exp(r)
	if inside && exact {
		cost.Source = t.inside
	}
}

// collectiveTable are the residual grids of a measured collective table,
// one per op over (log bytes, log GPUs), so GPU counts between measured
// ones are interpolated too.
type collectiveTable struct {
	grids [4]*residualGrid
}

func (t *collectiveTable) adjust(cost *Cost, op CollectiveOp, gpus int, bytes float64) {
	if t == nil {
		return
	}
	idx := collectiveIndex(op)
	if idx < 0 || t.grids[idx] == nil {
		return
	}
	r, inside, ok := t.grids[idx].at(coords{2, [maxGridDims]float64{bytes, float64(gpus)}})
	if !ok {
		return
	}
	cost.Seconds *= math.Exp(r)
	if inside {
		cost.Source = SourceMeasured
	}
}

// isotonic returns the least-squares non-decreasing fit to ys (pool
// adjacent violators): measured latencies along a line of growing work
// that dip by noise are averaged into a flat step.
func isotonic(ys []float64) []float64 {
	type block struct {
		sum float64
		n   int
	}
	var bs []block
	for _, y := range ys {
		bs = append(bs, block{y, 1})
		for len(bs) > 1 {
			a, b := bs[len(bs)-2], bs[len(bs)-1]
			if a.sum/float64(a.n) <= b.sum/float64(b.n) {
				break
			}
			bs = bs[:len(bs)-2]
			bs = append(bs, block{a.sum + b.sum, a.n + b.n})
		}
	}
	out := make([]float64, 0, len(ys))
	for _, b := range bs {
		for range b.n {
			out = append(out, b.sum/float64(b.n))
		}
	}
	return out
}

func logf(x float64) float64 { return math.Log(x) }
