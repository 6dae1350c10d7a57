package recipe

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
)

// Setting is one value a prediction read from a recipe, and where.
type Setting struct {
	Setting string `json:"setting"`
	Value   string `json:"value"`
	From    string `json:"from"`
}

// Layout is one role's parallel layout in specsim's terms: tensor, expert
// and pipeline parallel sizes, DP attention, and how many identical
// workers run it.
type Layout struct {
	Workers, TP, EP, PP int
	DPAttention         bool
}

// Spec is the layout in specsim's topology spelling: tpN, tpNepM, depN
// (attention data parallel over N ranks with experts over all of them),
// with ppM appended for pipeline stages.
func (l Layout) Spec() string {
	tp, ep := max(l.TP, 1), max(l.EP, 1)
	out := fmt.Sprintf("tp%d", tp)
	switch {
	case l.DPAttention && tp > 1:
		out = fmt.Sprintf("dep%d", tp)
		if ep > 1 && ep != tp {
			out += fmt.Sprintf("ep%d", ep)
		}
	case ep > 1:
		out += fmt.Sprintf("ep%d", ep)
	}
	if l.PP > 1 {
		out += fmt.Sprintf("pp%d", l.PP)
	}
	return out
}

// SettingsOptions are what the caller knows besides the recipe: the
// model and concurrency given on its command line, and which model names
// it can price.
type SettingsOptions struct {
	Model      string // given by the caller ("" to take the recipe's)
	Conc       int    // the caller's concurrency: the default, or given
	ConcGiven  bool   // Conc was given and wins over the benchmark's
	KnownModel func(name string) bool
}

// Settings is what a variant says about the deployment it serves, in the
// terms of a serving prediction; zero values are unset (the caller's
// defaults apply). Read lists every value taken and where it was, in
// order; Unsupported what the recipe sets that a prediction does not
// model.
type Settings struct {
	GPU, Model, Precision, Engine string
	// GPULine is the line of resources.gpu_type, which set GPU.
	GPULine int
	Agentic bool
	// ISL and OSL: the recipe's fixed-length benchmark (Agentic false).
	ISL, OSL int
	// Disagg: Prefill and Decode pools; otherwise one Agg instance.
	Disagg                 bool
	Agg, Prefill, Decode   Layout
	MaxRunning, GraphMaxBS int
	MemFraction            float64
	Chunk                  int
	// PrefillMaxRunning and PrefillMemFraction are the disaggregated
	// prefill role's own running cap (instance-wide, as MaxRunning) and
	// memory share; 0 = unset (MaxRunning and MemFraction are the
	// generating role's).
	PrefillMaxRunning      int
	PrefillMemFraction     float64
	KVDType, MambaSSMDType string
	MoEBackend             string
	SpecMoEBackend         string
	// AllReduceFusion and NoAllReduceFusion: SGLang's
	// --enable-flashinfer-allreduce-fusion and
	// --enforce-disable-flashinfer-allreduce-fusion.
	AllReduceFusion, NoAllReduceFusion, SpecV2 bool
	// PrefillDraft: the disaggregated prefill role speculates too.
	PrefillDraft bool
	// HiCache: the role that prefills (agg, or disaggregated prefill)
	// runs SGLang's host KV tier (enable-hierarchical-cache), sized by
	// HiCacheRatio (hicache-ratio, of the device pool) or HiCacheGB
	// (hicache-size per rank, which wins); 0 = unset.
	HiCache                 bool
	HiCacheRatio, HiCacheGB float64
	// HostTierFrom is the key path that gave the host tier its size
	// where the engine's setting is not SGLang's (TensorRT-LLM
	// kv_cache_config.host_cache_size); "" otherwise.
	HostTierFrom string
	// NoPrefixCache: the role that prefills runs without a prefix cache
	// (SGLang disable-radix-cache, vLLM no-enable-prefix-caching,
	// TensorRT-LLM kv_cache_config.enable_block_reuse false); NoPrefixCacheFrom names
	// the key.
	NoPrefixCache     bool
	NoPrefixCacheFrom string
	// MambaCache (max-mamba-cache-size) and PageSize (page-size); 0 =
	// unset. PrefillMambaCache is the disaggregated prefill role's
	// max-mamba-cache-size where it differs from the decode role's.
	MambaCache, PageSize, PrefillMambaCache int
	// MambaStrategy is mamba-scheduler-strategy of the role that prefills
	// (where the radix cache runs); "" = unset (SGLang's auto).
	MambaStrategy string
	// Steps is the draft length (0: no speculation); GoldenAL the AL the
	// recipe check expects AgentX to inject at it.
	Steps    int
	GoldenAL *float64
	// ForcedAL is the AL (bonus token included) the generation role
	// forces itself where no golden curve gives one (SGLang
	// SGLANG_SIMULATE_ACC_LEN with match-expected and real-draft-token,
	// vLLM speculative-config synthetic_acceptance_length, TensorRT-LLM
	// TLLM_SPEC_DECODE_FORCE_NUM_ACCEPTED_TOKENS + 1): what the recipe
	// check simulates such a run at; in a schema-1 recipe, which runs as
	// written (AsWritten), whatever the role forces (writtenAL); 0 = none.
	ForcedAL float64
	// ForcedMethod is SGLang's SGLANG_SIMULATE_ACC_METHOD with ForcedAL of
	// a schema-1 role: match-expected (SGLang's default) or multinomial.
	ForcedMethod string
	// AsWritten: a schema-1 recipe, which runs as written (nothing injects
	// the golden AL).
	AsWritten bool
	// Conc is the concurrency one simulated instance serves (split over
	// identical agg workers).
	Conc        int
	Read        []Setting
	Unsupported []string
}

// UnknownModelError: none of a recipe's model names is one the caller
// knows (SettingsOptions.KnownModel); the caller has to name the model.
type UnknownModelError struct{ Names []string }

func (e *UnknownModelError) Error() string {
	return fmt.Sprintf("none of the recipe's model names (%s) is a model specsim knows", strings.Join(e.Names, ", "))
}

// sglangModelled are the SGLang arguments Settings turns into the
// deployment (keys with '-').
var sglangModelled = map[string]bool{
	"tensor-parallel-size": true, "tp-size": true, "tp": true, "data-parallel-size": true, "dp-size": true, "dp": true,
	"expert-parallel-size": true, "ep-size": true, "ep": true, "enable-dp-attention": true,
	"speculative-algorithm": true, "speculative-num-steps": true, "speculative-eagle-topk": true, "speculative-num-draft-tokens": true,
	"cuda-graph-max-bs": true, "disable-cuda-graph": true, "max-running-requests": true, "mem-fraction-static": true,
	"chunked-prefill-size": true, "kv-cache-dtype": true, "mamba-ssm-dtype": true, "moe-runner-backend": true,
	"speculative-moe-runner-backend": true, "enable-flashinfer-allreduce-fusion": true, "enforce-disable-flashinfer-allreduce-fusion": true, "quantization": true,
	"served-model-name": true, "model-path": true, "pipeline-parallel-size": true, "pp-size": true,
	"enable-hierarchical-cache": true, "hicache-ratio": true, "hicache-size": true, "max-mamba-cache-size": true, "page-size": true,
	"mamba-scheduler-strategy": true, "disable-radix-cache": true,
}

// vllmModelled and trtllmModelled are the vLLM flags (keys with '-') and
// TensorRT-LLM config keys Settings reads into the deployment.
var vllmModelled = map[string]bool{
	"tensor-parallel-size": true, "data-parallel-size": true, "enable-expert-parallel": true, "pipeline-parallel-size": true,
	"speculative-config": true, "max-num-seqs": true, "served-model-name": true, "max-cudagraph-capture-size": true,
	"kv-cache-dtype": true, "gpu-memory-utilization": true, "max-num-batched-tokens": true,
	"no-enable-prefix-caching": true,
}

var trtllmModelled = map[string]bool{
	"tensor_parallel_size": true, "moe_expert_parallel_size": true, "enable_attention_dp": true, "pipeline_parallel_size": true,
	"speculative_config": true, "max_batch_size": true, "cuda_graph_config": true, "max_num_tokens": true,
}

// layoutQuiet is layout without its notes (for display).
func (s *Settings) layoutQuiet(r *Role, workers int) Layout {
	n := len(s.Unsupported)
	l := s.layout(r, workers)
	s.Unsupported = s.Unsupported[:n]
	return l
}

// engineLayoutArgs is r's layout as its engine's arguments spell it.
func engineLayoutArgs(r *Role) string {
	pp := ""
	for _, k := range []string{"pipeline-parallel-size", "pp-size", "pipeline_parallel_size"} {
		if v := argValue(r.Args, k); v != "" {
			pp = " " + k + " " + v
			break
		}
	}
	switch r.Engine {
	case EngineVLLM:
		return fmt.Sprintf("tensor-parallel-size %d data-parallel-size %d enable-expert-parallel %v%s",
			max(r.TP, 1), max(r.DP, 1), argValue(r.Args, "enable-expert-parallel") == "true", pp)
	case EngineTRTLLM:
		return fmt.Sprintf("tensor_parallel_size %d moe_expert_parallel_size %d enable_attention_dp %v%s", max(r.TP, 1), max(r.EP, 1), r.DPAttention, pp)
	}
	return fmt.Sprintf("tp %d dp %d ep %d dp-attention %v%s", max(r.TP, 1), max(r.DP, 1), max(r.EP, 1), r.DPAttention, pp)
}

// layout is r's instance layout in specsim's terms. vLLM's EP spans
// data-parallel-size x tensor-parallel-size ranks
// (vllm/model_executor/layers/fused_moe/config.py,
// FusedMoEParallelConfig.make), so dp N with expert parallelism is depN;
// TensorRT-LLM's enable_attention_dp splits attention over the
// tensor_parallel_size ranks.
func (s *Settings) layout(r *Role, workers int) Layout {
	tp, ep, pp := max(r.TP, 1), max(r.EP, 1), 1
	for _, k := range []string{"pipeline-parallel-size", "pp-size", "pipeline_parallel_size"} {
		if n, err := strconv.Atoi(argValue(r.Args, k)); err == nil && n > 1 {
			pp = n
			break
		}
	}
	l := Layout{Workers: max(workers, 1), TP: tp, EP: ep, PP: pp}
	switch r.Engine {
	case EngineVLLM:
		epOn := argValue(r.Args, "enable-expert-parallel") == "true"
		if r.DP > 1 && epOn {
			if tp > 1 {
				s.Unsupported = append(s.Unsupported, fmt.Sprintf("%s: tensor-parallel-size %d inside %d data-parallel ranks is simulated as dep%d (attention TP inside DP ranks is not modelled)", r.ArgsAt, tp, r.DP, tp*r.DP))
			}
			l.TP, l.EP, l.DPAttention = tp*r.DP, tp*r.DP, true
			return l
		}
		if epOn {
			l.EP = tp
		}
	case EngineTRTLLM:
		l.DPAttention = r.DPAttention && tp > 1
	default:
		l.DPAttention = r.DPAttention && r.DP > 1
	}
	return l
}

// Settings reads the deployment of v; vr is v's recipe check (for the
// golden AL).
func (v *Variant) Settings(vr *VariantReport, o SettingsOptions) (*Settings, error) {
	if iv := v.InvalidValues(); len(iv) > 0 {
		return nil, &InvalidValuesError{Variant: v.Name, Values: iv}
	}
	s := &Settings{Unsupported: []string{}}
	read := func(setting, value, from string) { s.Read = append(s.Read, Setting{setting, value, from}) }
	dep := v.Deployment()
	if dep.GPUType != "" {
		s.GPU, s.GPULine = dep.GPUType, dep.GPUTypeLine
		read("gpu", dep.GPUType, "resources.gpu_type")
	}
	if dep.GPUsPerNode > 0 {
		read("gpus per node", strconv.Itoa(dep.GPUsPerNode), "resources.gpus_per_node (scheduling only; the NVLink domain is the GPU's)")
	}
	if o.Model == "" {
		for _, name := range v.ModelNames {
			if o.KnownModel != nil && o.KnownModel(name) {
				s.Model = name
				read("model", name, "recipe model names")
				break
			}
		}
		if s.Model == "" {
			return nil, &UnknownModelError{Names: v.ModelNames}
		}
	} else {
		s.Model = o.Model
		read("model", o.Model, "--model")
	}
	if pr := strings.ToLower(v.ModelPrecision()); pr == "fp4" || pr == "fp8" || pr == "bf16" {
		s.Precision = pr
		read("precision", pr, "model.precision")
	}
	if v.Agentic {
		s.Agentic = true
		read("workload", "agentx", "benchmark (agentic)")
	} else if v.ISL > 0 && v.OSL > 0 {
		s.ISL, s.OSL = v.ISL, v.OSL
		typ := v.BenchType
		if typ == "" {
			typ = "fixed-length"
		}
		read("workload", fmt.Sprintf("fixed %d/%d tokens", v.ISL, v.OSL), "benchmark ("+typ+" isl/osl)")
	}
	if v.Engine != "" {
		s.Engine = v.Engine
		read("engine", v.Engine, "engine")
	}
	roles := map[string]*Role{}
	for _, r := range v.Roles {
		roles[r.Name] = r
	}
	workers := map[string]int{}
	for _, rd := range dep.Roles {
		workers[rd.Name] = max(rd.Workers, 1)
	}
	layout := func(r *Role) Layout { return s.layout(r, workers[r.Name]) }
	var gen *Role
	switch {
	case roles["prefill"] != nil && roles["decode"] != nil:
		gen = roles["decode"]
		s.Disagg, s.Prefill, s.Decode = true, layout(roles["prefill"]), layout(gen)
		s.Prefill.Workers, s.Decode.Workers = workers["prefill"], workers["decode"]
	case roles["agg"] != nil:
		gen = roles["agg"]
		s.Agg = layout(gen)
		if n := workers["agg"]; n > 1 {
			s.Unsupported = append(s.Unsupported, fmt.Sprintf("roles.agg.workers %d: one instance is simulated at concurrency/%d (identical replicas, even split)", n, n))
		}
	default:
		var names []string
		for _, r := range v.Roles {
			names = append(names, r.Name)
		}
		return nil, fmt.Errorf("no agg role and no prefill+decode pair (roles: %s)", strings.Join(names, ", "))
	}
	for _, r := range v.Roles {
		l := s.layoutQuiet(r, workers[r.Name])
		read(r.Name+" topology", fmt.Sprintf("%s, %d worker(s)", l.Spec(), workers[r.Name]), r.ArgsAt+" ("+engineLayoutArgs(r)+")")
	}
	// Caps and engine settings come from the generating role (decode or agg).
	if gen.MaxRunning > 0 {
		s.MaxRunning = gen.MaxRunning
		value := strconv.Itoa(gen.MaxRunning)
		// specsim's cap is instance-wide (SGLang's max-running-requests,
		// divided by dp_size); vLLM's max-num-seqs is per DP engine and
		// TensorRT-LLM's max_batch_size per attention-DP rank.
		genLayout := s.Agg
		if s.Disagg {
			genLayout = s.Decode
		}
		if dp := genLayout.TP; genLayout.DPAttention && dp > 1 && (gen.Engine == EngineVLLM || gen.Engine == EngineTRTLLM) {
			s.MaxRunning = gen.MaxRunning * dp
			value = fmt.Sprintf("%d (%d per DP rank x %d ranks)", s.MaxRunning, gen.MaxRunning, dp)
		}
		read("max running requests", value, gen.ArgsAt+"."+gen.MaxRunningKey)
	}
	if p := roles["prefill"]; s.Disagg && p.MaxRunning > 0 {
		s.PrefillMaxRunning = p.MaxRunning
		value := strconv.Itoa(p.MaxRunning)
		if dp := s.Prefill.TP; s.Prefill.DPAttention && dp > 1 && (p.Engine == EngineVLLM || p.Engine == EngineTRTLLM) {
			s.PrefillMaxRunning = p.MaxRunning * dp
			value = fmt.Sprintf("%d (%d per DP rank x %d ranks)", s.PrefillMaxRunning, p.MaxRunning, dp)
		}
		read("prefill max running", value, p.ArgsAt+"."+p.MaxRunningKey)
	}
	if gen.CUDAGraphMaxBS > 0 {
		s.GraphMaxBS = gen.CUDAGraphMaxBS
		read("cuda graph max bs", strconv.Itoa(gen.CUDAGraphMaxBS), gen.ArgsAt+"."+gen.CUDAGraphKey)
	}
	if gen.CUDAGraphDisable {
		s.Unsupported = append(s.Unsupported, gen.ArgsAt+": CUDA graphs disabled (not modelled: graphs are assumed)")
	}
	sglang := gen.Engine == EngineSGLang
	switch gen.Engine {
	case EngineSGLang:
		s.sglangArgs(gen, roles["prefill"], read)
	case EngineVLLM, EngineTRTLLM:
		s.vllmTRTArgs(gen, roles["prefill"], read)
	}
	cacheRole := gen
	if s.Disagg {
		cacheRole = roles["prefill"]
	}
	for _, r := range v.Roles {
		s.unmodelled(r, sglang, r == cacheRole)
	}
	// Speculation: the draft length and the golden AL AgentX injects.
	if gen.Spec != nil && gen.Spec.DraftLength > 0 {
		s.Steps = gen.Spec.DraftLength
		spec := fmt.Sprintf("%s, k = %d, topk %d", gen.Spec.Algorithm, gen.Spec.DraftLength, gen.Spec.TopK)
		if gen.Spec.NumDraftTokens > 0 { // SGLang's speculative-num-draft-tokens; vLLM and TRT-LLM have none
			spec += fmt.Sprintf(", draft tokens %d", gen.Spec.NumDraftTokens)
		}
		read("speculative", spec, gen.ArgsAt+"."+gen.Spec.DraftLengthKey)
		if gen.Spec.TopK > 1 {
			s.Unsupported = append(s.Unsupported, fmt.Sprintf("speculative topk %d: tree drafts are not modelled (chains of k)", gen.Spec.TopK))
		}
	}
	// A disaggregated prefill role that speculates too holds the draft's
	// weights and KV and runs its forward in prefill (Server.PrefillDraft).
	if p := roles["prefill"]; s.Disagg && p.Spec != nil && p.Spec.DraftLength > 0 {
		s.PrefillDraft = true
		read("prefill draft", fmt.Sprintf("%s, k = %d: prefill workers load the draft too", p.Spec.Algorithm, p.Spec.DraftLength), p.ArgsAt+"."+p.Spec.DraftLengthKey)
	}
	s.AsWritten = vr != nil && vr.asWritten
	if vr != nil {
		for _, rr := range vr.Roles {
			if rr.Role == gen.Name && rr.ExpectedAL != nil {
				s.GoldenAL = rr.ExpectedAL
				how := "golden curve (injected by AgentX synthetic acceptance)"
				switch {
				case s.AsWritten:
					how = "golden curve (what recipe check expects; a schema-1 recipe runs as written, so nothing injects it)"
				case !v.Agentic:
					how = "golden curve (the expectation of real acceptance: the benchmark is not AgentX, so nothing injects it)"
				}
				read("golden AL", FormatAL(*rr.ExpectedAL), how)
			}
		}
	}
	switch {
	case s.Steps > 0 && s.AsWritten:
		al, method, where, off := writtenAL(gen, s.Steps)
		switch {
		case al > 0:
			s.ForcedAL, s.ForcedMethod = al, method
			read("acceptance length", FormatAL(al), where+" (a schema-1 recipe runs as written)")
		case s.GoldenAL != nil:
			if off == "" {
				off = "the recipe forces no acceptance"
			}
			read("acceptance length", FormatAL(*s.GoldenAL), "the golden AL, the expectation of real acceptance: "+off+" and a schema-1 recipe gets nothing injected, so the run measures real acceptance")
		}
	case s.Steps > 0 && s.GoldenAL == nil:
		if al, where, ok := handSetAL(gen); ok {
			s.ForcedAL = al
			read("acceptance length", FormatAL(al), where+" (the role forces it; no golden curve gives one)")
		}
	}
	s.Conc = o.Conc
	switch {
	case v.Concurrency > 0 && !o.ConcGiven:
		s.Conc = v.Concurrency
		read("concurrency", strconv.Itoa(v.Concurrency), "benchmark")
	case o.ConcGiven:
		// Say what the flag overrode, as predict --recipe's rule for every
		// flag does (the recipe's benchmark, else its variant's name).
		from := "--conc (the recipe names none)"
		switch n, ok := NameConcurrency(v.Name, v.JobName); {
		case v.Concurrency > 0:
			from = fmt.Sprintf("overridden by --conc (the recipe's %d from its benchmark)", v.Concurrency)
		case ok:
			from = fmt.Sprintf("overridden by --conc (the recipe's %d from the variant's name)", n)
		}
		read("concurrency", strconv.Itoa(o.Conc), from)
	default:
		if n, ok := NameConcurrency(v.Name, v.JobName); ok {
			s.Conc = n
			names := v.Name
			if v.JobName != "" && v.JobName != v.Name {
				names += " / " + v.JobName
			}
			read("concurrency", strconv.Itoa(n), fmt.Sprintf("the variant's name (%s): InferenceX names its recipes after the conc-list it benchmarks them at; srt-slurm itself reads no concurrency from a name", names))
			break
		}
		read("concurrency", strconv.Itoa(o.Conc), "--conc default (the recipe names none)")
	}
	if n := workers["agg"]; !s.Disagg && n > 1 {
		s.Conc = max(1, (s.Conc+n-1)/n)
	}
	return s, nil
}

// sglangArgs reads the SGLang arguments of the generating role (and the
// prefill role's chunk size) that a prediction models.
func (s *Settings) sglangArgs(gen, prefill *Role, read func(setting, value, from string)) {
	arg := func(r *Role, key string) string { return argValue(r.Args, key) }
	if v := arg(gen, "mem-fraction-static"); v != "" {
		if f, err := strconv.ParseFloat(v, 64); err == nil && f > 0 && f <= 1 {
			s.MemFraction = f
			read("mem fraction", v, gen.ArgsAt+".mem-fraction-static")
		}
	}
	chunkRole := gen
	if prefill != nil {
		chunkRole = prefill
		s.prefillMemFraction(prefill, arg(prefill, "mem-fraction-static"), arg(gen, "mem-fraction-static"), "mem-fraction-static", read)
		s.decodeChunk(gen, prefill, "chunked-prefill-size", arg(gen, "chunked-prefill-size"), arg(prefill, "chunked-prefill-size"))
	}
	if v := arg(chunkRole, "chunked-prefill-size"); v != "" {
		if n, err := strconv.Atoi(v); err == nil && n > 0 {
			s.Chunk = n
			read("chunked prefill", v, "chunked-prefill-size")
		} else {
			s.Unsupported = append(s.Unsupported, chunkRole.ArgsAt+".chunked-prefill-size -1: unchunked prefill is not modelled (simulated with the default chunk)")
		}
	}
	if v := arg(gen, "kv-cache-dtype"); v != "" {
		s.kvDType(v, gen.ArgsAt+".kv-cache-dtype", read)
	}
	for _, a := range []struct {
		key, setting string
		to           *string
	}{
		{"mamba-ssm-dtype", "mamba ssm dtype", &s.MambaSSMDType},
		{"moe-runner-backend", "moe runner backend", &s.MoEBackend},
		{"speculative-moe-runner-backend", "speculative moe runner backend", &s.SpecMoEBackend},
	} {
		if v := arg(gen, a.key); v != "" {
			*a.to = v
			read(a.setting, v, gen.ArgsAt+"."+a.key)
		}
	}
	if v := arg(gen, "enable-flashinfer-allreduce-fusion"); v == "true" {
		s.AllReduceFusion = true
		read("flashinfer allreduce fusion", v, gen.ArgsAt+".enable-flashinfer-allreduce-fusion")
	}
	if v := arg(gen, "enforce-disable-flashinfer-allreduce-fusion"); v == "true" {
		s.NoAllReduceFusion = true
		read("flashinfer allreduce fusion disabled", v, gen.ArgsAt+".enforce-disable-flashinfer-allreduce-fusion")
	}
	if v := gen.Env["SGLANG_ENABLE_SPEC_V2"]; v == "1" || strings.EqualFold(v, "true") {
		s.SpecV2 = true
		read("spec v2", v, gen.EnvFrom["SGLANG_ENABLE_SPEC_V2"])
	}
	// HiCache's host tier backs the prefix cache, which runs where
	// prompts are prefilled: the agg role, or the disaggregated prefill
	// role (decode workers run with --disable-radix-cache).
	cache := gen
	if prefill != nil {
		cache = prefill
	}
	if v := cache.Args.Get("disable-radix-cache"); v.Bool() {
		s.NoPrefixCache, s.NoPrefixCacheFrom = true, cache.ArgsAt+".disable-radix-cache"
		read("prefix cache", "off", s.NoPrefixCacheFrom)
	}
	if v := arg(cache, "enable-hierarchical-cache"); v == "true" {
		s.HiCache = true
		read("hicache", v, cache.ArgsAt+".enable-hierarchical-cache")
		if f, err := strconv.ParseFloat(arg(cache, "hicache-ratio"), 64); err == nil && f > 0 {
			s.HiCacheRatio = f
			read("hicache ratio", arg(cache, "hicache-ratio"), cache.ArgsAt+".hicache-ratio")
		}
		if f, err := strconv.ParseFloat(arg(cache, "hicache-size"), 64); err == nil && f > 0 {
			s.HiCacheGB = f
			read("hicache size GB", arg(cache, "hicache-size"), cache.ArgsAt+".hicache-size")
		}
	}
	if v := arg(cache, "mamba-scheduler-strategy"); v != "" {
		s.MambaStrategy = v
		read("mamba strategy", v, cache.ArgsAt+".mamba-scheduler-strategy")
	}
	// max-mamba-cache-size per role: the prefill role's own value where it
	// differs (predict's --prefill-max-mamba-cache-size).
	if prefill != nil {
		g, pv := arg(gen, "max-mamba-cache-size"), arg(prefill, "max-mamba-cache-size")
		if n, err := strconv.Atoi(pv); err == nil && n > 0 && pv != g {
			s.PrefillMambaCache = n
			read("prefill mamba cache", pv, prefill.ArgsAt+".max-mamba-cache-size")
		}
	}
	// One value for every role: a disaggregated recipe whose roles differ
	// is listed, not applied (the mamba pool: the decode role's value,
	// the prefill role's above).
	for _, a := range []struct {
		key, setting string
		to           *int
	}{
		{"max-mamba-cache-size", "max mamba cache size", &s.MambaCache},
		{"page-size", "page size", &s.PageSize},
	} {
		v := arg(gen, a.key)
		n, err := strconv.Atoi(v)
		if prefill != nil && arg(prefill, a.key) != v && a.key != "max-mamba-cache-size" {
			s.Unsupported = append(s.Unsupported, fmt.Sprintf("%s differs by role (%s.%s %q, %s.%s %q): a prediction sets one value for every role, so neither is applied",
				a.key, prefill.ArgsAt, a.key, arg(prefill, a.key), gen.ArgsAt, a.key, v))
			continue
		}
		if err == nil && n > 0 {
			*a.to = n
			read(a.setting, v, gen.ArgsAt+"."+a.key)
		}
	}
}

// vllmTRTArgs reads the vLLM arguments (vllm/engine/arg_utils.py
// spelling) and TensorRT-LLM config keys (tensorrt_llm/llmapi/llm_args.py)
// a prediction models: the KV cache dtype, the memory share (vLLM
// gpu-memory-utilization; TensorRT-LLM kv_cache_config.free_gpu_memory_fraction,
// which predict's --mem-fraction means under --engine trtllm) and the
// prefill chunk (max-num-batched-tokens, max_num_tokens), as recipe emit
// writes them.
func (s *Settings) vllmTRTArgs(gen, prefill *Role, read func(setting, value, from string)) {
	chunkRole := gen
	if prefill != nil {
		chunkRole = prefill
	}
	kvKey, memKey, chunkKey := "kv-cache-dtype", "gpu-memory-utilization", "max-num-batched-tokens"
	kv, mem := argValue(gen.Args, kvKey), argValue(gen.Args, memKey)
	if gen.Engine == EngineTRTLLM {
		kvKey, memKey, chunkKey = "kv_cache_config.dtype", "kv_cache_config.free_gpu_memory_fraction", "max_num_tokens"
		kv, mem = "", ""
		if gen.Args != nil {
			kv = gen.Args.Get("kv_cache_config", "dtype").String()
			mem = gen.Args.Get("kv_cache_config", "free_gpu_memory_fraction").String()
		}
	}
	if f, err := strconv.ParseFloat(mem, 64); err == nil && f > 0 && f <= 1 {
		s.MemFraction = f
		read("mem fraction", mem, gen.ArgsAt+"."+memKey)
	}
	if prefill != nil {
		pmem := argValue(prefill.Args, memKey)
		if gen.Engine == EngineTRTLLM {
			pmem = ""
			if prefill.Args != nil {
				pmem = prefill.Args.Get("kv_cache_config", "free_gpu_memory_fraction").String()
			}
		}
		s.prefillMemFraction(prefill, pmem, mem, memKey, read)
		s.decodeChunk(gen, prefill, chunkKey, argValue(gen.Args, chunkKey), argValue(prefill.Args, chunkKey))
	}
	if n, err := strconv.Atoi(argValue(chunkRole.Args, chunkKey)); err == nil && n > 0 {
		s.Chunk = n
		read("chunked prefill", strconv.Itoa(n), chunkRole.ArgsAt+"."+chunkKey)
	}
	if kv != "" {
		s.kvDType(kv, gen.ArgsAt+"."+kvKey, read)
	}
	if gen.Engine == EngineTRTLLM {
		s.trtCache(chunkRole, read)
	} else if v := chunkRole.Args.Get("no-enable-prefix-caching"); v.Bool() {
		// vLLM's prefix caching is on unless the role that prefills turns it off.
		s.NoPrefixCache, s.NoPrefixCacheFrom = true, chunkRole.ArgsAt+".no-enable-prefix-caching"
		read("prefix cache", "off", s.NoPrefixCacheFrom)
	}
}

// prefillMemFraction takes the disaggregated prefill role's memory share
// (key) where it differs from the generating role's.
func (s *Settings) prefillMemFraction(prefill *Role, v, genV, key string, read func(setting, value, from string)) {
	if prefill == nil || v == "" || v == genV {
		return
	}
	if f, err := strconv.ParseFloat(v, 64); err == nil && f > 0 && f <= 1 {
		s.PrefillMemFraction = f
		read("prefill mem fraction", v, prefill.ArgsAt+"."+key)
	}
}

// decodeChunk lists the decode role's prefill chunk where it differs from
// the prefill role's: a prediction's decode workers never prefill (the
// prefill workers do, with their own chunk), so it is not applied.
func (s *Settings) decodeChunk(gen, prefill *Role, key, v, pv string) {
	if v == "" || v == pv {
		return
	}
	if pv == "" {
		pv = "(unset)"
	}
	s.Unsupported = append(s.Unsupported, fmt.Sprintf("%s.%s %s: decode workers do not prefill in a prediction, so only %s.%s %s applies",
		gen.ArgsAt, key, v, prefill.ArgsAt, key, pv))
}

// trtCache reads the prefix cache and host tier of the TensorRT-LLM role
// that prefills (the agg role, or the disaggregated prefill role), from
// its kv_cache_config (tensorrt_llm/llmapi/llm_args.py KvCacheConfig):
// enable_block_reuse (default true) is the prefix cache, host_cache_size
// the bytes of host memory each rank's KV cache manager offloads reusable
// blocks to. The planner sizes the host tier in GB (1e9 bytes, as SGLang's
// hicache-size) per rank, which is per GPU.
func (s *Settings) trtCache(r *Role, read func(setting, value, from string)) {
	if r.Args == nil {
		return
	}
	if v := r.Args.Get("kv_cache_config", "enable_block_reuse"); v != nil && v.Kind == Scalar && !v.Bool() {
		s.NoPrefixCache, s.NoPrefixCacheFrom = true, r.ArgsAt+".kv_cache_config.enable_block_reuse"
		read("prefix cache", "off", s.NoPrefixCacheFrom)
	}
	if n, ok := r.Args.Get("kv_cache_config", "host_cache_size").Int(); ok && n > 0 {
		s.HiCache, s.HiCacheGB = true, float64(n)/1e9
		s.HostTierFrom = r.ArgsAt + ".kv_cache_config.host_cache_size"
	}
}

// kvDType takes a valid KV cache dtype (InvalidValues has checked it):
// FP8 variants as fp8, auto and BF16 as bf16, the rest (FP4 KV) listed.
func (s *Settings) kvDType(v, from string, read func(setting, value, from string)) {
	if !modelledKVDType(v) {
		s.Unsupported = append(s.Unsupported, fmt.Sprintf("%s %s: this KV cache dtype is not modelled (simulated with the query's)", from, v))
		return
	}
	s.KVDType = map[bool]string{true: "fp8", false: "bf16"}[strings.HasPrefix(v, "fp8")]
	read("kv cache dtype", v, from)
}

// unmodelled lists r's engine arguments and environment that a
// prediction does not model.
func (s *Settings) unmodelled(r *Role, sglang, cacheRole bool) {
	if r.Args == nil || r.Args.Kind != Map {
		return
	}
	var extra []string
	for _, k := range r.Args.Keys {
		nk := strings.ReplaceAll(k, "_", "-")
		if sglang && sglangModelled[nk] ||
			r.Engine == EngineVLLM && vllmModelled[nk] || r.Engine == EngineTRTLLM && trtllmModelled[k] {
			continue
		}
		if r.Engine == EngineTRTLLM && k == "kv_cache_config" && r.Args.Fields[k].Kind == Map {
			kv := r.Args.Fields[k]
			for _, sk := range kv.Keys {
				// enable_block_reuse: the prefilling role's is read; a
				// decode role never has a prefix cache in a prediction.
				read := sk == "dtype" || sk == "free_gpu_memory_fraction" || sk == "enable_block_reuse" || cacheRole && sk == "host_cache_size"
				if !read {
					extra = append(extra, k+"."+sk+"="+argPreview(kv.Fields[sk]))
				}
			}
			continue
		}
		extra = append(extra, k+"="+argPreview(r.Args.Fields[k]))
	}
	if len(extra) > 0 {
		s.Unsupported = append(s.Unsupported, fmt.Sprintf("%s: not modelled: %s", r.ArgsAt, strings.Join(extra, ", ")))
	}
	var env []string
	for k := range r.Env {
		if k != "SGLANG_ENABLE_SPEC_V2" && !strings.HasPrefix(k, "SGLANG_SIMULATE_ACC") {
			env = append(env, k)
		}
	}
	sort.Strings(env)
	if len(env) > 0 {
		s.Unsupported = append(s.Unsupported, fmt.Sprintf("roles.%s env not modelled: %s", r.Name, strings.Join(env, ", ")))
	}
}

// CheckAL notes where the AL a prediction simulates at Steps differs from
// the golden AL the recipe check expects by more than the recipes'
// two-decimal rounding.
func (s *Settings) CheckAL(simulated float64, source string) {
	if s.GoldenAL == nil || s.Steps == 0 {
		return
	}
	if d := simulated - *s.GoldenAL; d >= 0.006 || d <= -0.006 {
		s.Unsupported = append(s.Unsupported, fmt.Sprintf("the recipe's golden AL %s differs from the AL simulated, %.2f (%s)", FormatAL(*s.GoldenAL), simulated, source))
	}
}

// writtenAL is the acceptance a speculative role at draft length k runs
// with as the recipe writes it: al in tokens per verify step including the
// bonus token (0 where it forces none; off then says why a value it sets
// does not force), the SGLang method, and where it is set.
//
// SGLang (sgl-project/sglang python/sglang/srt/speculative/spec_utils.py
// sample_simulated_acc_len, as simulate/acceptance cites it):
// SGLANG_SIMULATE_ACC_LEN counts the bonus token and is clamped to
// [1, k+1]; a value that does not parse (SGLang reads -1) or is <= 0 turns
// the simulation off; SGLANG_SIMULATE_ACC_METHOD defaults to
// match-expected. TensorRT-LLM (tensorrt_llm/_torch/speculative/
// interface.py SpecWorkerBase._apply_force_accepted_tokens):
// TLLM_SPEC_DECODE_FORCE_NUM_ACCEPTED_TOKENS counts accepted drafts, AL -
// 1, capped at k; 0 turns it off, and the two-model path parses it as an
// integer, so a fraction turns it off there (checkTRTTwoModel). vLLM:
// speculative-config synthetic_acceptance_length counts the bonus token
// and needs rejection_sample_method synthetic.
func writtenAL(r *Role, k int) (al float64, method, where, off string) {
	if r == nil || r.Spec == nil {
		return 0, "", "", ""
	}
	at := "roles." + r.Name
	clamp := func(v float64, note string) (float64, string) {
		if v > float64(k+1) {
			return float64(k + 1), fmt.Sprintf("%s; clamped to k+1 = %d", note, k+1)
		}
		return max(v, 1), note
	}
	switch r.Engine {
	case EngineSGLang:
		v, ok := r.Env[sglangLen]
		if !ok {
			return 0, "", "", ""
		}
		f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if err != nil || f <= 0 {
			return 0, "", "", fmt.Sprintf("%s %s is %q, which turns SGLang's simulated acceptance off", at, sglangLen, v)
		}
		method = strings.TrimSpace(r.Env[sglangMethod])
		if method == "" {
			method = agentxMethod
		}
		al, where = clamp(f, fmt.Sprintf("%s %s %s (bonus token included), %s", at, sglangLen, FormatAL(f), method))
		return al, method, where, ""
	case EngineTRTLLM:
		v, ok := r.Env[trtForced]
		if !ok {
			return 0, "", "", ""
		}
		f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		switch {
		case err != nil || f <= 0:
			return 0, "", "", fmt.Sprintf("%s %s is %q, which forces nothing", at, trtForced, v)
		case r.Spec.TwoModel != "" && f != math.Trunc(f):
			return 0, "", "", fmt.Sprintf("%s %s is %s, a fraction, which TensorRT-LLM's two-model path (%s) reads as no override", at, trtForced, v, r.Spec.TwoModel)
		}
		al, where = clamp(f+1, fmt.Sprintf("%s %s %s accepted drafts + the bonus token", at, trtForced, FormatAL(f)))
		return al, "", where, ""
	case EngineVLLM:
		s := r.Spec
		if s.SyntheticAL == nil {
			return 0, "", "", ""
		}
		if *s.SyntheticAL <= 0 || s.RejectionSampleMethod != vllmSyntheticMethod {
			return 0, "", "", fmt.Sprintf("%s speculative-config synthetic_acceptance_length %s without rejection_sample_method %s forces nothing", at, FormatAL(*s.SyntheticAL), vllmSyntheticMethod)
		}
		al, where = clamp(*s.SyntheticAL, fmt.Sprintf("%s speculative-config synthetic_acceptance_length %s (bonus token included)", at, FormatAL(*s.SyntheticAL)))
		return al, "", where, ""
	}
	if f, w, ok := handSetAL(r); ok {
		al, where = clamp(f, w)
		return al, "", where, ""
	}
	return 0, "", "", ""
}

// argValue is an engine argument's scalar text, with '-' or '_' spelling.
func argValue(args *Value, key string) string {
	if args == nil {
		return ""
	}
	if s := args.Get(key).String(); s != "" {
		return s
	}
	return args.Get(strings.ReplaceAll(key, "-", "_")).String()
}

func argPreview(v *Value) string {
	if s := v.String(); s != "" {
		if len(s) > 40 {
			return s[:37] + "..."
		}
		return s
	}
	return "{...}"
}
