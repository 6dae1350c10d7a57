package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/specsim/specsim/simulate"
	"github.com/specsim/specsim/simulate/acceptance"
	"github.com/specsim/specsim/simulate/agentx"
	"gopkg.in/yaml.v3"
)

func init() {
	register(&command{name: "predict", summary: "predict MTP decode throughput, latency and memory for one deployment", run: runPredict})
}

const predictHelp = `
specsim predict: serve one deployment in simulation and report what it achieves.

Requests flow through continuous batching (prefill batches first, then decode
iterations: k draft forwards, one verify forward over k+1 tokens per request);
each iteration's accepted length is drawn with the engine's sampler around the
golden AL, so AL variance reaches the percentiles.

Workloads: by default (--workload agentx) the AgentX trace replay, as
InferenceX AgentX runs it: --conc live session trees (a root conversation and
its subagents) replay recorded Claude-Code sessions over a timed window.
With --isl/--osl (--workload fixed, which needs them) a closed loop of
fixed-length requests: --conc sessions each send the next request when the
previous one ends. --workload agentx-synthetic draws agentic lengths instead.

With no flags it runs the main job: Qwen3.5-397B-A17B NVFP4 on GB300, agg TP2,
MTP at 6 draft steps (golden AL 4.80, thinking on), the AgentX trace replay
with 7 session trees.

Units: times in ms (E2EL in s), throughput in tokens/s per GPU (total counts
cached prompt tokens, as InferenceX does), interactivity in tokens/s per user,
memory in GiB per GPU. A deployment that cannot fit exits 2 with the arithmetic.

Example:
  specsim predict --model Qwen3.5-397B-A17B --precision fp4 --gpu b200 \
      --topology agg:tp4 --conc 64 --isl 1024 --osl 1024 --spec mtp --steps 3

--recipe FILE[:selector] reads the deployment and benchmark (agentic or
sa-bench isl/osl) from an srt-slurm recipe; "-" reads stdin. The selector
picks variants as recipe check does (base, override_<name>,
zip_override_<name>[i] or a glob such as override_c*); without one every
override variant is predicted. Flags given explicitly win over the recipe
("overridden by --FLAG" in the table). Example:
  specsim predict --recipe agg.yaml:override_c24 --json
`

// queryFlags registers the flags predict, sweep and bestk share.
type queryFlags struct {
	q        simulate.Query
	isl, osl int
	workload string
	steps    string
	schedMS  float64
	specMS   float64
	hicache  float64
	calPath  string
	catalog  *gpuCatalogFlag
	golden   *goldenFlags
	fs       *flag.FlagSet
}

func addQueryFlags(fs *flag.FlagSet, withTopology bool) *queryFlags {
	f := &queryFlags{fs: fs}
	q := &f.q
	fs.StringVar(&q.Model, "model", "Qwen3.5-397B-A17B", "model preset, hub name (e.g. nvidia/Qwen3.5-397B-A17B-NVFP4) or checkpoint directory")
	fs.StringVar(&q.Precision, "precision", "fp4", "target weight precision: fp4 | fp8 | bf16 (parts the real releases keep in BF16 stay BF16)")
	fs.StringVar(&q.GPU, "gpu", "gb300", "GPU type: h100, h200, b200, b300, gb200, gb300")
	if withTopology {
		fs.StringVar(&q.Topology, "topology", "agg:tp2", "agg:tpN, agg:tpNepM, agg:depN, agg:tpNppM or disagg:<P>x<spec>+<D>x<spec>")
	}
	fs.IntVar(&q.GPUsPerNode, "nvlink-domain-gpus", 0, "GPUs per NVLink domain, not per host (0 = the GPU's: 8 for HGX, 72 for NVL72)")
	fs.IntVar(&q.GPUsPerNode, "gpus-per-node", 0, "old name of --nvlink-domain-gpus (the NVLink domain, not the host size)")
	fs.IntVar(&f.isl, "isl", 0, "fixed input length in tokens, > 0 (with --osl; replaces --workload; unset = the --workload)")
	fs.IntVar(&f.osl, "osl", 0, "fixed output length in tokens, > 0 (with --isl)")
	fs.Float64Var(&q.Cached, "cached", 0, "fixed workload: prefix-cache hit fraction of each prompt [0,1)")
	fs.Float64Var(&q.RangeRatio, "range-ratio", 0.8, "fixed workload: each ISL and OSL uniform in [ratio*L, L] (bench_serving --random-range-ratio; 1 = exact)")
	fs.StringVar(&f.workload, "workload", "", "agentx: replay recorded Claude-Code session trees as InferenceX AgentX does (default when --isl/--osl are not given); agentx-synthetic: log-normal ISL/OSL and a Beta cached fraction; fixed: a closed loop of --isl/--osl requests (what --isl/--osl alone select)")
	fs.StringVar(&q.AgentX, "agentx", "", "agentx replay: key=value,... (duration, start-min, start-max, warmup-per-lane, system-idle-cap, trace-idle-cap (off), max-context, max-traces, seed); agentx-synthetic: isl-median, isl-sigma, isl-min, isl-max, osl-median, osl-sigma, osl-max, cache-hit, cache-conc, first-turns")
	fs.StringVar(&q.AgentXTrace, "agentx-trace", "", "replay kv-cache-tester trace `DIR|FILE` (*.json) instead of the embedded public corpus")
	fs.StringVar(&q.Spec, "spec", "mtp", "speculative decoding: mtp | none")
	fs.StringVar(&f.steps, "steps", "", "draft length k (speculative-num-steps); sweep and bestk take a range such as 0-8")
	fs.StringVar(&q.Thinking, "thinking", "on", "golden curve mode: on | off")
	fs.Float64Var(&q.AL, "al", 0, "acceptance length incl. the bonus token (overrides the golden curve)")
	fs.StringVar(&q.Method, "method", "", "acceptance sampler: sglang-match-expected, sglang-multinomial, vllm-synthetic, trtllm, chain, empirical (default: the engine's own forced acceptance: sglang-match-expected, trtllm for --engine trtllm, vllm-synthetic for --engine vllm)")
	fs.StringVar(&q.Histogram, "histogram", "", "CSV `FILE` of measured accepted lengths (length,count) for --method empirical")
	fs.IntVar(&q.MaxRunning, "max-running", 0, "max running requests per instance (0 = the deployment's default: fixed lengths one per session; AgentX on SGLang with speculation its default 48, raised to the trees a worker serves and lowered to what its KV pool holds at the mean context; otherwise the engine's own; predict's limits table names it)")
	fs.Float64Var(&q.Server.PrefillMemFraction, "prefill-mem-fraction", 0, "memory share of disaggregated prefill workers (--mem-fraction applies to agg instances and decode workers; 0 = --mem-fraction)")
	fs.IntVar(&q.Server.PrefillMaxRunning, "prefill-max-running", 0, "max running requests per disaggregated prefill worker (--max-running applies to agg instances and decode workers; 0 = as --max-running's default for the prefill role)")
	fs.BoolVar(&q.Server.AutoMemFraction, "mem-fraction-auto", false, "SGLang's automatic --mem-fraction-static (reserve for activations and CUDA graphs) instead of --mem-fraction")
	fs.BoolVar(&q.Server.PrefillDraft, "prefill-draft", false, "disaggregated prefill workers load the draft too (the AgentX base recipe's prefill role does not)")
	fs.IntVar(&q.Server.MambaCache, "max-mamba-cache-size", 0, "SGLang --max-mamba-cache-size: linear-attention state slots per instance (0 = the engine sizes them)")
	fs.IntVar(&q.Server.PrefillMambaCache, "prefill-max-mamba-cache-size", 0, "--max-mamba-cache-size of disaggregated prefill workers (0 = --max-mamba-cache-size)")
	fs.StringVar(&q.Server.MambaStrategy, "mamba-scheduler-strategy", "", "SGLang --mamba-scheduler-strategy where the radix cache is on: auto (default: extra_buffer for Qwen3.5 and the other hybrids SGLang v0.5.14 supports it for, 5 state slots per running request), no_buffer (3), extra_buffer (5), extra_buffer_lazy (4)")
	fs.IntVar(&q.Server.PageSize, "page-size", 0, "KV page size in tokens (0 = 64, the recipes' --page-size)")
	fs.Float64Var(&f.hicache, "hicache-ratio", -1, "HiCache host KV tier as a multiple of the device pool (SGLang --hicache-ratio; 0 = no host tier; -1 = for --workload agentx on SGLang and TensorRT-LLM 90% of the GPU's host DRAM as InferenceX's dram-utilization sets it, else none)")
	fs.Float64Var(&q.Server.HiCacheGiB, "hicache-size", 0, "HiCache host KV tier in GB per rank (SGLang --hicache-size; wins over --hicache-ratio)")
	fs.BoolVar(&q.Server.NoPrefixCache, "no-prefix-cache", false, "turn the radix prefix cache off (decode workers never have one)")
	fs.IntVar(&q.CUDAGraphMaxBS, "cuda-graph-max-bs", 0, "largest decode batch per rank replayed as a CUDA graph (0 = 256)")
	fs.IntVar(&q.Chunk, "chunk", 0, "chunked-prefill tokens per prefill forward (0 = 16384)")
	fs.Float64Var(&q.MemFraction, "mem-fraction", simulate.DefaultMemFraction, "share of HBM for weights and caches (SGLang --mem-fraction-static); with --engine trtllm, the KV cache's share of the memory the weights leave free (free_gpu_memory_fraction)")
	fs.StringVar(&q.DraftDType, "draft-dtype", "", "override the draft's effective weight dtype (bf16, fp8, nvfp4); default: as shipped/served")
	fs.StringVar(&q.KVDType, "kv-dtype", "", "KV cache dtype: fp8 (default, what InferenceX recipes set) | bf16")
	fs.StringVar(&q.MambaSSMDType, "mamba-ssm-dtype", "bfloat16", "linear-attention (Gated DeltaNet) state dtype, SGLang --mamba-ssm-dtype: bfloat16 (what InferenceX recipes set) | float32 (SGLang's default) | float16; sizes the state and its speculative copies and prices the state traffic")
	fs.BoolVar(&q.AllReduceFusion, "enable-flashinfer-allreduce-fusion", false, "SGLang: force FlashInfer's all-reduce fusion on (the RMSNorm after each TP all-reduce runs inside the all-reduce kernel, forwards of up to 2048 tokens); default: SGLang's own rule, on for Qwen3.5, DeepSeek V3, Kimi K2.5, GLM-5 and other listed models on Hopper/Blackwell at TP > 1 without DP attention or DeepEP, on one node unless Blackwell")
	fs.BoolVar(&q.NoAllReduceFusion, "enforce-disable-flashinfer-allreduce-fusion", false, "SGLang: force FlashInfer's all-reduce fusion off (wins over --enable-flashinfer-allreduce-fusion and the engine's rule)")
	fs.BoolVar(&q.SpecV2, "spec-v2", false, "SGLang: SGLANG_ENABLE_SPEC_V2=1, speculative decoding on the overlap scheduler (hides the extra host time per speculative iteration: --spec-overhead-ms defaults to 0)")
	fs.StringVar(&q.MoEBackend, "moe-runner-backend", "", "SGLang --moe-runner-backend of the target (e.g. flashinfer_trtllm, triton; empty = the engine's default)")
	fs.StringVar(&q.SpecMoEBackend, "speculative-moe-runner-backend", "", "SGLang --speculative-moe-runner-backend of the draft (empty = inherits --moe-runner-backend)")
	fs.StringVar(&q.Engine, "engine", "sglang", "serving engine whose MoE backends price the draft: sglang | vllm | trtllm")
	fs.Float64Var(&f.schedMS, "sched-overhead-ms", -1, "host scheduling time per iteration in ms (-1 = 0.15)")
	fs.Float64Var(&f.specMS, "spec-overhead-ms", -1, "extra host time per speculative iteration in ms (-1 = 0.35)")
	fs.Float64Var(&q.MoESkew, "moe-skew", 0, "Zipf exponent of expert popularity (0 = uniform routing)")
	fs.IntVar(&q.Requests, "requests", 0, "--isl/--osl and agentx-synthetic workloads: requests measured after a warm-up of --conc requests (0 = max(4*conc, 200)); an agentx replay runs for its --agentx duration instead")
	fs.Uint64Var(&q.Seed, "seed", 1, "random seed (the run is deterministic given it)")
	fs.StringVar(&f.calPath, "calibration", "", "apply the entry for this GPU and engine of a `FILE` written by specsim calibrate")
	fs.Var((*pathList)(&q.KernelTables), "kernel-table", "AIConfigurator kernel database `FILE` measured on --gpu (gemm_perf.txt, moe_perf.txt, generation_attention_perf.txt, gdn_perf.txt, custom_allreduce_perf.txt; repeatable): its rows price the matching ops")
	f.catalog = addGPUCatalogFlag(fs)
	f.golden = addGoldenFlags(fs)
	return f
}

// resolve finishes the query after parsing: workload choice and overheads.
func (f *queryFlags) resolve() (*simulate.Resolved, error) {
	q := f.q
	// 0 is the query's "unset"; given explicitly it is a refusal, not the
	// golden curve.
	if flagSet(f.fs, "al") && q.AL == 0 {
		return nil, fmt.Errorf("--al 0: want an acceptance length of at least 1 (tokens per verify step, the bonus token included); leave --al out for the golden curve")
	}
	q.SchedOverhead, q.SpecOverhead = f.schedMS, f.specMS
	if q.Server.AutoMemFraction {
		q.MemFraction = 0
	}
	switch {
	case f.hicache == 0:
		q.Server.HiCacheRatio = -1 // off
	case f.hicache > 0:
		q.Server.HiCacheRatio = f.hicache
	case f.hicache != -1:
		return nil, fmt.Errorf("--hicache-ratio %g: want 0 (off), a positive ratio, or -1 for the workload's default", f.hicache)
	}
	if f.calPath != "" {
		cal, err := loadCalibration(f.calPath)
		if err != nil {
			return nil, err
		}
		q.Calibration = cal
	}
	switch {
	case f.isl != 0 || f.osl != 0 || flagSet(f.fs, "isl") || flagSet(f.fs, "osl"):
		if f.workload != "" && f.workload != "fixed" {
			return nil, fmt.Errorf("--workload %s and --isl/--osl exclude each other (--isl/--osl are the fixed workload)", f.workload)
		}
		for _, l := range []struct {
			name string
			v    int
		}{{"isl", f.isl}, {"osl", f.osl}} {
			if l.v < 0 || l.v == 0 && flagSet(f.fs, l.name) {
				return nil, fmt.Errorf("--%s %d: want a positive length in tokens (--isl and --osl go together)", l.name, l.v)
			}
		}
		if f.isl <= 0 || f.osl <= 0 {
			return nil, errors.New("--isl and --osl go together, both positive")
		}
		q.Workload, q.ISL, q.OSL = "fixed", f.isl, f.osl
	case f.workload == "" || f.workload == "agentx":
		q.Workload = "agentx"
	case f.workload == "agentx-synthetic":
		q.Workload = f.workload
	case f.workload == "fixed":
		return nil, errors.New("--workload fixed takes its lengths from --isl and --osl: give both")
	default:
		return nil, fmt.Errorf("--workload %q: want agentx, agentx-synthetic or fixed (with --isl/--osl)", f.workload)
	}
	// 0 is the library's "default" but never what a user who types it means.
	if !(q.MemFraction > 0 && q.MemFraction <= 1) && !q.Server.AutoMemFraction {
		return nil, fmt.Errorf("--mem-fraction %g: want a share of HBM in (0, 1]", q.MemFraction)
	}
	// checked whatever the workload, so that a bad value is never ignored
	if !(q.RangeRatio >= 0 && q.RangeRatio <= 1) {
		return nil, fmt.Errorf("--range-ratio %g: want [0, 1]", q.RangeRatio)
	}
	if q.Cached != 0 && q.Workload != "fixed" {
		return nil, errors.New("--cached applies to --isl/--osl workloads; the agentx trace replay decides hits in its prefix cache (--workload agentx-synthetic takes --agentx cache-hit=...)")
	}
	if q.Workload == "agentx" && flagSet(f.fs, "requests") {
		return nil, errors.New("--requests applies to --isl/--osl and agentx-synthetic workloads; an agentx replay runs for its window (--agentx duration=SECONDS)")
	}
	if q.Workload != "fixed" && flagSet(f.fs, "range-ratio") {
		return nil, errors.New("--range-ratio applies to --isl/--osl workloads; agentx takes its lengths from the traces (or --agentx isl-*/osl-* for agentx-synthetic)")
	}
	if q.Workload != "fixed" {
		q.RangeRatio = 0 // the flag's default applies to fixed lengths only (and the JSON echo leaves it out)
	}
	if q.Spec == "none" && (q.AL != 0 || q.Histogram != "") {
		return nil, errors.New("--al and --histogram set the draft's acceptance: they need --spec mtp")
	}
	curves, err := f.golden.load()
	if err != nil {
		return nil, err
	}
	catalog, err := f.catalog.load()
	if err != nil {
		return nil, err
	}
	return q.Resolve(curves, catalog)
}

// loadCalibration is simulate.LoadCalibration with the YAML decoder's
// type errors restated in the file's terms rather than Go's.
func loadCalibration(path string) (*simulate.CalibrationFile, error) {
	cal, err := simulate.LoadCalibration(path)
	var te *yaml.TypeError
	if !errors.As(err, &te) {
		return cal, err
	}
	msgs := make([]string, len(te.Errors))
	for i, m := range te.Errors {
		if g := yamlMismatch.FindStringSubmatch(m); g != nil {
			found := map[string]string{"map": "a map", "seq": "a list", "str": "the text", "int": "the number", "float": "the number", "bool": "", "null": "nothing"}[g[2]]
			if found == "" {
				found = "a value"
			}
			if g[3] != "" {
				found += " " + strings.TrimSpace(g[3])
			}
			m = fmt.Sprintf("line %s: want %s, found %s", g[1], calibrationWords(g[4]), found)
		} else if g := yamlUnknownField.FindStringSubmatch(m); g != nil {
			m = fmt.Sprintf("line %s: unknown key %s in %s", g[1], g[2], calibrationWords(g[3]))
		}
		msgs[i] = m
	}
	return nil, &simulate.Error{Field: "Calibration", Value: path,
		Reason: "not a calibration as specsim calibrate -o writes it: " + strings.Join(msgs, "; ")}
}

var (
	yamlMismatch     = regexp.MustCompile("^line ([0-9]+): cannot unmarshal !!([a-z]+) (`[^`]*` )?into (.+)$")
	yamlUnknownField = regexp.MustCompile(`^line ([0-9]+): field (.+) not found in type (.+)$`)
)

// calibrationWords names a Go type of the calibration file by what it
// holds.
func calibrationWords(goType string) string {
	switch goType {
	case "[]simulate.CalEntry":
		return "entries: a list of entries (- gpu: b200, engine: sglang, params: {...})"
	case "simulate.CalEntry":
		return "an entry (gpu, engine, params, fitted, points, before, in_sample, leave_one_out, band)"
	case "simulate.CalParams":
		return "params: a map of " + strings.Join(simulate.CalParamNames, ", ")
	case "simulate.BandWidths":
		return "band: a map of throughput and latency"
	case "simulate.CalibrationFile":
		return "the file (version, command, sim, entries)"
	case "map[string]float64":
		return "a map of metric: number"
	case "[]string":
		return "a list of parameter names"
	case "int":
		return "a whole number"
	case "float64":
		return "a number"
	case "string":
		return "text"
	}
	return "a value of another kind"
}

// flagSet reports whether the command line set the flag.
func flagSet(fs *flag.FlagSet, name string) (set bool) {
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

// stepRange parses --steps: "" (def), "K" or "A-B".
func stepRange(s string, def int) (lo, hi int, err error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return def, def, nil
	}
	a, b, isRange := strings.Cut(s, "-")
	if lo, err = atoiSmall(a); err != nil {
		return 0, 0, fmt.Errorf("--steps %q: %v", s, err)
	}
	hi = lo
	if isRange {
		if hi, err = atoiSmall(b); err != nil {
			return 0, 0, fmt.Errorf("--steps %q: %v", s, err)
		}
	}
	if lo > hi {
		return 0, 0, fmt.Errorf("--steps %q: empty range", s)
	}
	return lo, hi, nil
}

// oneStep parses the --steps of predict and recipe emit, which run one
// draft length: a range would otherwise quietly run its lower end.
func oneStep(cmd, s string, def int) (int, error) {
	if _, _, isRange := strings.Cut(strings.TrimSpace(s), "-"); isRange {
		return 0, fmt.Errorf("--steps %q: %s takes one draft length k, e.g. --steps 3; for a range of draft lengths use specsim sweep or specsim bestk", strings.TrimSpace(s), cmd)
	}
	k, _, err := stepRange(s, def)
	return k, err
}

// fixedALFits checks that a fixed acceptance (--al, --histogram), which a
// --steps range applies at every draft length, fits each k of lo..hi:
// the acceptance error alone would name neither the range nor the k.
func fixedALFits(t acceptance.Target, steps string, lo, hi int) error {
	if lo == hi {
		return nil
	}
	label := "--steps " + strings.TrimSpace(steps)
	if strings.TrimSpace(steps) == "" {
		label = fmt.Sprintf("the default --steps %d-%d", lo, hi)
	}
	for k := max(lo, 1); k <= hi; k++ {
		_, err := t.At(k)
		var ae *acceptance.Error
		if !errors.As(err, &ae) || ae.Field != acceptance.FieldAL && ae.Field != acceptance.FieldHistogram {
			continue
		}
		hint := ""
		for k2 := k + 1; k2 <= hi; k2++ {
			if _, err := t.At(k2); err == nil {
				hint = fmt.Sprintf("; it fits k = %d and up: --steps %d-%d", k2, k2, hi)
				break
			}
		}
		return fmt.Errorf("--%s %s applies to every draft length k of %s and does not fit k = %d: %s%s", ae.Field, ae.Value, label, k, ae.Reason, hint)
	}
	return nil
}

func atoiSmall(s string) (int, error) {
	var n int
	if _, err := fmt.Sscanf(strings.TrimSpace(s), "%d", &n); err != nil || n < 0 || n > acceptance.MaxDraftLength || fmt.Sprint(n) != strings.TrimSpace(s) {
		return 0, fmt.Errorf("want K or LO-HI, draft lengths 0..%d", acceptance.MaxDraftLength)
	}
	return n, nil
}

func runPredict(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("predict", predictHelp, stderr)
	qf := addQueryFlags(fs, true)
	fs.Lookup("steps").Usage = "draft length k (speculative-num-steps), one value; 0 = no speculation (default 6; with --recipe, the recipe's; sweep and bestk take a range such as 0-8)"
	conc := fs.Int("conc", 7, "concurrency: agentx = live session trees (a root conversation and its subagents, AIPerf --concurrency); fixed lengths = closed-loop sessions that send the next request when the previous one ends")
	recipeArg := fs.String("recipe", "", "predict what an srt-slurm recipe FILE[:selector] deploys (topology, caps, CUDA graphs, mem fraction, speculation, golden AL or a schema-1 recipe's own forced AL, benchmark workload); a flag given explicitly wins over the recipe and the output says \"overridden by --FLAG\"; flag defaults fill only what it leaves out")
	ff := addFormatFlags(fs)
	rest, err := parseFlags(fs, args)
	if err != nil {
		return usageExit(err)
	}
	if len(rest) > 0 {
		fmt.Fprintf(stderr, "specsim predict: unexpected argument %q\n", rest[0])
		return exitBadInput
	}
	format, err := ff.resolve()
	if err != nil {
		fmt.Fprintln(stderr, "specsim predict:", flagError(err))
		return exitBadInput
	}
	stdout = textOut(stdout, format)
	if *recipeArg != "" {
		return runPredictRecipe(fs, *recipeArg, qf, *conc, format, stdout, stderr)
	}
	k := 0
	if qf.q.Spec != "none" {
		if k, err = oneStep("predict", qf.steps, 6); err != nil {
			fmt.Fprintln(stderr, "specsim predict:", flagError(err))
			return exitBadInput
		}
		if k == 0 {
			// --steps 0 is no speculation, as --spec none.
			qf.q.Spec = "none"
		}
	} else if qf.steps != "" && qf.steps != "0" {
		fmt.Fprintln(stderr, "specsim predict: --steps needs --spec mtp")
		return exitBadInput
	}
	res, err := qf.resolve()
	if err != nil {
		fmt.Fprintln(stderr, "specsim predict:", flagError(err))
		return exitBadInput
	}
	topo, err := simulate.ParseTopology(qf.q.Topology)
	if err != nil {
		fmt.Fprintln(stderr, "specsim predict:", flagError(err))
		return exitBadInput
	}
	// The layouts sweep enumerates and recipe emit writes are the ones
	// predict runs: one rule, simulate.EngineRuns.
	if err := simulate.EngineRuns(strings.ToLower(qf.q.Engine), topo, k); err != nil {
		fmt.Fprintf(stderr, "specsim predict: --engine %s does not deploy %v\n", qf.q.Engine, err)
		return exitBadInput
	}
	out, err := simulate.Predict(res, topo, *conc, k)
	if errors.Is(err, simulate.ErrNoProfiledRequest) {
		err = shortWindowError(qf, topo, *conc, k)
	}
	if err != nil {
		fmt.Fprintln(stderr, "specsim predict:", flagError(err))
		return exitBadInput
	}
	out.StepMS.Sources = res.CostNotes(topo)
	switch format {
	case formatJSON:
		band, err := simulate.BandFor(res, out)
		if err != nil {
			fmt.Fprintln(stderr, "specsim predict:", err)
			return exitBadInput
		}
		in := res.Inputs(topo, *conc, k)
		in.SpecsimVersion = specsimVersion()
		if err := writeJSON(stdout, predictionJSON{Inputs: in, Result: out, Notes: predictNotes(res, topo, out), Band: band, Calibration: calibrationNote(res)}); err != nil {
			fmt.Fprintln(stderr, "specsim predict:", flagError(err))
			return exitBadInput
		}
		return exitOK
	}
	if format == formatCSV {
		if err := printPredictionCSV(stdout, res, topo, out); err != nil {
			fmt.Fprintln(stderr, "specsim predict:", err)
			return exitBadInput
		}
		return exitOK
	}
	if err := printPrediction(stdout, res, topo, out, format); err != nil {
		fmt.Fprintln(stderr, "specsim predict:", err)
		return exitBadInput
	}
	return exitOK
}

// shortWindowError explains an AgentX replay window that profiled no
// request: it names the --agentx duration and finds, by doubling then
// bisecting whole seconds, the shortest window that profiles one for
// this deployment.
func shortWindowError(qf *queryFlags, topo simulate.Topology, conc, k int) error {
	var keep []string
	given := "duration=(default)"
	for _, kv := range strings.Split(qf.q.AgentX, ",") {
		if key, _, _ := strings.Cut(kv, "="); strings.TrimSpace(key) == "duration" {
			given = strings.TrimSpace(kv)
			continue
		}
		if strings.TrimSpace(kv) != "" {
			keep = append(keep, kv)
		}
	}
	// profiles says whether a window of d s profiles a request; any other
	// failure ends the search with its own error.
	profiles := func(d int) (bool, error) {
		q := *qf
		q.q.AgentX = strings.Join(append(slices.Clone(keep), fmt.Sprintf("duration=%d", d)), ",")
		r, err := q.resolve()
		if err != nil {
			return false, err
		}
		_, err = simulate.Predict(r, topo, conc, k)
		if errors.Is(err, simulate.ErrNoProfiledRequest) {
			return false, nil
		}
		return err == nil, err
	}
	failed := func(d int, err error) error {
		return fmt.Errorf("--agentx %s: the replay profiled no request; at duration=%d: %w", given, d, err)
	}
	bad, good := 0, 1
	for {
		ok, err := profiles(good)
		if err != nil {
			return failed(good, err)
		}
		if ok {
			break
		}
		if good >= agentx.MaxDuration {
			return fmt.Errorf("--agentx %s: the replay profiled no request, and no window up to %d s would", given, agentx.MaxDuration)
		}
		bad, good = good, min(2*good, agentx.MaxDuration)
	}
	for good-bad > 1 {
		mid := (bad + good) / 2
		ok, err := profiles(mid)
		if err != nil {
			return failed(mid, err)
		}
		if ok {
			good = mid
		} else {
			bad = mid
		}
	}
	return fmt.Errorf("--agentx %s: the replay profiled no request in its window; this deployment needs duration=%d or more", given, good)
}

// predictionJSON is predict's JSON: the result's keys, its band and the
// calibration applied.
type predictionJSON struct {
	Inputs simulate.Inputs `json:"inputs"`
	*simulate.Result
	// Notes are the result's Overload notes, as sweep's points carry them.
	Notes       []string      `json:"notes,omitempty"`
	Band        simulate.Band `json:"band"`
	Calibration string        `json:"calibration,omitempty"`
}

// predictNotes are a prediction's notes as sweep gives its points
// (Point.NotesFor): "multi-node" for an instance larger than one host,
// then the result's Overload notes.
func predictNotes(r *simulate.Resolved, t simulate.Topology, p *simulate.Result) []string {
	var out []string
	if r.InstanceNodes(t) > 1 {
		out = append(out, "multi-node")
	}
	return append(out, p.Overload(r.Workload.Name == "agentx")...)
}

// calibrationNote says which calibration a resolved query applies ("" if
// none).
func calibrationNote(r *simulate.Resolved) string {
	if r.Calibration == nil {
		return ""
	}
	return fmt.Sprintf("%s entry %s/%s (%s)", r.Q.Calibration.Path, r.Calibration.GPU, r.Calibration.Engine, r.Calibration.Params)
}

func printPrediction(w io.Writer, r *simulate.Resolved, topo simulate.Topology, p *simulate.Result, format format) error {
	band, err := simulate.BandFor(r, p)
	if err != nil {
		return err
	}
	wl := fmt.Sprintf("%d/%d tokens", r.Workload.ISL, r.Workload.OSL)
	if r.Workload.Name == "agentx" {
		a := r.Workload.AgentX
		wl = fmt.Sprintf("agentx-synthetic (ISL median %.0fk, OSL median %.0f, %.0f%% cached prefix)", a.ISLMedian/1000, a.OSLMedian, a.CacheHit*100)
	}
	if tw := r.Workload.Trace; tw != nil {
		c := tw.Replay
		wl = fmt.Sprintf("agentx trace replay of %s: %.0f s window, start turn in [%.2g, %.2g], %d warm-up requests per lane, idle caps %gs system / %gs tree, agentx seed %d",
			tw.Source, c.Duration, c.StartMin, c.StartMax, c.WarmupPerLane, c.SystemIdleCap, c.TraceIdleCap, c.Seed)
	}
	spec := "none"
	if p.Steps > 0 {
		spec = fmt.Sprintf("MTP k=%d, AL %.2f (%s, realized %.2f)", p.Steps, p.AL, p.Method, p.ALRealized)
	}
	sessions := "sessions"
	if r.Workload.Name == "agentx" {
		sessions = "session trees" // AIPerf's --concurrency counts a root session with its subagents as one
	}
	// --seed drives the simulation (acceptance draws, lengths); an agentx
	// replay picks its traces with its own seed (--agentx seed=), named in wl.
	model := r.Model.Name
	if asked := r.ModelAsked(); asked != "" {
		model += " (--model " + asked + ")"
	}
	fmt.Fprintf(w, "%s %s on %d x %s, %s, %d %s, %s\n%sspeculation: %s; %d requests simulated (%s, seed %d)\n\n",
		model, strings.ToUpper(string(r.Precision)), p.GPUs, strings.ToUpper(r.GPU.GPU.Name), p.Topology, p.Conc, sessions, wl, markdownParagraph(format), spec, p.Requests, p.Sim, r.Q.Seed)
	if note := calibrationNote(r); note != "" {
		fmt.Fprintf(w, "calibration applied: %s\n\n", note)
	}
	var queued []string
	for _, n := range predictNotes(r, topo, p) {
		if n == "multi-node" {
			node := r.GPU.Node()
			fmt.Fprintf(w, "multi-node (note: multi-node): an instance of %s spans %d hosts of %d %s GPUs, so it needs a multi-node launch, as sweep marks such points\n\n",
				topo, r.InstanceNodes(topo), node, strings.ToUpper(r.GPU.GPU.Name))
			continue
		}
		if n == "unsteady" {
			fmt.Fprintf(w, "not steady (note: unsteady): the profiled window's halves differ by more than 10%% (tokens/s by window quarter below), so the figures depend on which traces the seed's lanes replay\n\n")
			continue
		}
		queued = append(queued, n)
	}
	if len(queued) > 0 {
		fmt.Fprintf(w, "overloaded server (note: %s): TTFT and E2EL include the wait for admission, as sweep flags such points\n\n", strings.Join(queued, "; "))
	}
	t := &table{header: []string{"metric", ">value", ">band", "unit"}}
	f1 := func(v float64) string { return fmt.Sprintf("%.1f", v) }
	f2 := func(v float64) string { return fmt.Sprintf("%.2f", v) }
	b1 := func(g simulate.Range) string { return f1(g.Lo) + "-" + f1(g.Hi) }
	b2 := func(g simulate.Range) string { return f2(g.Lo) + "-" + f2(g.Hi) }
	t.add("total throughput per GPU", f1(p.TputPerGPU), b1(band.TputPerGPU), "tok/s/GPU (cached input counted)")
	t.add("output throughput per GPU", f1(p.OutputPerGPU), b1(band.OutputPerGPU), "tok/s/GPU")
	t.add("interactivity (1/TPOT p50)", f1(p.Interactivity), b1(band.Interactivity), "tok/s/user")
	t.add("TPOT p50 / p90", f2(p.TPOTms)+" / "+f2(p.TPOTp90ms), b2(band.TPOTms)+" (p50)", "ms")
	t.add("TTFT p50 / p90", f1(p.TTFTms)+" / "+f1(p.TTFTp90ms), b1(band.TTFTms)+" (p50)", "ms")
	t.add("E2EL p50 / p90", f2(p.E2EL.P50)+" / "+f2(p.E2EL.P90), b2(band.E2ELp90)+" (p90)", "s")
	t.add("E2E normalized interactivity", f1(p.NormalizedInteractivity), "", "tok/s/user (1 / p90 of E2EL/OSL)")
	t.add("mean decode batch", f1(p.DecodeBatch), "", "requests")
	if p.Retracted > 0 {
		t.add("retracted (KV pool short)", fmt.Sprint(p.Retracted), "", "requests (SGLang retract_decode, vLLM preemption; resumed later)")
	}
	t.write(w, format)
	markdownBreak(w, format)
	fmt.Fprintf(w, "band: throughput %s, latency %s; %s\n\n", simulate.BandText(band.Relative.Throughput, 0), simulate.BandText(band.Relative.Latency, 0), band.Source)
	s := p.StepMS
	st := &table{header: []string{"decode iteration", ">ms", ">share"}}
	share := func(v float64) string {
		if s.Total == 0 {
			return "-"
		}
		return fmt.Sprintf("%.0f%%", 100*v/s.Total)
	}
	for _, sp := range stepParts(s) {
		st.add(sp.label, fmt.Sprintf("%.3f", sp.ms), share(sp.ms))
	}
	st.write(w, format)
	markdownBreak(w, format)
	item := "  source:"
	if format == formatMarkdown {
		item = "- source:"
	}
	for _, n := range s.Sources {
		fmt.Fprintln(w, item, n)
	}
	fmt.Fprintln(w)
	m := p.MemoryGiB
	mt := &table{header: []string{"memory per GPU", ">GiB"}}
	mt.add("target weights", f1(m.Weights))
	mt.add("draft weights", f1(m.Draft))
	mt.add("linear-attention state", f1(m.State))
	// Sized, not measured: the running cap's requests at the workload's
	// mean context, at most the pool (simulate.Memory.Report).
	mt.add("KV sized for max running x mean context", f1(m.KV))
	mt.add("total / available", f1(m.Total)+" / "+f1(m.Capacity))
	mt.write(w, format)
	printLimits(w, p, format)
	printAgentX(w, p, format)
	return nil
}

// printPredictionCSV writes predict's tables for a program: one number per
// cell, snake_case names as the JSON spells them, shares as fractions, a
// band as band_lo and band_hi (empty where a metric has none), and last,
// where the run has any, a one-column table of its notes: the JSON's
// notes, then each role's limit note as "role: note", as text prints them.
func printPredictionCSV(w io.Writer, r *simulate.Resolved, topo simulate.Topology, p *simulate.Result) error {
	band, err := simulate.BandFor(r, p)
	if err != nil {
		return err
	}
	num := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	mt := &table{header: []string{"metric", "value", "band_lo", "band_hi", "unit"}}
	metric := func(name string, v float64, b *simulate.Range, unit string) {
		lo, hi := "", ""
		if b != nil {
			lo, hi = num(b.Lo), num(b.Hi)
		}
		mt.add(name, num(v), lo, hi, unit)
	}
	metric("tput_per_gpu", p.TputPerGPU, &band.TputPerGPU, "tok/s/GPU")
	metric("output_tput_per_gpu", p.OutputPerGPU, &band.OutputPerGPU, "tok/s/GPU")
	metric("interactivity", p.Interactivity, &band.Interactivity, "tok/s/user")
	metric("tpot_ms", p.TPOTms, &band.TPOTms, "ms")
	metric("tpot_ms_p90", p.TPOTp90ms, nil, "ms")
	metric("ttft_ms", p.TTFTms, &band.TTFTms, "ms")
	metric("ttft_ms_p90", p.TTFTp90ms, nil, "ms")
	metric("e2el_s_p50", p.E2EL.P50, &band.E2ELp50, "s")
	metric("e2el_s_p90", p.E2EL.P90, &band.E2ELp90, "s")
	metric("normalized_interactivity_p90", p.NormalizedInteractivity, nil, "tok/s/user")
	metric("decode_batch_mean", p.DecodeBatch, nil, "requests")
	metric("steps", float64(p.Steps), nil, "draft tokens")
	metric("al", p.AL, nil, "tokens/iteration")
	metric("al_realized", p.ALRealized, nil, "tokens/iteration")
	metric("requests", float64(p.Requests), nil, "requests")
	if p.Retracted > 0 {
		metric("retracted", float64(p.Retracted), nil, "requests")
	}
	mt.write(w, formatCSV)

	s := p.StepMS
	st := &table{header: []string{"step_part", "ms", "share"}}
	for _, sp := range stepParts(s) {
		share := ""
		if s.Total > 0 {
			share = num(sp.ms / s.Total)
		}
		st.add(sp.key, num(sp.ms), share)
	}
	st.write(w, formatCSV)

	m := p.MemoryGiB
	memt := &table{header: []string{"memory_part", "gib_per_gpu"}}
	for _, row := range []struct {
		name string
		v    float64
	}{{"weights", m.Weights}, {"draft", m.Draft}, {"linear_state", m.State}, {"kv_cache", m.KV}, {"total", m.Total}, {"capacity", m.Capacity}} {
		memt.add(row.name, num(row.v))
	}
	memt.write(w, formatCSV)

	if len(p.Limits) > 0 {
		lt := &table{header: []string{"role", "max_running", "capped_by", "deployed_max_running", "deployed_max_running_from", "request_slots_per_rank", "pool_tokens_per_rank", "mamba_slots_per_rank", "hicache_tokens_per_rank", "cuda_graph_max_bs", "mem_fraction"}}
		for _, l := range p.Limits {
			lt.add(l.Role, strconv.Itoa(l.Running), l.CappedBy, strconv.Itoa(l.Deployed), l.DeployedFrom, strconv.Itoa(l.ReqSlots), strconv.Itoa(l.PoolTokens), strconv.Itoa(l.MambaSlots), strconv.Itoa(l.HostTokens), strconv.Itoa(l.CUDAGraphMaxBS), num(l.Fraction))
		}
		lt.write(w, formatCSV)
	}
	if a := p.AgentX; a != nil {
		at := &table{header: []string{"agentx", "value"}}
		steady := 0.0
		if a.Steady {
			steady = 1
		}
		for _, row := range []struct {
			name string
			v    float64
		}{
			{"usable_traces", float64(a.UsableTraces)}, {"warmup_s", a.WarmupSeconds}, {"warmup_requests", float64(a.WarmupRequests)},
			{"window_s", a.WindowS}, {"profiled_s", a.ProfiledS}, {"trees", float64(a.Trees)}, {"sessions", float64(a.Sessions)},
			{"subagent_sessions", float64(a.SubagentSessions)}, {"isl_mean", a.ISLMean}, {"osl_mean", a.OSLMean},
			{"client_shared_fraction", a.SharedFraction}, {"server_cached_fraction", a.CachedFraction}, {"e2el_p75_s", a.E2ELp75},
			{"system_idle_shifts", float64(a.IdleShifts)}, {"system_idle_shift_s", a.IdleShiftS}, {"tree_idle_shifts", float64(a.TreeShifts)},
			{"tree_idle_shift_s", a.TreeShiftS}, {"quarter_1_tokens_per_s", a.QuarterTPS[0]}, {"quarter_2_tokens_per_s", a.QuarterTPS[1]},
			{"quarter_3_tokens_per_s", a.QuarterTPS[2]}, {"quarter_4_tokens_per_s", a.QuarterTPS[3]}, {"steady_state", steady},
		} {
			at.add(row.name, num(row.v))
		}
		at.write(w, formatCSV)
	}
	nt := &table{header: []string{"note"}}
	for _, n := range predictNotes(r, topo, p) {
		nt.add(n)
	}
	for _, l := range p.Limits {
		if l.Note != "" {
			nt.add(l.Role + ": " + l.Note)
		}
	}
	if len(nt.rows) > 0 {
		nt.write(w, formatCSV)
	}
	return nil
}

// printLimits says what capped each role's running requests.
func printLimits(w io.Writer, p *simulate.Result, format format) {
	if len(p.Limits) == 0 {
		return
	}
	fmt.Fprintln(w)
	lt := &table{header: []string{"role", ">max running", "capped by", ">deployed cap", ">req slots/rank", ">pool tokens/rank", ">mamba slots/rank", ">host tokens/rank", ">mem fraction"}}
	var notes []string
	for _, l := range p.Limits {
		deployed := "unset"
		if l.Deployed > 0 {
			deployed = fmt.Sprint(l.Deployed)
		}
		lt.add(l.Role, fmt.Sprint(l.Running), l.CappedBy, deployed, fmt.Sprint(l.ReqSlots), fmt.Sprint(l.PoolTokens), fmt.Sprint(l.MambaSlots), fmt.Sprint(l.HostTokens), fmt.Sprintf("%.3f", l.Fraction))
		if l.DeployedFrom != "" && l.DeployedFrom != l.CappedBy {
			notes = append(notes, fmt.Sprintf("%s: deployed cap %s: %s", l.Role, deployed, l.DeployedFrom))
		}
		if l.Note != "" {
			notes = append(notes, l.Role+": "+l.Note)
		}
	}
	lt.write(w, format)
	markdownBreak(w, format)
	for _, n := range notes {
		fmt.Fprintf(w, "note: %s\n%s", n, markdownParagraph(format))
	}
}

// markdownParagraph is what ends a line that another plain line follows:
// nothing in text, a blank line in Markdown, where GitHub would join the
// two into one paragraph.
func markdownParagraph(f format) string {
	if f == formatMarkdown {
		return "\n"
	}
	return ""
}

// markdownBreak ends a Markdown table that text follows: GitHub reads a
// line right under a table as one more row.
func markdownBreak(w io.Writer, f format) {
	if f == formatMarkdown {
		fmt.Fprintln(w)
	}
}

// stepPart is one row of the decode-iteration breakdown: its label in
// the text table, its key in CSV, and its time in ms.
type stepPart struct {
	label, key string
	ms         float64
}

// stepParts lists the breakdown's rows in the order both outputs print.
func stepParts(s simulate.StepReport) []stepPart {
	return []stepPart{
		{"draft (k forwards)", "draft", s.Draft},
		{"verify: attention", "verify_attention", s.Verify.Attention},
		{"verify: moe", "verify_moe", s.Verify.MoE},
		{"verify: dense gemm", "verify_dense_gemm", s.Verify.DenseGEMM},
		{"verify: gdn (linear attn)", "verify_gdn", s.Verify.GDN},
		{"verify: lm_head + sampling", "verify_lm_head", s.Verify.LMHead},
		{"verify: norms", "verify_norms", s.Verify.Norms},
		{"communication", "communication", s.Communication},
		{"overhead (launch + host)", "overhead", s.Overhead},
		{"  of which launches", "overhead_launch", s.OverheadSplit.Launch},
		{"  of which layer gaps", "overhead_layer_gap", s.OverheadSplit.LayerGap},
		{"  of which host", "overhead_host", s.OverheadSplit.Host},
		{"total", "total", s.Total},
	}
}
