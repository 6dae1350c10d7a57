package audit

import (
	"fmt"
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
	// MoEBackend is the MoE runner backend the draft asks for ("" = auto).
	MoEBackend string
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
			if !shippedQuant && m.Linear() && !isRouter(m.Name) {
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
			if o.envOn(EnvFP8NextNMoE) && strings.Contains(m.Name, ".experts.") && !shippedQuant {
				v.Rule, v.Effective, v.Lowered = EnvFP8NextNMoE+"=1 casts the NextN MoE to FP8 (deep_gemm)", PrecFP8, true
				return v
			}
			return unquantizedBuild("SGLang deepseek_nextn.py drops the modelopt_fp4 quant config for the NextN layer")
		}
	}
	if q == nil || !m.Linear() {
		return v
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
		if m.Linear() {
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
	want := o.MoEBackend
	if want == "" && o.Engine == EngineSGLang && engineQuantName(cfg.Quant) == "modelopt_fp4" && mtp.Kind == MTPInline {
		// server_args: DeepSeek-family fp4 checkpoints with EAGLE pick a
		// speculative MoE runner for the BF16 NextN layer.
		want = "triton"
		if o.envOn(EnvFP8NextNMoE) {
			want = "deep_gemm"
		}
	}
	if want == "" && o.Engine == EngineSGLang && (dt == kernels.BF16 || dt == kernels.FP16) {
		// UnquantizedFusedMoEMethod.create_moe_runner: Triton unless a
		// FlashInfer backend was asked for.
		want = "triton"
	}
	b, fell, err := kernels.BackendFor(o.Engine, want, dt)
	if err != nil {
		e.BackendNote = err.Error()
		return
	}
	e.Backend, e.FellBack = b.Name, fell
	switch {
	case fell:
		e.BackendNote = fmt.Sprintf("%s does not run %s experts; the engine falls back to %s (relative efficiency %.2f)", want, e.Experts, b.Name, b.Efficiency)
	case want == "" || want == "auto":
		e.BackendNote = fmt.Sprintf("engine's choice for %s experts (relative efficiency %.2f)", e.Experts, b.Efficiency)
	case o.MoEBackend == "":
		e.BackendNote = fmt.Sprintf("%s's default for %s draft experts (relative efficiency %.2f); pass --moe-backend to check another", o.Engine, e.Experts, b.Efficiency)
	default:
		e.BackendNote = fmt.Sprintf("requested backend accepts %s experts (relative efficiency %.2f)", e.Experts, b.Efficiency)
	}
}
