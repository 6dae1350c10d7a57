package audit_test

import (
	"strings"
	"testing"

	"github.com/specsim/specsim/audit"
	"github.com/specsim/specsim/audit/checkpointtest"
)

// TestFP8NextNMoEGate follows SGLang's enable_nextn_moe_bf16_cast_to_fp8
// (sgl-project/sglang, DeepSeek common utilities and
// python/sglang/srt/models/deepseek_v4.py): SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE
// set, quant_config.get_name() == "modelopt_fp4" and
// get_moe_runner_backend().is_deep_gemm(). The env is read by the
// DeepSeek-family NextN code only; elsewhere it changes nothing.
func TestFP8NextNMoEGate(t *testing.T) {
	ds := writeDeepSeek(t, checkpointtest.Options{MainLayers: 4, Shards: 2})
	qw := writeQwen35(t, "nvidia--Qwen3.5-397B-A17B-NVFP4", checkpointtest.Options{MainLayers: 2, Shards: 2})
	env := map[string]string{audit.EnvFP8NextNMoE: "1"}
	for _, tc := range []struct {
		name        string
		dir         string
		o           audit.Options
		experts     string
		backend     string
		lowered     bool
		code, notIn string
	}{
		// Unset draft backend: server_args picks deep_gemm for the
		// DeepSeek fp4 NextN layer when the env is set.
		{"deepseek, draft backend unset", ds, audit.Options{Env: env}, "FP8", "deep_gemm", true, "fp8-nextn-moe-needs-ep", ""},
		{"deepseek, draft on deep_gemm", ds, audit.Options{Env: env, MoEBackend: "deep_gemm"}, "FP8", "deep_gemm", true, "draft-precision-lowered", "fp8-nextn-moe-needs-ep"},
		{"deepseek, draft on flashinfer_trtllm", ds, audit.Options{Env: env, MoEBackend: "flashinfer_trtllm"}, "BF16", "flashinfer_trtllm", false, "fp8-nextn-moe-ignored", "draft-precision-lowered"},
		{"deepseek, draft on triton", ds, audit.Options{Env: env, MoEBackend: "triton"}, "BF16", "triton", false, "fp8-nextn-moe-ignored", "draft-precision-lowered"},
		{"deepseek, env unset", ds, audit.Options{}, "BF16", "triton", false, "", "fp8-nextn-moe-ignored"},
		{"qwen3.5 ignores it", qw, audit.Options{Env: env, MoEBackend: "deep_gemm"}, "BF16", "triton", false, "fp8-nextn-moe-ignored", "draft-precision-lowered"},
	} {
		tc.o.Engine = "sglang"
		r, err := audit.Run(tc.dir, audit.Config{Options: tc.o, TP: []int{8}})
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if r.Effective.Experts != tc.experts || r.Effective.Backend != tc.backend {
			t.Errorf("%s: experts %s on %s, want %s on %s (%s)", tc.name, r.Effective.Experts, r.Effective.Backend, tc.experts, tc.backend, r.Effective.BackendNote)
		}
		if got := findCode(r.Findings, "draft-precision-lowered") != nil; got != tc.lowered {
			t.Errorf("%s: lowered finding %v, want %v", tc.name, got, tc.lowered)
		}
		if tc.code != "" && findCode(r.Findings, tc.code) == nil {
			t.Errorf("%s: no %s finding: %+v", tc.name, tc.code, r.Findings)
		}
		if tc.notIn != "" && findCode(r.Findings, tc.notIn) != nil {
			t.Errorf("%s: unexpected %s", tc.name, tc.notIn)
		}
	}
}

// TestDraftQuantizationSparesFC: SGLang builds Qwen3.5's mtp.fc as a plain
// torch nn.Linear (python/sglang/srt/models/qwen3_5_mtp.py,
// Qwen3_5ForCausalLMMTP.__init__: self.fc = nn.Linear(2 * hidden, hidden,
// bias=False)), so --speculative-draft-model-quantization cannot reach it;
// the attention and MoE layers it does reach are lowered.
func TestDraftQuantizationSparesFC(t *testing.T) {
	dir := writeQwen35(t, "nvidia--Qwen3.5-397B-A17B-NVFP4", checkpointtest.Options{MainLayers: 2, Shards: 2})
	r, err := audit.Run(dir, audit.Config{Options: audit.Options{Engine: "sglang", DraftQuantization: "fp8"}, TP: []int{2}})
	if err != nil {
		t.Fatal(err)
	}
	var fc, lowered int
	for _, v := range r.Effective.Verdicts {
		if v.Module.Name == "mtp.fc" {
			fc++
			if v.Lowered || v.Effective != audit.PrecBF16 {
				t.Errorf("mtp.fc: effective %s lowered %v (%s)", v.Effective, v.Lowered, v.Rule)
			}
		}
		if v.Lowered {
			lowered++
			if v.Effective != audit.PrecFP8 {
				t.Errorf("%s lowered to %s", v.Module.Name, v.Effective)
			}
		}
	}
	if fc != 1 || lowered == 0 || r.Effective.Experts != audit.PrecFP8 {
		t.Errorf("fc verdicts %d, lowered %d, experts %s", fc, lowered, r.Effective.Experts)
	}
}

func TestUnknownEngineSettings(t *testing.T) {
	dir := writeQwen35(t, "nvidia--Qwen3.5-397B-A17B-NVFP4", checkpointtest.Options{MainLayers: 1, Shards: 2})
	for _, o := range []audit.Options{
		{Engine: "sglang", DraftQuantization: "nvfp4"}, // not an SGLang choice (modelopt_fp4 / nvfp4_online are)
		{Engine: "sglang", MoEBackend: "flashinfer_trtlm"},
		{Engine: "sglang", TargetMoEBackend: "cutedsl"},
		{Engine: "vllm", DraftQuantization: "fp8"},
	} {
		if _, err := audit.Run(dir, audit.Config{Options: o, TP: []int{1}}); err == nil {
			t.Errorf("%+v accepted", o)
		}
	}
	if _, err := audit.Run(dir, audit.Config{Options: audit.Options{Engine: "sglang", DraftQuantization: "Unquant", MoEBackend: "flashinfer_cutedsl"}, TP: []int{1}}); err != nil {
		t.Errorf("valid settings refused: %v", err)
	}
}

// TestDraftInheritsTargetBackend: with --speculative-moe-runner-backend
// unset the Qwen3.5 BF16 draft runs on the target's --moe-runner-backend
// (SGLang arg_groups/overrides.py _speculative_moe_runner_default) where
// UnquantizedFusedMoEMethod supports it.
func TestDraftInheritsTargetBackend(t *testing.T) {
	dir := writeQwen35(t, "nvidia--Qwen3.5-397B-A17B-NVFP4", checkpointtest.Options{MainLayers: 1, Shards: 2})
	for target, want := range map[string]string{"": "triton", "flashinfer_trtllm": "flashinfer_trtllm", "flashinfer_cutlass": "flashinfer_cutlass", "flashinfer_cutedsl": "triton"} {
		r, err := audit.Run(dir, audit.Config{Options: audit.Options{Engine: "sglang", TargetMoEBackend: target}, TP: []int{1}})
		if err != nil {
			t.Fatal(err)
		}
		fell := target == "flashinfer_cutedsl"
		if r.Effective.Backend != want || r.Effective.FellBack != fell {
			t.Errorf("target %q: draft on %s fellBack=%v, want %s %v (%s)", target, r.Effective.Backend, r.Effective.FellBack, want, fell, r.Effective.BackendNote)
		}
		if fell && (findCode(r.Findings, "draft-moe-backend-fallback") == nil || !strings.Contains(r.Effective.BackendNote, "inherited")) {
			t.Errorf("fallback not reported: %s", r.Effective.BackendNote)
		}
		// Unset, the audit (no GPU) names Triton and what SGLang v0.5.14's
		// Qwen3.5 rule picks on SM100; a set backend leaves nothing to add.
		if blackwell := strings.Contains(r.Effective.BackendNote, `on Blackwell "flashinfer_trtllm"`); blackwell != (target == "") {
			t.Errorf("target %q: Blackwell note %v: %s", target, blackwell, r.Effective.BackendNote)
		}
	}
}
