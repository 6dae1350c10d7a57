package simulate

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"
)

// MetricError is one metric of one measured point next to its prediction.
type MetricError struct {
	Metric    string  `json:"metric"`
	Measured  float64 `json:"measured"`
	Predicted float64 `json:"predicted"`
	// Error is predicted/measured - 1 (positive: the model predicts more).
	Error float64 `json:"error"`
	// Band is the band around the prediction and InBand whether the
	// measured figure lies inside it; both nil for the figures no band is
	// derived for (al, decode_batch_mean: HasBand).
	Band   *Range `json:"band,omitempty"`
	InBand *bool  `json:"in_band,omitempty"`
}

// CompareRow is one measured point and its prediction.
type CompareRow struct {
	Source     string        `json:"source"`
	Deployment string        `json:"deployment"`
	Topology   string        `json:"topology"`
	Conc       int           `json:"conc"`
	Steps      int           `json:"steps"`
	GPU        string        `json:"gpu"`
	Engine     string        `json:"engine"`
	Metrics    []MetricError `json:"metrics"`
	// LikelyIn names the part of the cost model the error most likely sits
	// in (see Attribution), with how much of the point's log error a shift
	// of that part alone explains.
	LikelyIn   string     `json:"likely_in"`
	Explained  float64    `json:"explained"`
	StepMS     StepReport `json:"step_ms"`
	BandSource string     `json:"band_source"`
}

// Skipped is a measured point that was not compared, and why: Err is the
// error Reason renders, nil where the point was skipped for no error.
type Skipped struct {
	Source string `json:"source"`
	Reason string `json:"reason"`
	Err    error  `json:"-"`
}

// MedianError summarizes one metric over the compared points.
type MedianError struct {
	Metric string  `json:"metric"`
	Points int     `json:"points"`
	Signed float64 `json:"median_error"`
	Abs    float64 `json:"median_abs_error"`
	// InBand counts the points in band; nil where the metric has no band.
	InBand *int `json:"in_band,omitempty"`
}

// Comparison is what Compare returns.
type Comparison struct {
	Sim         string        `json:"sim"`
	Calibration string        `json:"calibration,omitempty"`
	Rows        []CompareRow  `json:"rows"`
	Skipped     []Skipped     `json:"skipped"`
	Medians     []MedianError `json:"medians"`
	Coverage    []Coverage    `json:"pareto_coverage"`
}

// Parts a measured error is attributed to: the calibration parameter whose
// shift alone best explains it, named by the cost it moves.
var partNames = [4]string{
	"fixed per-layer cost (kernel gaps, layer_fixed_us)",
	"host overhead per iteration (host_overhead_ms)",
	"memory-bound kernels: weight and KV reads (mem_efficiency_scale)",
	"compute-bound kernels: prefill and large-batch GEMMs (compute_efficiency_scale)",
}

// Fitting steps of each parameter for finite differences (fitting
// coordinates) and the plausible range that scales the Jacobian for the
// identifiability check.
var (
	calStep  = [4]float64{2, 0.05, 0.05, 0.05}
	calRange = [4]float64{10, 0.5, 0.3, 0.3}
)

// Compare predicts every measurement's deployment and sets measured and
// predicted figures side by side. Measurements that cannot be modelled are
// listed in Skipped with the reason. A bad sim is an [*Error] on "Sim".
func Compare(ms []Measurement, sim string, cal *CalibrationFile, env Env) (*Comparison, error) {
	if sim == "" {
		sim = SimEvent
	}
	if sim != SimEvent && sim != SimMeanField {
		return nil, &Error{Field: "Sim", Value: sim, Reason: "want event or mean-field"}
	}
	env, err := env.orDefault()
	if err != nil {
		return nil, err
	}
	c := &Comparison{Sim: sim}
	if cal != nil {
		c.Calibration = cal.Path
	}
	var covIn []coverageInput
	for _, m := range ms {
		p, err := resolveMeasurement(m, cal, env)
		if err != nil {
			c.Skipped = append(c.Skipped, Skipped{m.Source, skipReason(err), err})
			continue
		}
		res, err := runSim(sim, p.r, p.topo, p.conc, p.k)
		if err != nil {
			c.Skipped = append(c.Skipped, Skipped{m.Source, skipReason(err), err})
			continue
		}
		band, err := BandFor(p.r, res)
		if err != nil {
			return nil, err
		}
		row := CompareRow{Source: m.Source, Deployment: DeploymentString(m.Deployment), Topology: p.topo.String(), Conc: p.conc, Steps: p.k, GPU: p.r.GPU.GPU.Name,
			Engine: orDefault(p.r.Q.Engine, "sglang"), StepMS: res.StepMS, BandSource: band.Source}
		for _, key := range sortedKeys(p.obs) {
			pred, _ := metricValue(res, key)
			meas := p.obs[key]
			me := MetricError{Metric: key, Measured: meas, Predicted: pred, Error: pred/meas - 1}
			if HasBand(key) {
				rg := bandRange(band, key, pred)
				in := meas >= rg.Lo && meas <= rg.Hi
				me.Band, me.InBand = &rg, &in
			}
			row.Metrics = append(row.Metrics, me)
		}
		row.LikelyIn, row.Explained = attribute(p, sim, res)
		c.Rows = append(c.Rows, row)
		covIn = append(covIn, coverageInput{key: curveKey(p), obs: p.obs, agentic: p.r.Workload.Name == "agentx", src: m.Source})
	}
	byMetric := map[string][]MetricError{}
	for _, r := range c.Rows {
		for _, e := range r.Metrics {
			byMetric[e.Metric] = append(byMetric[e.Metric], e)
		}
	}
	for _, key := range MetricOrder {
		es := byMetric[key]
		if len(es) == 0 {
			continue
		}
		var signed, abs []float64
		in := 0
		for _, e := range es {
			signed = append(signed, e.Error)
			abs = append(abs, math.Abs(e.Error))
			if e.InBand != nil && *e.InBand {
				in++
			}
		}
		me := MedianError{Metric: key, Points: len(es), Signed: medianOf(signed), Abs: medianOf(abs)}
		if HasBand(key) {
			me.InBand = &in
		}
		c.Medians = append(c.Medians, me)
	}
	c.Coverage = paretoCoverage(covIn)
	return c, nil
}

// measuredKeys are the measured-point columns (and --set keys) that set
// the Query fields an *Error can name.
var measuredKeys = map[string]string{"Precision": "precision", "AL": "al", "GPU": "gpu", "Topology": "topology",
	"ISL": "isl", "OSL": "osl", "Model": "model", "Spec": "spec", "KVDType": "kv_dtype", "DraftDType": "draft_dtype"}

// skipReason says why a measured point was skipped, naming the column (or
// --set key) that changes the setting an *Error is about.
func skipReason(err error) string {
	var e *Error
	if errors.As(err, &e) {
		if key, ok := measuredKeys[e.Field]; ok {
			if e.Value == "" {
				return firstLine(fmt.Sprintf("%s: %s; give it with --set %s=...", key, e.Reason, key))
			}
			return firstLine(fmt.Sprintf("%s %s: %s (--set %s=...)", key, e.Value, e.Reason, key))
		}
	}
	return firstLine(err.Error())
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// HasBand reports whether a band is derived for a metric: not for the
// accept length and the running batch, which engine logs measure and are
// no cost-model figure (the bands are the cost model's errors).
func HasBand(key string) bool { return key != "al" && key != "decode_batch_mean" }

// bandRange is the band of one metric key that HasBand.
func bandRange(b Band, key string, pred float64) Range {
	switch key {
	case "tput_per_gpu", "output_tput_per_gpu":
		return within(pred, b.Relative.Throughput)
	}
	return within(pred, b.Relative.Latency)
}

// fitKeys are the metrics a fit or an attribution uses, without the ones
// another carries already (interactivity is 1000/TPOT; output throughput
// follows total throughput at fixed lengths).
func fitKeys(obs map[string]float64) []string {
	var out []string
	has := func(k string) bool { _, ok := obs[k]; return ok }
	for _, k := range []string{"tput_per_gpu", "output_tput_per_gpu", "tpot_ms", "interactivity", "ttft_ms", "e2el_s_p50"} {
		switch {
		case !has(k):
		case k == "output_tput_per_gpu" && has("tput_per_gpu"):
		case k == "interactivity" && has("tpot_ms"):
		case k == "e2el_s_p50" && (has("tpot_ms") || has("interactivity")) && has("ttft_ms"):
		default:
			out = append(out, k)
		}
	}
	return out
}

// logResiduals is log(predicted/measured) per fit key.
func logResiduals(res *Result, obs map[string]float64, keys []string) ([]float64, error) {
	out := make([]float64, len(keys))
	for i, k := range keys {
		v, _ := metricValue(res, k)
		if !(v > 0) {
			return nil, fmt.Errorf("predicted %s is %g", k, v)
		}
		out[i] = math.Log(v / obs[k])
	}
	return out, nil
}

// theta0 is the point's applied calibration in fitting coordinates.
func (p *measuredPoint) theta0() [4]float64 {
	if p.r.Engine.Calibration != nil {
		return p.r.Engine.Calibration.Vector()
	}
	return Identity().Vector()
}

// residualsAt predicts p with parameters theta and returns the log
// residuals over keys.
func (p *measuredPoint) residualsAt(sim string, theta [4]float64, keys []string) ([]float64, error) {
	cp := FromVector(theta)
	res, err := runSim(sim, p.r.WithCalibration(&cp), p.topo, p.conc, p.k)
	if err != nil {
		return nil, err
	}
	return logResiduals(res, p.obs, keys)
}

// attribute names the parameter whose shift alone best explains the
// point's log errors (least squares in one dimension per parameter, from
// finite-difference sensitivities), and the share of the squared log error
// it explains. With one metric every part explains it fully, so the answer
// is "undetermined".
func attribute(p *measuredPoint, sim string, res *Result) (string, float64) {
	keys := fitKeys(p.obs)
	r0, err := logResiduals(res, p.obs, keys)
	if err != nil || len(keys) == 0 {
		return "-", 0
	}
	norm := 0.0
	for _, v := range r0 {
		norm += v * v
	}
	if math.Sqrt(norm/float64(len(r0))) < 0.03 {
		return "none (within 3%)", 1
	}
	if len(keys) < 2 {
		return "undetermined (one independent metric; TTFT or TPOT next to throughput would tell)", 0
	}
	best, bestRem := -1, math.Inf(1)
	th := p.theta0()
	for j := range 4 {
		t := th
		t[j] += calStep[j]
		r1, err := p.residualsAt(sim, t, keys)
		if err != nil {
			continue
		}
		var jj, jr float64
		for i := range r0 {
			d := (r1[i] - r0[i]) / calStep[j]
			jj += d * d
			jr += d * r0[i]
		}
		if jj < 1e-12 {
			continue
		}
		a := -jr / jj
		rem := 0.0
		for i := range r0 {
			d := (r1[i] - r0[i]) / calStep[j]
			e := r0[i] + a*d
			rem += e * e
		}
		if rem < bestRem {
			best, bestRem = j, rem
		}
	}
	if best < 0 {
		return "-", 0
	}
	return partNames[best], 1 - bestRem/norm
}

// --- Pareto coverage ------------------------------------------------------

// RecommendedFrontierPoints is InferenceX's RECOMMENDED_POINTS.
const RecommendedFrontierPoints = 5

// Coverage is one measured curve's Pareto coverage as InferenceX's review
// helper counts it (infx/workflows/pareto_coverage.py): x = E2EL in seconds
// (p90 for agentic runs, median for fixed lengths), y = tput_per_gpu;
// points without a positive finite x and y are invalid; the frontier keeps,
// in order of rising x (ties by falling y), each point whose y beats every
// earlier one, an equal y at a larger x included; status PASS needs no
// invalid point and at least RecommendedFrontierPoints frontier points.
type Coverage struct {
	Key               string   `json:"key"`
	Status            string   `json:"status"`
	MeasuredPoints    int      `json:"measured_points"`
	InvalidPoints     int      `json:"invalid_points"`
	FrontierPoints    int      `json:"frontier_points"`
	RecommendedPoints int      `json:"recommended_points"`
	X                 string   `json:"x"`
	Frontier          []string `json:"frontier"`
}

type coverageInput struct {
	key     string
	obs     map[string]float64
	agentic bool
	src     string
}

// curveKey groups points into one InferenceX curve: model, scenario, GPU,
// engine and precision (topologies and speculation settings share a curve).
func curveKey(p *measuredPoint) string {
	wl := p.r.Workload.Name
	if wl == "fixed" {
		wl = fmt.Sprintf("%dx%d", p.r.Workload.ISL, p.r.Workload.OSL)
	}
	// The curve is named by the model the file records (an R1 run is not
	// labelled with the preset DeepSeek-V3 it resolves to), its hub
	// organisation left off.
	model := p.r.Model.Name
	if rec := p.m.Deployment["model"]; rec != "" {
		model = rec[strings.LastIndex(rec, "/")+1:]
	}
	return strings.Join([]string{model, wl, p.r.GPU.GPU.Name + "-" + orDefault(p.r.Q.Engine, "sglang"), string(p.r.Precision)}, "/")
}

// CoveragePoint is one (x, y) for ParetoCoverage.
type CoveragePoint struct {
	Label string
	X, Y  float64
}

// ParetoCoverage counts one curve.
func ParetoCoverage(key, xName string, pts []CoveragePoint) Coverage {
	c := Coverage{Key: key, MeasuredPoints: len(pts), RecommendedPoints: RecommendedFrontierPoints, X: xName}
	ok := func(v float64) bool { return v > 0 && !math.IsInf(v, 0) && !math.IsNaN(v) }
	var el []CoveragePoint
	for _, p := range pts {
		if ok(p.X) && ok(p.Y) {
			el = append(el, p)
		}
	}
	c.InvalidPoints = len(pts) - len(el)
	sort.SliceStable(el, func(i, j int) bool {
		if el[i].X != el[j].X {
			return el[i].X < el[j].X
		}
		return el[i].Y > el[j].Y
	})
	var front []CoveragePoint
	maxY := math.Inf(-1)
	for _, p := range el {
		if p.Y > maxY || (len(front) > 0 && p.Y == maxY && p.X > front[len(front)-1].X) {
			if len(front) > 0 && p.X == front[len(front)-1].X {
				front[len(front)-1] = p
			} else {
				front = append(front, p)
			}
			maxY = p.Y
		}
	}
	c.FrontierPoints = len(front)
	for _, p := range front {
		c.Frontier = append(c.Frontier, p.Label)
	}
	c.Status = "WARN"
	if c.InvalidPoints == 0 && c.FrontierPoints >= RecommendedFrontierPoints {
		c.Status = "PASS"
	}
	return c
}

func paretoCoverage(in []coverageInput) []Coverage {
	groups := map[string][]coverageInput{}
	var keys []string
	for _, c := range in {
		if _, ok := groups[c.key]; !ok {
			keys = append(keys, c.key)
		}
		groups[c.key] = append(groups[c.key], c)
	}
	var out []Coverage
	for _, k := range keys {
		g := groups[k]
		xKey, xName := "e2el_s_p50", "median E2EL (s)"
		if g[0].agentic {
			xKey, xName = "e2el_s_p90", "p90 E2EL (s)"
		}
		pts := make([]CoveragePoint, len(g))
		for i, c := range g {
			pts[i] = CoveragePoint{Label: c.src, X: c.obs[xKey], Y: c.obs["tput_per_gpu"]}
		}
		out = append(out, ParetoCoverage(k, xName, pts))
	}
	return out
}
