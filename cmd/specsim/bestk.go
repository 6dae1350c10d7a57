package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/specsim/specsim/simulate"
)

func init() {
	register(&command{name: "bestk", summary: "best draft length per concurrency for one topology, and why", run: runBestK})
}

const bestkHelp = `
specsim bestk: for one topology, evaluate draft lengths (default 0-8) at each
concurrency and report the one with the highest output throughput, with the
trade it makes: acceptance gained (golden AL) against draft and verify time.
It ranks by the mean-field estimate (fast; sweep's and predict's figures come
from the event simulation and can differ); --simulate ranks by the event
simulation instead (slower).
"vs none" is the output throughput at the best k over the same topology and
concurrency without speculation (k = 0); JSON speedup_vs_none.

Example:
  specsim bestk --model Qwen3.5-397B-A17B --precision fp4 --gpu gb300 \
      --topology agg:tp2 --workload agentx --conc 1,4,16,64
`

func runBestK(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("bestk", bestkHelp, stderr)
	qf := addQueryFlags(fs, true)
	concList := fs.String("conc", "1,2,4,8,16,32,64,128", "comma-separated concurrencies")
	sim := fs.Bool("simulate", false, "use the event simulation (slower) instead of the mean-field estimate")
	ff := addFormatFlags(fs)
	rest, err := parseFlags(fs, args)
	if err != nil {
		return usageExit(err)
	}
	fail := func(err error) int { fmt.Fprintln(stderr, "specsim bestk:", flagError(err)); return exitBadInput }
	if len(rest) > 0 {
		return fail(fmt.Errorf("unexpected argument %q", rest[0]))
	}
	format, err := ff.resolve()
	if err != nil {
		return fail(err)
	}
	stdout = textOut(stdout, format)
	if qf.q.Spec == "none" {
		return fail(fmt.Errorf("bestk compares draft lengths: use --spec mtp"))
	}
	res, err := qf.resolve()
	if err != nil {
		return fail(err)
	}
	lo, hi := 0, 8
	if res.Target.Curve != nil {
		hi = res.Target.Curve.MaxK()
	}
	if qf.steps != "" {
		if lo, hi, err = stepRange(qf.steps, 0); err != nil {
			return fail(err)
		}
		if res.Target.Curve != nil && hi > res.Target.Curve.MaxK() {
			return fail(fmt.Errorf("--steps %s: the golden curve %s (thinking %s) has draft lengths 1..%d; pass --al to go beyond", qf.steps, res.Target.Curve.Model, res.Target.Curve.Thinking, res.Target.Curve.MaxK()))
		}
	}
	if err := fixedALFits(res.Target, qf.steps, lo, hi); err != nil {
		return fail(err)
	}
	concs, err := intList(*concList, 1<<16)
	if err == nil && len(concs) == 0 {
		err = fmt.Errorf("no concurrencies given")
	}
	if err != nil {
		return fail(fmt.Errorf("--conc: %v", err))
	}
	topo, err := simulate.ParseTopology(qf.q.Topology)
	if err != nil {
		return fail(err)
	}
	var progress func(done, total int)
	if format != formatJSON {
		progress = progressPrinter(stderr, "bestk", "concurrencies", time.Now)
	}
	rows, err := simulate.BestK(res, topo, concs, lo, hi, *sim, progress)
	if err != nil {
		return fail(err)
	}
	band, bandSource, _, err := simulate.BandWidthsFor(res)
	if err != nil {
		return fail(err)
	}
	if format == formatJSON {
		in, err := bestkInputs(res, topo, concs, lo, hi)
		if err != nil {
			return fail(err)
		}
		out := map[string]any{"inputs": in, "topology": topo.String(), "rows": rows, "band": simulate.SweepBand{Relative: band, Source: bandSource}}
		if note := calibrationNote(res); note != "" {
			out["calibration"] = note
		}
		if err := writeJSON(stdout, out); err != nil {
			return fail(err)
		}
		return exitOK
	}
	wl := fmt.Sprintf("%d/%d tokens", res.Workload.ISL, res.Workload.OSL)
	switch {
	case res.Workload.Trace != nil:
		wl = "AgentX trace replay"
	case res.Workload.Name == "agentx":
		wl = "agentx-synthetic"
	}
	fmt.Fprintf(stdout, "%s %s on %d x %s, %s, %s: best draft length per concurrency (%s)\n\n", res.Model.Name, strings.ToUpper(string(res.Precision)),
		topo.GPUs(), strings.ToUpper(res.GPU.GPU.Name), topo, wl, map[bool]string{true: "event simulation", false: "mean-field estimate"}[*sim])
	t := &table{header: []string{">conc", ">best k", ">AL", ">step ms", ">tok/s/user", ">output tok/s/GPU", ">vs none", "why"}}
	for _, r := range rows {
		var b simulate.KCandidate
		for _, c := range r.Candidates {
			if c.K == r.BestK {
				b = c
			}
		}
		speed := "-"
		al, step, inter, out := fmt.Sprintf("%.2f", b.AL), fmt.Sprintf("%.2f", b.StepMS), fmt.Sprintf("%.1f", b.Interactivity), fmt.Sprintf("%.0f", b.OutputPerGPU)
		if format == formatCSV {
			// One unrounded number per cell, the ratio without its "x".
			num := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
			al, step, inter, out = num(b.AL), num(b.StepMS), num(b.Interactivity), num(b.OutputPerGPU)
			if r.Speedup > 0 {
				speed = num(r.Speedup)
			}
		} else if r.Speedup > 0 {
			speed = fmt.Sprintf("%.2fx", r.Speedup)
		}
		t.add(strconv.Itoa(r.Conc), strconv.Itoa(r.BestK), al, step, inter, out, speed, r.Why)
	}
	t.write(stdout, format)
	if note := calibrationNote(res); note != "" {
		fmt.Fprintf(stdout, "\ncalibration applied: %s\n", note)
	}
	fmt.Fprintf(stdout, "\nband: throughputs %s, latencies %s (%s)\n", simulate.BandText(band.Throughput, 0), simulate.BandText(band.Latency, 0), bandSource)
	return exitOK
}

// bestkInputs echoes what bestk compared, as predict's inputs do, with
// sweep's list keys in place of one point's: concs, and steps as [lo, hi]
// (each row's candidates give the AL at every k).
func bestkInputs(r *simulate.Resolved, t simulate.Topology, concs []int, lo, hi int) (map[string]any, error) {
	in := r.Inputs(t, 0, hi)
	in.SpecsimVersion = specsimVersion()
	b, err := json.Marshal(in)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	for _, k := range []string{"conc", "al", "al_source"} {
		delete(m, k)
	}
	m["concs"], m["steps"] = concs, [2]int{lo, hi}
	return m, nil
}
