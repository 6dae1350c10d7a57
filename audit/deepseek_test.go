package audit_test

import (
	"math"
	"strings"
	"testing"

	"github.com/specsim/specsim/audit"
	"github.com/specsim/specsim/audit/checkpointtest"
)

// DeepSeek-V3.1 architecture (config.json of nvidia/DeepSeek-V3.1-NVFP4).
const (
	dH      = 7168
	dVocab  = 129280 // 2020 x 64: no vocab padding
	dHeads  = 128
	dQLoRA  = 1536
	dKVLoRA = 512
	dNope   = 128
	dRope   = 64
	dV      = 128
	dE      = 256
	dI      = 2048
)

// The inline MTP layer model.layers.61, tensor by tensor: embed_tokens,
// enorm, hnorm, eh_proj, shared_head.norm, shared_head.head (6); two layer
// norms (2); q_a_proj, q_a_layernorm, q_b_proj, kv_a_proj_with_mqa,
// kv_a_layernorm, kv_b_proj, o_proj (7); router weight and bias (2); shared
// expert (3); 256 experts x 3 (768).
const dMTPTensors = 6 + 2 + 7 + 2 + 3 + dE*3

const (
	dVocabParams = 2 * dVocab * dH // own embed_tokens and shared_head.head
	dEH          = dH * 2 * dH
	dNorms       = 3*dH + 2*dH + dQLoRA + dKVLoRA
	dQA          = dQLoRA * dH
	dQB          = dHeads * (dNope + dRope) * dQLoRA
	dKVA         = (dKVLoRA + dRope) * dH
	dKVB         = dHeads * (dNope + dV) * dKVLoRA
	dO           = dH * dHeads * dV
	dRouter      = dE*dH + dE // weight + e_score_correction_bias
	dShared      = 3 * dI * dH
	dRouted      = dE * 3 * dI * dH
	dMTPParams   = dVocabParams + dEH + dNorms + dQA + dQB + dKVA + dKVB + dO + dRouter + dShared + dRouted
)

func writeDeepSeek(t testing.TB, o checkpointtest.Options) string {
	t.Helper()
	dir := t.TempDir()
	_, _, err := checkpointtest.WriteFromConfigs(dir, checkpointtest.DeepSeekV3NVFP4,
		configs+"nvidia--DeepSeek-V3.1-NVFP4_config.json", configs+"nvidia--DeepSeek-V3.1-NVFP4_hf_quant_config.json", o)
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestDeepSeekInlineMTP(t *testing.T) {
	dir := writeDeepSeek(t, checkpointtest.Options{MainLayers: 4, Shards: 3})
	r, err := audit.Run(dir, audit.Config{Options: audit.Options{Engine: "sglang"}, TP: []int{8}, EP: 8})
	if err != nil {
		t.Fatal(err)
	}
	// Bytes: BF16 everywhere but the F32 router bias (4 bytes per value).
	want := audit.MTPReport{Present: true, TensorCount: dMTPTensors, ParamCount: dMTPParams,
		Bytes: 2*dMTPParams + 2*dE, ShippedDType: "BF16", EffectiveDType: "BF16"}
	if r.MTP != want {
		t.Errorf("mtp:\n got %+v\nwant %+v", r.MTP, want)
	}
	if r.Draft.Kind != audit.MTPInline || r.Draft.Prefix != "model.layers.61." {
		t.Errorf("kind %s prefix %s", r.Draft.Kind, r.Draft.Prefix)
	}
	if audit.HasErrors(r.Findings) {
		t.Errorf("unexpected errors: %+v", r.Findings)
	}
	// SGLang at TP 8, EP 8: experts whole, 32 per rank; vocab tensors,
	// MLA up-projections and o_proj split 8 ways; eh_proj, q_a/kv_a
	// (replicated in SGLang), router and norms whole.
	wantBytes := 2*(float64(dVocab*dH*2)/8+float64(dQB+dKVB+dO)/8+float64(dShared)/8+float64(dRouted)/8+
		float64(dEH+dQA+dKVA+dNorms+dE*dH)) + 4*dE
	if got := float64(r.Memory[0].MTPBytes); math.Abs(got-wantBytes) > 1 {
		t.Errorf("draft per rank %v bytes, want %v", got, wantBytes)
	}
}

func TestDeepSeekFP8NextNMoE(t *testing.T) {
	dir := writeDeepSeek(t, checkpointtest.Options{MainLayers: 4, Shards: 2})
	opts := audit.Options{Engine: "sglang", Env: map[string]string{audit.EnvFP8NextNMoE: "1"}}
	r, err := audit.Run(dir, audit.Config{Options: opts, TP: []int{8}})
	if err != nil {
		t.Fatal(err)
	}
	if r.MTP.EffectiveDType != "MIXED" || r.Effective.Experts != "FP8" || r.Effective.Backend != "deep_gemm" {
		t.Errorf("effective %s, experts %s on %s", r.MTP.EffectiveDType, r.Effective.Experts, r.Effective.Backend)
	}
	for _, code := range []string{"draft_precision_lowered", "fp8_nextn_moe_needs_ep"} {
		if f := findCode(r.Findings, code); f == nil || f.Severity != audit.SeverityError {
			t.Errorf("want error %s, got %+v", code, f)
		}
	}
	// FP8 experts: one byte per value plus an F32 scale per 128x128 block.
	fp8Experts := float64(dE) * (2*(dI*dH+4*(dI/128)*(dH/128)) + (dH*dI + 4*(dH/128)*(dI/128)))
	// TP 8 without EP: experts split 8 ways by their intermediate size.
	bf16 := 2*(float64(dVocab*dH*2)/8+float64(dQB+dKVB+dO)/8+float64(dShared)/8+float64(dRouted)/8+
		float64(dEH+dQA+dKVA+dNorms+dE*dH)) + 4*dE
	want := bf16 - (2*float64(dRouted)-fp8Experts)/8
	if got := float64(r.Memory[0].MTPBytes); math.Abs(got-want)/want > 1e-6 {
		t.Errorf("draft with FP8 experts %.0f bytes per rank, want %.0f", got, want)
	}
}

// TestDeepSeekFullSize checks the parameter count of a full-size fixture
// against DeepSeek's published total: 685 B including the 14 B MTP module
// (DeepSeek-V3 model card). NVFP4 weights count two values per byte.
func TestDeepSeekFullSize(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 180k tensor headers")
	}
	dir := writeDeepSeek(t, checkpointtest.Options{Shards: 20})
	cp, err := audit.ReadCheckpoint(dir)
	if err != nil {
		t.Fatal(err)
	}
	total := audit.Summarize(audit.GroupModules(cp.Tensors)).Params
	if math.Abs(float64(total)/685e9-1) > 0.005 {
		t.Errorf("total params %d, published 685e9", total)
	}
	if math.Abs(float64(dMTPParams)/14e9-1) > 0.05 {
		t.Errorf("MTP params %d, published about 14e9", dMTPParams)
	}
}

func TestDPAttentionLayout(t *testing.T) {
	dir := writeDeepSeek(t, checkpointtest.Options{MainLayers: 4, Shards: 2})
	r, err := audit.Run(dir, audit.Config{Options: audit.Options{Engine: "sglang"}, TP: []int{8}, EP: 8, DP: 8})
	if err != nil {
		t.Fatal(err)
	}
	// DP attention 8: attention TP 1 (MLA replicated), embedding replicated
	// (enable_tp=not dp_attention), lm_head still split over the 8 ranks.
	want := 2*(float64(dVocab*dH)+float64(dVocab*dH)/8+float64(dQB+dKVB+dO)+float64(dShared)/8+float64(dRouted)/8+
		float64(dEH+dQA+dKVA+dNorms+dE*dH)) + 4*dE
	if got := float64(r.Memory[0].MTPBytes); math.Abs(got-want) > 1 {
		t.Errorf("DP-attention draft %v bytes, want %v", got, want)
	}
	if !strings.Contains(r.Effective.Reason, "deepseek_nextn.py") || r.MTP.EffectiveDType != "BF16" {
		t.Errorf("effective %+v", r.Effective)
	}
	// DP 2 of TP 8: attention TP 4. deepseek_nextn.py splits its embedding
	// over the attention TP group (use_attn_tp_group), lm_head over all 8.
	r, err = audit.Run(dir, audit.Config{Options: audit.Options{Engine: "sglang"}, TP: []int{8}, EP: 8, DP: 2})
	if err != nil {
		t.Fatal(err)
	}
	want = 2*(float64(dVocab*dH)/4+float64(dVocab*dH)/8+float64(dQB+dKVB+dO)/4+float64(dShared)/8+float64(dRouted)/8+
		float64(dEH+dQA+dKVA+dNorms+dE*dH)) + 4*dE
	if got := float64(r.Memory[0].MTPBytes); math.Abs(got-want) > 1 {
		t.Errorf("DP 2 draft %v bytes, want %v", got, want)
	}
}
