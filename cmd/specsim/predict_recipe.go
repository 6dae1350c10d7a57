package main

import (
	"flag"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	"github.com/specsim/specsim/audit/recipe"
	"github.com/specsim/specsim/simulate"
)

// recipeSetting is one value predict --recipe read and where it went.
type recipeSetting struct {
	Setting string `json:"setting"`
	Value   string `json:"value"`
	From    string `json:"from"`
}

// recipePrediction is one variant's prediction.
type recipePrediction struct {
	Variant     string           `json:"variant"`
	Topology    string           `json:"topology"`
	Conc        int              `json:"conc"`
	Steps       int              `json:"steps"`
	GoldenAL    *float64         `json:"golden_al"`
	Read        []recipeSetting  `json:"read"`
	Unsupported []string         `json:"unsupported"`
	Result      *simulate.Result `json:"result"`
}

// sglangModelled are the SGLang arguments predict --recipe turns into the
// query (keys with '-').
var sglangModelled = map[string]bool{
	"tensor-parallel-size": true, "tp-size": true, "tp": true, "data-parallel-size": true, "dp-size": true, "dp": true,
	"expert-parallel-size": true, "ep-size": true, "ep": true, "enable-dp-attention": true,
	"speculative-algorithm": true, "speculative-num-steps": true, "speculative-eagle-topk": true, "speculative-num-draft-tokens": true,
	"cuda-graph-max-bs": true, "disable-cuda-graph": true, "max-running-requests": true, "mem-fraction-static": true,
	"chunked-prefill-size": true, "kv-cache-dtype": true, "mamba-ssm-dtype": true, "moe-runner-backend": true,
	"speculative-moe-runner-backend": true, "enable-flashinfer-allreduce-fusion": true, "quantization": true,
	"served-model-name": true, "model-path": true,
}

// predictRecipe predicts every selected variant of a recipe with qf's
// flags as defaults for what the recipe does not say.
func predictRecipe(arg string, qf *queryFlags, conc int, concSet, modelSet bool) ([]recipePrediction, error) {
	rc, err := recipe.Load(arg)
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
	rep := recipe.Check(rc, recipe.Options{Curves: goldenCurves{set}})
	var out []recipePrediction
	for vi, v := range rc.Variants {
		p, err := predictVariant(v, &rep.Variants[vi], qf, conc, concSet, modelSet)
		if err != nil {
			return nil, fmt.Errorf("%s:%s: %w", rc.File, v.Name, err)
		}
		out = append(out, *p)
	}
	return out, nil
}

func predictVariant(v *recipe.Variant, vr *recipe.VariantReport, qf *queryFlags, conc int, concSet, modelSet bool) (*recipePrediction, error) {
	p := &recipePrediction{Variant: v.Name, Unsupported: []string{}}
	read := func(setting, value, from string) { p.Read = append(p.Read, recipeSetting{setting, value, from}) }
	q := *qf
	dep := v.Deployment()
	if dep.GPUType != "" {
		q.q.GPU = dep.GPUType
		read("gpu", dep.GPUType, "resources.gpu_type")
	}
	if dep.GPUsPerNode > 0 {
		read("gpus per node", strconv.Itoa(dep.GPUsPerNode), "resources.gpus_per_node (scheduling only; the NVLink domain is the GPU's)")
	}
	if !modelSet {
		found := false
		for _, name := range v.ModelNames {
			if _, err := simulate.ResolveModel(name); err == nil {
				q.q.Model, found = name, true
				read("model", name, "recipe model names")
				break
			}
		}
		if !found {
			return nil, fmt.Errorf("none of the recipe's model names (%s) is a model specsim knows; pass --model", strings.Join(v.ModelNames, ", "))
		}
	} else {
		read("model", q.q.Model, "--model")
	}
	if pr := strings.ToLower(v.ModelPrecision()); pr == "fp4" || pr == "fp8" || pr == "bf16" {
		q.q.Precision = pr
		read("precision", pr, "model.precision")
	}
	if v.Agentic {
		q.workload, q.isl, q.osl = "agentx", 0, 0
		read("workload", "agentx", "benchmark (agentic)")
	}
	if v.Engine != "" {
		q.q.Engine = v.Engine
		read("engine", v.Engine, "engine")
	}
	roles := map[string]*recipe.Role{}
	for _, r := range v.Roles {
		roles[r.Name] = r
	}
	workers := map[string]int{}
	for _, rd := range dep.Roles {
		workers[rd.Name] = max(rd.Workers, 1)
	}
	par := func(r *recipe.Role) simulate.Parallel {
		tp := max(r.TP, 1)
		ep := 1
		if r.EP > 1 {
			ep = r.EP
		}
		return simulate.Parallel{TP: tp, EP: ep, PP: 1, DPAttention: r.DPAttention && r.DP > 1}
	}
	var topo simulate.Topology
	var gen *recipe.Role
	switch {
	case roles["prefill"] != nil && roles["decode"] != nil:
		gen = roles["decode"]
		topo = simulate.Topology{Disagg: true, PrefillWorkers: workers["prefill"], Prefill: par(roles["prefill"]),
			DecodeWorkers: workers["decode"], Decode: par(gen)}
	case roles["agg"] != nil:
		gen = roles["agg"]
		topo = simulate.Topology{Agg: par(gen)}
		if n := workers["agg"]; n > 1 {
			p.Unsupported = append(p.Unsupported, fmt.Sprintf("roles.agg.workers %d: one instance is simulated at concurrency/%d (identical replicas, even split)", n, n))
		}
	default:
		return nil, fmt.Errorf("no agg role and no prefill+decode pair (roles: %s)", roleNames(v))
	}
	for _, r := range v.Roles {
		read(r.Name+" topology", fmt.Sprintf("tp %d dp %d ep %d dp-attention %v, %d worker(s)", r.TP, r.DP, r.EP, r.DPAttention, workers[r.Name]), r.ArgsAt)
	}
	p.Topology = topo.String()
	// Caps and engine settings come from the generating role (decode or agg).
	if gen.MaxRunning > 0 {
		q.q.MaxRunning = gen.MaxRunning
		read("max running requests", strconv.Itoa(gen.MaxRunning), gen.ArgsAt+"."+gen.MaxRunningKey)
	}
	if gen.CUDAGraphMaxBS > 0 {
		q.q.CUDAGraphMaxBS = gen.CUDAGraphMaxBS
		read("cuda graph max bs", strconv.Itoa(gen.CUDAGraphMaxBS), gen.ArgsAt+"."+gen.CUDAGraphKey)
	}
	if gen.CUDAGraphDisable {
		p.Unsupported = append(p.Unsupported, gen.ArgsAt+": CUDA graphs disabled (not modelled: graphs are assumed)")
	}
	sglang := gen.Engine == recipe.EngineSGLang
	arg := func(r *recipe.Role, key string) string { return argValue(r.Args, key) }
	if sglang {
		if s := arg(gen, "mem-fraction-static"); s != "" {
			if f, err := strconv.ParseFloat(s, 64); err == nil && f > 0 && f <= 1 {
				q.q.MemFraction = f
				read("mem fraction", s, gen.ArgsAt+".mem-fraction-static")
			}
		}
		if s := arg(roleOr(roles["prefill"], gen), "chunked-prefill-size"); s != "" {
			if n, err := strconv.Atoi(s); err == nil && n > 0 {
				q.q.Chunk = n
				read("chunked prefill", s, "chunked-prefill-size")
			}
		}
		if s := arg(gen, "kv-cache-dtype"); strings.HasPrefix(s, "fp8") || s == "bf16" || s == "bfloat16" || s == "auto" {
			q.q.KVDType = map[bool]string{true: "fp8", false: "bf16"}[strings.HasPrefix(s, "fp8")]
			read("kv cache dtype", s, gen.ArgsAt+".kv-cache-dtype")
		}
		if s := arg(gen, "mamba-ssm-dtype"); s != "" {
			q.q.MambaSSMDType = s
			read("mamba ssm dtype", s, gen.ArgsAt+".mamba-ssm-dtype")
		}
		if s := arg(gen, "moe-runner-backend"); s != "" {
			q.q.MoEBackend = s
			read("moe runner backend", s, gen.ArgsAt+".moe-runner-backend")
		}
		if s := arg(gen, "speculative-moe-runner-backend"); s != "" {
			q.q.SpecMoEBackend = s
			read("speculative moe runner backend", s, gen.ArgsAt+".speculative-moe-runner-backend")
		}
		if s := arg(gen, "enable-flashinfer-allreduce-fusion"); s == "true" {
			q.q.AllReduceFusion = true
			read("flashinfer allreduce fusion", s, gen.ArgsAt+".enable-flashinfer-allreduce-fusion")
		}
		if gen.Env["SGLANG_ENABLE_SPEC_V2"] == "1" || strings.EqualFold(gen.Env["SGLANG_ENABLE_SPEC_V2"], "true") {
			q.q.SpecV2 = true
			read("spec v2", gen.Env["SGLANG_ENABLE_SPEC_V2"], gen.EnvFrom["SGLANG_ENABLE_SPEC_V2"])
		}
		if s := arg(gen, "enable-hierarchical-cache"); s == "true" {
			p.Unsupported = append(p.Unsupported, fmt.Sprintf("%s.enable-hierarchical-cache (HiCache, hicache-ratio %s): read, not modelled by this prediction (no host-tier prefix cache)", gen.ArgsAt, orDash(arg(gen, "hicache-ratio"))))
		}
	}
	for _, r := range v.Roles {
		if r.Args == nil || r.Args.Kind != recipe.Map {
			continue
		}
		var extra []string
		for _, k := range r.Args.Keys {
			nk := strings.ReplaceAll(k, "_", "-")
			if sglang && (sglangModelled[nk] || strings.HasPrefix(nk, "hicache-") || nk == "enable-hierarchical-cache") {
				continue
			}
			extra = append(extra, k+"="+argPreview(r.Args.Fields[k]))
		}
		if len(extra) > 0 {
			p.Unsupported = append(p.Unsupported, fmt.Sprintf("%s: not modelled: %s", r.ArgsAt, strings.Join(extra, ", ")))
		}
		var env []string
		for k := range r.Env {
			if k != "SGLANG_ENABLE_SPEC_V2" && !strings.HasPrefix(k, "SGLANG_SIMULATE_ACC") {
				env = append(env, k)
			}
		}
		sort.Strings(env)
		if len(env) > 0 {
			p.Unsupported = append(p.Unsupported, fmt.Sprintf("roles.%s env not modelled: %s", r.Name, strings.Join(env, ", ")))
		}
	}
	// Speculation: the draft length and the golden AL AgentX injects.
	if gen.Spec != nil && gen.Spec.DraftLength > 0 {
		p.Steps = gen.Spec.DraftLength
		q.q.Spec = "mtp"
		read("speculative", fmt.Sprintf("%s, k = %d, topk %d, draft tokens %d", gen.Spec.Algorithm, gen.Spec.DraftLength, gen.Spec.TopK, gen.Spec.NumDraftTokens), gen.ArgsAt+"."+gen.Spec.DraftLengthKey)
		if gen.Spec.TopK > 1 {
			p.Unsupported = append(p.Unsupported, fmt.Sprintf("speculative topk %d: tree drafts are not modelled (chains of k)", gen.Spec.TopK))
		}
	} else {
		q.q.Spec = "none"
	}
	for _, rr := range vr.Roles {
		if rr.Role == gen.Name && rr.ExpectedAL != nil {
			p.GoldenAL = rr.ExpectedAL
			read("golden AL", recipe.FormatAL(*rr.ExpectedAL), "golden curve (injected by AgentX synthetic acceptance)")
		}
	}
	p.Conc = conc
	switch {
	case v.Concurrency > 0 && !concSet:
		p.Conc = v.Concurrency
		read("concurrency", strconv.Itoa(v.Concurrency), "benchmark")
	case concSet:
		read("concurrency", strconv.Itoa(conc), "--conc")
	default:
		read("concurrency", strconv.Itoa(conc), "--conc default (the recipe names none)")
	}
	if n := workers["agg"]; !topo.Disagg && n > 1 {
		p.Conc = max(1, (p.Conc+n-1)/n)
	}
	if q.q.Spec == "none" {
		q.steps = ""
	}
	res, err := q.resolve()
	if err != nil {
		return nil, err
	}
	if p.GoldenAL != nil && p.Steps > 0 {
		if pt, err := res.Target.At(p.Steps); err == nil && !closeTo(pt.AL, *p.GoldenAL) {
			p.Unsupported = append(p.Unsupported, fmt.Sprintf("the recipe's golden AL %s differs from the AL simulated, %.2f (%s)", recipe.FormatAL(*p.GoldenAL), pt.AL, pt.Source))
		}
	}
	if p.Result, err = simulate.Predict(res, topo, p.Conc, p.Steps); err != nil {
		return nil, err
	}
	return p, nil
}

func closeTo(a, b float64) bool { return a-b < 0.006 && b-a < 0.006 }

func roleOr(r, def *recipe.Role) *recipe.Role {
	if r != nil {
		return r
	}
	return def
}

func roleNames(v *recipe.Variant) string {
	var n []string
	for _, r := range v.Roles {
		n = append(n, r.Name)
	}
	return strings.Join(n, ", ")
}

// argValue is an engine argument's scalar text, with '-' or '_' spelling.
func argValue(args *recipe.Value, key string) string {
	if args == nil {
		return ""
	}
	if s := args.Get(key).String(); s != "" {
		return s
	}
	return args.Get(strings.ReplaceAll(key, "-", "_")).String()
}

func argPreview(v *recipe.Value) string {
	if s := v.String(); s != "" {
		if len(s) > 40 {
			return s[:37] + "..."
		}
		return s
	}
	return "{...}"
}

func writeRecipePredictions(w io.Writer, file string, ps []recipePrediction) {
	for i, p := range ps {
		if i > 0 {
			fmt.Fprintln(w)
		}
		fmt.Fprintf(w, "%s: variant %s\nread from the recipe:\n", file, p.Variant)
		t := &table{header: []string{"setting", "value", "from"}}
		for _, s := range p.Read {
			t.add(s.Setting, s.Value, s.From)
		}
		t.write(w, formatText)
		if len(p.Unsupported) > 0 {
			fmt.Fprintln(w, "not modelled (listed, not applied):")
			for _, u := range p.Unsupported {
				fmt.Fprintln(w, "  - "+u)
			}
		}
		r := p.Result
		fmt.Fprintf(w, "prediction: %s conc %d k %d (AL %.2f, %s): %s tok/s/GPU, %s tok/s/user, TTFT p90 %s ms, TPOT p90 %s ms, E2EL p90 %s s\n",
			p.Topology, p.Conc, p.Steps, r.AL, r.Sim, sig3(r.TputPerGPU), sig3(r.Interactivity), sig3(r.TTFTp90ms), sig3(r.TPOTp90ms), sig3(r.E2EL.P90))
	}
}

func runPredictRecipe(fs *flag.FlagSet, arg string, qf *queryFlags, conc int, format format, stdout, stderr io.Writer) int {
	concSet, modelSet := false, false
	fs.Visit(func(f *flag.Flag) {
		concSet = concSet || f.Name == "conc"
		modelSet = modelSet || f.Name == "model"
	})
	ps, err := predictRecipe(arg, qf, conc, concSet, modelSet)
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
	writeRecipePredictions(stdout, arg, ps)
	return exitOK
}
