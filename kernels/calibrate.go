package kernels

import (
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"sync"
)

//go:embed data
var dataFS embed.FS

// calibration is what measured tables teach about one GPU: fitted
// efficiencies, residual lines for interpolation and the collective model.
type calibration struct {
	eff    [numClasses][numSlots]Efficiency
	fitted [numClasses][numSlots]int // rows each efficiency was fitted on; 0 = default or borrowed
	tables *opTables
	coll   *collectiveModel
}

var (
	calMu    sync.Mutex
	calCache = map[string]*calibration{}
	calErr   = map[string]error{}
)

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

// calibrationFor loads and fits the embedded tables of a GPU once; nil when
// the project measured nothing on it.
func calibrationFor(gpu string) *calibration {
	calMu.Lock()
	defer calMu.Unlock()
	if c, ok := calCache[gpu]; ok {
		return c
	}
	cal, err := loadCalibration(gpu)
	calCache[gpu] = cal
	calErr[gpu] = err
	return cal
}

// CalibrationError reports why a GPU's embedded tables could not be used
// (nil when they loaded or do not exist).
func CalibrationError(gpu string) error {
	calibrationFor(gpu)
	calMu.Lock()
	defer calMu.Unlock()
	return calErr[gpu]
}

func loadCalibration(name string) (*calibration, error) {
	ops, _, colls, err := MeasuredTables(name)
	if err != nil || (ops == nil && colls == nil) {
		return nil, err
	}
	g, err := LookupGPU(name)
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
// then builds the residual lines that interpolate them.
func calibrate(g *GPU, rows []OpRow, crows []CollectiveRow) *calibration {
	cal := &calibration{eff: defaultEfficiencies()}
	groups := map[[2]int][]OpRow{}
	for _, r := range rows {
		k, _, ok := rowLine(r)
		if !ok {
			continue
		}
		groups[[2]int{int(k.class), int(k.slot)}] = append(groups[[2]int{int(k.class), int(k.slot)}], r)
	}
	probe := newCoster(g, nil, SourceRoofline)
	for key, rs := range groups {
		class, slot := opClass(key[0]), dtypeSlot(key[1])
		if len(rs) < 3 {
			continue
		}
		cal.eff[class][slot] = fitEfficiency(probe, class, slot, rs)
		cal.fitted[class][slot] = len(rs)
	}
	borrowEfficiencies(cal)
	probe.eff = cal.eff
	lines := map[tableKey][]point{}
	for _, r := range rows {
		k, x, ok := rowLine(r)
		if !ok {
			continue
		}
		c, err := probe.PredictRow(r)
		if err != nil || !(c.Seconds > 0) {
			continue
		}
		lines[k] = append(lines[k], point{math.Log(float64(x)), math.Log(r.LatencyUS * 1e-6 / c.Seconds)})
	}
	cal.tables = &opTables{lines: map[tableKey]*residualLine{}}
	for k, pts := range lines {
		if l := newResidualLine(pts); l != nil {
			cal.tables.lines[k] = l
		}
	}
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
	effLo = Efficiency{Mem: 0.05, Compute: 0.02, Fixed: 0.2e-6, P: 1.2}
	effHi = Efficiency{Mem: 1.0, Compute: 1.0, Fixed: 200e-6, P: 16}
)

func effFromParams(x []float64) Efficiency {
	clamp := func(v, lo, hi float64) float64 { return math.Min(hi, math.Max(lo, v)) }
	return Efficiency{
		Mem:     clamp(math.Exp(x[0]), effLo.Mem, effHi.Mem),
		Compute: clamp(math.Exp(x[1]), effLo.Compute, effHi.Compute),
		Fixed:   clamp(math.Exp(x[2])*1e-6, effLo.Fixed, effHi.Fixed),
		P:       clamp(1+math.Exp(x[3]), effLo.P, effHi.P),
	}
}

func paramsFromEff(e Efficiency) []float64 {
	return []float64{math.Log(e.Mem), math.Log(e.Compute), math.Log(e.Fixed * 1e6), math.Log(e.P - 1)}
}

// fitEfficiency minimises the mean squared log error of the roofline over
// the rows of one op class and dtype (Nelder-Mead; a weak pull towards the
// defaults keeps parameters the rows cannot identify, such as the compute
// efficiency of a purely memory-bound table, where they were).
func fitEfficiency(probe *Coster, class opClass, slot dtypeSlot, rows []OpRow) Efficiency {
	start := probe.eff[class][slot]
	x0 := paramsFromEff(start)
	c := *probe
	obj := func(x []float64) float64 {
		c.eff[class][slot] = effFromParams(x)
		var sum float64
		for _, r := range rows {
			cost, err := c.PredictRow(r)
			if err != nil || !(cost.Seconds > 0) {
				continue
			}
			d := math.Log(cost.Seconds / (r.LatencyUS * 1e-6))
			sum += d * d
		}
		var reg float64
		for i := range x {
			d := x[i] - x0[i]
			reg += d * d
		}
		return sum/float64(len(rows)) + 1e-4*reg
	}
	best, bestF := x0, obj(x0)
	// Restart from the result: the simplex stalls on the kinks that the
	// max() and the clamps make.
	x := x0
	for range 4 {
		var fx float64
		x, fx = nelderMead(obj, x, 0.5, 4000, 1e-12)
		if fx < bestF {
			best, bestF = x, fx
		}
	}
	return effFromParams(best)
}

// calibrateCollectives fits the NVLink collective model per op to measured
// rows and keeps residual lines per (op, GPU count) for interpolation.
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
	lines := map[collKey][]point{}
	for _, r := range rows {
		if r.GPUs > g.NVLinkDomain {
			continue
		}
		idx := collectiveIndex(r.Op)
		t := m.nvlink[idx].time(r.Op, r.Bytes, float64(r.GPUs), g.NVLinkBandwidth)
		k := collKey{idx, r.GPUs}
		lines[k] = append(lines[k], point{math.Log(r.Bytes), math.Log(r.LatencyUS * 1e-6 / t)})
	}
	m.table = &collectiveTable{lines: map[collKey]*residualLine{}}
	for k, pts := range lines {
		if l := newResidualLine(pts); l != nil {
			m.table.lines[k] = l
		}
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
		var reg float64
		for i := range x {
			reg += (x[i] - x0[i]) * (x[i] - x0[i])
		}
		return sum/float64(len(rows)) + 1e-4*reg
	}
	best, bestF := x0, obj(x0)
	// Restart from the result: the simplex stalls on the kinks that the
	// max() and the clamps make.
	x := x0
	for range 4 {
		var fx float64
		x, fx = nelderMead(obj, x, 0.5, 4000, 1e-12)
		if fx < bestF {
			best, bestF = x, fx
		}
	}
	return toParams(best)
}

// String describes an efficiency for tables.
func (e Efficiency) String() string {
	return fmt.Sprintf("mem %.2f compute %.2f fixed %.1fus p %.1f", e.Mem, e.Compute, e.Fixed*1e6, e.P)
}
