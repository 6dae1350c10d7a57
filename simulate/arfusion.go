package simulate

import (
	"fmt"
	"slices"
)

// sglangFusionArchs are the architectures (config.json architectures[0])
// for which SGLang turns FlashInfer's all-reduce fusion on by itself:
// the list in ServerArgs._handle_model_specific_adjustments, sgl-project/
// sglang v0.5.14 (49e384ce9d30) python/sglang/srt/server_args.py, the same
// set as v0.5.16's _FLASHINFER_ALLREDUCE_FUSION_ARCHS
// (python/sglang/srt/arg_groups/overrides.py).
var sglangFusionArchs = []string{
	"DeepseekV3ForCausalLM",
	"DeepseekV32ForCausalLM",
	"GptOssForCausalLM",
	"GlmMoeDsaForCausalLM",
	"Glm4MoeForCausalLM",
	"Glm4MoeLiteForCausalLM",
	"MistralLarge3ForCausalLM",
	"Qwen3MoeForCausalLM",
	"Qwen3VLMoeForConditionalGeneration",
	"Qwen3NextForCausalLM",
	"KimiK25ForConditionalGeneration",
	"Qwen3_5MoeForConditionalGeneration",
	"InternS2PreviewForConditionalGeneration",
	"Qwen3_5ForConditionalGeneration",
	"NemotronHForCausalLM",
	"NemotronHPuzzleForCausalLM",
}

// fusionDeployment is what SGLang's auto-enable rule reads of a deployment.
type fusionDeployment struct {
	arch    string // config.json architectures[0]
	gpuArch string // catalog arch: "hopper" (SM90), "blackwell" (SM100/SM103)
	tp      int
	dpAttn  bool
	nodes   int  // hosts one instance spans (SGLang --nnodes)
	a2a     bool // an all-to-all MoE backend (--moe-a2a-backend deepep)
}

// sm90 and sm100 are SGLang's is_sm90_supported and is_sm100_supported
// (python/sglang/srt/utils/common.py): compute capability major 9, and
// major 10, so SM100 (B200, GB200) and SM103 (B300, GB300) both count; the
// catalog's hopper and blackwell entries are exactly those (gpus.yaml).
func sm90(gpuArch string) bool  { return gpuArch == "hopper" }
func sm100(gpuArch string) bool { return gpuArch == "blackwell" }

// sglangAutoFusion is SGLang's own rule for FlashInfer all-reduce fusion
// when the user sets neither --enable-flashinfer-allreduce-fusion nor
// --enforce-disable-flashinfer-allreduce-fusion (server_args.py
// ServerArgs._handle_model_specific_adjustments, "Auto-enabling FlashInfer
// AllReduce Fusion"): a listed architecture, an SM90 or SM100-family GPU,
// tp_size > 1, no DP attention, one node unless SM100, and
// moe_a2a_backend "none". It says whether the fusion is on and why.
func sglangAutoFusion(d fusionDeployment) (bool, string) {
	const rule = "SGLang's own rule (server_args.py ServerArgs._handle_model_specific_adjustments, v0.5.14)"
	why := ""
	switch {
	case !slices.Contains(sglangFusionArchs, d.arch):
		arch := d.arch
		if arch == "" {
			arch = "a model without config.json architectures"
		}
		why = arch + " is not in its list"
	case !sm90(d.gpuArch) && !sm100(d.gpuArch):
		why = fmt.Sprintf("the GPU is not SM90 or SM100/SM103 (arch %q)", d.gpuArch)
	case d.tp <= 1:
		why = fmt.Sprintf("tp_size %d", max(d.tp, 1))
	case d.dpAttn:
		why = "DP attention is on"
	case d.nodes > 1 && !sm100(d.gpuArch):
		why = fmt.Sprintf("the instance spans %d nodes of an SM90 GPU (multi-node needs SM100)", d.nodes)
	case d.a2a:
		why = "the MoE runs on an all-to-all backend (DeepEP), not moe_a2a_backend none"
	}
	if why != "" {
		return false, "off by " + rule + ": " + why
	}
	gpu := "SM90"
	if sm100(d.gpuArch) {
		gpu = "SM100/SM103"
	}
	nodes := "one node"
	if d.nodes > 1 {
		nodes = fmt.Sprintf("%d nodes (allowed on SM100)", d.nodes)
	}
	return true, fmt.Sprintf("on by %s: %s on %s at TP%d, no DP attention, %s, no all-to-all backend", rule, d.arch, gpu, d.tp, nodes)
}

// resolveFusion decides the FlashInfer all-reduce fusion of an SGLang
// instance as the engine does: --enforce-disable-flashinfer-allreduce-
// fusion wins over everything (applied after the model-specific
// adjustments, and after the deprecated --enable-flashinfer-allreduce-
// fusion has set the backend in _handle_deprecated_args), the deprecated
// flag forces it on, and otherwise sglangAutoFusion decides. Other engines
// have no such flag: off, with no reason.
func (e *Engine) resolveFusion(c EngineConfig) (bool, string) {
	if e.EngineName != "sglang" {
		return false, ""
	}
	switch {
	case c.NoAllReduceFusion:
		return false, "off by --enforce-disable-flashinfer-allreduce-fusion"
	case c.AllReduceFusion:
		return true, "on by --enable-flashinfer-allreduce-fusion"
	}
	return sglangAutoFusion(fusionDeployment{
		arch: e.Model.HFArch, gpuArch: e.GPU.Arch, tp: e.Par.TP, dpAttn: e.Par.DPAttention,
		nodes: ceilDiv(e.Par.GPUs(), GPUSpec{GPU: e.GPU}.Node()), a2a: e.deepEP(),
	})
}
