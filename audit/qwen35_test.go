package audit_test

import (
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/specsim/specsim/audit"
	"github.com/specsim/specsim/audit/checkpointtest"
)

const configs = "../testdata/configs/"

func writeQwen35(t testing.TB, model string, o checkpointtest.Options) string {
	t.Helper()
	dir := t.TempDir()
	_, _, err := checkpointtest.WriteFromConfigs(dir, checkpointtest.Qwen35MoE,
		configs+model+"_config.json", configs+model+"_hf_quant_config.json", o)
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// Qwen3.5-397B-A17B architecture (text_config of the release), written out
// so the expectations below do not come from the code under test.
const (
	qH       = 4096   // hidden_size
	qVocab   = 248320 // vocab_size (a multiple of 64: no padding)
	qExperts = 512    // num_experts
	qInter   = 1024   // moe_intermediate_size = shared_expert_intermediate_size
	qHeads   = 32     // num_attention_heads
	qKV      = 2      // num_key_value_heads
	qHead    = 256    // head_dim
)

// The MTP head of nvidia/Qwen3.5-397B-A17B-NVFP4, tensor by tensor:
//
//	mtp.fc, mtp.norm, mtp.pre_fc_norm_embedding, mtp.pre_fc_norm_hidden        4
//	mtp.layers.0.{input,post_attention}_layernorm                            2
//	mtp.layers.0.self_attn.{q,k,v,o}_proj, q_norm, k_norm                     6
//	mtp.layers.0.mlp.gate (router)                                           1
//	mtp.layers.0.mlp.shared_expert.{gate,up,down}_proj                        3
//	mtp.layers.0.mlp.shared_expert_gate                                      1
//	mtp.layers.0.mlp.experts.{0..511}.{gate,up,down}_proj        512 x 3 = 1536
//	                                                                 total 1553
const qMTPTensors = 4 + 2 + 6 + 1 + 3 + 1 + qExperts*3

// Parameters by group; all BF16, so bytes are twice the parameters.
const (
	qFC       = 2 * qH * qH                // fc: [hidden, 2 hidden]
	qNorms    = 3*qH + 2*qH + 2*qHead      // norm, two pre-fc norms, two layer norms, q/k norms
	qQ        = 2 * qHeads * qHead * qH    // q_proj with the output gate
	qKVProj   = 2 * qKV * qHead * qH       // k_proj + v_proj
	qO        = qH * qHeads * qHead        // o_proj
	qRouter   = qExperts * qH              // mlp.gate
	qShared   = 3 * qInter * qH            // shared expert
	qSharedG  = qH                         // shared_expert_gate [1, hidden]
	qRouted   = qExperts * 3 * qInter * qH // routed experts
	qMTPParam = qFC + qNorms + qQ + qKVProj + qO + qRouter + qShared + qSharedG + qRouted
)

// sglangDraftBytes is what SGLang allocates per rank for the Qwen3.5 MTP
// draft, from qwen3_5_mtp.py / qwen3_5.py / qwen2_moe.py: fc is a plain
// nn.Linear (replicated), the router and shared_expert_gate are replicated,
// norms are replicated, q/o/shared expert/experts split over TP, k/v split
// by KV head and replicated once TP exceeds the 2 KV heads, and the draft
// builds its own vocab-parallel embedding and lm_head.
func sglangDraftBytes(tp int64) float64 {
	kvShare := 1.0 / float64(tp)
	if tp > qKV {
		kvShare = 1.0 / qKV
	}
	b := 2 * (float64(qFC+qNorms+qRouter+qSharedG) +
		float64(qQ+qO+qShared+qRouted)/float64(tp) +
		float64(qKVProj)*kvShare +
		2*float64(qVocab*qH)/float64(tp))
	return b
}

// allocatorSlack is what PyTorch's caching allocator reserves beyond the
// tensor bytes for the draft's parameters on one rank: the small tensors
// (five hidden-size norms, q/k norms, shared_expert_gate: 50176 bytes) share
// one 2 MiB segment; tensors from 1 to 10 MiB (router 4 MiB, shared expert
// gate_up and down when under 10 MiB) share 20 MiB segments; larger ones get
// their own segment rounded to 2 MiB (embedding and lm_head at TP 4 are
// 485 MiB each).
var allocatorSlack = map[int]float64{
	1: 2<<20 - 50176 + (20-4-8)<<20,           // gate_up 16 MiB is large
	2: 2<<20 - 50176 + (20-4-8-4)<<20,         // router, gate_up 8, down 4
	4: 2<<20 - 50176 + (20-4-4-2)<<20 + 2<<20, // plus 1 MiB rounding on embed and lm_head
}

func TestQwen35NVFP4Release(t *testing.T) {
	dir := writeQwen35(t, "nvidia--Qwen3.5-397B-A17B-NVFP4", checkpointtest.Options{MainLayers: 4, Shards: 3})
	r, err := audit.Run(dir, audit.Config{Options: audit.Options{Engine: "sglang"}, TP: []int{1, 2, 4}})
	if err != nil {
		t.Fatal(err)
	}
	m := r.MTP
	want := audit.MTPReport{Present: true, TensorCount: qMTPTensors, ParamCount: qMTPParam, Bytes: 2 * qMTPParam,
		ShippedDType: "BF16", ScaleTensorCount: 0, EffectiveDType: "BF16"}
	if m != want {
		t.Errorf("mtp:\n got %+v\nwant %+v", m, want)
	}
	if qMTPTensors != 1553 {
		t.Fatalf("hand count is %d", qMTPTensors)
	}
	// The research notes derive about 6.60 B parameters for this head.
	if math.Abs(float64(m.ParamCount)/6.60e9-1) > 0.005 {
		t.Errorf("params %d, notes say about 6.60e9", m.ParamCount)
	}

	fc := findCode(r.Findings, "mtp_exclude_gap_overridden")
	if fc == nil || !strings.Contains(fc.Message, "mtp.fc ") || fc.Severity != audit.SeverityWarning {
		t.Errorf("want a warning naming mtp.fc, got %+v", fc)
	}
	for _, f := range r.Findings {
		if strings.Contains(f.Message, "mtp.layers.0.self_attn") || strings.Contains(f.Code, "exclude_wrong") {
			t.Errorf("unexpected finding %+v", f)
		}
		if f.Severity == audit.SeverityError {
			t.Errorf("unexpected error finding %+v", f)
		}
	}
	// Routers of the main layers are not excluded either (older export);
	// engines build them unquantized, so it is informational.
	if f := findCode(r.Findings, "exclude_gap_overridden"); f == nil || f.Severity != audit.SeverityInfo || !strings.Contains(f.Message, "mlp.gate") {
		t.Errorf("want an info finding for the routers, got %+v", f)
	}

	if len(r.Memory) != 3 {
		t.Fatalf("memory rows: %+v", r.Memory)
	}
	for _, row := range r.Memory {
		want := sglangDraftBytes(int64(row.TP))
		if math.Abs(float64(row.MTPBytes)-want) > 1 {
			t.Errorf("tp=%d: draft %d bytes, want %.0f", row.TP, row.MTPBytes, want)
		}
		reserved := want + allocatorSlack[row.TP]
		if math.Abs(row.MTPGiB-reserved/(1<<30)) > 1e-4 {
			t.Errorf("tp=%d: draft %.4f GiB as logged, want %.4f", row.TP, row.MTPGiB, reserved/(1<<30))
		}
		// Measured on an H200 by allocating these parameters with torch:
		// mem_get_info moved by 16.0879, 8.0762 and 4.0840 GiB.
		measured := map[int]float64{1: 16.0879, 2: 8.0762, 4: 4.0840}[row.TP]
		if math.Abs(row.MTPGiB/measured-1) > 0.001 {
			t.Errorf("tp=%d: %.4f GiB, measured allocation %.4f", row.TP, row.MTPGiB, measured)
		}
	}
	// At TP 1 every tensor is whole: the model is all shipped data plus the
	// draft's own embedding and lm_head copies.
	tp1 := r.Memory[0]
	wantModel := float64(r.DataBytes+2*2*qVocab*qH) / (1 << 30)
	if math.Abs(tp1.ModelGiB-wantModel) > 1e-4 {
		t.Errorf("tp=1 model %.4f GiB, want %.4f", tp1.ModelGiB, wantModel)
	}
	// Counterfactual: NVFP4 experts (as the target ships them) would take
	// 0.5625 bytes per parameter plus 8 bytes of scalars per expert matrix.
	// The fused w13/w2 then round up to 2 MiB: allow 4 MiB beyond the slack.
	cf := r.Counterfactual[0]
	nvfp4Experts := float64(qRouted)*0.5625 + qExperts*3*8
	wantNVFP4 := (sglangDraftBytes(1) - 2*qRouted + nvfp4Experts + allocatorSlack[1]) / (1 << 30)
	if d := cf.NVFP4GiB - wantNVFP4; d < -1e-4 || d > 4.0/1024 || cf.BF16GiB != tp1.MTPGiB {
		t.Errorf("counterfactual %+v, want nvfp4 %.4f and bf16 %.4f", cf, wantNVFP4, tp1.MTPGiB)
	}
}

func TestQwen35VLLM(t *testing.T) {
	dir := writeQwen35(t, "nvidia--Qwen3.5-397B-A17B-NVFP4", checkpointtest.Options{MainLayers: 4, Shards: 2})
	r, err := audit.Run(dir, audit.Config{Options: audit.Options{Engine: "vllm"}, TP: []int{4}})
	if err != nil {
		t.Fatal(err)
	}
	if r.MTP.EffectiveDType != "BF16" {
		t.Errorf("effective %s", r.MTP.EffectiveDType)
	}
	f := findCode(r.Findings, "mtp_exclude_gap_overridden")
	if f == nil || !strings.Contains(f.Message, "PR #38832") {
		t.Errorf("want the vLLM fc override named, got %+v", f)
	}
	// vLLM shares embedding and lm_head and splits fc over TP.
	want := 2 * (float64(qNorms+qRouter+qSharedG) + float64(qFC+qQ+qO+qShared+qRouted)/4 + float64(qKVProj)/2)
	if got := float64(r.Memory[0].MTPBytes); math.Abs(got-want) > 1 {
		t.Errorf("vllm tp=4 draft %v bytes, want %v", got, want)
	}
}

// The 122B release (newer ModelOpt) excludes "mtp*": nothing to report on fc.
func TestQwen35FixedExclude(t *testing.T) {
	dir := writeQwen35(t, "nvidia--Qwen3.5-122B-A10B-NVFP4", checkpointtest.Options{MainLayers: 4, Shards: 2})
	for _, engine := range []string{"sglang", "vllm"} {
		r, err := audit.Run(dir, audit.Config{Options: audit.Options{Engine: engine}, TP: []int{2}})
		if err != nil {
			t.Fatal(err)
		}
		if f := findCode(r.Findings, "mtp_exclude_gap_overridden"); f != nil {
			t.Errorf("%s: unexpected %+v", engine, f)
		}
		if r.MTP.ShippedDType != "BF16" || r.MTP.EffectiveDType != "BF16" {
			t.Errorf("%s: %+v", engine, r.MTP)
		}
	}
}

func findCode(fs []audit.Finding, code string) *audit.Finding {
	for i := range fs {
		if fs[i].Code == code {
			return &fs[i]
		}
	}
	return nil
}

var _ = filepath.Join
