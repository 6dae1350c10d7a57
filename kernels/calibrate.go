package kernels

import (
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"sort"
	"sync"
)

//go:embed data
var dataFS embed.FS

// calibration is what measured tables teach about one GPU: fitted
// efficiencies, residual grids for interpolation and the collective model.
type calibration struct {
	eff    [numClasses][numSlots]Efficiency
	fitted [numClasses][numSlots]int // rows each efficiency was fitted on; 0 = default or borrowed
	tables *opTables
	coll   *collectiveModel
}

// Calibrations fits the measured tables embedded for the GPUs of one
// [Catalog], each once, when a [Coster] for it is first made. It is safe for
// concurrent use.
type Calibrations struct {
	cat     *Catalog
	mu      sync.Mutex
	fits    map[string]*calibration
	errs    map[string]error
	engMu   sync.Mutex // apart from mu: fitting makes Costers, which ask for the index
	engines map[string]*engineIndex
}

func newCalibrations(cat *Catalog) *Calibrations {
	return &Calibrations{cat: cat, fits: map[string]*calibration{}, errs: map[string]error{}, engines: map[string]*engineIndex{}}
}

// engineIndex is the fitted index of a GPU's embedded engine-kernel
// tables, built once.
func (cs *Calibrations) engineIndex(gpu string) *engineIndex {
	cs.engMu.Lock()
	defer cs.engMu.Unlock()
	if ix, ok := cs.engines[gpu]; ok {
		return ix
	}
	ix := buildEngineIndex(gpu)
	cs.engines[gpu] = ix
	return ix
}

// MeasuredTables returns the op table, the held-out op table and the
// collective table embedded for a GPU (canonical catalog name); each is nil
// where the project has none.
func MeasuredTables(gpu string) (ops, heldout *OpTable, colls *CollectiveTable, err error) {
	read := func(file string) ([]byte, error) {
		b, err := dataFS.ReadFile("data/" + gpu + "/" + file)
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		return b, err
	}
	name := "kernels/data/" + gpu + "/"
	if b, err := read("ops.csv"); err != nil {
		return nil, nil, nil, err
	} else if b != nil {
		if ops, err = ParseOpTable(name+"ops.csv", b, true); err != nil {
			return nil, nil, nil, err
		}
	}
	if b, err := read("ops_heldout.csv"); err != nil {
		return nil, nil, nil, err
	} else if b != nil {
		if heldout, err = ParseOpTable(name+"ops_heldout.csv", b, true); err != nil {
			return nil, nil, nil, err
		}
	}
	if b, err := read("collectives.csv"); err != nil {
		return nil, nil, nil, err
	} else if b != nil {
		if colls, err = ParseCollectiveTable(name+"collectives.csv", b); err != nil {
			return nil, nil, nil, err
		}
	}
	return ops, heldout, colls, nil
}

// fit loads and fits the embedded tables of a GPU of the catalog once; nil
// when the project measured nothing on it.
func (cs *Calibrations) fit(gpu string) *calibration {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if c, ok := cs.fits[gpu]; ok {
		return c
	}
	cal, err := cs.load(gpu)
	cs.fits[gpu] = cal
	cs.errs[gpu] = err
	return cal
}

// Err reports why a GPU's embedded tables could not be used (nil when they
// loaded or do not exist).
func (cs *Calibrations) Err(gpu string) error {
	cs.fit(gpu)
	cs.mu.Lock()
	defer cs.mu.Unlock()
	return cs.errs[gpu]
}

func (cs *Calibrations) load(name string) (*calibration, error) {
	ops, _, colls, err := MeasuredTables(name)
	if err != nil || (ops == nil && colls == nil) {
		return nil, err
	}
	g, err := cs.cat.Lookup(name)
	if err != nil {
		return nil, err
	}
	var rows []OpRow
	if ops != nil {
		rows = ops.Rows
	}
	var crows []CollectiveRow
	if colls != nil {
		crows = colls.Rows
	}
	return calibrate(g, rows, crows), nil
}

// calibrate fits efficiencies per op class and dtype to measured rows,
// then builds the residual grids that interpolate the measurements.
func calibrate(g *GPU, rows []OpRow, crows []CollectiveRow) *calibration {
	cal := &calibration{eff: defaultEfficiencies()}
	groups := map[[2]int][]OpRow{}
	for _, r := range rows {
		k, _, ok := rowGrid(r)
		if !ok {
			continue
		}
		groups[[2]int{int(k.class), int(k.slot)}] = append(groups[[2]int{int(k.class), int(k.slot)}], r)
	}
	probe := newCoster(g, nil, SourceRoofline)
	// The fits are independent: run them side by side.
	var wg sync.WaitGroup
	for key, rs := range groups {
		class, slot := opClass(key[0]), dtypeSlot(key[1])
		if len(rs) < 3 {
			continue
		}
		cal.fitted[class][slot] = len(rs)
		wg.Go(func() { cal.eff[class][slot] = fitEfficiency(probe, class, slot, rs) })
	}
	wg.Wait()
	borrowEfficiencies(cal)
	probe.eff = cal.eff
	type measured struct {
		c         coords
		lat, pred float64
	}
	lines := map[lineID][]measured{}
	for _, r := range rows {
		k, c, ok := rowGrid(r)
		if !ok {
			continue
		}
		p, err := probe.PredictRow(r)
		if err != nil || !(p.Seconds > 0) {
			continue
		}
		id := lineOf(k, c)
		lines[id] = append(lines[id], measured{c, r.LatencyUS * 1e-6, p.Seconds})
	}
	points := map[gridKey][]gridPoint{}
	for id, ms := range lines {
		sort.Slice(ms, func(i, j int) bool { return ms[i].c.v[0] < ms[j].c.v[0] })
		lat := make([]float64, len(ms))
		for i, m := range ms {
			lat[i] = m.lat
		}
		lat = isotonic(lat)
		for i, m := range ms {
			points[id.grid] = append(points[id.grid], gridPoint{m.c, math.Log(lat[i] / m.pred)})
		}
	}
	grids := map[gridKey]*residualGrid{}
	for k, pts := range points {
		if gr := newResidualGrid(pts); gr != nil {
			grids[k] = gr
		}
	}
	cal.tables = newOpTables(grids)
	cal.coll = calibrateCollectives(g, crows)
	return cal
}

// borrowEfficiencies fills dtypes that were not measured from the nearest
// measured one: NVFP4 and INT8 tensor-core GEMMs from FP8, INT4
// (dequantized to BF16) and FP32 from BF16, FP8 from BF16 when no FP8 was
// measured (with the default FP8/BF16 compute ratio).
func borrowEfficiencies(cal *calibration) {
	def := defaultEfficiencies()
	for c := range numClasses {
		bf, f8 := cal.fitted[c][slotBF16] > 0, cal.fitted[c][slotFP8] > 0
		if !f8 && bf {
			e := cal.eff[c][slotBF16]
			e.Compute *= def[c][slotFP8].Compute / def[c][slotBF16].Compute
			cal.eff[c][slotFP8] = e
		}
		if !bf && f8 {
			e := cal.eff[c][slotFP8]
			e.Compute *= def[c][slotBF16].Compute / def[c][slotFP8].Compute
			cal.eff[c][slotBF16] = e
		}
		for _, s := range []dtypeSlot{slotNVFP4, slotINT8} {
			if cal.fitted[c][s] == 0 {
				cal.eff[c][s] = cal.eff[c][slotFP8]
			}
		}
		for _, s := range []dtypeSlot{slotINT4, slotFP32} {
			if cal.fitted[c][s] == 0 {
				cal.eff[c][s] = cal.eff[c][slotBF16]
			}
		}
	}
	// Prefill attention is rarely in decode tables: take the measured
	// decode attention's memory efficiency and fixed time.
	if cal.fitted[classPrefill][slotBF16] == 0 && cal.fitted[classAttention][slotBF16] > 0 {
		for s := range numSlots {
			cal.eff[classPrefill][s].Mem = cal.eff[classAttention][s].Mem
			cal.eff[classPrefill][s].Fixed = cal.eff[classAttention][s].Fixed
		}
	}
}

// Efficiency parameters are fitted in log space, bounded so that a sparse
// table cannot push them to absurd values.
var (
	effLo = Efficiency{Mem: 0.05, Compute: 0.02, Fixed: 0.2e-6, P: 1.2, HalfUnits: 0.01}
	effHi = Efficiency{Mem: 1.0, Compute: 1.0, Fixed: 200e-6, P: 16, HalfUnits: 1e4}
)

func effFromParams(x []float64) Efficiency {
	clamp := func(v, lo, hi float64) float64 { return math.Min(hi, math.Max(lo, v)) }
	return Efficiency{
		Mem:       clamp(math.Exp(x[0]), effLo.Mem, effHi.Mem),
		Compute:   clamp(math.Exp(x[1]), effLo.Compute, effHi.Compute),
		Fixed:     clamp(math.Exp(x[2])*1e-6, effLo.Fixed, effHi.Fixed),
		P:         clamp(1+math.Exp(x[3]), effLo.P, effHi.P),
		HalfUnits: clamp(math.Exp(x[4]), effLo.HalfUnits, effHi.HalfUnits),
	}
}

func paramsFromEff(e Efficiency) []float64 {
	return []float64{math.Log(e.Mem), math.Log(e.Compute), math.Log(e.Fixed * 1e6), math.Log(e.P - 1), math.Log(e.HalfUnits)}
}

// maxFitSamples bounds the rows one efficiency fit evaluates, so that
// loading the H200 tables stays well under a second.
const maxFitSamples = 500

// fitEfficiency minimises the mean squared log error of the roofline over
// the rows of one op class and dtype (Nelder-Mead; a weak pull towards the
// defaults keeps parameters the rows cannot identify, such as the compute
// efficiency of a purely memory-bound table, where they were). Each row's
// memory and compute times at datasheet rates are computed once, so an
// evaluation of the objective is a few flops per row.
func fitEfficiency(probe *Coster, class opClass, slot dtypeSlot, rows []OpRow) Efficiency {
	start := probe.eff[class][slot]
	x0 := paramsFromEff(start)
	type sample struct{ mem, compute, units, measured float64 }
	samples := make([]sample, 0, len(rows))
	c := *probe
	only := func(mem, compute float64) Efficiency {
		return Efficiency{Mem: mem, Compute: compute, P: math.Inf(1), HalfUnits: 0}
	}
	for _, r := range rows {
		c.eff[class][slot] = only(1, math.MaxFloat64)
		m, err := c.PredictRow(r)
		if err != nil {
			continue
		}
		c.eff[class][slot] = only(math.MaxFloat64, 1)
		k, _ := c.PredictRow(r)
		samples = append(samples, sample{m.Seconds, k.Seconds, rowUnits(r), r.LatencyUS * 1e-6})
	}
	if len(samples) == 0 {
		return start
	}
	// Four parameters need a few hundred rows, not thousands: fit on an
	// even stride through the table (the grids still use every row).
	if len(samples) > maxFitSamples {
		stride := float64(len(samples)) / maxFitSamples
		thin := samples[:0:0]
		for i := 0.0; int(i) < len(samples); i += stride {
			thin = append(thin, samples[int(i)])
		}
		samples = thin
	}
	// The objective works in logs, precomputed per row, so that one
	// evaluation costs a handful of transcendental calls per row: it is
	// Efficiency.timeUnits rewritten as log t = log(Fixed + exp(hi +
	// log1p(exp(P (lo - hi))) / P)).
	type logSample struct{ mem, compute, units, measured float64 }
	logs := make([]logSample, len(samples))
	for i, s := range samples {
		lc := math.Inf(-1)
		if s.compute > 0 {
			lc = math.Log(s.compute)
		}
		logs[i] = logSample{math.Log(s.mem), lc, s.units, math.Log(s.measured)}
	}
	obj := func(x []float64) float64 {
		e := effFromParams(x)
		lMem, lComp := math.Log(e.Mem), math.Log(e.Compute)
		var sum float64
		for _, s := range logs {
			a := s.mem - lMem
			if s.units > 0 {
				a += math.Log1p(e.HalfUnits / s.units)
			}
			b := s.compute - lComp
			hi, lo := a, b
			if lo > hi {
				hi, lo = lo, hi
			}
			roof := hi
			if !math.IsInf(lo, -1) {
				roof += math.Log1p(math.Exp(e.P*(lo-hi))) / e.P
			}
			d := math.Log(e.Fixed+math.Exp(roof)) - s.measured
			sum += d * d
		}
		return sum/float64(len(logs)) + 1e-4*squaredDistance(x, x0)
	}
	return effFromParams(minimizeRestarted(obj, x0, 3, 2000, 1e-10))
}

// calibrateCollectives fits the NVLink collective model per op to measured
// rows and keeps a residual grid per op over (bytes, GPU count) for
// interpolation.
func calibrateCollectives(g *GPU, rows []CollectiveRow) *collectiveModel {
	m := defaultCollectiveModel()
	if len(rows) == 0 {
		return m
	}
	byOp := map[int][]CollectiveRow{}
	for _, r := range rows {
		if r.GPUs <= g.NVLinkDomain {
			byOp[collectiveIndex(r.Op)] = append(byOp[collectiveIndex(r.Op)], r)
		}
	}
	for idx, rs := range byOp {
		if len(rs) >= 3 {
			m.nvlink[idx] = fitCollective(g, rs, m.nvlink[idx])
		}
	}
	type measured struct{ bytes, lat, pred float64 }
	lines := map[[2]int][]measured{}
	for _, r := range rows {
		if r.GPUs > g.NVLinkDomain {
			continue
		}
		idx := collectiveIndex(r.Op)
		t := m.nvlink[idx].time(r.Op, r.Bytes, float64(r.GPUs), g.NVLinkBandwidth)
		k := [2]int{idx, r.GPUs}
		lines[k] = append(lines[k], measured{r.Bytes, r.LatencyUS * 1e-6, t})
	}
	points := [4][]gridPoint{}
	for k, ms := range lines {
		sort.Slice(ms, func(i, j int) bool { return ms[i].bytes < ms[j].bytes })
		lat := make([]float64, len(ms))
		for i, x := range ms {
			lat[i] = x.lat
		}
		lat = isotonic(lat)
		for i, x := range ms {
			points[k[0]] = append(points[k[0]], gridPoint{coords{2, [maxGridDims]float64{x.bytes, float64(k[1])}}, math.Log(lat[i] / x.pred)})
		}
	}
	m.table = &collectiveTable{}
	for i, pts := range points {
		m.table.grids[i] = newResidualGrid(pts)
	}
	return m
}

func fitCollective(g *GPU, rows []CollectiveRow, start collectiveParams) collectiveParams {
	clamp := func(v, lo, hi float64) float64 { return math.Min(hi, math.Max(lo, v)) }
	toParams := func(x []float64) collectiveParams {
		return collectiveParams{
			Base:    clamp(math.Exp(x[0])*1e-6, 0.1e-6, 1e-3),
			PerStep: clamp(math.Exp(x[1])*1e-6, 0.001e-6, 100e-6),
			BusEff:  clamp(math.Exp(x[2]), 0.02, 1.5),
		}
	}
	x0 := []float64{math.Log(start.Base * 1e6), math.Log(start.PerStep * 1e6), math.Log(start.BusEff)}
	obj := func(x []float64) float64 {
		p := toParams(x)
		var sum float64
		for _, r := range rows {
			d := math.Log(p.time(r.Op, r.Bytes, float64(r.GPUs), g.NVLinkBandwidth) / (r.LatencyUS * 1e-6))
			sum += d * d
		}
		return sum/float64(len(rows)) + 1e-4*squaredDistance(x, x0)
	}
	return toParams(minimizeRestarted(obj, x0, 4, 4000, 1e-12))
}

// minimizeRestarted runs Nelder-Mead restarts times, each from the previous
// result (the simplex stalls on the kinks that the max() and the clamps
// make), and returns the best point seen, x0 included.
func minimizeRestarted(obj func([]float64) float64, x0 []float64, restarts, maxEval int, tol float64) []float64 {
	best, bestF := x0, obj(x0)
	x := x0
	for range restarts {
		var fx float64
		x, fx = nelderMead(obj, x, 0.5, maxEval, tol)
		if fx < bestF {
			best, bestF = x, fx
		}
	}
	return best
}

// squaredDistance is |x - y|^2, the ridge term that keeps fitted
// parameters near their starting point.
func squaredDistance(x, y []float64) float64 {
	var d2 float64
	for i := range x {
		d := x[i] - y[i]
		d2 += d * d
	}
	return d2
}

// String describes an efficiency for tables.
func (e Efficiency) String() string {
	return fmt.Sprintf("mem %.2f compute %.2f fixed %.1fus p %.1f", e.Mem, e.Compute, e.Fixed*1e6, e.P)
}
