package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/specsim/specsim/audit/recipe"
	"github.com/specsim/specsim/simulate"
	"github.com/specsim/specsim/simulate/acceptance"
)

// recipePrediction is one variant's prediction.
type recipePrediction struct {
	Variant     string           `json:"variant"`
	Topology    string           `json:"topology"`
	Conc        int              `json:"conc"`
	Steps       int              `json:"steps"`
	GoldenAL    *float64         `json:"golden_al"`
	Read        []recipe.Setting `json:"read"`
	Unsupported []string         `json:"unsupported"`
	Result      *simulate.Result `json:"result"`
	// Inputs echoes the query the variant was predicted with, as plain
	// predict --json does.
	Inputs *simulate.Inputs `json:"inputs"`
	// Notes are predict's notes (multi-node, queued, unsteady).
	Notes []string `json:"notes,omitempty"`
	// Band is predict's uncertainty band of the result.
	Band *simulate.Band `json:"band,omitempty"`
}

// predictRecipe predicts every selected variant of a recipe with qf's
// flags as defaults for what the recipe does not say.
func predictRecipe(arg string, qf *queryFlags, conc int, given map[string]bool) ([]recipePrediction, error) {
	rc, err := loadRecipeArg(arg)
	if err != nil {
		return nil, err
	}
	if len(rc.Variants) > 64 {
		return nil, fmt.Errorf("%s: %d variants; pick one with FILE:selector", rc.File, len(rc.Variants))
	}
	set, err := qf.golden.load()
	if err != nil {
		return nil, err
	}
	rep := recipe.Check(rc, recipe.Options{Curves: goldenCurves{set}, Thinking: qf.q.Thinking})
	var out []recipePrediction
	for vi, v := range rc.Variants {
		p, err := predictVariant(v, &rep.Variants[vi], qf, conc, given)
		if err != nil {
			return nil, fmt.Errorf("%s:%s: %w", rc.File, v.Name, err)
		}
		out = append(out, *p)
	}
	return out, nil
}

// predictVariant predicts one variant from what it says
// (recipe.Variant.Settings), with qf's flags for what it does not.
func predictVariant(v *recipe.Variant, vr *recipe.VariantReport, qf *queryFlags, conc int, given map[string]bool) (*recipePrediction, error) {
	o := recipe.SettingsOptions{Conc: conc, ConcGiven: given["conc"],
		KnownModel: func(name string) bool { _, err := simulate.ResolveModel(name); return err == nil }}
	if given["model"] {
		o.Model = qf.q.Model
	}
	st, err := v.Settings(vr, o)
	var ue *recipe.UnknownModelError
	if errors.As(err, &ue) {
		return nil, fmt.Errorf("%w; pass --model", err)
	}
	if err != nil {
		return nil, err
	}
	q := *qf
	q.q.Model = st.Model
	// The AL AgentX injects is the golden AL of the model the recipe
	// serves (what recipe check found), whatever model is simulated; a
	// schema-1 recipe runs with the AL it forces itself (st.ForcedAL).
	if c := vr.Curve(); c != nil && !given["al"] && !given["histogram"] {
		q.q.GoldenModel = c.Model
		for i := range st.Read {
			if st.Read[i].Setting == "golden AL" {
				how := "injected by AgentX synthetic acceptance"
				switch {
				case st.AsWritten && st.ForcedAL > 0:
					how = "what recipe check expects; a schema-1 recipe runs as written, so the acceptance length below is simulated"
				case st.AsWritten:
					how = "what recipe check expects; a schema-1 recipe runs as written, so nothing injects it"
				case !st.Agentic:
					how = "the expectation of real acceptance: the benchmark is not AgentX, so nothing injects it"
				}
				st.Read[i].From = fmt.Sprintf("golden curve %s, thinking %s (%s), of the model the recipe serves; %s", c.Model, c.Thinking, c.Source, how)
			}
		}
	}
	// The rule: a flag given on the command line wins over what the
	// recipe says, and the "read from the recipe" table says so; what the
	// recipe says wins over flag defaults.
	over := func(setting, flagName, value string) {
		for i := range st.Read {
			if st.Read[i].Setting == setting {
				st.Read[i] = recipe.Setting{Setting: setting, Value: value,
					From: fmt.Sprintf("overridden by --%s (the recipe's %s from %s)", flagName, st.Read[i].Value, st.Read[i].From)}
				return
			}
		}
		st.Read = append(st.Read, recipe.Setting{Setting: setting, Value: value, From: "--" + flagName + " (the recipe names none)"})
	}
	setStr := func(to *string, v, flagName, setting string) {
		switch {
		case given[flagName]:
			if v != "" && v != *to {
				over(setting, flagName, *to)
			}
		case v != "":
			*to = v
		}
	}
	setStr(&q.q.GPU, st.GPU, "gpu", "gpu")
	setStr(&q.q.Precision, st.Precision, "precision", "precision")
	setStr(&q.q.Engine, st.Engine, "engine", "engine")
	setStr(&q.q.KVDType, st.KVDType, "kv-dtype", "kv cache dtype")
	setStr(&q.q.MambaSSMDType, st.MambaSSMDType, "mamba-ssm-dtype", "mamba ssm dtype")
	setStr(&q.q.MoEBackend, st.MoEBackend, "moe-runner-backend", "moe runner backend")
	setStr(&q.q.SpecMoEBackend, st.SpecMoEBackend, "speculative-moe-runner-backend", "speculative moe runner backend")
	switch {
	case given["isl"] || given["osl"] || given["workload"]:
		wl := q.workload
		if q.isl > 0 || q.osl > 0 {
			wl = fmt.Sprintf("fixed %d/%d tokens", q.isl, q.osl)
		} else if wl == "" {
			wl = "agentx"
		}
		if st.Agentic || st.ISL > 0 {
			over("workload", map[bool]string{true: "isl/--osl", false: "workload"}[q.isl > 0 || q.osl > 0], wl)
		}
	case st.Agentic:
		q.workload, q.isl, q.osl = "agentx", 0, 0
	case st.ISL > 0:
		q.workload, q.isl, q.osl = "", st.ISL, st.OSL
	default:
		st.Read = append(st.Read, recipe.Setting{Setting: "workload", Value: "agentx", From: "predict's default (the recipe's benchmark names neither an agentic run nor isl/osl)"})
	}
	setInt := func(to *int, v int, flagName, setting string) {
		switch {
		case given[flagName]:
			if v > 0 && v != *to {
				over(setting, flagName, strconv.Itoa(*to))
			}
		case v > 0:
			*to = v
		}
	}
	setInt(&q.q.MaxRunning, st.MaxRunning, "max-running", "max running requests")
	setInt(&q.q.Server.PrefillMaxRunning, st.PrefillMaxRunning, "prefill-max-running", "prefill max running")
	setInt(&q.q.CUDAGraphMaxBS, st.GraphMaxBS, "cuda-graph-max-bs", "cuda graph max bs")
	setInt(&q.q.Chunk, st.Chunk, "chunk", "chunked prefill")
	setInt(&q.q.Server.MambaCache, st.MambaCache, "max-mamba-cache-size", "max mamba cache size")
	setInt(&q.q.Server.PrefillMambaCache, st.PrefillMambaCache, "prefill-max-mamba-cache-size", "prefill mamba cache")
	switch {
	case given["mamba-scheduler-strategy"]:
		if st.MambaStrategy != "" && st.MambaStrategy != q.q.Server.MambaStrategy {
			over("mamba strategy", "mamba-scheduler-strategy", q.q.Server.MambaStrategy)
		}
	case st.MambaStrategy != "":
		q.q.Server.MambaStrategy = st.MambaStrategy
	}
	setInt(&q.q.Server.PageSize, st.PageSize, "page-size", "page size")
	hostTier(&q, st, given)
	switch {
	case given["no-prefix-cache"]:
		if st.NoPrefixCache && !q.q.Server.NoPrefixCache {
			over("prefix cache", "no-prefix-cache", "on")
		}
	case st.NoPrefixCache:
		q.q.Server.NoPrefixCache = true
	}
	switch {
	case given["mem-fraction"]:
		if st.MemFraction > 0 && st.MemFraction != q.q.MemFraction {
			over("mem fraction", "mem-fraction", strconv.FormatFloat(q.q.MemFraction, 'g', -1, 64))
		}
	case st.MemFraction > 0:
		q.q.MemFraction = st.MemFraction
	}
	switch {
	case given["prefill-mem-fraction"]:
		if st.PrefillMemFraction > 0 && st.PrefillMemFraction != q.q.Server.PrefillMemFraction {
			over("prefill mem fraction", "prefill-mem-fraction", strconv.FormatFloat(q.q.Server.PrefillMemFraction, 'g', -1, 64))
		}
	case st.PrefillMemFraction > 0:
		q.q.Server.PrefillMemFraction = st.PrefillMemFraction
	}
	q.q.AllReduceFusion = q.q.AllReduceFusion || st.AllReduceFusion
	q.q.NoAllReduceFusion = q.q.NoAllReduceFusion || st.NoAllReduceFusion
	q.q.SpecV2 = q.q.SpecV2 || st.SpecV2
	q.q.Server.PrefillDraft = q.q.Server.PrefillDraft || st.PrefillDraft
	steps := st.Steps
	if given["steps"] || given["spec"] {
		k := 0
		if q.q.Spec != "none" {
			var err error
			if k, err = oneStep("predict", q.steps, 6); err != nil {
				return nil, err
			}
		}
		if k != st.Steps {
			name := "steps"
			if !given["steps"] {
				name = "spec"
			}
			over("speculative", name, fmt.Sprintf("k = %d", k))
			steps, st.GoldenAL = k, nil
			// The recipe's AL is for its own k: at another, the golden
			// curve gives the AL where there is one.
			asWrittenAL := st.AsWritten && vr.Curve() != nil
			if asWrittenAL {
				st.ForcedAL, st.ForcedMethod = 0, ""
			}
			kept := st.Read[:0]
			for _, r := range st.Read {
				if r.Setting != "golden AL" && !(asWrittenAL && r.Setting == "acceptance length") {
					kept = append(kept, r)
				}
			}
			st.Read = kept
		}
	}
	q.q.Spec = "none"
	if steps > 0 {
		q.q.Spec = "mtp"
		// A model without a golden curve runs at the AL its recipe
		// forces (what recipe check simulates it at); --al or
		// --histogram given win.
		if st.ForcedAL > 0 && !given["al"] && !given["histogram"] {
			q.q.AL = st.ForcedAL
			switch {
			case given["method"] || st.ForcedMethod == "" || st.ForcedMethod == "match-expected":
			case st.ForcedMethod == "multinomial":
				q.q.Method = acceptance.SGLangMultinomial
			default:
				st.Unsupported = append(st.Unsupported, fmt.Sprintf("SGLANG_SIMULATE_ACC_METHOD %q: not modelled; simulated with match-expected", st.ForcedMethod))
			}
		}
	} else {
		q.steps = ""
	}
	par := func(l recipe.Layout) simulate.Parallel {
		return simulate.Parallel{TP: l.TP, EP: l.EP, PP: l.PP, DPAttention: l.DPAttention}
	}
	topo := simulate.Topology{Agg: par(st.Agg)}
	if st.Disagg {
		topo = simulate.Topology{Disagg: true, PrefillWorkers: st.Prefill.Workers, Prefill: par(st.Prefill),
			DecodeWorkers: st.Decode.Workers, Decode: par(st.Decode)}
	}
	if given["topology"] {
		t, err := simulate.ParseTopology(q.q.Topology)
		if err != nil {
			return nil, err
		}
		if err := simulate.EngineRuns(strings.ToLower(q.q.Engine), t, steps); err != nil {
			return nil, fmt.Errorf("--topology: --engine %s does not deploy %v", q.q.Engine, err)
		}
		if t.String() != topo.String() {
			st.Read = append(st.Read, recipe.Setting{Setting: "topology", Value: t.String(),
				From: fmt.Sprintf("overridden by --topology (the recipe's %s)", topo.String())})
			topo = t
		}
	}
	// The echoed query (inputs.query) is the deployment that ran.
	q.q.Topology = topo.String()
	res, err := q.resolve()
	var se *simulate.Error
	if errors.As(err, &se) && se.Field == "GPU" && !given["gpu"] && st.GPU != "" {
		return nil, fmt.Errorf("line %d: resources.gpu_type: %s (or pass --gpu)", st.GPULine, se.Reason)
	}
	if err != nil {
		return nil, recipeSettingError(err, st.Read, given)
	}
	if steps > 0 && st.GoldenAL != nil {
		if pt, err := res.Target.At(steps); err == nil {
			st.CheckAL(pt.AL, pt.Source)
		}
	}
	p := &recipePrediction{Variant: v.Name, Topology: topo.String(), Conc: st.Conc, Steps: steps, GoldenAL: st.GoldenAL,
		Read: st.Read, Unsupported: st.Unsupported}
	if p.Result, err = simulate.Predict(res, topo, p.Conc, p.Steps); err != nil {
		return nil, recipeSettingError(err, st.Read, given)
	}
	p.Result.StepMS.Sources = res.CostNotes(topo)
	p.Notes = predictNotes(res, topo, p.Result)
	band, err := simulate.BandFor(res, p.Result)
	if err != nil {
		return nil, err
	}
	p.Band = &band
	in := res.Inputs(topo, p.Conc, p.Steps)
	in.SpecsimVersion = specsimVersion()
	p.Inputs = &in
	return p, nil
}

// hostTier sets the query's HiCache host KV tier from the recipe's
// (simulate.PoolConfig: --hicache-size GB per rank wins over
// --hicache-ratio of the device pool); --hicache-ratio or --hicache-size
// given on the command line win. A recipe without HiCache runs without a
// host tier. An AgentX trace replay with HiCache on and no hicache-size
// keeps predict's default, the size InferenceX's launcher passes
// (simulate.AgentXDRAMUtilization of host DRAM): SGLang's HostKVCache
// (mem_cache/memory_pool_host.py) asserts a host pool larger than the
// device pool, so the recipes' hicache-ratio 0.9 alone would not start.
func hostTier(q *queryFlags, st *recipe.Settings, given map[string]bool) {
	note := func(setting, from string) {
		st.Read = append(st.Read, recipe.Setting{Setting: setting, Value: "", From: from})
	}
	replay := q.workload == "agentx" || q.workload == "" && q.isl == 0 && q.osl == 0
	switch {
	case given["hicache-ratio"] || given["hicache-size"]:
		if st.HiCache || st.HiCacheRatio > 0 || st.HiCacheGB > 0 {
			name := "hicache-ratio"
			if given["hicache-size"] {
				name = "hicache-size"
			}
			note("host KV tier", "overridden by --"+name+" (the recipe's HiCache settings above are not applied)")
		}
	case !st.HiCache:
		q.hicache, q.q.Server.HiCacheGiB = 0, 0
		key := map[string]string{"trtllm": "TensorRT-LLM kv_cache_config.host_cache_size", "vllm": "vLLM: none modelled"}[strings.ToLower(st.Engine)]
		if key == "" {
			key = "SGLang enable-hierarchical-cache"
		}
		st.Read = append(st.Read, recipe.Setting{Setting: "host KV tier", Value: "off", From: "the recipe gives the role that prefills no host KV tier (" + key + ")"})
	case st.HiCacheGB > 0:
		q.hicache, q.q.Server.HiCacheGiB = -1, st.HiCacheGB
		if st.HostTierFrom != "" {
			st.Read = append(st.Read, recipe.Setting{Setting: "host KV tier", Value: fmt.Sprintf("%.4g GB per GPU", st.HiCacheGB),
				From: st.HostTierFrom + " (bytes per rank)"})
		}
	case replay:
		q.hicache, q.q.Server.HiCacheGiB = -1, 0
		st.Read = append(st.Read, recipe.Setting{Setting: "host KV tier", Value: fmt.Sprintf("%.0f%% of host DRAM per GPU", 100*simulate.AgentXDRAMUtilization),
			From: "InferenceX's launcher passes --hicache-size from dram-utilization for AgentX, which wins over hicache-ratio (SGLang refuses a ratio <= 1 alone: host pool must exceed the device pool)"})
	case st.HiCacheRatio > 0:
		q.hicache = st.HiCacheRatio
		if st.HiCacheRatio <= 1 {
			st.Unsupported = append(st.Unsupported, fmt.Sprintf("hicache-ratio %g without hicache-size: SGLang's HostKVCache asserts a host pool larger than the device pool, so this server would not start; simulated as given", st.HiCacheRatio))
		}
	default:
		// server_args.py: hicache_ratio defaults to 2.0.
		q.hicache = 2
		st.Read = append(st.Read, recipe.Setting{Setting: "hicache ratio", Value: "2", From: "SGLang's default (the recipe sets neither hicache-ratio nor hicache-size)"})
	}
}

// writeRecipePredictionsCSV writes three tables, each with a variant
// column: what was read, what is not modelled, and the predictions.
func writeRecipePredictionsCSV(w io.Writer, ps []recipePrediction) {
	read := &table{header: []string{"variant", "setting", "value", "from"}}
	un := &table{header: []string{"variant", "not modelled (listed, not applied)"}}
	// The prediction columns are named and written as predict --json
	// writes them: one unrounded number per cell.
	pred := &table{header: []string{"variant", "topology", ">conc", ">steps", ">al", "sim", ">tput_per_gpu", ">interactivity", ">ttft_ms_p90", ">tpot_ms_p90", ">e2el_s_p90", "notes"}}
	num := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	for _, p := range ps {
		for _, s := range p.Read {
			read.add(p.Variant, s.Setting, s.Value, s.From)
		}
		for _, u := range p.Unsupported {
			un.add(p.Variant, u)
		}
		r := p.Result
		pred.add(p.Variant, p.Topology, strconv.Itoa(p.Conc), strconv.Itoa(p.Steps), num(r.AL), r.Sim,
			num(r.TputPerGPU), num(r.Interactivity), num(r.TTFTp90ms), num(r.TPOTp90ms), num(r.E2EL.P90), strings.Join(p.Notes, "; "))
	}
	read.write(w, formatCSV)
	un.write(w, formatCSV)
	pred.write(w, formatCSV)
}

// writeRecipePredictions writes text, or Markdown where format says so
// (the tables and breaks as plain predict writes them).
func writeRecipePredictions(w io.Writer, file string, ps []recipePrediction, format format) {
	item := "  - "
	if format == formatMarkdown {
		item = "- "
	}
	for i, p := range ps {
		if i > 0 {
			fmt.Fprintln(w)
		}
		fmt.Fprintf(w, "%s: variant %s\n%sread from the recipe:\n%s", file, p.Variant, markdownParagraph(format), markdownParagraph(format))
		t := &table{header: []string{"setting", "value", "from"}}
		for _, s := range p.Read {
			t.add(s.Setting, s.Value, s.From)
		}
		t.write(w, format)
		markdownBreak(w, format)
		if len(p.Unsupported) > 0 {
			fmt.Fprintf(w, "not modelled (listed, not applied):\n%s", markdownParagraph(format))
			for _, u := range p.Unsupported {
				fmt.Fprintln(w, item+u)
			}
			markdownBreak(w, format)
		}
		r := p.Result
		fmt.Fprintf(w, "prediction: %s conc %d k %d (AL %.2f, %s): %s tok/s/GPU, %s tok/s/user, TTFT p90 %s ms, TPOT p90 %s ms, E2EL p90 %s s\n",
			p.Topology, p.Conc, p.Steps, r.AL, r.Sim, simulate.Sig3(r.TputPerGPU), simulate.Sig3(r.Interactivity), simulate.Sig3(r.TTFTp90ms), simulate.Sig3(r.TPOTp90ms), simulate.Sig3(r.E2EL.P90))
		if len(p.Notes) > 0 {
			fmt.Fprintf(w, "%snotes: %s (as predict and sweep flag them)\n", markdownParagraph(format), strings.Join(p.Notes, "; "))
		}
	}
}

func runPredictRecipe(fs *flag.FlagSet, arg string, qf *queryFlags, conc int, format format, stdout, stderr io.Writer) int {
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	ps, err := predictRecipe(arg, qf, conc, given)
	if err != nil {
		fmt.Fprintln(stderr, "specsim predict --recipe:", flagError(err))
		return exitBadInput
	}
	if format == formatJSON {
		if err := writeJSON(stdout, map[string]any{"recipe": arg, "variants": ps}); err != nil {
			fmt.Fprintln(stderr, "specsim predict --recipe:", err)
			return exitBadInput
		}
		return exitOK
	}
	if format == formatCSV {
		writeRecipePredictionsCSV(stdout, ps)
		return exitOK
	}
	writeRecipePredictions(stdout, arg, ps, format)
	return exitOK
}

// recipeSettings maps the query fields a recipe sets to their flag and the
// setting predict --recipe reads them as (the "read from the recipe" rows).
var recipeSettings = map[string][2]string{
	"Steps": {"steps", "speculative"}, "Conc": {"conc", "concurrency"},
	"MaxRunning": {"max-running", "max running requests"}, "CUDAGraphMaxBS": {"cuda-graph-max-bs", "cuda graph max bs"},
	"Chunk": {"chunk", "chunked prefill"},
}

// serverRecipeSettings maps the server flags a recipe sets to the setting
// predict --recipe reads them as.
var serverRecipeSettings = map[string]string{
	"prefill-max-running": "prefill max running", "max-mamba-cache-size": "max mamba cache size",
	"prefill-max-mamba-cache-size": "prefill mamba cache", "page-size": "page size",
}

// recipeSettingError restates a refusal of a setting the recipe gave (no
// flag overrode it) at the recipe key it was read from, not at a flag the
// user never passed.
func recipeSettingError(err error, read []recipe.Setting, given map[string]bool) error {
	// The server settings' refusals are plain errors that start with
	// their flag ("--prefill-max-running 2000000: want ...").
	msg := err.Error()
	for flag, setting := range serverRecipeSettings {
		rest, ok := strings.CutPrefix(msg, "--"+flag+" ")
		if from := recipeKey(read, setting); ok && !given[flag] && from != "" {
			return fmt.Errorf("%s %s (read as --%s)", from, rest, flag)
		}
	}
	var field, value, reason string
	var se *simulate.Error
	var ae *acceptance.Error
	switch {
	case errors.As(err, &ae) && ae.Field == acceptance.FieldSteps:
		field, value, reason = "Steps", ae.Value, ae.Reason
	case errors.As(err, &se):
		field, value, reason = se.Field, se.Value, se.Reason
	default:
		return err
	}
	rs, ok := recipeSettings[field]
	if from := recipeKey(read, rs[1]); ok && !given[rs[0]] && from != "" {
		return fmt.Errorf("%s %s: %s (read as --%s)", from, value, reason, rs[0])
	}
	return err
}

// recipeKey is where the recipe gave setting ("" when a flag or a default
// did).
func recipeKey(read []recipe.Setting, setting string) string {
	for _, r := range read {
		if r.Setting == setting && !strings.HasPrefix(r.From, "--") {
			return r.From
		}
	}
	return ""
}
