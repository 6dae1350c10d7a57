package simulate

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"

	"gonum.org/v1/gonum/mat"
)

// CalibrateOptions choose what a calibration fits.
type CalibrateOptions struct {
	Sim string // SimEvent (default) or SimMeanField
	// Params names the parameters to fit (CalParamNames); empty fits all.
	Params []string
	Env    Env
	// Progress, if set, is called as the work advances, in steps: each
	// point resolved and simulated once, each group's fit, each
	// leave-one-out refit. total shrinks as points are skipped; the last
	// call has done == total.
	Progress func(done, total int)
}

// CalGroupReport is the fit of one GPU and engine.
type CalGroupReport struct {
	Entry CalEntry `json:"entry"`
	// Singular are the singular values of the Jacobian of the log
	// residuals, each parameter scaled by its plausible range (calRange).
	Singular []float64 `json:"singular_values"`
	// Sensitivity is each fitted parameter's RMS effect on the log
	// residuals over its plausible range.
	Sensitivity map[string]float64 `json:"sensitivity"`
	// Refused says why the data cannot determine the parameters asked
	// for; Suggest is the largest set it can determine.
	Refused string   `json:"refused,omitempty"`
	Suggest []string `json:"suggest,omitempty"`
	// AtLimit names parameters whose fit stopped at a limit.
	AtLimit []string `json:"at_limit,omitempty"`
	// Warnings say why the calibration written should not be trusted
	// (calWarnings); a command shows them, and Marshal writes them into
	// the file's header.
	Warnings []string `json:"warnings,omitempty"`
}

// calWarnings are the caveats of a fitted entry: a parameter that stopped
// at its limit (the data pull it outside its plausible range, so the other
// figures are fitted around a clamp), and a leave-one-out band wider than
// the uncalibrated error of its metrics (the calibration predicts points it
// has not seen worse than no calibration does).
func calWarnings(e CalEntry, atLimit []string) []string {
	var w []string
	val := map[string]float64{"layer_fixed_us": e.Params.LayerFixedUS, "host_overhead_ms": e.Params.HostOverheadMS,
		"mem_efficiency_scale": e.Params.MemScale, "compute_efficiency_scale": e.Params.ComputeScale}
	for _, name := range atLimit {
		w = append(w, fmt.Sprintf("%s = %g sits at its limit: the data pull it past the plausible range, so the fit is not trustworthy (more, or more varied, points)", name, val[name]))
	}
	var thr, lat float64 // largest uncalibrated median |error| per kind
	for k, v := range e.Before {
		if k == "tput_per_gpu" || k == "output_tput_per_gpu" {
			thr = math.Max(thr, v)
		} else {
			lat = math.Max(lat, v)
		}
	}
	for _, b := range []struct {
		kind         string
		band, before float64
	}{{"throughput", e.Band.Throughput, thr}, {"latency", e.Band.Latency, lat}} {
		if b.before > 0 && b.band > b.before {
			w = append(w, fmt.Sprintf("the leave-one-out %s band %s is wider than the uncalibrated median |error| %.1f%%: with %d points the calibration does not predict unseen points better than none", b.kind, BandText(b.band, 1), 100*b.before, e.Points))
		}
	}
	return w
}

// UnidentifiableError is a calibration the data cannot determine.
type UnidentifiableError struct {
	Reports []CalGroupReport
}

func (e *UnidentifiableError) Error() string {
	var b strings.Builder
	for _, r := range e.Reports {
		if r.Refused == "" {
			continue
		}
		fmt.Fprintf(&b, "%s/%s: %s", r.Entry.GPU, r.Entry.Engine, r.Refused)
		if len(r.Suggest) > 0 {
			fmt.Fprintf(&b, "; these points determine the parameters %s", strings.Join(r.Suggest, ","))
		} else {
			b.WriteString("; these points determine none of the parameters")
		}
		b.WriteString("\n")
	}
	return strings.TrimRight(b.String(), "\n")
}

// Identifiability thresholds: a parameter whose shift over its plausible
// range moves the log residuals by less than minSensitivity (RMS) does not
// act on the data; a scaled Jacobian whose smallest singular value is less
// than minSingularRatio of its largest cannot separate the parameters.
const (
	minSensitivity   = 0.01
	minSingularRatio = 0.05
)

// Calibrate fits CalParams per GPU and engine to the measurements, with
// leave-one-out errors. Measurements that cannot be modelled are skipped
// (listed); when the data cannot determine a parameter asked for, it
// returns an *UnidentifiableError naming the parameters and the largest
// set the data does determine. A bad Sim or Params is an [*Error] on that
// CalibrateOptions field.
func Calibrate(ms []Measurement, opt CalibrateOptions) (*CalibrationFile, []CalGroupReport, []Skipped, error) {
	sim := orDefault(opt.Sim, SimEvent)
	if sim != SimEvent && sim != SimMeanField {
		return nil, nil, nil, &Error{Field: "Sim", Value: sim, Reason: "want event or mean-field"}
	}
	active, err := paramIndices(opt.Params)
	if err != nil {
		return nil, nil, nil, err
	}
	env, err := opt.Env.orDefault()
	if err != nil {
		return nil, nil, nil, err
	}
	var skipped []Skipped
	groups := map[string][]*measuredPoint{}
	var order []string
	// Until the points are resolved the total assumes each is kept in a
	// group of its own: resolve, fit, refit.
	done, total := 0, 3*len(ms)
	tick := func() {
		done++
		if opt.Progress != nil {
			opt.Progress(done, total)
		}
	}
	defer func() {
		if opt.Progress != nil {
			opt.Progress(total, total)
		}
	}()
	for _, m := range ms {
		p, err := resolveMeasurement(m, nil, env)
		if err == nil && len(fitKeys(p.obs)) == 0 {
			err = errors.New("no metric a calibration fits (tput_per_gpu, output_tput_per_gpu, tpot_ms, interactivity, ttft_ms, e2el_s_p50)")
		}
		if err == nil {
			_, err = runSim(sim, p.r, p.topo, p.conc, p.k)
		}
		if err != nil {
			skipped = append(skipped, Skipped{m.Source, firstLine(err.Error()), err})
			total -= 2 // resolved, never fitted
			tick()
			continue
		}
		key := p.r.GPU.GPU.Name + "/" + orDefault(p.r.Q.Engine, "sglang")
		if _, ok := groups[key]; !ok {
			order = append(order, key)
		}
		groups[key] = append(groups[key], p)
		tick()
	}
	kept := 0
	for _, g := range groups {
		kept += len(g)
	}
	total = len(ms) + len(order) + kept
	if len(order) == 0 {
		return nil, nil, skipped, errors.New("no measured point could be modelled")
	}
	file := &CalibrationFile{Version: 1, Sim: sim}
	var reports []CalGroupReport
	refused := false
	for _, key := range order {
		rep, err := calibrateGroup(groups[key], sim, active, tick)
		if err != nil {
			return nil, nil, skipped, fmt.Errorf("%s: %w", key, err)
		}
		reports = append(reports, rep)
		if rep.Refused != "" {
			refused = true
			continue
		}
		file.Entries = append(file.Entries, rep.Entry)
		for _, w := range rep.Warnings {
			file.Warnings = append(file.Warnings, key+": "+w)
		}
	}
	if refused {
		return nil, reports, skipped, &UnidentifiableError{reports}
	}
	return file, reports, skipped, nil
}

func paramIndices(names []string) ([]int, error) {
	if len(names) == 0 {
		return []int{0, 1, 2, 3}, nil
	}
	var out []int
	seen := map[int]bool{}
	for _, n := range names {
		j := -1
		for i, c := range CalParamNames {
			if c == strings.TrimSpace(n) {
				j = i
			}
		}
		if j < 0 {
			return nil, &Error{Field: "Params", Value: strings.Join(names, ","), Reason: fmt.Sprintf("%q is not a parameter: want some of %s", n, strings.Join(CalParamNames, ", "))}
		}
		if !seen[j] {
			seen[j] = true
			out = append(out, j)
		}
	}
	sort.Ints(out)
	return out, nil
}

// group is the fitting problem of one GPU and engine.
type group struct {
	pts  []*measuredPoint
	sim  string
	keys [][]string // fit keys per point
}

// residuals predicts every point (except skip) at theta and returns the
// concatenated log residuals over the fit keys.
func (g *group) residuals(theta [4]float64, skip int) ([]float64, error) {
	var out []float64
	for i, p := range g.pts {
		if i == skip {
			continue
		}
		r, err := p.residualsAt(g.sim, theta, g.keys[i])
		if err != nil {
			return nil, fmt.Errorf("%s: %w", p.m.Source, err)
		}
		out = append(out, r...)
	}
	return out, nil
}

// jacobian by forward differences over the active parameters.
func (g *group) jacobian(theta [4]float64, r0 []float64, active []int) (*mat.Dense, error) {
	J := mat.NewDense(len(r0), len(active), nil)
	for c, j := range active {
		t := theta
		step := calStep[j]
		if t[j]+step > calLimits[j][1] {
			step = -step
		}
		t[j] += step
		r1, err := g.residuals(t, -1)
		if err != nil {
			return nil, err
		}
		for i := range r0 {
			J.Set(i, c, (r1[i]-r0[i])/step)
		}
	}
	return J, nil
}

func sumSq(r []float64) float64 {
	s := 0.0
	for _, v := range r {
		s += v * v
	}
	return s
}

// identify checks whether the scaled Jacobian determines the active
// parameters; it returns the reason when not.
func identify(J *mat.Dense, active []int) (reason string, singular []float64, sens map[string]float64) {
	n, c := J.Dims()
	sens = map[string]float64{}
	S := mat.NewDense(n, c, nil)
	var weak []string
	for k, j := range active {
		col := 0.0
		for i := range n {
			v := J.At(i, k) * calRange[j]
			S.Set(i, k, v)
			col += v * v
		}
		s := math.Sqrt(col / float64(n))
		sens[CalParamNames[j]] = s
		if s < minSensitivity {
			weak = append(weak, CalParamNames[j])
		}
	}
	if n < c+1 {
		return fmt.Sprintf("%d measured figures cannot determine %d parameters (need at least %d)", n, c, c+1), nil, sens
	}
	if len(weak) > 0 {
		return fmt.Sprintf("%s: a shift over the plausible range moves the measured figures by under %.0f%% (no measured point depends on it)", strings.Join(weak, ", "), 100*minSensitivity), nil, sens
	}
	var svd mat.SVD
	if !svd.Factorize(S, mat.SVDThin) {
		return "the sensitivities could not be factorized", nil, sens
	}
	singular = svd.Values(nil)
	if singular[0] <= 0 {
		return "no parameter moves the measured figures", singular, sens
	}
	if ratio := singular[len(singular)-1] / singular[0]; ratio < minSingularRatio {
		var v mat.Dense
		svd.VTo(&v)
		var mixed []string
		for k, j := range active {
			if math.Abs(v.At(k, len(singular)-1)) >= 0.3 {
				mixed = append(mixed, CalParamNames[j])
			}
		}
		return fmt.Sprintf("%s move the measured figures together (smallest/largest singular value %.3f < %.2f): the points cannot tell them apart", strings.Join(mixed, " and "), ratio, minSingularRatio), singular, sens
	}
	return "", singular, sens
}

// suggest finds the largest, best-conditioned subset of active that J
// determines.
func suggest(J *mat.Dense, active []int) []string {
	n := len(active)
	best, bestRatio := []int(nil), 0.0
	for size := n - 1; size >= 1 && best == nil; size-- {
		for mask := 1; mask < 1<<n; mask++ {
			if popcount(mask) != size {
				continue
			}
			var sub []int
			var cols []int
			for k := range n {
				if mask&(1<<k) != 0 {
					sub = append(sub, active[k])
					cols = append(cols, k)
				}
			}
			rows, _ := J.Dims()
			Js := mat.NewDense(rows, len(cols), nil)
			for i := range rows {
				for c, k := range cols {
					Js.Set(i, c, J.At(i, k))
				}
			}
			reason, sv, _ := identify(Js, sub)
			if reason != "" {
				continue
			}
			ratio := sv[len(sv)-1] / sv[0]
			if ratio > bestRatio {
				best, bestRatio = sub, ratio
			}
		}
	}
	var out []string
	for _, j := range best {
		out = append(out, CalParamNames[j])
	}
	return out
}

func popcount(x int) int {
	n := 0
	for ; x != 0; x &= x - 1 {
		n++
	}
	return n
}

// clamp keeps theta inside calLimits and reports which active parameters
// sit on a limit.
func clamp(theta [4]float64, active []int) ([4]float64, []string) {
	var at []string
	for _, j := range active {
		lo, hi := calLimits[j][0], calLimits[j][1]
		if theta[j] <= lo {
			theta[j] = lo
			at = append(at, CalParamNames[j])
		} else if theta[j] >= hi {
			theta[j] = hi
			at = append(at, CalParamNames[j])
		}
	}
	return theta, at
}

// solveStep solves (J'J + lambda diag(J'J)) d = -J'r.
func solveStep(J *mat.Dense, r []float64, lambda float64) ([]float64, error) {
	_, c := J.Dims()
	var A mat.Dense
	A.Mul(J.T(), J)
	for k := range c {
		A.Set(k, k, A.At(k, k)*(1+lambda)+1e-12)
	}
	var b mat.VecDense
	b.MulVec(J.T(), mat.NewVecDense(len(r), r))
	b.ScaleVec(-1, &b)
	var d mat.VecDense
	if err := d.SolveVec(&A, &b); err != nil {
		return nil, err
	}
	return d.RawVector().Data, nil
}

// fit runs Levenberg-Marquardt from theta over the active parameters.
func (g *group) fit(theta [4]float64, active []int, iters int) ([4]float64, []float64, []string, error) {
	r, err := g.residuals(theta, -1)
	if err != nil {
		return theta, nil, nil, err
	}
	cost := sumSq(r)
	lambda := 1e-3
	var atLimit []string
	for range iters {
		J, err := g.jacobian(theta, r, active)
		if err != nil {
			return theta, nil, nil, err
		}
		improved := false
		for range 6 {
			d, err := solveStep(J, r, lambda)
			if err != nil {
				lambda *= 10
				continue
			}
			t := theta
			for c, j := range active {
				t[j] += d[c]
			}
			t, at := clamp(t, active)
			r1, err := g.residuals(t, -1)
			if err != nil {
				return theta, nil, nil, err
			}
			if c1 := sumSq(r1); c1 < cost {
				rel := (cost - c1) / math.Max(cost, 1e-12)
				theta, r, cost, atLimit = t, r1, c1, at
				lambda = math.Max(lambda/3, 1e-7)
				improved = true
				if rel < 1e-3 {
					return theta, r, atLimit, nil
				}
				break
			}
			lambda *= 4
		}
		if !improved {
			break
		}
	}
	return theta, r, atLimit, nil
}

// pointErrors predicts point p at theta and returns predicted/measured - 1
// for every measured metric.
func pointErrors(p *measuredPoint, sim string, theta [4]float64) (map[string]float64, error) {
	cp := FromVector(theta)
	res, err := runSim(sim, p.r.WithCalibration(&cp), p.topo, p.conc, p.k)
	if err != nil {
		return nil, err
	}
	out := map[string]float64{}
	for _, k := range sortedKeys(p.obs) {
		if k == "al" || k == "decode_batch_mean" {
			continue
		}
		v, _ := metricValue(res, k)
		out[k] = v/p.obs[k] - 1
	}
	return out, nil
}

func medianAbs(errs map[string][]float64) map[string]float64 {
	out := map[string]float64{}
	for k, es := range errs {
		a := make([]float64, len(es))
		for i, e := range es {
			a[i] = math.Abs(e)
		}
		out[k] = math.Round(medianOf(a)*1e4) / 1e4
	}
	return out
}

// tick is called after the fit and after each leave-one-out refit.
func calibrateGroup(pts []*measuredPoint, sim string, active []int, tick func()) (CalGroupReport, error) {
	g := &group{pts: pts, sim: sim}
	for _, p := range pts {
		g.keys = append(g.keys, fitKeys(p.obs))
	}
	rep := CalGroupReport{Entry: CalEntry{GPU: pts[0].r.GPU.GPU.Name, Engine: orDefault(pts[0].r.Q.Engine, "sglang"), Points: len(pts)}}
	theta0 := Identity().Vector()
	r0, err := g.residuals(theta0, -1)
	if err != nil {
		return rep, err
	}
	J0, err := g.jacobian(theta0, r0, active)
	if err != nil {
		return rep, err
	}
	reason, sv, sens := identify(J0, active)
	rep.Singular, rep.Sensitivity = sv, sens
	if reason != "" {
		rep.Refused = reason
		rep.Suggest = suggest(J0, active)
		return rep, nil
	}
	theta, _, atLimit, err := g.fit(theta0, active, 12)
	if err != nil {
		return rep, err
	}
	tick()
	rep.AtLimit = atLimit
	// Recheck at the solution: a fit can drift where the data stops
	// telling the parameters apart.
	rs, err := g.residuals(theta, -1)
	if err != nil {
		return rep, err
	}
	Js, err := g.jacobian(theta, rs, active)
	if err != nil {
		return rep, err
	}
	if reason, sv, sens := identify(Js, active); reason != "" {
		rep.Refused = "at the fitted values: " + reason
		rep.Suggest = suggest(Js, active)
		return rep, nil
	} else {
		rep.Singular, rep.Sensitivity = sv, sens
	}
	before, in, loo := map[string][]float64{}, map[string][]float64{}, map[string][]float64{}
	var looThr, looLat []float64
	for i, p := range pts {
		b, err := pointErrors(p, sim, theta0)
		if err != nil {
			return rep, err
		}
		a, err := pointErrors(p, sim, theta)
		if err != nil {
			return rep, err
		}
		for k, v := range b {
			before[k] = append(before[k], v)
		}
		for k, v := range a {
			in[k] = append(in[k], v)
		}
		// Leave point i out: a refit from the identity without it (see
		// leaveOut).
		ti, err := g.leaveOut(theta0, Js, i, active)
		if err != nil {
			return rep, err
		}
		l, err := pointErrors(p, sim, ti)
		if err != nil {
			return rep, err
		}
		tick()
		for k, v := range l {
			loo[k] = append(loo[k], v)
			if k == "tput_per_gpu" || k == "output_tput_per_gpu" {
				looThr = append(looThr, v)
			} else {
				looLat = append(looLat, v)
			}
		}
	}
	e := &rep.Entry
	e.Params = FromVector(theta)
	roundParams(&e.Params)
	for _, j := range active {
		e.Fitted = append(e.Fitted, CalParamNames[j])
	}
	e.Before, e.InSample, e.LeaveOneOut = medianAbs(before), medianAbs(in), medianAbs(loo)
	round := func(v float64) float64 { return math.Round(v*1e4) / 1e4 }
	if len(looThr) > 0 {
		e.Band.Throughput = round(BandFromResiduals(looThr))
	}
	if len(looLat) > 0 {
		e.Band.Latency = round(BandFromResiduals(looLat))
	} else {
		e.Band.Latency = e.Band.Throughput
	}
	if len(looThr) == 0 {
		e.Band.Throughput = e.Band.Latency
	}
	rep.Warnings = calWarnings(*e, rep.AtLimit)
	return rep, nil
}

func roundParams(p *CalParams) {
	r := func(v, q float64) float64 { return math.Round(v*q) / q }
	p.LayerFixedUS = r(p.LayerFixedUS, 1e3)
	p.HostOverheadMS = r(p.HostOverheadMS, 1e5)
	p.MemScale = r(p.MemScale, 1e5)
	p.ComputeScale = r(p.ComputeScale, 1e5)
}

// leaveOut refits without point i, from theta (the identity): Gauss-Newton
// steps with the full fit's sensitivities frozen (rows of J without point
// i) and the residuals recomputed exactly at each step, with a weak pull
// toward the identity (ridge loocRidge, in units of each parameter's
// plausible range) so that a parameter only point i determined stays where
// the model alone puts it instead of keeping the value point i gave it.
func (g *group) leaveOut(theta [4]float64, J *mat.Dense, i int, active []int) ([4]float64, error) {
	lo := 0
	for k := range i {
		lo += len(g.keys[k])
	}
	hi := lo + len(g.keys[i])
	n, c := J.Dims()
	Ji := mat.NewDense(max(n-(hi-lo), 1), c, nil)
	row := 0
	for r := range n {
		if r >= lo && r < hi {
			continue
		}
		for k := range c {
			Ji.Set(row, k, J.At(r, k))
		}
		row++
	}
	if row == 0 {
		return theta, nil
	}
	start := theta
	t := theta
	cost := func(r []float64, t [4]float64) float64 {
		s := sumSq(r)
		for _, j := range active {
			d := (t[j] - start[j]) / calRange[j]
			s += looRidge * d * d
		}
		return s
	}
	r, err := g.residuals(t, i)
	if err != nil {
		return theta, err
	}
	for range 4 {
		// (J'J + ridge R^-2) d = -J'r - ridge R^-2 (t - start)
		var A mat.Dense
		A.Mul(Ji.T(), Ji)
		var b mat.VecDense
		b.MulVec(Ji.T(), mat.NewVecDense(len(r), r))
		for k, j := range active {
			w := looRidge / (calRange[j] * calRange[j])
			A.Set(k, k, A.At(k, k)+w)
			b.SetVec(k, b.AtVec(k)+w*(t[j]-start[j]))
		}
		b.ScaleVec(-1, &b)
		var d mat.VecDense
		if err := d.SolveVec(&A, &b); err != nil {
			break
		}
		next := t
		for k, j := range active {
			next[j] += d.AtVec(k)
		}
		next, _ = clamp(next, active)
		r1, err := g.residuals(next, i)
		if err != nil {
			return theta, err
		}
		if cost(r1, next) >= cost(r, t) {
			break
		}
		t, r = next, r1
	}
	return t, nil
}

// looRidge weighs the pull toward the identity in leave-one-out refits:
// small enough that the data moves any parameter it determines, large
// enough to keep the others put.
const looRidge = 1e-4
