package kernels

import (
	"errors"
	"strings"
	"testing"
)

// TestSGLangUnquantizedMoE follows sgl-project/sglang
// python/sglang/srt/layers/quantization/unquant.py (commit 0038b2b5)
// UnquantizedFusedMoEMethod: __init__ sets use_flashinfer_cutlass from
// get_moe_runner_backend().is_flashinfer_cutlass() and forward_cuda then
// calls flashinfer's cutlass_fused_moe with quant_scales=None;
// create_moe_runner picks FLASHINFER_TRTLLM(_ROUTED) when FusedMoE.__init__
// (layers/moe/fused_moe_triton/layer.py) set use_flashinfer_trtllm_moe from
// is_flashinfer_trtllm() or is_flashinfer_trtllm_routed(), TRITON_KERNELS
// for triton_kernel, and TRITON otherwise. So BF16 experts stay on the two
// FlashInfer backends and every other value lands on Triton.
func TestSGLangUnquantizedMoE(t *testing.T) {
	for _, tc := range []struct {
		backend  string
		want     string
		fellBack bool
	}{
		{"flashinfer_trtllm", "flashinfer_trtllm", false},
		{"flashinfer_trtllm_routed", "flashinfer_trtllm_routed", false},
		{"flashinfer_cutlass", "flashinfer_cutlass", false},
		{"triton_kernel", "triton_kernel", false},
		{"triton", "triton", false},
		{"auto", "triton", false}, // create_moe_runner's else branch, not a fallback
		{"flashinfer_cutedsl", "triton", true},
		{"flashinfer_mxfp4", "triton", true},
		{"cutlass", "triton", true},
		{"deep_gemm", "triton", true},
	} {
		for _, dt := range []DType{BF16, FP16} {
			b, fell, err := BackendForArch("sglang", tc.backend, dt, "blackwell")
			if err != nil || b.Name != tc.want || fell != tc.fellBack {
				t.Errorf("%s %s: got %s fellBack=%v err=%v, want %s fellBack=%v", tc.backend, dt, b.Name, fell, err, tc.want, tc.fellBack)
			}
		}
	}
}

// TestSGLangDraftInheritsTargetBackend follows sgl-project/sglang
// python/sglang/srt/arg_groups/overrides.py _speculative_moe_runner_default
// ("Default the speculative (draft) MoE runner backend to the resolved
// target-model backend" when --speculative-moe-runner-backend is None) and
// server_args.py, whose ServerArgs.moe_runner_backend defaults to "auto".
func TestSGLangDraftInheritsTargetBackend(t *testing.T) {
	for _, tc := range []struct {
		name   string
		l      MoELaunch
		want   string
		fell   bool
		origin string
	}{
		{"target flashinfer_trtllm, draft inherits", MoELaunch{Backend: "flashinfer_trtllm"}, "flashinfer_trtllm", false, "inherited"},
		{"target flashinfer_cutlass, draft inherits", MoELaunch{Backend: "flashinfer_cutlass"}, "flashinfer_cutlass", false, "inherited"},
		{"target flashinfer_cutedsl: Triton fallback", MoELaunch{Backend: "flashinfer_cutedsl"}, "triton", true, "inherited"},
		{"spec backend overrides", MoELaunch{Backend: "flashinfer_trtllm", SpecBackend: "triton"}, "triton", false, "--speculative-moe-runner-backend"},
		{"spec cutedsl over trtllm target", MoELaunch{Backend: "flashinfer_trtllm", SpecBackend: "flashinfer_cutedsl"}, "triton", true, "--speculative-moe-runner-backend"},
		// Unset on Qwen3.5: SGLang v0.5.14 (49e384ce9d30) server_args.py
		// _handle_model_specific_adjustments lists
		// Qwen3_5MoeForConditionalGeneration with Qwen3-Next: on SM100 with
		// modelopt_fp4, no A2A and auto it resolves flashinfer_trtllm, and
		// handle_speculative_decoding (which runs after it) gives the draft
		// that value; on Hopper the draft stays on auto, Triton.
		{"unset on Qwen3.5 SM100", MoELaunch{Architecture: "Qwen3_5MoeForConditionalGeneration", Quantization: "modelopt_fp4", GPUArch: "blackwell"}, "flashinfer_trtllm", false, "auto resolved"},
		{"unset on Qwen3.5 Hopper", MoELaunch{Architecture: "Qwen3_5MoeForConditionalGeneration", Quantization: "fp8", GPUArch: "hopper"}, "triton", false, "engine default (auto)"},
		// _handle_model_specific_adjustments: Qwen3-Next on SM100 with
		// modelopt_fp4, no A2A, auto -> flashinfer_trtllm; the draft
		// inherits the resolved value.
		{"unset on Qwen3-Next SM100", MoELaunch{Architecture: "Qwen3NextForCausalLM", Quantization: "modelopt_fp4", GPUArch: "blackwell"}, "flashinfer_trtllm", false, "auto resolved"},
		{"Qwen3-Next with DeepEP stays auto", MoELaunch{Architecture: "Qwen3NextForCausalLM", Quantization: "modelopt_fp4", GPUArch: "blackwell", A2A: "deepep"}, "triton", false, "engine default"},
		{"Qwen3-Next on Hopper stays auto", MoELaunch{Architecture: "Qwen3NextForCausalLM", Quantization: "modelopt_fp4", GPUArch: "hopper"}, "triton", false, "engine default"},
		{"GLM-4.x only for modelopt_fp4", MoELaunch{Architecture: "Glm4MoeForCausalLM", Quantization: "fp8", GPUArch: "blackwell"}, "triton", false, "engine default"},
	} {
		tc.l.Engine = "sglang"
		c, err := ResolveDraftMoE(tc.l, BF16)
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if c.Backend.Name != tc.want || c.FellBack != tc.fell || !strings.Contains(c.Origin, tc.origin) {
			t.Errorf("%s: got %s fellBack=%v origin %q, want %s fellBack=%v origin ~%q", tc.name, c.Backend.Name, c.FellBack, c.Origin, tc.want, tc.fell, tc.origin)
		}
	}
	if d, err := DefaultBackend("sglang"); err != nil || d != "auto" {
		t.Errorf("SGLang default = %q %v, want auto", d, err)
	}
	// The target's NVFP4 experts on the inherited flag: no fallback.
	c, err := ResolveTargetMoE(MoELaunch{Engine: "sglang", Backend: "flashinfer_cutedsl"}, NVFP4)
	if err != nil || c.Backend.Name != "flashinfer_cutedsl" || c.FellBack {
		t.Errorf("target NVFP4 on cutedsl: %+v %v", c, err)
	}
}

func TestMoELaunchUnknownValues(t *testing.T) {
	for _, l := range []MoELaunch{
		{Engine: "sglang", Backend: "flashinfer_trtlm"},
		{Engine: "sglang", SpecBackend: "tritonn"},
		{Engine: "sglng", Backend: "triton"},
	} {
		if _, err := ResolveDraftMoE(l, BF16); err == nil {
			t.Errorf("%+v accepted", l)
		}
	}
	if err := CheckBackendName("sglang", "flashinfer_trtllm"); err != nil {
		t.Error(err)
	}
	if err := CheckBackendName("sglang", "nope"); err == nil || !strings.Contains(err.Error(), "flashinfer_cutedsl") {
		t.Errorf("unknown backend error should list the choices: %v", err)
	}
}

// TestUnknownEngineNotBlamedOnBackend: an unknown engine is the engine's
// error, whichever backend flags the launch sets.
func TestUnknownEngineNotBlamedOnBackend(t *testing.T) {
	for _, l := range []MoELaunch{
		{Engine: "foo"},
		{Engine: "foo", Backend: "triton"},
		{Engine: "foo", SpecBackend: "triton"},
	} {
		for name, resolve := range map[string]func(MoELaunch, DType) (MoEChoice, error){"target": ResolveTargetMoE, "draft": ResolveDraftMoE} {
			_, err := resolve(l, BF16)
			if err == nil || err.Error() != `unknown engine "foo": want sglang, trtllm, vllm` {
				t.Errorf("%s %+v: %v", name, l, err)
			}
		}
	}
	if err := CheckEngine("TensorRT-LLM"); err != nil {
		t.Error(err)
	}
	var ke *Error
	if err := CheckEngine("sgl"); !errors.As(err, &ke) || ke.Field != "Engine" || ke.Value != "sgl" {
		t.Errorf("CheckEngine(sgl): %v", err)
	}
}
