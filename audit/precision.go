package audit

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/specsim/specsim/kernels"
)

// Engines whose loading rules audit models.
const (
	EngineSGLang = "sglang"
	EngineVLLM   = "vllm"
)

// Engines lists the supported engines.
func Engines() []string { return []string{EngineSGLang, EngineVLLM} }

// EnvFP8NextNMoE is SGLang's switch that casts the BF16 MoE of the NextN
// (MTP) layer of DeepSeek/GLM NVFP4 checkpoints to FP8 at load time.
const EnvFP8NextNMoE = "SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE"

// Options are the serving settings that change what an engine builds.
type Options struct {
	Engine string
	// DraftQuantization is SGLang's --speculative-draft-model-quantization
	// ("" inherits the target's; "unquant" forces an unquantized draft;
	// anything else quantizes the draft with that method).
	DraftQuantization string
	// Env holds engine environment variables (EnvFP8NextNMoE).
	Env map[string]string
	// MoEBackend is SGLang's --speculative-moe-runner-backend, the MoE
	// runner the draft asks for ("" = unset: the draft inherits
	// TargetMoEBackend).
	MoEBackend string
	// TargetMoEBackend is --moe-runner-backend ("" = unset: the engine's
	// default, "auto" in SGLang).
	TargetMoEBackend string
}

// sglangQuantizationChoices is SGLang's QUANTIZATION_CHOICES
// (sgl-project/sglang python/sglang/srt/server_args.py), the values
// --speculative-draft-model-quantization accepts; "unquant" forces an
// unquantized draft.
var sglangQuantizationChoices = []string{
	"awq", "fp8", "mxfp8", "gptq", "marlin", "gptq_marlin", "awq_marlin", "bitsandbytes", "gguf",
	"modelopt", "modelopt_fp8", "modelopt_fp4", "nvfp4_online", "modelopt_mixed", "petit_nvfp4",
	"w8a8_int8", "w8a8_fp8", "moe_wna16", "w4afp8", "mxfp4", "auto-round", "auto-round-int8",
	"compressed-tensors", "modelslim", "mxfp_w4a8", "quark", "quark_int4fp8_moe", "quark_mxfp4",
	"mlx_q4", "mlx_q8", "unquant", "humming",
}

// Check reports settings the engine would refuse: an unknown
// --speculative-draft-model-quantization (argparse choices), an [*Error]
// on "DraftQuantization", or MoE runner backend.
func (o Options) Check() error {
	if dq := strings.ToLower(strings.TrimSpace(o.DraftQuantization)); dq != "" {
		if o.Engine != EngineSGLang && o.Engine != "" {
			return &Error{Field: "DraftQuantization", Value: o.DraftQuantization, Reason: fmt.Sprintf("sets SGLang's --speculative-draft-model-quantization; %s has no such flag", o.Engine)}
		}
		if !slices.Contains(sglangQuantizationChoices, dq) {
			return &Error{Field: "DraftQuantization", Value: o.DraftQuantization, Reason: "SGLang accepts " + strings.Join(sglangQuantizationChoices, ", ")}
		}
	}
	engine := o.Engine
	if engine == "" {
		engine = EngineSGLang
	}
	for flag, v := range map[string]string{"--moe-backend": o.MoEBackend, "--moe-runner-backend": o.TargetMoEBackend} {
		if v == "" {
			continue
		}
		if err := kernels.CheckBackendName(engine, v); err != nil {
			return fmt.Errorf("%s: %w", flag, err)
		}
	}
	return nil
}

// deepseekFP4NextN is the case SGLang treats specially: a DeepSeek-family
// (DeepSeek, Kimi, GLM-5) NVFP4 checkpoint with an inline NextN layer.
func deepseekFP4NextN(cfg *ModelConfig, mtp *MTP) bool {
	return mtp.Kind == MTPInline && (mtp.Family == FamilyDeepSeek || mtp.Family == FamilyGLM) && engineQuantName(cfg.Quant) == "modelopt_fp4"
}

// draftMoELaunch is the SGLang launch the draft's MoE layers see. With
// --speculative-moe-runner-backend unset, server_args' DeepSeek branch
// (_handle_model_specific_adjustments in server_args.py; in newer trees
// arg_groups/overrides.py _deepseek_spec_moe_resolution, which applies it
// on ROCm only) picks deep_gemm when SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE=1 and
// triton otherwise for a DeepSeek-family modelopt_fp4 checkpoint; every
// other draft inherits the target's resolved backend
// (_speculative_moe_runner_default).
func draftMoELaunch(cfg *ModelConfig, mtp *MTP, o Options) (l kernels.MoELaunch, rule string) {
	l = kernels.MoELaunch{Engine: o.Engine, Backend: o.TargetMoEBackend, SpecBackend: o.MoEBackend,
		Quantization: engineQuantName(cfg.Quant)}
	if len(cfg.Architectures) > 0 {
		l.Architecture = cfg.Architectures[0]
	}
	if o.Engine == EngineSGLang && l.SpecBackend == "" && deepseekFP4NextN(cfg, mtp) {
		l.SpecBackend = "triton"
		rule = "server_args: triton for the BF16 NextN layer of a DeepSeek-family fp4 checkpoint"
		if o.envOn(EnvFP8NextNMoE) {
			l.SpecBackend = "deep_gemm"
			rule = "server_args: " + EnvFP8NextNMoE + "=1 selects deep_gemm (with the DeepEP all-to-all) for the NextN layer"
		}
	}
	return l, rule
}

// fp8NextNApplies is SGLang's enable_nextn_moe_bf16_cast_to_fp8 (DeepSeek
// common utilities and models/deepseek_v4.py): the env set, a modelopt_fp4
// quant config, and the draft's MoE runner backend deep_gemm. The env is
// read by the DeepSeek-family NextN code only.
func fp8NextNApplies(cfg *ModelConfig, mtp *MTP, o Options) bool {
	if o.Engine != EngineSGLang || !o.envOn(EnvFP8NextNMoE) || !deepseekFP4NextN(cfg, mtp) {
		return false
	}
	l, _ := draftMoELaunch(cfg, mtp, o)
	c, err := kernels.ResolveDraftMoE(l, kernels.BF16)
	return err == nil && c.Requested == "deep_gemm"
}

func (o Options) envOn(k string) bool {
	switch strings.ToLower(strings.TrimSpace(o.Env[k])) {
	case "1", "true", "yes", "on":
		return true
	}
	return false
}

// engineQuantName is the name the engines register the checkpoint's
// quantization under (quant_config.get_name()).
func engineQuantName(q *QuantConfig) string {
	if q == nil {
		return ""
	}
	switch q.Method {
	case "modelopt", "":
		switch q.Algo {
		case "NVFP4", "W4A16_NVFP4", "NVFP4_AWQ":
			return "modelopt_fp4"
		case "FP8", "FP8_PER_CHANNEL_PER_TOKEN", "FP8_PB_WO":
			return "modelopt_fp8"
		case "MIXED_PRECISION":
			return "modelopt_mixed"
		}
		return "modelopt"
	}
	return q.Method
}

// algoPrecision maps a quant algorithm to the precision of the layers it
// creates.
func algoPrecision(algo string) string {
	switch {
	case strings.Contains(algo, "NVFP4"):
		return PrecNVFP4
	case strings.HasPrefix(algo, "MXFP8"):
		return PrecMXFP8
	case strings.HasPrefix(algo, "FP8"):
		return PrecFP8
	case algo == "":
		return ""
	}
	return algo
}

// Verdict is what an engine builds for one module and why.
type Verdict struct {
	Module    *Module
	Effective string // precision the engine creates the layer in
	Excluded  bool   // an exclude pattern covers it (engine semantics)
	Rule      string // engine override that decided, "" when the quant config did
	// LoadFails is set when the layer the engine creates cannot take the
	// shipped tensor (an NVFP4 layer for a BF16 weight, or the reverse).
	LoadFails bool
	Lowered   bool // the engine quantizes a BF16 module below its shipped precision
}

// isRouter recognises MoE router modules ("...mlp.gate").
func isRouter(module string) bool {
	return module == "mlp.gate" || strings.HasSuffix(module, ".mlp.gate")
}

// verdict decides one module's effective precision under an engine.
func verdict(engine string, cfg *ModelConfig, mtp *MTP, inDraft bool, m *Module, o Options) Verdict {
	v := Verdict{Module: m, Effective: m.Precision}
	q := cfg.Quant
	qname := engineQuantName(q)
	shippedQuant := m.Quantized()
	unquantizedBuild := func(rule string) Verdict {
		v.Rule, v.Effective = rule, m.Precision
		v.LoadFails = shippedQuant
		return v
	}
	if inDraft && engine == EngineSGLang {
		switch dq := strings.ToLower(o.DraftQuantization); {
		case dq == "unquant":
			return unquantizedBuild("--speculative-draft-model-quantization unquant")
		case dq != "":
			// fc / eh_proj are plain nn.Linear layers no quant config reaches.
			if !shippedQuant && m.Linear() && !isRouter(m.Name) && !isPlainLinear(engine, mtp, inDraft, m.Name) {
				v.Rule, v.Effective, v.Lowered = "--speculative-draft-model-quantization "+dq, draftQuantPrecision(dq), true
				return v
			}
		}
		if mtp.Kind == MTPPrefixed && mtp.Family == FamilyQwen35 &&
			(qname == "modelopt_mixed" || (qname == "modelopt_fp4" && serializedNVFP4(cfg))) {
			return unquantizedBuild("SGLang qwen3_5_mtp.py builds the MTP module unquantized for serialized " + qname + " checkpoints")
		}
		if mtp.Kind == MTPPrefixed && mtp.Family == FamilyQwen3Next && qname == "modelopt_fp4" {
			return unquantizedBuild("SGLang qwen3_next_mtp.py drops the modelopt_fp4 quant config for the MTP module")
		}
		if mtp.Kind == MTPInline && (mtp.Family == FamilyDeepSeek || mtp.Family == FamilyGLM) && qname == "modelopt_fp4" {
			if fp8NextNApplies(cfg, mtp, o) && strings.Contains(m.Name, ".experts") && !shippedQuant {
				v.Rule, v.Effective, v.Lowered = EnvFP8NextNMoE+"=1 casts the NextN MoE to FP8 (deep_gemm)", PrecFP8, true
				return v
			}
			return unquantizedBuild("SGLang deepseek_nextn.py drops the modelopt_fp4 quant config for the NextN layer")
		}
	}
	if q == nil || !m.Linear() {
		return v
	}
	if isPlainLinear(engine, mtp, inDraft, m.Name) && !shippedQuant {
		return unquantizedBuild(plainLinearRule)
	}
	if isVocabProjection(m.Name) && !shippedQuant && q.Method != "modelopt" && q.Method != "" {
		return unquantizedBuild(q.Method + " quantizes linear layers only; lm_head is a ParallelLMHead")
	}
	if isRouter(m.Name) && !shippedQuant {
		if engine == EngineSGLang {
			return unquantizedBuild("SGLang builds MoE routers (mlp.gate) without a quant method (ReplicatedLinear with quant_config=None, or a plain gate parameter)")
		}
		return unquantizedBuild("vLLM builds MoE routers (mlp.gate) unquantized (hard-coded for Qwen3.5 in PR #35156; a plain gate parameter in DeepSeek-style models)")
	}
	if engine == EngineVLLM && inDraft && qname == "modelopt_fp4" && (mtp.Family == FamilyQwen35 || mtp.Family == FamilyQwen3Next) && strings.HasSuffix(m.Name, "mtp.fc") {
		return unquantizedBuild("vLLM forces mtp.fc unquantized for modelopt_fp4 (PR #38832, merged 2026-04-02)")
	}
	if engine == EngineSGLang && qname == "modelopt_fp4" && (mtp.Family == FamilyQwen35) && !inDraft && isAttnProj(m.Name) {
		return unquantizedBuild("SGLang qwen3_5.py builds full-attention qkv/o projections unquantized under modelopt_fp4")
	}
	if engine == EngineVLLM && (strings.Contains(m.Name, "visual") || strings.Contains(m.Name, "vision_tower") || strings.Contains(m.Name, "vision_model")) {
		return unquantizedBuild("vLLM leaves vision towers unquantized")
	}
	v.Excluded = Excluded(engine, q, m.Name)
	if v.Excluded {
		v.Effective = m.Precision
		v.LoadFails = shippedQuant
		return v
	}
	algo := q.Algo
	if q.Algo == "MIXED_PRECISION" {
		algo = mixedAlgo(q, m.Name)
	}
	want := algoPrecision(algo)
	if want == "" {
		return v
	}
	v.Effective = want
	if !shippedQuant {
		v.LoadFails = true
	}
	return v
}

const plainLinearRule = "built as a plain nn.Linear, outside any quant config"

// isVocabProjection recognises lm_head-like modules.
func isVocabProjection(name string) bool {
	return name == "lm_head" || strings.HasSuffix(name, ".lm_head") || strings.HasSuffix(name, "shared_head.head")
}

// isPlainLinear recognises draft projections the engines build with
// torch.nn.Linear, which no quant config reaches: DeepSeek/GLM eh_proj
// (deepseek_nextn.py, vLLM deepseek_mtp.py) and, in SGLang, the Qwen3.5 and
// Qwen3-Next mtp.fc.
func isPlainLinear(engine string, mtp *MTP, inDraft bool, name string) bool {
	if !inDraft {
		return false
	}
	if strings.HasSuffix(name, ".eh_proj") {
		return true
	}
	return engine == EngineSGLang && strings.HasSuffix(name, "mtp.fc")
}

func isAttnProj(name string) bool {
	for _, s := range []string{".self_attn.q_proj", ".self_attn.k_proj", ".self_attn.v_proj", ".self_attn.o_proj"} {
		if strings.HasSuffix(name, s) {
			return true
		}
	}
	return false
}

func mixedAlgo(q *QuantConfig, module string) string {
	prefix := EnginePrefix(module)
	for _, k := range []string{module, prefix} {
		if a, ok := q.QuantizedLayers[k]; ok {
			return a
		}
	}
	if !inQuantizedLayers(q, prefix) {
		return ""
	}
	for k, a := range q.QuantizedLayers {
		if strings.HasPrefix(k, prefix+".") {
			return a
		}
	}
	return ""
}

// serializedNVFP4 is true when the config says the weights are stored in
// NVFP4 (hf_quant_config or config.json quant_algo), not quantized online.
func serializedNVFP4(cfg *ModelConfig) bool {
	return cfg.Quant != nil && strings.Contains(cfg.Quant.Algo, "NVFP4")
}

func draftQuantPrecision(method string) string {
	m := strings.ToLower(method)
	switch {
	case strings.Contains(m, "fp4"):
		return PrecNVFP4
	case strings.Contains(m, "fp8"):
		return PrecFP8
	}
	return strings.ToUpper(method)
}

// Effective is the precision an engine serves the draft at.
type Effective struct {
	Engine   string
	DType    string // BF16, NVFP4, FP8, MIXED, ...
	Experts  string // precision of the draft's MoE experts ("" without MoE)
	Reason   string
	Verdicts []Verdict
	// Backend is the MoE runner the draft's experts run on and whether the
	// engine fell back from the requested one.
	Backend     string
	FellBack    bool
	BackendNote string
}

// EffectiveDraft applies an engine's rules to every MTP module.
func EffectiveDraft(cfg *ModelConfig, mtp *MTP, o Options) Effective {
	e := Effective{Engine: o.Engine}
	if !mtp.Present() {
		e.DType = PrecNone
		return e
	}
	precs := map[string]bool{}
	experts := map[string]bool{}
	rules := map[string]bool{}
	byExclude := 0
	for _, m := range mtp.Modules {
		v := verdict(o.Engine, cfg, mtp, true, m, o)
		e.Verdicts = append(e.Verdicts, v)
		if v.Excluded && m.Linear() {
			byExclude++
		}
		if m.Linear() && !m.auxiliary() {
			precs[v.Effective] = true
			if strings.Contains(m.Name, ".experts") {
				experts[v.Effective] = true
			}
		}
		if v.Rule != "" {
			rules[v.Rule] = true
		}
	}
	e.DType = common(precs)
	e.Experts = common(experts)
	if len(experts) == 0 {
		e.Experts = ""
	}
	rs := make([]string, 0, len(rules))
	for r := range rules {
		if (len(rules) > 1 || byExclude > 0) && strings.Contains(r, "routers") {
			continue // routers are unquantized everywhere; not what decides the draft
		}
		rs = append(rs, r)
	}
	sort.Strings(rs)
	switch {
	case cfg.Quant == nil:
		rs = append(rs, "unquantized checkpoint: layers load as shipped")
	case byExclude > 0:
		rs = append(rs, fmt.Sprintf("the %s exclude list covers %d of its linear modules", engineQuantName(cfg.Quant), byExclude))
	case len(rs) == 0:
		rs = append(rs, "the "+engineQuantName(cfg.Quant)+" quant config")
	}
	e.Reason = strings.Join(rs, "; ")
	if e.Experts != "" {
		e.resolveBackend(cfg, mtp, o)
	}
	return e
}

func common(set map[string]bool) string {
	switch len(set) {
	case 0:
		return PrecNone
	case 1:
		for k := range set {
			return k
		}
	}
	return PrecMixed
}

func kernelDType(prec string) (kernels.DType, bool) {
	switch prec {
	case PrecBF16:
		return kernels.BF16, true
	case PrecF16:
		return kernels.FP16, true
	case PrecF32:
		return kernels.FP32, true
	case PrecFP8, PrecMXFP8:
		return kernels.FP8, true
	case PrecNVFP4:
		return kernels.NVFP4, true
	}
	return "", false
}

func (e *Effective) resolveBackend(cfg *ModelConfig, mtp *MTP, o Options) {
	dt, ok := kernelDType(e.Experts)
	if !ok {
		e.BackendNote = "no MoE backend table entry for " + e.Experts
		return
	}
	l, rule := draftMoELaunch(cfg, mtp, o)
	c, err := kernels.ResolveDraftMoE(l, dt)
	if err != nil {
		e.BackendNote = err.Error()
		return
	}
	b := c.Backend
	e.Backend, e.FellBack = b.Name, c.FellBack
	origin := c.Origin
	if rule != "" && o.MoEBackend == "" {
		origin = rule
	}
	switch {
	case c.FellBack:
		e.BackendNote = fmt.Sprintf("%q (%s) does not run %s experts; the engine falls back to %s (relative efficiency %.2f)", c.Requested, origin, e.Experts, b.Name, b.Efficiency)
	default:
		e.BackendNote = fmt.Sprintf("%s experts on %q (%s); relative efficiency %.2f", e.Experts, c.Requested, origin, b.Efficiency)
	}
	// The audit knows no GPU, so model rules that need one were not
	// applied; say where one would change the answer (SGLang v0.5.14
	// resolves an unset backend to flashinfer_trtllm for Qwen3.5 on SM100).
	if l.GPUArch == "" {
		bl := l
		bl.GPUArch = "blackwell"
		if cb, err := kernels.ResolveDraftMoE(bl, dt); err == nil && cb.Backend.Name != b.Name {
			e.BackendNote += fmt.Sprintf("; on Blackwell %q (%s), relative efficiency %.2f", cb.Backend.Name, cb.Origin, cb.Backend.Efficiency)
		}
	}
}

// Error is a setting of [Options] that cannot be used: Field is the Options
// field ("DraftQuantization"), Value what it held and Reason what is wrong.
// A command maps Field to its own flag.
type Error struct {
	Field, Value, Reason string
}

func (e *Error) Error() string {
	if e.Value == "" {
		return e.Field + ": " + e.Reason
	}
	return fmt.Sprintf("%s %s: %s", e.Field, e.Value, e.Reason)
}
