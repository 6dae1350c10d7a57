package audit_test

import (
	"os"
	"strings"
	"testing"

	"github.com/specsim/specsim/audit"
	"github.com/specsim/specsim/audit/checkpointtest"
)

// TestMixedPrecisionFusedExperts builds a Qwen3.6-35B-A3B-NVFP4-shaped
// checkpoint (ModelOpt MIXED_PRECISION, excludes "mtp*") whose MTP head uses
// fused 3-D expert tensors: 4 top-level + 8 attention/norm + 7 MoE = 19
// tensors, all BF16 (the count public notes give for this release).
func TestMixedPrecisionFusedExperts(t *testing.T) {
	const h, e, inter, heads, kv, hd, vocab = 2048, 256, 512, 16, 2, 256, 248320
	bf := func(name string, shape ...int64) checkpointtest.Tensor {
		return checkpointtest.Tensor{Name: name, DType: "BF16", Shape: shape}
	}
	ts := []checkpointtest.Tensor{
		bf("model.language_model.embed_tokens.weight", vocab, h),
		// lm_head is W4A16_NVFP4 in quantized_layers: packed weight, block
		// scales, global scale, no input scale.
		{Name: "lm_head.weight", DType: "U8", Shape: []int64{vocab, h / 2}},
		{Name: "lm_head.weight_scale", DType: "F8_E4M3", Shape: []int64{vocab, h / 16}},
		{Name: "lm_head.weight_scale_2", DType: "F32", Shape: []int64{}},
		// An FP8 layer.
		{Name: "model.language_model.layers.0.linear_attn.out_proj.weight", DType: "F8_E4M3", Shape: []int64{h, 4096}},
		{Name: "model.language_model.layers.0.linear_attn.out_proj.weight_scale", DType: "F32", Shape: []int64{}},
		{Name: "model.language_model.layers.0.linear_attn.out_proj.input_scale", DType: "F32", Shape: []int64{}},
		bf("mtp.fc.weight", h, 2*h), bf("mtp.norm.weight", h), bf("mtp.pre_fc_norm_embedding.weight", h), bf("mtp.pre_fc_norm_hidden.weight", h),
		bf("mtp.layers.0.input_layernorm.weight", h), bf("mtp.layers.0.post_attention_layernorm.weight", h),
		bf("mtp.layers.0.self_attn.q_proj.weight", 2*heads*hd, h), bf("mtp.layers.0.self_attn.k_proj.weight", kv*hd, h),
		bf("mtp.layers.0.self_attn.v_proj.weight", kv*hd, h), bf("mtp.layers.0.self_attn.o_proj.weight", h, heads*hd),
		bf("mtp.layers.0.self_attn.q_norm.weight", hd), bf("mtp.layers.0.self_attn.k_norm.weight", hd),
		bf("mtp.layers.0.mlp.gate.weight", e, h),
		bf("mtp.layers.0.mlp.experts.gate_up_proj", e, 2*inter, h), bf("mtp.layers.0.mlp.experts.down_proj", e, h, inter),
		bf("mtp.layers.0.mlp.shared_expert.gate_proj.weight", inter, h), bf("mtp.layers.0.mlp.shared_expert.up_proj.weight", inter, h),
		bf("mtp.layers.0.mlp.shared_expert.down_proj.weight", h, inter), bf("mtp.layers.0.mlp.shared_expert_gate.weight", 1, h),
	}
	cfg, err := os.ReadFile(configs + "nvidia--Qwen3.6-35B-A3B-NVFP4_config.json")
	must(t, err)
	q, err := os.ReadFile(configs + "nvidia--Qwen3.6-35B-A3B-NVFP4_hf_quant_config.json")
	must(t, err)
	dir := t.TempDir()
	must(t, checkpointtest.WriteCheckpoint(dir, ts, 2, cfg, q))

	const params = 2*h*h + 5*h + 2*hd + 2*heads*hd*h + 2*kv*hd*h + h*heads*hd + e*h + 3*e*inter*h + 3*inter*h + h
	for _, engine := range []string{"sglang", "vllm"} {
		r, err := audit.Run(dir, audit.Config{Options: audit.Options{Engine: engine}, TP: []int{1}})
		if err != nil {
			t.Fatal(err)
		}
		want := audit.MTPReport{Present: true, TensorCount: 19, ParamCount: params, Bytes: 2 * params, ShippedDType: "BF16", EffectiveDType: "BF16"}
		if r.MTP != want {
			t.Errorf("%s: got %+v\nwant %+v", engine, r.MTP, want)
		}
		for _, f := range r.Findings {
			if f.Severity != audit.SeverityInfo || strings.Contains(f.Code, "exclude") {
				t.Errorf("%s: unexpected finding %+v", engine, f)
			}
		}
		if engine == "sglang" && !strings.Contains(r.Effective.Reason, "modelopt_mixed") {
			t.Errorf("reason %q", r.Effective.Reason)
		}
	}
}
