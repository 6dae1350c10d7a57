package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/specsim/specsim/audit/enginelog"
	"github.com/specsim/specsim/audit/measured"
	"github.com/specsim/specsim/internal/regular"
	"github.com/specsim/specsim/simulate"
)

func init() {
	register(&command{name: "compare", summary: "compare measured benchmark results with predictions: errors, medians, Pareto coverage", run: runCompare})
	register(&command{name: "calibrate", summary: "fit a few named cost-model parameters per GPU and engine to measured results", run: runCalibrate})
}

const compareHelp = `
specsim compare: read measured benchmark results, predict every measured
deployment and print measured, predicted and signed error (predicted /
measured - 1) per metric, the medians, the part of the cost model the error
most likely sits in, and the Pareto coverage of the measured run as
InferenceX's review helper counts it (x = E2EL, median for fixed lengths and
p90 for agentic runs; y = tput_per_gpu; PASS needs 5 frontier points and no
invalid point).

Files: InferenceX result rows (agg_*.json, one row or the aggregated list),
AIPerf profile_export_aiperf.json, SGLang bench_serving JSON lines, or the
plain CSV (deployment columns named as predict's flags in snake_case,
measured_<key> metric columns; see the README). Fields a file does not
record (AIPerf: GPU and topology; InferenceX: the draft length) come from
--set. Points that cannot be modelled are listed as skipped.

Example:
  specsim compare --set gpu=h200,topology=agg:tp8,model=DeepSeek-R1 \
      --format markdown run1.json run2.json measured.csv
`

// setFlag parses --set key=value,... into a map.
type setFlag map[string]string

func (s setFlag) String() string { return "" }

func (s setFlag) Set(v string) error {
	for _, kv := range strings.Split(v, ",") {
		k, val, ok := strings.Cut(kv, "=")
		k = strings.TrimSpace(strings.ReplaceAll(k, "-", "_"))
		if !ok || k == "" {
			return fmt.Errorf("%q: want key=value", kv)
		}
		s[k] = strings.TrimSpace(val)
	}
	return nil
}

// measuredFlags are the flags compare and calibrate share.
type measuredFlags struct {
	set     setFlag
	sim     string
	catalog *gpuCatalogFlag
	golden  *goldenFlags
	cmd     string
	stderr  io.Writer
}

func (f *measuredFlags) env() (simulate.Env, error) {
	curves, err := f.golden.load()
	if err != nil {
		return simulate.Env{}, err
	}
	catalog, err := f.catalog.load()
	if err != nil {
		return simulate.Env{}, err
	}
	return simulate.Env{Curves: curves, Catalog: catalog}, nil
}

func addMeasuredFlags(fs *flag.FlagSet, cmd string, stderr io.Writer) *measuredFlags {
	f := &measuredFlags{set: setFlag{}, cmd: cmd, stderr: stderr}
	fs.Var(f.set, "set", "deployment `key=value,...` for points whose file does not record it (keys as the CSV's: gpu, topology, model, steps, ...)")
	fs.StringVar(&f.sim, "sim", simulate.SimEvent, "simulation per point: event | mean-field")
	f.catalog = addGPUCatalogFlag(fs)
	f.golden = addGoldenFlags(fs)
	return f
}

// load reads the files into simulate measurements and the reader's skips.
func (f *measuredFlags) load(files []string) ([]simulate.Measurement, []simulate.Skipped, error) {
	if len(files) == 0 {
		return nil, nil, errors.New("no result file given")
	}
	set, err := measured.ReadFiles(files)
	if err != nil {
		return nil, nil, err
	}
	if err := set.SetDefaults(f.set); err != nil {
		return nil, nil, err
	}
	for _, n := range set.NotApplied {
		fmt.Fprintf(f.stderr, "specsim %s: note: --set %s\n", f.cmd, n)
	}
	ms := make([]simulate.Measurement, len(set.Points))
	for i, p := range set.Points {
		ms[i] = simulate.Measurement{Source: p.Source, Deployment: p.Deployment, Metrics: p.Metrics}
	}
	var skips []simulate.Skipped
	for _, s := range set.Skips {
		skips = append(skips, simulate.Skipped{Source: s.Source, Reason: s.Reason})
	}
	return ms, skips, nil
}

// inFileOrder sorts skipped points as the files hold them: by the file's
// place among files, then by the line of a "FILE:LINE" source (the
// readers' skips and the model's come apart otherwise).
func inFileOrder(sk []simulate.Skipped, files []string) []simulate.Skipped {
	key := func(src string) (int, int) {
		file, line := src, 0
		if i := strings.LastIndexByte(src, ':'); i > 0 {
			if n, err := strconv.Atoi(src[i+1:]); err == nil {
				file, line = src[:i], n
			}
		}
		if i := slices.Index(files, file); i >= 0 {
			return i, line
		}
		return len(files), line
	}
	slices.SortStableFunc(sk, func(a, b simulate.Skipped) int {
		fa, la := key(a.Source)
		fb, lb := key(b.Source)
		if fa != fb {
			return fa - fb
		}
		return la - lb
	})
	return sk
}

func signedPct(v float64) string {
	if math.IsNaN(v) {
		return "-"
	}
	return fmt.Sprintf("%+.1f%%", 100*v)
}

func fig(v float64) string {
	switch a := math.Abs(v); {
	case a >= 1000:
		return fmt.Sprintf("%.0f", v)
	case a >= 10:
		return fmt.Sprintf("%.1f", v)
	}
	return fmt.Sprintf("%.3g", v)
}

func runCompare(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("compare", compareHelp, stderr)
	mf := addMeasuredFlags(fs, "compare", stderr)
	calPath := fs.String("calibration", "", "apply a `FILE` written by specsim calibrate to every prediction")
	logs := fs.String("logs", "", "comma-separated engine logs of the ONE measured run (SGLang, vLLM, TensorRT-LLM; as specsim logs reads): add its measured accept length and mean running batch")
	ff := addFormatFlags(fs)
	fs.Lookup("format").Usage = "output format: text|json|markdown|csv (csv: one row per point and metric)"
	files, err := parseFlags(fs, args)
	if err != nil {
		return usageExit(err)
	}
	fail := func(err error) int { fmt.Fprintln(stderr, "specsim compare:", flagError(err)); return exitBadInput }
	format, err := ff.resolve()
	if err != nil {
		return fail(err)
	}
	var cal *simulate.CalibrationFile
	if *calPath != "" {
		if cal, err = loadCalibration(*calPath); err != nil {
			return fail(err)
		}
	}
	ms, skips, err := mf.load(files)
	if err != nil {
		return fail(err)
	}
	if *logs != "" {
		if err := addLogMetrics(ms, strings.Split(*logs, ","), stderr); err != nil {
			return fail(err)
		}
	}
	env, err := mf.env()
	if err != nil {
		return fail(err)
	}
	c, err := simulate.Compare(ms, mf.sim, cal, env)
	if err != nil {
		return fail(err)
	}
	setFlagSkips(c.Skipped)
	c.Skipped = inFileOrder(append(skips, c.Skipped...), files)
	if len(c.Rows) == 0 {
		for _, s := range c.Skipped {
			fmt.Fprintf(stderr, "skipped %s: %s\n", s.Source, s.Reason)
		}
		return fail(errors.New("no measured point could be compared"))
	}
	switch {
	case format == formatJSON:
		if err := writeJSON(stdout, c); err != nil {
			return fail(err)
		}
		return exitOK
	case format == formatCSV:
		if err := compareCSV(c).writeCSV(stdout); err != nil {
			return fail(err)
		}
		return exitOK
	}
	printComparison(stdout, c, format)
	return exitOK
}

// compareCSV is the comparison with one row per point and metric, every
// figure at full precision.
func compareCSV(c *simulate.Comparison) *table {
	t := &table{header: []string{"source", "gpu", "engine", "deployment", "metric", "measured", "predicted", "error", "band_lo", "band_hi", "in_band", "likely_in"}}
	for _, r := range c.Rows {
		for _, e := range r.Metrics {
			lo, hi, in := "", "", "" // no band: empty cells
			if e.Band != nil {
				lo, hi, in = fmt.Sprint(e.Band.Lo), fmt.Sprint(e.Band.Hi), fmt.Sprint(*e.InBand)
			}
			t.add(r.Source, r.GPU, r.Engine, r.Deployment, e.Metric, fmt.Sprint(e.Measured), fmt.Sprint(e.Predicted),
				fmt.Sprintf("%.6f", e.Error), lo, hi, in, r.LikelyIn)
		}
	}
	return t
}

func printComparison(w io.Writer, c *simulate.Comparison, format format) {
	note := "no calibration"
	if c.Calibration != "" {
		note = "calibration applied: " + c.Calibration
	}
	fmt.Fprintf(w, "%d measured points compared, %d skipped; %s simulation per point; %s\n\n", len(c.Rows), len(c.Skipped), c.Sim, note)
	t := &table{header: []string{"point", "metric", ">measured", ">predicted", ">error", ">band", "in band"}}
	for _, r := range c.Rows {
		for i, e := range r.Metrics {
			src := ""
			if i == 0 {
				src = r.Source
			}
			band, in := "-", "-" // no band for this figure
			if e.Band != nil {
				band, in = fig(e.Band.Lo)+"-"+fig(e.Band.Hi), "no"
				if *e.InBand {
					in = "yes"
				}
			}
			t.add(src, e.Metric, fig(e.Measured), fig(e.Predicted), signedPct(e.Error), band, in)
		}
	}
	t.write(w, format)
	fmt.Fprintln(w)
	lt := &table{header: []string{"point", "gpu", "topology", ">conc", ">k", "error most likely in", ">explains"}}
	for _, r := range c.Rows {
		lt.add(r.Source, r.GPU, r.Topology, fmt.Sprint(r.Conc), fmt.Sprint(r.Steps), r.LikelyIn, fmt.Sprintf("%.0f%%", 100*r.Explained))
	}
	lt.write(w, format)
	fmt.Fprintln(w)
	mt := &table{header: []string{"metric", ">points", ">median error", ">median |error|", ">in band"}}
	for _, m := range c.Medians {
		in := "-"
		if m.InBand != nil {
			in = fmt.Sprintf("%d/%d", *m.InBand, m.Points)
		}
		mt.add(m.Metric, fmt.Sprint(m.Points), signedPct(m.Signed), signedPct(m.Abs)[1:], in)
	}
	mt.write(w, format)
	fmt.Fprintln(w)
	ct := &table{header: []string{"measured curve (pareto_coverage)", "x", ">points", ">invalid", ">frontier", ">recommended", "status"}}
	for _, cv := range c.Coverage {
		ct.add(cv.Key, cv.X, fmt.Sprint(cv.MeasuredPoints), fmt.Sprint(cv.InvalidPoints), fmt.Sprint(cv.FrontierPoints), fmt.Sprint(cv.RecommendedPoints), cv.Status)
	}
	ct.write(w, format)
	if len(c.Skipped) > 0 {
		fmt.Fprintf(w, "\nskipped:\n")
		for _, s := range c.Skipped {
			fmt.Fprintf(w, "  %s: %s\n", s.Source, s.Reason)
		}
	}
}

const calibrateHelp = `
specsim calibrate: fit a small named set of parameters per GPU and engine to
measured benchmark results (the files compare reads) and write them to -o:
layer_fixed_us (time added per decoder layer and forward), host_overhead_ms
(host time added per iteration), mem_efficiency_scale and
compute_efficiency_scale (multiply the HBM bandwidth and tensor-core peaks
every kernel is priced with). They apply on top of whatever the cost model
computes. The fit minimizes squared log errors of tput_per_gpu, TPOT and
TTFT (those measured); it prints the error before, in-sample and
leave-one-out, and refuses (exit 2) when the points cannot determine a
parameter asked for, naming the set they do determine.

Example:
  specsim calibrate --params host_overhead_ms,mem_efficiency_scale \
      -o h200.yaml measured.csv
  specsim predict --calibration h200.yaml --gpu h200 ...
`

func runCalibrate(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("calibrate", calibrateHelp, stderr)
	mf := addMeasuredFlags(fs, "calibrate", stderr)
	out := fs.String("o", "", "write the calibration to `FILE` (YAML)")
	onlyGPU := fs.String("gpu", "", "calibrate only the points of this GPU (e.g. b200)")
	params := fs.String("params", "", "comma-separated parameters to fit (default all: "+strings.Join(simulate.CalParamNames, ",")+")")
	ff := addFormatFlags(fs)
	files, err := parseFlags(fs, args)
	if err != nil {
		return usageExit(err)
	}
	fail := func(err error) int { fmt.Fprintln(stderr, "specsim calibrate:", flagError(err)); return exitBadInput }
	format, err := ff.resolve()
	if err != nil {
		return fail(err)
	}
	stdout = textOut(stdout, format)
	if *out == "" {
		return fail(errors.New("-o FILE is required"))
	}
	// Every file the command reads is an input -o must not replace: the
	// measured files and whatever a flag names (the check compares files,
	// so a flag value that names no file matters not).
	inputs := append([]string(nil), files...)
	fs.Visit(func(f *flag.Flag) {
		if f.Name != "o" {
			inputs = append(inputs, strings.Split(f.Value.String(), ",")...)
		}
	})
	if *out == "-" {
		return fail(fmt.Errorf("-o -: give a file name; a calibration is read back with --calibration FILE"))
	}
	if err := regular.CheckOutput(*out, inputs); err != nil {
		return fail(err)
	}
	ms, skips, err := mf.load(files)
	if err != nil {
		return fail(err)
	}
	if *onlyGPU != "" {
		var keep []simulate.Measurement
		for _, m := range ms {
			if strings.EqualFold(m.Deployment["gpu"], *onlyGPU) {
				keep = append(keep, m)
			} else {
				skips = append(skips, simulate.Skipped{Source: m.Source, Reason: "not a " + *onlyGPU + " point (--gpu)"})
			}
		}
		if len(keep) == 0 {
			var held []string
			for _, m := range ms {
				if g := m.Deployment["gpu"]; g != "" && !slices.Contains(held, g) {
					held = append(held, g)
				}
			}
			if len(held) == 0 {
				held = []string{"none: no point names a GPU; --set gpu=..."}
			}
			return fail(fmt.Errorf("--gpu %s: no measured point is a %s point (the files hold: %s)", *onlyGPU, *onlyGPU, strings.Join(held, ", ")))
		}
		ms = keep
	}
	var names []string
	if *params != "" {
		names = strings.Split(*params, ",")
	}
	env, err := mf.env()
	if err != nil {
		return fail(err)
	}
	file, reports, skipped, err := simulate.Calibrate(ms, simulate.CalibrateOptions{Sim: mf.sim, Params: names, Env: env,
		Progress: progressPrinter(stderr, "specsim calibrate", "steps", time.Now)})
	setFlagSkips(skipped)
	skipped = inFileOrder(append(skips, skipped...), files)
	var unid *simulate.UnidentifiableError
	if err != nil && !errors.As(err, &unid) {
		return fail(err)
	}
	if format == formatJSON {
		_ = writeJSON(stdout, map[string]any{"groups": reports, "skipped": skipped, "written": err == nil})
	} else {
		printCalibration(stdout, reports, skipped, format)
	}
	if err != nil {
		return fail(err)
	}
	file.Command = "specsim calibrate " + strings.Join(args, " ")
	data, err := file.Marshal()
	if err != nil {
		return fail(err)
	}
	if err := regular.WriteFile(*out, data, inputs); err != nil {
		return fail(err)
	}
	for _, w := range file.Warnings {
		fmt.Fprintf(stderr, "specsim calibrate: warning: %s (noted in %s)\n", w, *out)
	}
	if format != formatJSON {
		fmt.Fprintf(stdout, "\nwrote %s (apply with --calibration %s)\n", *out, *out)
	}
	return exitOK
}

func printCalibration(w io.Writer, reports []simulate.CalGroupReport, skipped []simulate.Skipped, format format) {
	for _, r := range reports {
		e := r.Entry
		fmt.Fprintf(w, "%s/%s: %d measured points\n", e.GPU, e.Engine, e.Points)
		if r.Refused != "" {
			fmt.Fprintf(w, "  refused: %s\n", r.Refused)
			if len(r.Suggest) > 0 {
				fmt.Fprintf(w, "  these points determine: --params %s\n", strings.Join(r.Suggest, ","))
			}
			continue
		}
		fmt.Fprintf(w, "  fitted %s: %s\n", strings.Join(e.Fitted, ", "), e.Params)
		if len(r.AtLimit) > 0 {
			fmt.Fprintf(w, "  at a limit (the fit wanted to go further): %s\n", strings.Join(r.AtLimit, ", "))
		}
		for _, wn := range r.Warnings {
			fmt.Fprintf(w, "  WARNING: %s\n", wn)
		}
		sv := make([]string, len(r.Singular))
		for i, v := range r.Singular {
			sv[i] = fmt.Sprintf("%.3g", v)
		}
		fmt.Fprintf(w, "  scaled sensitivities' singular values: %s\n\n", strings.Join(sv, " "))
		t := &table{header: []string{"metric", ">before", ">in-sample", ">leave-one-out"}}
		if format == formatCSV {
			// One table for every group: a group column, and the median
			// |error| as a fraction (the text shows it as a percentage).
			t.header = append([]string{"gpu", "engine"}, t.header...)
		}
		keys := make([]string, 0, len(e.Before))
		for k := range e.Before {
			keys = append(keys, k)
		}
		sort.Slice(keys, func(i, j int) bool { return metricRank(keys[i]) < metricRank(keys[j]) })
		for _, k := range keys {
			if format == formatCSV {
				num := func(v float64) string { return strconv.FormatFloat(math.Abs(v), 'g', -1, 64) }
				t.add(e.GPU, e.Engine, k, num(e.Before[k]), num(e.InSample[k]), num(e.LeaveOneOut[k]))
				continue
			}
			t.add(k, signedPct(e.Before[k])[1:], signedPct(e.InSample[k])[1:], signedPct(e.LeaveOneOut[k])[1:])
		}
		fmt.Fprintln(w, "  median |error|:")
		t.write(w, format)
		fmt.Fprintf(w, "  band with this calibration: throughput %s, latency %s (p80 of the leave-one-out error factor max(predicted/measured, measured/predicted))\n\n", simulate.BandText(e.Band.Throughput, 1), simulate.BandText(e.Band.Latency, 1))
	}
	if len(skipped) > 0 {
		fmt.Fprintf(w, "skipped:\n")
		for _, s := range skipped {
			fmt.Fprintf(w, "  %s: %s\n", s.Source, s.Reason)
		}
	}
}

func metricRank(k string) int {
	for i, m := range simulate.MetricOrder {
		if m == k {
			return i
		}
	}
	return len(simulate.MetricOrder)
}

// addLogMetrics reads the engine logs of one measured run and adds the
// accept length (the interval-weighted mean specsim logs reports) and the
// running batch (summed over DP ranks) to its point. Logs that run more
// requests than the point has sessions are from another run (or the
// point's concurrency is wrong): warned on stderr.
func addLogMetrics(ms []simulate.Measurement, files []string, stderr io.Writer) error {
	if len(ms) != 1 {
		return fmt.Errorf("--logs describes one run, but the files hold %d measured points", len(ms))
	}
	steps := 0
	if v, err := strconv.Atoi(ms[0].Deployment["steps"]); err == nil {
		steps = v
	}
	al, running, peak, err := enginelog.RunMeans(files, steps)
	if err != nil {
		return fmt.Errorf("--logs %w", err)
	}
	if conc, err := strconv.Atoi(ms[0].Deployment["conc"]); err == nil && conc > 0 && (running > float64(conc) || peak > conc) {
		fmt.Fprintf(stderr, "specsim compare: warning: --logs %s: %.1f requests running on average over the DP ranks (up to %d on one rank), more than the %d sessions of %s: are the logs from this run, or its concurrency wrong?\n",
			strings.Join(files, ","), running, peak, conc, ms[0].Source)
	}
	if al > 0 {
		ms[0].Metrics["al"] = al
	}
	if running > 0 {
		ms[0].Metrics["decode_batch_mean"] = running
	}
	return nil
}
