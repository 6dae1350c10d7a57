package recipe

import (
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// Role names, as srt-slurm's roles: block spells them.
const (
	RoleAgg     = "agg"
	RolePrefill = "prefill"
	RoleDecode  = "decode"
)

var roleOrder = []string{RoleAgg, RolePrefill, RoleDecode}

// schema-1 mode keys (backend.<mode>_environment, <engine>_config.<mode>).
var roleMode = map[string]string{RoleAgg: "aggregated", RolePrefill: "prefill", RoleDecode: "decode"}

// Engines, normalised from the names recipes and InferenceX frameworks use.
const (
	EngineSGLang = "sglang"
	EngineVLLM   = "vllm"
	EngineTRTLLM = "trtllm"
	EngineATOM   = "atom"
	EngineTileRT = "tilert"
)

func normaliseEngine(s string) string {
	s = strings.ToLower(strings.TrimSpace(s))
	switch s {
	case "sglang", "sglang-disagg", "dynamo-sglang":
		return EngineSGLang
	case "vllm", "vllm-disagg", "dynamo-vllm":
		return EngineVLLM
	case "trtllm", "trt", "trt-llm", "tensorrt-llm", "tensorrt_llm", "dynamo-trt":
		return EngineTRTLLM
	case "atom", "atom-disagg":
		return EngineATOM
	case "tilert":
		return EngineTileRT
	}
	return s
}

// Spec is a role's speculative-decoding setup. Zero numbers are unset.
type Spec struct {
	Algorithm      string // NEXTN, EAGLE, EAGLE3, MTP, dspark, ...
	DraftLength    int    // k: SGLang speculative-num-steps, vLLM num_speculative_tokens, TRT max_draft_len
	DraftLengthKey string // where k came from
	DraftLengthBad string // k's text when it is not a positive integer
	TopK           int
	NumDraftTokens int
	// DraftQuantization is SGLang's speculative-draft-model-quantization
	// or vLLM's speculative_config.quantization; "" when not set, which
	// means "as the target" in SGLang.
	DraftQuantization string
	DraftModel        string
	DraftSampleMethod string // vLLM draft_sample_method (DSpark curves depend on it)
	// MoERunner is the draft's MoE runner backend after SGLang's default
	// (the target's runner) is applied.
	MoERunner string
	// vLLM synthetic rejection sampling as the recipe sets it.
	RejectionSampleMethod string
	SyntheticAL           *float64
	AlgorithmConflict     string // second, disagreeing algorithm spelling
	// TwoModel names why a TensorRT-LLM role runs the two-model
	// speculative path ("" = one-model).
	TwoModel string
	// NextNOnly is TensorRT-LLM's num_nextn_predict_layers when it is set
	// without max_draft_len.
	NextNOnly string
}

// Role is one worker role of a variant after inheritance.
type Role struct {
	Name   string
	Engine string
	Spec   *Spec // nil: no speculative decoding
	// Env is the environment the worker starts with: the role's env with
	// the recipe-wide environment applied after it (srt-slurm applies the
	// recipe-wide block last, so it wins).
	Env map[string]string
	// EnvFrom says where each Env key came from, e.g. "roles.decode.env"
	// or "environment" (recipe-wide).
	EnvFrom map[string]string
	Args    *Value // engine arguments (CLI flags or engine config)
	ArgsAt  string // "roles.decode.args" or "backend.sglang_config.decode"

	Quantization     string
	MoERunner        string
	TP, DP, EP       int
	DPAttention      bool
	MaxRunning       int // SGLang max-running-requests, TRT max_batch_size, vLLM max-num-seqs
	MaxRunningKey    string
	CUDAGraphMaxBS   int // 0 when unset or graphs are off
	CUDAGraphKey     string
	CUDAGraphDisable bool
}

// Variant is one resolved recipe.
type Variant struct {
	Name    string
	JobName string
	Engine  string
	Roles   []*Role
	// RecipeEnv is the recipe-wide environment block.
	RecipeEnv map[string]string
	// ModelNames are the names the recipe gives its model, most specific
	// first: served-model-name, the engine's model flags, identity.model.repo,
	// model.path.
	ModelNames []string
	Agentic    bool
	// Container is the engine image or srt-slurm alias the recipe pins
	// (model.container).
	Container string
	// Concurrency is the largest benchmark concurrency the recipe names, 0
	// when it names none.
	Concurrency int
	// ISL and OSL are a fixed-length benchmark's input and output lengths
	// (benchmark.isl and benchmark.osl, as srt-slurm's sa-bench takes
	// them), 0 when the recipe names none.
	ISL, OSL int
	// BenchType is benchmark.type (sa-bench, agentic, ...).
	BenchType string

	tree    *Value
	section *Value // the override merged onto base, to tell inherited settings apart
}

// Role returns the named role or nil.
func (v *Variant) Role(name string) *Role {
	for _, r := range v.Roles {
		if r.Name == name {
			return r
		}
	}
	return nil
}

// Generation is the role whose draft length defines the AL target: decode
// when there is one, else agg (InferenceX: "generation defines the AL").
func (v *Variant) Generation() *Role {
	if r := v.Role(RoleDecode); r != nil {
		return r
	}
	return v.Role(RoleAgg)
}

func engineOf(tree *Value) (string, error) {
	if e := tree.Get("engine"); e != nil {
		if e.Kind == Scalar {
			return knownEngine("engine", e)
		}
		if t := e.Get("type"); t != nil {
			return knownEngine("engine.type", t)
		}
		return "", fmt.Errorf("line %d: engine is a %s, not an engine name or a mapping with a type", e.Line, e.Kind)
	}
	if t := tree.Get("backend", "type"); t != nil {
		return knownEngine("backend.type", t)
	}
	return EngineSGLang, nil // srt-slurm's default backend type
}

// knownEngine resolves an engine name. A name no engine has (a typo such as
// "sglng") or a value with a YAML tag PyYAML would not load as a string
// is an error: the checks for an unknown engine would all be skipped, and
// srt-slurm would not run the recipe either.
func knownEngine(at string, v *Value) (string, error) {
	if v.Kind != Scalar {
		return "", fmt.Errorf("line %d: %s is a %s, not an engine name", v.Line, at, v.Kind)
	}
	if v.Tag != "" && v.Tag != "!!str" {
		return "", fmt.Errorf("line %d: %s %q carries the YAML tag %s; want a plain string", v.Line, at, v.Str, v.Tag)
	}
	e := normaliseEngine(v.Str)
	if _, ok := engineConfigKey[e]; !ok {
		return "", fmt.Errorf("line %d: %s %q is not an engine specsim knows: want sglang, vllm, trtllm, atom or tilert (or their srt-slurm and dynamo aliases)", v.Line, at, v.Str)
	}
	return e, nil
}

var engineConfigKey = map[string]string{
	EngineSGLang: "sglang_config", EngineVLLM: "vllm_config", EngineTRTLLM: "trtllm_config",
	EngineATOM: "atom_config", EngineTileRT: "tilert_config",
}

// scalarMap renders a mapping of scalars (an env block) as strings; nulls
// are left out, nested values rendered compactly.
func scalarMap(v *Value) map[string]string {
	out := map[string]string{}
	if v == nil || v.Kind != Map {
		return out
	}
	for _, k := range v.Keys {
		f := v.Fields[k]
		switch f.Kind {
		case Scalar:
			out[k] = f.Str
		case Null:
		default:
			b, _ := json.Marshal(toAny(f))
			out[k] = string(b)
		}
	}
	return out
}

// toAny converts a Value to plain Go values (for JSON-encoded arguments).
func toAny(v *Value) any {
	if v == nil {
		return nil
	}
	switch v.Kind {
	case Scalar:
		switch v.Tag {
		case "!!int", "!!float":
			if f, ok := v.Float(); ok {
				return f
			}
		case "!!bool":
			return v.Bool()
		}
		return v.Str
	case Map:
		m := map[string]any{}
		for _, k := range v.Keys {
			m[k] = toAny(v.Fields[k])
		}
		return m
	case List:
		l := make([]any, len(v.Items))
		for i, it := range v.Items {
			l[i] = toAny(it)
		}
		return l
	}
	return nil
}

// resolveVariant fills a Variant from a merged tree.
func resolveVariant(name string, tree, section *Value) (*Variant, error) {
	if tree.Kind != Map {
		return nil, fmt.Errorf("variant %s is not a mapping", name)
	}
	engine, err := engineOf(tree)
	if err != nil {
		return nil, err
	}
	v := &Variant{Name: name, JobName: tree.Get("name").String(), Engine: engine, tree: tree, section: section}
	v.RecipeEnv = scalarMap(tree.Get("environment"))
	cfgKey := engineConfigKey[v.Engine]

	roles := tree.Get("roles")
	for _, rn := range roleOrder {
		var env, args *Value
		var envAt, argsAt string
		present := false
		if roles != nil && roles.Kind == Map {
			if spec := roles.Fields[rn]; spec != nil {
				present = true
				env, args = spec.Get("env"), spec.Get("args")
				envAt, argsAt = "roles."+rn+".env", "roles."+rn+".args"
				if e := spec.Get("engine"); e != nil {
					pe, err := knownEngine("roles."+rn+".engine", e)
					if err != nil {
						return nil, err
					}
					// a per-role engine must agree with the recipe's; srt-slurm rejects a mix
					if pe != v.Engine && tree.Get("engine") != nil {
						return nil, fmt.Errorf("line %d: roles.%s.engine %q conflicts with engine %q", e.Line, rn, e.Str, v.Engine)
					}
				}
			}
		}
		if !present {
			mode := roleMode[rn]
			env = tree.Get("backend", mode+"_environment")
			args = tree.Get("backend", cfgKey, mode)
			envAt, argsAt = "backend."+mode+"_environment", "backend."+cfgKey+"."+mode
			present = env != nil || args != nil
			if !present {
				if n := tree.Get("resources", rn+"_nodes"); n != nil && n.Kind == Scalar {
					present = true
				}
			}
		}
		if !present {
			continue
		}
		r := &Role{Name: rn, Engine: v.Engine, Env: map[string]string{}, EnvFrom: map[string]string{}, Args: args, ArgsAt: argsAt}
		if args == nil || args.Kind != Map {
			r.Args = &Value{Kind: Map, Fields: map[string]*Value{}}
		}
		for k, val := range scalarMap(env) {
			r.Env[k], r.EnvFrom[k] = val, envAt
		}
		for k, val := range v.RecipeEnv {
			r.Env[k], r.EnvFrom[k] = val, "environment"
		}
		if err := resolveEngineArgs(r); err != nil {
			return nil, err
		}
		v.Roles = append(v.Roles, r)
	}
	v.ModelNames = modelNames(tree, v.Roles)
	v.Agentic = agentic(tree)
	v.Container = tree.Get("model", "container").String()
	v.Concurrency = concurrency(tree)
	v.BenchType = tree.Get("benchmark", "type").String()
	v.ISL, v.OSL = benchLen(tree, "isl", "ISL"), benchLen(tree, "osl", "OSL")
	return v, nil
}

func firstInt(args *Value, keys ...string) (int, string) {
	for _, k := range keys {
		if n, ok := args.Get(k).Int(); ok {
			return n, k
		}
	}
	return 0, ""
}

func firstStr(args *Value, keys ...string) string {
	for _, k := range keys {
		if s := args.Get(k).String(); s != "" {
			return s
		}
	}
	return ""
}

func resolveEngineArgs(r *Role) error {
	a := r.Args
	switch r.Engine {
	case EngineSGLang:
		r.Quantization = firstStr(a, "quantization")
		r.MoERunner = firstStr(a, "moe-runner-backend")
		r.TP, _ = firstInt(a, "tensor-parallel-size", "tp-size", "tp")
		r.DP, _ = firstInt(a, "data-parallel-size", "dp-size", "dp")
		r.EP, _ = firstInt(a, "expert-parallel-size", "ep-size", "ep")
		r.DPAttention = a.Get("enable-dp-attention").Bool()
		r.MaxRunning, r.MaxRunningKey = firstInt(a, "max-running-requests")
		if r.MaxRunning == 0 && algoSet(a) {
			// SGLang's speculative-decoding validation defaults the cap to 48.
			r.MaxRunning, r.MaxRunningKey = 48, "max-running-requests (unset: SGLang's speculative default)"
		}
		// Newer SGLang spells the decode graph knobs *-decode; the largest
		// captured batch is the list's maximum, capped by the max-bs knob.
		maxBS, maxKey := firstInt(a, "cuda-graph-max-bs-decode", "cuda-graph-max-bs")
		listMax, listKey := 0, ""
		for _, k := range []string{"cuda-graph-bs-decode", "cuda-graph-bs"} {
			if l := a.Get(k); l != nil && l.Kind == List {
				for _, it := range l.Items {
					if n, ok := it.Int(); ok && n > listMax {
						listMax, listKey = n, k
					}
				}
				break
			}
		}
		switch {
		case listMax > 0 && (maxBS == 0 || listMax < maxBS):
			r.CUDAGraphMaxBS, r.CUDAGraphKey = listMax, listKey
		default:
			r.CUDAGraphMaxBS, r.CUDAGraphKey = maxBS, maxKey
		}
		if strings.EqualFold(a.Get("cuda-graph-backend-decode").String(), "disabled") {
			r.CUDAGraphDisable = true
		}
		r.CUDAGraphDisable = r.CUDAGraphDisable || a.Get("disable-cuda-graph").Bool()
		algo := a.Get("speculative-algorithm")
		alt := a.Get("speculative-algo")
		if algo.String() == "" && alt.String() == "" {
			return nil
		}
		s := &Spec{Algorithm: algo.String()}
		if s.Algorithm == "" {
			s.Algorithm = alt.String()
		} else if alt.String() != "" && !strings.EqualFold(alt.String(), s.Algorithm) {
			s.AlgorithmConflict = alt.String()
		}
		key := "speculative-num-steps"
		if strings.EqualFold(s.Algorithm, "dspark") {
			key = "speculative-dspark-block-size"
		}
		setDraftLength(s, a.Get(key), key)
		s.TopK, _ = firstInt(a, "speculative-eagle-topk")
		s.NumDraftTokens, _ = firstInt(a, "speculative-num-draft-tokens")
		s.DraftQuantization = firstStr(a, "speculative-draft-model-quantization")
		s.DraftModel = firstStr(a, "speculative-draft-model-path")
		s.MoERunner = firstStr(a, "speculative-moe-runner-backend")
		if s.MoERunner == "" {
			s.MoERunner = r.MoERunner
		}
		r.Spec = s
	case EngineVLLM:
		r.Quantization = firstStr(a, "quantization")
		r.TP, _ = firstInt(a, "tensor-parallel-size", "tp")
		r.DP, _ = firstInt(a, "data-parallel-size", "dp")
		r.MaxRunning, r.MaxRunningKey = firstInt(a, "max-num-seqs")
		r.CUDAGraphMaxBS, r.CUDAGraphKey = firstInt(a, "max-cudagraph-capture-size")
		sc := a.Get("speculative-config")
		if sc == nil {
			sc = a.Get("speculative_config")
		}
		if sc == nil || sc.Kind == Null {
			return nil
		}
		if sc.Kind == Scalar {
			parsed, err := jsonValue(sc.Str, sc.Line)
			if err != nil {
				return fmt.Errorf("line %d: %s speculative-config is not a JSON object: %v", sc.Line, r.ArgsAt, err)
			}
			sc = parsed
		}
		if sc.Kind != Map {
			return fmt.Errorf("line %d: %s speculative-config must be a mapping", sc.Line, r.ArgsAt)
		}
		s := &Spec{Algorithm: sc.Get("method").String(), DraftModel: sc.Get("model").String()}
		setDraftLength(s, sc.Get("num_speculative_tokens"), "speculative-config.num_speculative_tokens")
		s.DraftQuantization = sc.Get("quantization").String()
		s.DraftSampleMethod = sc.Get("draft_sample_method").String()
		s.RejectionSampleMethod = sc.Get("rejection_sample_method").String()
		if f, ok := sc.Get("synthetic_acceptance_length").Float(); ok {
			s.SyntheticAL = &f
		}
		s.TopK = 1
		r.Spec = s
	case EngineTRTLLM:
		r.TP, _ = firstInt(a, "tensor_parallel_size")
		r.EP, _ = firstInt(a, "moe_expert_parallel_size")
		r.DPAttention = a.Get("enable_attention_dp").Bool()
		r.MoERunner = a.Get("moe_config", "backend").String()
		r.MaxRunning, r.MaxRunningKey = firstInt(a, "max_batch_size")
		if cg := a.Get("cuda_graph_config"); cg != nil && cg.Kind == Map {
			if n, ok := cg.Get("max_batch_size").Int(); ok {
				r.CUDAGraphMaxBS, r.CUDAGraphKey = n, "cuda_graph_config.max_batch_size"
			} else if l := cg.Get("batch_sizes"); l != nil && l.Kind == List {
				for _, it := range l.Items {
					if n, ok := it.Int(); ok && n > r.CUDAGraphMaxBS {
						r.CUDAGraphMaxBS, r.CUDAGraphKey = n, "cuda_graph_config.batch_sizes"
					}
				}
			}
		} else {
			r.CUDAGraphDisable = true
		}
		sc := a.Get("speculative_config")
		if sc == nil || sc.Kind != Map {
			return nil
		}
		s := &Spec{Algorithm: sc.Get("decoding_type").String(), DraftModel: sc.Get("speculative_model").String(), TopK: 1}
		// The draft length is max_draft_len (NVIDIA/TensorRT-LLM
		// tensorrt_llm/llmapi/llm_args.py DecodingBaseConfig); the current
		// MTPDecodingConfig no longer copies num_nextn_predict_layers into
		// it, and InferenceX reads max_draft_len.
		setDraftLength(s, sc.Get("max_draft_len"), "speculative_config.max_draft_len")
		if n := sc.Get("num_nextn_predict_layers"); s.DraftLength == 0 && s.DraftLengthBad == "" && n != nil {
			s.NextNOnly = n.Str
		}
		s.TwoModel = trtTwoModel(sc)
		s.MoERunner = r.MoERunner
		r.Spec = s
	case EngineATOM:
		method := a.Get("method").String()
		if method == "" {
			return nil
		}
		s := &Spec{Algorithm: method, DraftModel: a.Get("draft-model").String(), TopK: 1}
		if strings.EqualFold(method, "dspark") {
			s.DraftSampleMethod = "probabilistic" // ATOM DSpark verifies with block rejection sampling
		}
		setDraftLength(s, a.Get("num-speculative-tokens"), "num-speculative-tokens")
		if f, ok := a.Get("spec-decode-acceptance-length").Float(); ok {
			s.SyntheticAL = &f
		}
		r.Spec = s
	case EngineTileRT:
		if !a.Get("with-mtp").Bool() {
			return nil
		}
		s := &Spec{Algorithm: "mtp", TopK: 1}
		setDraftLength(s, a.Get("num-mtp"), "num-mtp")
		r.Spec = s
	}
	return nil
}

// trtTwoModel says why a TensorRT-LLM speculative_config runs the
// two-model path (a separate draft model driven by TorchSampler), "" for
// the one-model path (SpecWorkerBase): MTPDecodingConfig.mtp_eagle_one_model
// and Eagle3DecodingConfig.eagle3_one_model default to true; Draft_Target
// is always two-model (tensorrt_llm/llmapi/llm_args.py).
func trtTwoModel(sc *Value) string {
	dt := strings.ToLower(sc.Get("decoding_type").String())
	off := func(k string) bool {
		v := sc.Get(k)
		return v != nil && v.Kind == Scalar && strings.EqualFold(strings.TrimSpace(v.Str), "false")
	}
	switch {
	case dt == "mtp" && off("mtp_eagle_one_model") && !sc.Get("use_mtp_vanilla").Bool():
		return "speculative_config.mtp_eagle_one_model: false"
	case strings.HasPrefix(dt, "eagle") && off("eagle3_one_model"):
		return "speculative_config.eagle3_one_model: false"
	case dt == "draft_target" || dt == "drafttarget":
		return "decoding_type " + sc.Get("decoding_type").String()
	}
	return ""
}

// algoSet reports an EAGLE-family algorithm (NEXTN is EAGLE), for which
// SGLang sets max-running-requests to 48 when it is not given.
func algoSet(a *Value) bool {
	for _, k := range []string{"speculative-algorithm", "speculative-algo"} {
		switch strings.ToUpper(a.Get(k).String()) {
		case "EAGLE", "EAGLE3", "NEXTN", "STANDALONE":
			return true
		}
	}
	return false
}

func setDraftLength(s *Spec, v *Value, key string) {
	s.DraftLengthKey = key
	if v == nil || v.Kind == Null {
		return
	}
	if n, ok := v.Int(); ok && n > 0 {
		s.DraftLength = n
		return
	}
	s.DraftLengthBad = v.Str
	if v.Kind != Scalar {
		s.DraftLengthBad = "(not a number)"
	}
}

// jsonValue parses a JSON object given as a string argument into a Value.
func jsonValue(s string, line int) (*Value, error) {
	if len(s) > 1<<16 {
		return nil, fmt.Errorf("longer than 64 KiB")
	}
	var x any
	if err := json.Unmarshal([]byte(s), &x); err != nil {
		return nil, err
	}
	var conv func(x any, depth int) (*Value, error)
	conv = func(x any, depth int) (*Value, error) {
		if depth > MaxDepth {
			return nil, fmt.Errorf("nested deeper than %d", MaxDepth)
		}
		switch t := x.(type) {
		case nil:
			return &Value{Kind: Null, Line: line}, nil
		case map[string]any:
			v := &Value{Kind: Map, Line: line, Fields: map[string]*Value{}}
			keys := make([]string, 0, len(t))
			for k := range t {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				c, err := conv(t[k], depth+1)
				if err != nil {
					return nil, err
				}
				v.set(k, c)
			}
			return v, nil
		case []any:
			v := &Value{Kind: List, Line: line}
			for _, it := range t {
				c, err := conv(it, depth+1)
				if err != nil {
					return nil, err
				}
				v.Items = append(v.Items, c)
			}
			return v, nil
		case bool:
			return &Value{Kind: Scalar, Line: line, Str: fmt.Sprint(t), Tag: "!!bool"}, nil
		case float64:
			return &Value{Kind: Scalar, Line: line, Str: fmt.Sprint(t), Tag: "!!float"}, nil
		case string:
			return &Value{Kind: Scalar, Line: line, Str: t, Tag: "!!str"}, nil
		}
		return nil, fmt.Errorf("unsupported JSON value")
	}
	return conv(x, 0)
}

// modelNames lists the names a variant gives its model, most specific first.
func modelNames(tree *Value, roles []*Role) []string {
	var names []string
	add := func(s string) {
		s = strings.TrimSpace(s)
		if s == "" || strings.HasPrefix(s, "/") || s == "FILL-IN" {
			return // a container mount such as /model/, or recipe emit's placeholder, names nothing
		}
		for _, n := range names {
			if n == s {
				return
			}
		}
		names = append(names, s)
	}
	for _, r := range roles {
		add(r.Args.Get("served-model-name").String())
		add(r.Args.Get("served_model_name").String())
	}
	for _, r := range roles {
		add(r.Env["DYN_TRTLLM_SERVED_MODEL_NAME"])
		add(r.Args.Get("model").String())
		add(r.Args.Get("model-path").String())
	}
	add(tree.Get("engine", "served_model_name").String())
	add(tree.Get("backend", "served_model_name").String())
	add(tree.Get("identity", "model", "repo").String())
	add(tree.Get("benchmark", "env", "SERVED_MODEL_NAME").String())
	add(tree.Get("benchmark", "env", "MODEL").String())
	add(tree.Get("model", "path").String())
	return names
}

// agentic reports whether the benchmark replays agentic traces, where
// AgentX runs synthetic acceptance with thinking on.
func agentic(tree *Value) bool {
	b := tree.Get("benchmark")
	if b == nil {
		return false
	}
	if v := b.Get("env", "IS_AGENTIC"); v != nil {
		return v.Bool()
	}
	for _, s := range []string{b.Get("type").String(), b.Get("command").String(), b.Get("env", "WEKA_LOADER_OVERRIDE").String()} {
		s = strings.ToLower(s)
		if strings.Contains(s, "agentic") || strings.Contains(s, "agentx") || strings.Contains(s, "traces") || strings.Contains(s, "trace_replay") {
			return true
		}
	}
	return false
}

// concurrency is the largest concurrency in benchmark.concurrencies (a
// list, a number or an "8x16x32" string) or benchmark.env CONC.
func concurrency(tree *Value) int {
	best := 0
	take := func(s string) {
		for _, part := range strings.FieldsFunc(s, func(r rune) bool { return r == 'x' || r == ',' || r == ' ' }) {
			var n int
			if _, err := fmt.Sscanf(part, "%d", &n); err == nil && n > best {
				best = n
			}
		}
	}
	c := tree.Get("benchmark", "concurrencies")
	if c != nil {
		switch c.Kind {
		case Scalar:
			take(c.Str)
		case List:
			for _, it := range c.Items {
				take(it.String())
			}
		}
	}
	for _, k := range []string{"CONC", "CONCURRENCY", "CONC_LIST"} {
		take(tree.Get("benchmark", "env", k).String())
	}
	return best
}

// benchLen is benchmark.<key> (or benchmark.env.<envKey>) as a positive
// token count, 0 when absent or not a positive integer.
func benchLen(tree *Value, key, envKey string) int {
	for _, s := range []string{tree.Get("benchmark", key).String(), tree.Get("benchmark", "env", envKey).String()} {
		if n, err := strconv.Atoi(strings.TrimSpace(s)); err == nil && n > 0 {
			return n
		}
	}
	return 0
}
