package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/specsim/specsim/simulate"
	"github.com/specsim/specsim/simulate/chart"
)

func init() {
	register(&command{name: "sweep", summary: "search topologies, concurrencies and draft lengths for a GPU count; Pareto frontiers of event-simulated points", run: runSweep})
}

const sweepHelp = `
specsim sweep: evaluate every deployment of at most --gpus GPUs (aggregated TP,
TP+EP, DEP, TP x PP; disaggregated prefill + decode groups), every concurrency
and every draft length of --steps (default 6, the draft length of the golden
AgentX recipes; --steps 0-8 sweeps them all, k = 0 being no speculation, and
adds the no-speculation frontier), and print Pareto frontiers by InferenceX's
rules:
y = total tokens/s per GPU (cached input counted); x = interactivity (tokens/s
per user), p90 E2EL for agentic workloads (median for fixed lengths), and E2E
normalized interactivity.

Every point is first priced with the mean-field estimate; then the frontier
candidates are run through the event simulation, round after round, until
every frontier point (and every --top point) is event-simulated: a candidate
that loses once simulated is replaced by the next. No printed, plotted or
written frontier point carries a mean-field figure. SLA limits (p90 TTFT, p90
TPOT, p90 E2EL, interactivity) remove points before the frontiers; a point
whose estimate breaks a limit but would otherwise reach a frontier is
simulated first and removed only if its simulation breaks the limit too (the
header says how many were removed on their estimates alone). A worker
left idle at a round's tail simulates the next round's likely candidates
ahead of time: the rounds and every figure are those of waiting.
The candidates not yet simulated are judged by their estimates
(--refine-by estimate, the default). --refine-by corrected judges them by
their estimates corrected, figure by figure, with the most favourable
event/estimate ratio already simulated at the same concurrency and draft
length for a disaggregated deployment sharing the pool that figure follows
(the decode pool for interactivity and TPOT; the prefill pool for
throughput, TTFT, E2EL and normalized interactivity); aggregated
deployments keep their estimates. It first simulates one deployment of
each decode pool whose best would reach the interactivity frontier 3%
better than estimated. On the 72-GPU AgentX sweep it needs 673
simulations instead of 1,276, about 60% of the wall time; over nine
exhaustively simulated AgentX sweeps it missed 21 true frontier points
where the estimate's search missed 4, most on the 24-GPU GB300 sweep
(README); on fixed-length sweeps it was not checked and may save nothing.
It says how many unsimulated estimates would still reach a frontier.
--refine-by all event-simulates every point (no estimate judges any; no
--max-refine bound unless given): the true frontiers of the space, at one
simulation a point (the default 8-GPU sweep: 1,577, about a minute of CPU;
the 72-GPU AgentX sweep: 15,371, about 40 s on 16 cores and some ten
minutes on two); the other searches' frontiers fall short of these by the
amounts the README measures ("How far the search's frontiers fall from the
true ones").

The enumeration holds what the engine (--engine) deploys, read at its
source: SGLang and vLLM run expert parallelism over the whole TP group,
TensorRT-LLM also part of it; pipeline stages with speculative decoding only
where the engine admits them (SGLang: disaggregated prefill workers). A
deployment whose instance holds more GPUs than one host (the JSON echo's
gpus_per_host: 4 per GB200/GB300 NVL72 tray, 8 per HGX; not the NVLink domain,
--nvlink-domain-gpus, echoed as nvlink_domain_gpus: 72 per NVL72 rack) is kept
and marked "multi-node". --min-pool-gpus M leaves out deployments with an aggregated
instance, prefill pool or decode pool of fewer than M GPUs. --scope
agg|disagg narrows the enumeration; --topologies replaces it (a topology
larger than --gpus, or with a pool below --min-pool-gpus, is refused;
without --gpus, the largest one sets it).
--plot and --emit paths are checked before any pricing.

An AgentX trace replay (--workload agentx) event-simulates each frontier
point over a 900 s window (the shortest --benchmark-duration the AgentX
scenario accepts; predict replays the full --agentx duration, 3600 s by
default): the JSON echo's workload_params.trace.replay.duration_s is the
window simulated, and 'specsim predict ... --agentx duration=900'
reproduces a point.

Large sweeps split over a scheduler: --shard I/N prices topologies I, I+N,
I+2N, ... and 'specsim merge' joins the N JSON outputs into the output the
unsharded sweep gives (it reruns the unsharded refinement rounds over the
union, reusing the shards' simulations).

Examples:
  specsim sweep --gpu gb300 --gpus 72 --max-ttft-ms 5000 --plot frontier.png
  specsim sweep --model Qwen3.5-397B-A17B --precision fp4 --gpu b200 --gpus 8 \
      --isl 1024 --osl 1024 --steps 0-8 --scope agg --format csv > points.csv
  specsim sweep --gpu gb300 --gpus 72 --shard 0/4 --json > shard0.json
`

// sweepFlags are the sweep's own flags (beside the query flags).
type sweepFlags struct {
	gpus     *int
	minPool  *int
	concList *string
	topoList *string
	scope    *string
	shard    *string
	plotPath *string
	emitDir  *string
	all      *bool
	top      *int
	workers  *int
	refine   *int
	refineBy *string
	sla      simulate.SLA
}

func addSweepFlags(fs interface {
	Int(string, int, string) *int
	String(string, string, string) *string
	Bool(string, bool, string) *bool
	Float64Var(*float64, string, float64, string)
}) *sweepFlags {
	f := &sweepFlags{}
	f.gpus = fs.Int("gpus", 8, "GPUs to deploy on (topologies using at most this many)")
	f.minPool = fs.Int("min-pool-gpus", 0, "leave out deployments with a pool (the aggregated instance, or the prefill or the decode pool) of fewer GPUs (0 = none)")
	f.concList = fs.String("conc", "", "comma-separated concurrencies (default 1,2,4,...,1024)")
	f.topoList = fs.String("topologies", "", "comma-separated topologies to evaluate instead of enumerating (e.g. agg:tp4,agg:dep8)")
	f.scope = fs.String("scope", "all", "enumerate agg | disagg | all deployments")
	f.shard = fs.String("shard", "", "I/N: price only topologies I, I+N, ... (0 <= I < N); join the outputs with 'specsim merge', which takes --emit and --plot (a shard refuses them: its frontier is partial)")
	f.plotPath = fs.String("plot", "", "draw the frontiers (MTP against none) into FILE.png or FILE.svg")
	f.emitDir = fs.String("emit", "", "write an srt-slurm schema-2 recipe for each interactivity frontier point into DIR, which must be new or empty")
	f.all = fs.Bool("all", false, "print every point, not just the frontiers")
	f.top = fs.Int("top", 0, "also event-simulate and print the N points of highest tokens/s/GPU under the SLA")
	f.workers = fs.Int("workers", 0, "parallel workers (0 = every CPU the Go runtime may use)")
	f.refineBy = fs.String("refine-by", string(simulate.RefineByEstimate), "judge candidates not yet simulated by their mean-field estimate (estimate), or by it corrected with the simulations of disaggregated deployments that share its decode pool (interactivity, TPOT) or prefill pool (throughput, TTFT, E2EL, normalized interactivity) at the same concurrency and k, after one simulation per decode pool near the interactivity frontier (corrected: about half the simulation time on AgentX sweeps, some frontier points lost; aggregated points keep their estimates; the output counts the estimates left unchecked), or simulate every point (all: the true frontiers; one simulation a point)")
	f.refine = fs.Int("max-refine", simulate.DefaultMaxRefine, "event-simulate at most N frontier candidates (-1 = until the frontiers settle); when it stops first, the frontiers are of the simulated points only and the output says so")
	fs.Float64Var(&f.sla.MaxTTFTms, "max-ttft-ms", 0, "SLA: drop points whose p90 TTFT exceeds this many ms (0 = no limit)")
	fs.Float64Var(&f.sla.MaxTPOTms, "max-tpot-ms", 0, "SLA: drop points whose p90 TPOT exceeds this many ms (0 = no limit)")
	fs.Float64Var(&f.sla.MaxE2ELs, "max-e2el-s", 0, "SLA: drop points whose p90 E2EL exceeds this many seconds (0 = no limit)")
	fs.Float64Var(&f.sla.MinInteractivity, "min-interactivity", 0, "SLA: drop points below this many tokens/s per user (0 = no limit)")
	return f
}

func runSweep(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("sweep", sweepHelp, stderr)
	qf := addQueryFlags(fs, false)
	sf := addSweepFlags(fs)
	ff := addFormatFlags(fs)
	fs.Lookup("format").Usage = sweepFormatUsage
	rest, err := parseFlags(fs, args)
	if err != nil {
		return usageExit(err)
	}
	fail := func(err error) int { fmt.Fprintln(stderr, "specsim sweep:", flagError(err)); return exitBadInput }
	if len(rest) > 0 {
		return fail(fmt.Errorf("unexpected argument %q", rest[0]))
	}
	format, csvOut, err := resolveSweepFormat(ff)
	if err != nil {
		return fail(err)
	}
	res, err := qf.resolve()
	if err != nil {
		return fail(err)
	}
	if *sf.refine == 0 || *sf.refine < -1 {
		return fail(fmt.Errorf("--max-refine %d: want a positive count, or -1 for no bound", *sf.refine))
	}
	by, err := simulate.ParseRefineBy(*sf.refineBy)
	if err != nil {
		return fail(err)
	}
	if by == simulate.RefineByAll && !flagSet(fs, "max-refine") {
		*sf.refine = -1
	}
	space := simulate.SweepSpace{GPUs: *sf.gpus, MinPoolGPUs: *sf.minPool, SLA: sf.sla, Top: *sf.top, Workers: *sf.workers, MaxRefine: *sf.refine, RefineBy: by}
	if err := sf.sla.Validate(); err != nil {
		return fail(err)
	}
	if *sf.top < 0 || *sf.top > 1000 {
		return fail(fmt.Errorf("--top %d: want 0..1000", *sf.top))
	}
	if *sf.workers < 0 || *sf.workers > 256 {
		return fail(fmt.Errorf("--workers %d: want 0..256", *sf.workers))
	}
	if space.Scope, err = simulate.ParseScope(*sf.scope); err != nil {
		return fail(err)
	}
	if *sf.shard != "" {
		if space.Shard, err = simulate.ParseShard(*sf.shard); err != nil {
			return fail(err)
		}
		// A shard's frontier is of its topologies only.
		if *sf.emitDir != "" || *sf.plotPath != "" {
			return fail(fmt.Errorf("--shard prices part of the sweep, so its frontier is partial: drop --emit and --plot here and give them to 'specsim merge --emit DIR --plot FILE' over every shard's JSON"))
		}
		if format != formatJSON {
			return fail(fmt.Errorf("--shard writes a part for 'specsim merge': add --json"))
		}
	}
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
	if err := fixedALFits(res.Target, qf.steps, space.StepsLo, space.StepsHi); err != nil {
		return fail(err)
	}
	if space.Concs, err = intList(*sf.concList, 1<<16); err != nil {
		return fail(fmt.Errorf("--conc: %v", err))
	}
	if *sf.topoList != "" {
		seen := map[string]bool{}
		for _, s := range strings.Split(*sf.topoList, ",") {
			t, err := simulate.ParseTopology(s)
			if err != nil {
				return fail(err)
			}
			if !seen[t.String()] {
				seen[t.String()] = true
				space.Topologies = append(space.Topologies, t)
			}
		}
	}
	gpusSet := false
	fs.Visit(func(f *flag.Flag) { gpusSet = gpusSet || f.Name == "gpus" })
	if !gpusSet && len(space.Topologies) > 0 {
		// --topologies alone: the GPUs its largest topology uses.
		space.GPUs = 0
		for _, t := range space.Topologies {
			space.GPUs = max(space.GPUs, t.GPUs())
		}
	}
	if *sf.plotPath != "" {
		if err := chart.CheckPath(*sf.plotPath); err != nil {
			return fail(fmt.Errorf("--plot %w", err))
		}
	}
	if *sf.emitDir != "" {
		if err := writableDir(*sf.emitDir); err != nil {
			return fail(fmt.Errorf("--emit %v", err))
		}
	}
	progress := stageProgress(stderr, "sweep", stderrIsTerminal(), 5*time.Second, time.Now)
	out, err := simulate.Sweep(res, space, progress)
	if err != nil {
		return fail(err)
	}
	band, bandSource, _, err := simulate.BandWidthsFor(res)
	if err != nil {
		return fail(err)
	}
	so := &simulate.SweepOutput{Inputs: simulate.NewSweepInputs(specsimVersion(), res, space), SweepResult: out,
		Band: &simulate.SweepBand{Relative: band, Source: bandSource}, Calibration: calibrationNote(res)}
	return writeSweep(stdout, stderr, "sweep", so, res, format, csvOut, *sf.all, *sf.plotPath, *sf.emitDir, progress)
}

// writableDir makes dir (and its parents) and checks that it is empty and
// that a file can be created in it, so that --emit fails before the sweep
// rather than after, and never mixes its recipes with another set.
func writableDir(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) {
			return fmt.Errorf("%s: cannot be made a directory (%s: %v): give a new or empty directory", dir, pe.Path, pe.Err)
		}
		return err
	}
	if ents, err := os.ReadDir(dir); err != nil {
		return fmt.Errorf("%s: %v", dir, err)
	} else if n := len(ents); n > 0 {
		what := "entries"
		if n == 1 {
			what = "entry"
		}
		return fmt.Errorf("%s holds %d %s; recipes go into an empty directory so that they are never mixed with another set: give a new or empty DIR", dir, n, what)
	}
	f, err := os.CreateTemp(dir, ".specsim-emit-*")
	if err != nil {
		return fmt.Errorf("%s: not writable: %v", dir, err)
	}
	f.Close()
	return os.Remove(f.Name())
}

// resolveSweepFormat is --format, and whether it asks for the points as CSV.
func resolveSweepFormat(ff *formatFlags) (format, bool, error) {
	f, err := ff.resolve()
	return f, f == formatCSV, err
}

// writeSweep prints a sweep (or merged) result in the chosen format, and
// the plot and recipes when asked.
func writeSweep(stdout, stderr io.Writer, cmd string, so *simulate.SweepOutput, res *simulate.Resolved, format format, csvOut, all bool, plotPath, emitDir string, progress func(string, int, int)) int {
	fail := func(err error) int { fmt.Fprintf(stderr, "specsim %s: %v\n", cmd, err); return exitBadInput }
	if n := so.Unchecked(); n > 0 {
		return fail(fmt.Errorf("internal error: %d frontier points were not event-simulated", n))
	}
	in := so.Inputs
	if plotPath != "" {
		progress("plotting", 0, 1)
		if err := chart.Sweep(plotPath, so); err != nil {
			return fail(plotFlagError(err))
		}
		progress("plotting", 1, 1)
	}
	var emitted []string
	if emitDir != "" {
		var err error
		if emitted, err = emitFrontierRecipes(emitDir, so, res); err != nil {
			return fail(err)
		}
	}
	switch {
	case format == formatJSON:
		// Every list key is a list, empty or not, as frontier_none is.
		if so.Top == nil {
			so.Top = []simulate.Point{}
		}
		if so.Removed == nil {
			so.Removed = []simulate.SLARemoval{}
		}
		if err := writeJSON(stdout, so); err != nil {
			return fail(err)
		}
		return exitOK
	case csvOut:
		if err := writeSweepCSV(stdout, so.SweepResult, all, so.Inputs.Workload == "agentx"); err != nil {
			return fail(err)
		}
		return exitOK
	}
	r := so.SweepResult
	// The header's lines are paragraphs of their own in Markdown.
	hw := stdout
	if format == formatMarkdown {
		hw = paragraphs{stdout}
	}
	fmt.Fprintf(hw, "%s %s on %s, up to %d GPUs, %s, %s: %d configurations, %d feasible, %d do not fit in memory; %d %s event-simulated in %d %s\n",
		in.Model, strings.ToUpper(in.Precision), strings.ToUpper(in.GPU), in.GPUs, workloadLabel(in), draftRangeLabel(in.Steps), r.Evaluated, len(r.Points), r.Infeasible, r.Refined, plural(r.Refined, "candidate", "candidates"), r.Rounds, plural(r.Rounds, "round", "rounds"))
	if r.RefineStopped {
		fmt.Fprintf(hw, "refinement stopped at its budget (--max-refine %d) before the frontiers settled: the frontiers below are of the %d event-simulated points only, and a candidate not yet simulated might still beat them (raise --max-refine, or narrow with --topologies, --scope or --shard%s)\n", in.MaxRefine, r.Refined, correctedHint(in.RefineBy))
	}
	if !r.RefineStopped && in.RefineBy != simulate.RefineByAll && r.Refined < len(r.Points) {
		judged := "their estimates (--refine-by estimate)"
		if in.RefineBy == simulate.RefineByCorrected {
			judged = "their estimates corrected by the simulations (--refine-by corrected)"
		}
		fmt.Fprintf(hw, "frontiers settled against the estimates: the %d points never simulated were judged by %s, and some may lie on the true frontiers (README, \"How far the search's frontiers fall from the true ones\"); --refine-by all simulates every point\n", len(r.Points)-r.Refined, judged)
	}
	if r.EstimateContenders > 0 {
		fmt.Fprintf(hw, "%d points not simulated have a mean-field estimate that would reach a frontier: candidates were judged by their estimates corrected with the simulations of deployments sharing a pool (--refine-by corrected), and these might still beat the frontiers below; --refine-by estimate simulates them\n", r.EstimateContenders)
	}
	if tr := in.WorkloadParams.Trace; tr != nil {
		fmt.Fprintf(hw, "AgentX replay: event-simulated points replay a %g s window (predict replays --agentx duration, 3600 s by default; reproduce a point with predict --agentx duration=%g)\n", tr.Replay.DurationS, tr.Replay.DurationS)
	}
	if so.Calibration != "" {
		fmt.Fprintf(hw, "calibration applied: %s\n", so.Calibration)
	}
	if b := so.Band; b != nil {
		fmt.Fprintf(hw, "band: every throughput %s, every latency %s (%s)\n", simulate.BandText(b.Relative.Throughput, 0), simulate.BandText(b.Relative.Latency, 0), b.Source)
	}
	for _, rm := range r.Removed {
		fmt.Fprintf(hw, "SLA --%s %g removed %d points", rm.Limit, rm.Value, rm.Removed)
		switch {
		case rm.OnEstimate == 0:
		case r.RefineStopped:
			fmt.Fprintf(hw, " (%d on their mean-field estimates alone: the refinement budget ran out before checking them)", rm.OnEstimate)
		case in.RefineBy == simulate.RefineByCorrected:
			fmt.Fprintf(hw, " (%d on their mean-field estimates alone, none of which would reach a frontier inside the limit by its estimate as --refine-by corrected corrects it; every point whose corrected estimate would was simulated first; those whose uncorrected estimate would are among the unsimulated points counted above)", rm.OnEstimate)
		default:
			fmt.Fprintf(hw, " (%d on their mean-field estimates alone, none of which would reach a frontier inside the limit; every point whose estimate would was simulated first)", rm.OnEstimate)
		}
		fmt.Fprintln(hw)
	}
	if r.NotRun > 0 {
		fmt.Fprintf(hw, "%d points not run: %s\n", r.NotRun, r.NotRunWhy)
	}
	if n := len(r.Skipped); n > 0 {
		fmt.Fprintf(hw, "%d topologies not priced (JSON \"skipped\" says why, e.g. %s)\n", n, r.Skipped[0])
	}
	if r.MultiNode > 0 {
		fmt.Fprintf(hw, "%d points have an instance larger than one node (%d GPUs per %s host; marked multi-node)\n", r.MultiNode, in.GPUsPerHost, strings.ToUpper(in.GPU))
	}
	agentic := in.Workload == "agentx"
	if r.Overloaded > 0 {
		fmt.Fprintf(hw, "%d frontier or top point(s) carry a note: queued (an overloaded server: TTFT and E2EL include the wait for admission) or unsteady (the window's halves differ by more than 10%%)\n", r.Overloaded)
	}
	// Each frontier shows its own x: interactivity and p90 E2EL are
	// columns of every table; p50 E2EL and normalized interactivity are
	// added to theirs.
	type section struct {
		title string
		pts   []simulate.Point
		x     *column
	}
	var e2elX *column
	if r.E2ELMetric != "p90" {
		e2elX = &column{">E2EL " + r.E2ELMetric + " s", simulate.ByE2ELp50}
	}
	sections := []section{
		{"frontier by interactivity (x: tok/s/user)", r.Frontier, nil},
		{"frontier by " + r.E2ELMetric + " E2EL (x: E2EL " + r.E2ELMetric + " s)", r.FrontierE2EL, e2elX},
		{"frontier by E2E normalized interactivity (x: norm. interactivity)", r.FrontierNormalized, &column{">norm. interactivity", simulate.ByNormalizedInteractivity}},
	}
	if len(r.FrontierNone) > 0 && in.Steps[1] > 0 {
		// The baseline MTP is judged against (the plot's other curve);
		// with k = 0 alone it is the first frontier.
		sections = append(sections, section{"no-speculation frontier, k = 0 (x: tok/s/user)", r.FrontierNone, nil})
	}
	if len(r.Top) > 0 {
		sections = append(sections, section{fmt.Sprintf("top %d by tokens/s/GPU", len(r.Top)), r.Top, nil})
	}
	if all {
		sections = []section{{"all points (sim says which are event-simulated)", r.Points, nil}}
	}
	for _, s := range sections {
		fmt.Fprintf(stdout, "\n%s:\n", s.title)
		pointTable(s.pts, agentic, s.x).write(stdout, format)
	}
	if len(r.Skipped) > 0 {
		fmt.Fprintf(hw, "\nskipped %d topologies that cannot hold the model, e.g. %s\n", len(r.Skipped), r.Skipped[0])
	}
	if plotPath != "" {
		fmt.Fprintf(hw, "\nplot written to %s\n", plotPath)
	}
	for i, e := range emitted {
		if i == 0 && format == formatMarkdown {
			// A line right after a table's last row is one more row.
			fmt.Fprintln(stdout)
		}
		fmt.Fprintln(hw, e)
	}
	return exitOK
}

func workloadLabel(in simulate.SweepInputs) string {
	if in.Workload == "agentx" {
		return "AgentX"
	}
	return fmt.Sprintf("%d/%d", in.WorkloadParams.ISL, in.WorkloadParams.OSL)
}

// column is an extra column of a point table: a frontier's own x.
type column struct {
	header string
	val    func(*simulate.Point) float64
}

// pointTable lists points; x, when set, is a column added after E2EL p90.
func pointTable(pts []simulate.Point, agentic bool, x *column) *table {
	h := []string{"topology", ">GPUs", ">conc", ">k", ">AL", ">tok/s/GPU", ">output tok/s/GPU", ">tok/s/user", ">TTFT p90 ms", ">TPOT p90 ms", ">E2EL p90 s"}
	if x != nil {
		h = append(h, x.header)
	}
	t := &table{header: append(h, "sim", "note")}
	for _, p := range pts {
		row := []string{p.Topology, strconv.Itoa(p.GPUs), strconv.Itoa(p.Conc), strconv.Itoa(p.Steps), fmt.Sprintf("%.2f", p.AL),
			simulate.Sig3(p.TputPerGPU), simulate.Sig3(p.OutputPerGPU), simulate.Sig3(p.Interactivity), simulate.Sig3(p.TTFTp90ms), simulate.Sig3(p.TPOTp90ms), simulate.Sig3(p.E2EL.P90)}
		if x != nil {
			row = append(row, simulate.Sig3(x.val(&p)))
		}
		t.add(append(row, p.Sim, strings.Join(p.Notes, "; "))...)
	}
	return t
}

// sweepCSVHeader is the CSV's column list; columns are only ever added at
// the end.
// sweepFormatUsage is --format of sweep and merge, whose CSV is one table.
const sweepFormatUsage = "output format: text|json|markdown|csv (csv: one table, a row per frontier or top point, every point with --all; its frontiers column names the frontiers a point is on)"

var sweepCSVHeader = []string{"topology", "gpus", "conc", "steps", "al", "tput_per_gpu", "output_tput_per_gpu", "interactivity",
	"normalized_interactivity_p90", "ttft_ms", "ttft_ms_p90", "tpot_ms", "tpot_ms_p90", "e2el_s_p50", "e2el_s_p90", "sim", "multi_node", "frontiers", "note"}

// writeSweepCSV writes one row per point: the frontier and top points (the
// frontiers column names which), or every point with all.
// paragraphs writes each line as a Markdown paragraph: a blank line after
// every newline.
type paragraphs struct{ w io.Writer }

func (p paragraphs) Write(b []byte) (int, error) {
	if _, err := p.w.Write(bytes.ReplaceAll(b, []byte("\n"), []byte("\n\n"))); err != nil {
		return 0, err
	}
	return len(b), nil
}

func writeSweepCSV(w io.Writer, r *simulate.SweepResult, all, agentic bool) error {
	member := map[int][]string{}
	var order []int
	for _, f := range []struct {
		name string
		pts  []simulate.Point
	}{{"interactivity", r.Frontier}, {"e2el", r.FrontierE2EL}, {"normalized", r.FrontierNormalized}, {"mtp", r.FrontierMTP}, {"no_spec", r.FrontierNone}, {"top", r.Top}} {
		for _, p := range f.pts {
			if member[p.Index] == nil {
				order = append(order, p.Index)
			}
			member[p.Index] = append(member[p.Index], f.name)
		}
	}
	byIndex := map[int]simulate.Point{}
	for _, p := range r.Points {
		byIndex[p.Index] = p
	}
	rows := order
	if all {
		rows = rows[:0:0]
		for _, p := range r.Points {
			rows = append(rows, p.Index)
		}
	} else {
		sort.Ints(rows)
	}
	t := &table{header: sweepCSVHeader}
	g := func(x float64) string { return strconv.FormatFloat(x, 'g', 6, 64) }
	for _, i := range rows {
		p := byIndex[i]
		t.add(p.Topology, strconv.Itoa(p.GPUs), strconv.Itoa(p.Conc), strconv.Itoa(p.Steps), g(p.AL), g(p.TputPerGPU), g(p.OutputPerGPU),
			g(p.Interactivity), g(p.NormalizedInteractivity), g(p.TTFTms), g(p.TTFTp90ms), g(p.TPOTms), g(p.TPOTp90ms), g(p.E2EL.P50), g(p.E2EL.P90),
			p.Sim, strconv.FormatBool(p.MultiNode), strings.Join(member[i], ";"), strings.Join(p.Notes, "; "))
	}
	return t.writeCSV(w)
}

// intList parses "1,2,4" with each value in 1..max, sorted with repeats
// dropped (--conc 2,2 is one concurrency, not two); "" gives nil.
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
	slices.Sort(out)
	return slices.Compact(out), nil
}

// draftRangeLabel names the draft lengths a sweep covered.
func draftRangeLabel(steps [2]int) string {
	switch {
	case steps[0] == steps[1] && steps[0] == 0:
		return "no speculation (k = 0)"
	case steps[0] == steps[1]:
		return fmt.Sprintf("draft length k = %d only (--steps 0-8 for all)", steps[0])
	}
	return fmt.Sprintf("draft lengths k = %d-%d", steps[0], steps[1])
}

// plural is one when n is 1, else many.
func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// correctedHint is the budget line's pointer to the corrected search,
// which settles with fewer simulations, for a sweep that did not use it.
func correctedHint(by simulate.RefineBy) string {
	if by == simulate.RefineByCorrected {
		return ""
	}
	return ", or --refine-by corrected: 673 simulations settle the 72-GPU GB300 AgentX sweep where the estimate's search needs 1,276 (it misses more true frontier points: README)"
}
