package main

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/specsim/specsim/simulate"
	"github.com/specsim/specsim/simulate/paretoplot"
)

func init() {
	register(&command{name: "sweep", summary: "search topologies, concurrencies and draft lengths for a GPU count; Pareto frontiers", run: runSweep})
}

const sweepHelp = `
specsim sweep: evaluate every deployment of at most --gpus GPUs (aggregated TP,
TP+EP, DEP, TP x PP; disaggregated prefill + decode groups), every concurrency
and every draft length, and print the Pareto frontier by InferenceX's rules:
y = total tokens/s per GPU (cached input counted), x = interactivity
(tokens/s per user) and, for agentic workloads, p90 E2EL (median for fixed
lengths). Points are priced with the mean-field estimate; frontier points are
re-run through the event simulation unless --no-refine.

Example:
  specsim sweep --model Qwen3.5-397B-A17B --precision fp4 --gpu b200 --gpus 8 \
      --isl 1024 --osl 1024 --spec mtp --steps 0-8 --plot frontier.png
`

func runSweep(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("sweep", sweepHelp, stderr)
	qf := addQueryFlags(fs, false)
	gpus := fs.Int("gpus", 8, "GPUs to deploy on (topologies using at most this many)")
	concList := fs.String("conc", "", "comma-separated concurrencies (default 1,2,4,...,1024)")
	topoList := fs.String("topologies", "", "comma-separated topologies to evaluate instead of enumerating")
	plotPath := fs.String("plot", "", "draw the frontiers (MTP against none) into FILE.png or FILE.svg")
	noRefine := fs.Bool("no-refine", false, "keep mean-field values for frontier points (skip the event simulation)")
	all := fs.Bool("all", false, "print every point, not just the frontier")
	ff := addFormatFlags(fs, true)
	rest, err := parseFlags(fs, args)
	if err != nil {
		return usageExit(err)
	}
	fail := func(err error) int { fmt.Fprintln(stderr, "specsim sweep:", flagError(err)); return exitBadInput }
	if len(rest) > 0 {
		return fail(fmt.Errorf("unexpected argument %q", rest[0]))
	}
	format, err := ff.resolve(true)
	if err != nil {
		return fail(err)
	}
	res, err := qf.resolve()
	if err != nil {
		return fail(err)
	}
	space := simulate.SweepSpace{GPUs: *gpus}
	def := 6
	if qf.q.Spec == "none" {
		def = 0
	}
	if space.StepsLo, space.StepsHi, err = stepRange(qf.steps, def); err != nil {
		return fail(err)
	}
	if qf.q.Spec == "none" && space.StepsHi > 0 {
		return fail(fmt.Errorf("--spec none sweeps k = 0 only; drop --steps"))
	}
	if space.Concs, err = intList(*concList, 1<<16); err != nil {
		return fail(fmt.Errorf("--conc: %v", err))
	}
	if *topoList != "" {
		for _, s := range strings.Split(*topoList, ",") {
			t, err := simulate.ParseTopology(s)
			if err != nil {
				return fail(err)
			}
			space.Topologies = append(space.Topologies, t)
		}
	}
	var progress func(done, total int)
	if format != formatJSON {
		progress = progressPrinter(stderr, "sweep", "topologies", time.Now)
	}
	out, err := simulate.Sweep(res, space, !*noRefine, progress)
	if err != nil {
		return fail(err)
	}
	band, bandSource, _, err := simulate.BandWidthsFor(res)
	if err != nil {
		return fail(err)
	}
	if *plotPath != "" {
		title := fmt.Sprintf("%s %s on %s, %d GPUs", res.Model.Name, strings.ToUpper(string(res.Precision)), strings.ToUpper(res.GPU.GPU.Name), *gpus)
		if err := paretoplot.WriteBand(*plotPath, title, out, band.Throughput); err != nil {
			return fail(err)
		}
	}
	if format == formatJSON {
		if err := writeJSON(stdout, sweepJSON{SweepResult: out, Band: sweepBand{Relative: band, Source: bandSource}, Calibration: calibrationNote(res)}); err != nil {
			return fail(err)
		}
		return exitOK
	}
	fmt.Fprintf(stdout, "%s %s on %s, up to %d GPUs: %d configurations, %d feasible, %d do not fit in memory\n\n",
		res.Model.Name, strings.ToUpper(string(res.Precision)), strings.ToUpper(res.GPU.GPU.Name), *gpus, out.Evaluated, len(out.Points), out.Infeasible)
	pts := out.Frontier
	title := "frontier by interactivity"
	if *all {
		pts, title = out.Points, "all points"
	}
	if note := calibrationNote(res); note != "" {
		fmt.Fprintf(stdout, "calibration applied: %s\n", note)
	}
	fmt.Fprintf(stdout, "band: every throughput ±%.0f%%, every latency ±%.0f%% (%s)\n\n", 100*band.Throughput, 100*band.Latency, bandSource)
	fmt.Fprintln(stdout, title+":")
	writeTable(stdout, pointTable(pts), format)
	if len(out.Skipped) > 0 {
		fmt.Fprintf(stdout, "\nskipped %d topologies that cannot hold the model, e.g. %s\n", len(out.Skipped), out.Skipped[0])
	}
	if *plotPath != "" {
		fmt.Fprintf(stdout, "\nplot written to %s\n", *plotPath)
	}
	return exitOK
}

func pointTable(pts []simulate.Point) *table {
	t := &table{header: []string{"topology", ">GPUs", ">conc", ">k", ">AL", ">tok/s/GPU", ">output tok/s/GPU", ">tok/s/user", ">TTFT ms", ">E2EL p90 s", "sim"}}
	for _, p := range pts {
		t.add(p.Topology, strconv.Itoa(p.GPUs), strconv.Itoa(p.Conc), strconv.Itoa(p.Steps), fmt.Sprintf("%.2f", p.AL),
			fmt.Sprintf("%.0f", p.TputPerGPU), fmt.Sprintf("%.0f", p.OutputPerGPU), fmt.Sprintf("%.1f", p.Interactivity),
			fmt.Sprintf("%.0f", p.TTFTms), fmt.Sprintf("%.2f", p.E2EL.P90), p.Sim)
	}
	return t
}

// intList parses "1,2,4" with each value in 1..max; "" gives nil.
func intList(s string, maxV int) ([]int, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 || n > maxV {
			return nil, fmt.Errorf("%q: want whole numbers 1..%d", f, maxV)
		}
		out = append(out, n)
		if len(out) > 256 {
			return nil, fmt.Errorf("more than 256 values")
		}
	}
	return out, nil
}

// sweepJSON is sweep's JSON: the result's keys, the band every point
// carries and the calibration applied.
type sweepJSON struct {
	*simulate.SweepResult
	Band        sweepBand `json:"band"`
	Calibration string    `json:"calibration,omitempty"`
}

type sweepBand struct {
	Relative simulate.BandWidths `json:"relative"`
	Source   string              `json:"source"`
}
