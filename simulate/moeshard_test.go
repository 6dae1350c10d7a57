package simulate

import (
	"math"
	"testing"

	"github.com/specsim/specsim/kernels"
)

// TestMeasuredMoEShard: SGLang's Triton MoE on an EP rank is priced from the
// table of that rank's own shard where the GPU has one: Qwen3.5-397B-A17B
// FP8 at TP8 EP8 on the H200 reads kernels/data/h200/moe_triton_ep8.csv (64
// local experts at the full inter 1024, busiest of 8 ranks), at TP8 EP1 the
// TP shard of moe_triton.csv (512 experts at inter 128). Expected values are
// the CSV rows at measured token counts (no interpolation involved).
func TestMeasuredMoEShard(t *testing.T) {
	m, err := LookupPreset("Qwen3.5-397B-A17B")
	if err != nil {
		t.Fatal(err)
	}
	g := gpu(t, "h200")
	for _, tc := range []struct {
		name   string
		par    Parallel
		engine string
		tokens int
		wantUS float64 // 0: not measured
	}{
		{"ep8 16 tokens, moe_triton_ep8.csv", Parallel{TP: 8, EP: 8, PP: 1}, "sglang", 16, 109.054},
		{"ep8 64 tokens, moe_triton_ep8.csv", Parallel{TP: 8, EP: 8, PP: 1}, "sglang", 64, 190.551},
		{"ep8 160 tokens, moe_triton_ep8.csv", Parallel{TP: 8, EP: 8, PP: 1}, "sglang", 160, 237.938},
		{"tp8 64 tokens, moe_triton.csv", Parallel{TP: 8, EP: 1, PP: 1}, "sglang", 64, 260.235},
		{"not SGLang's Triton path", Parallel{TP: 8, EP: 8, PP: 1}, "vllm", 64, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, err := NewEngine(m, g, tc.par, EngineConfig{Precision: FP8, EngineName: tc.engine, MoEBackend: "triton", SchedOverhead: -1, SpecOverhead: -1})
			if err != nil {
				t.Fatal(err)
			}
			got, ok := e.measuredMoE(tc.tokens, kernels.FP8, false)
			if tc.wantUS == 0 {
				if ok {
					t.Fatalf("priced from a measurement (%.1f us), want no measurement", got*1e6)
				}
				return
			}
			if !ok || !near(got*1e6, tc.wantUS, 1e-6) {
				t.Errorf("measured %v: %.3f us, want %.3f", ok, got*1e6, tc.wantUS)
			}
		})
	}
}

// TestSGLangGathersLogits: SGLang's vocabulary-parallel lm_head gathers the
// whole vocabulary's BF16 logits on every rank before sampling
// (LogitsProcessor._get_logits), so at TP8 its lm_head is dearer than an
// engine that gathers only each rank's best candidates by at least the
// gathered bytes over the GPU's NVLink bandwidth (64 rows x 248320 x 2
// bytes, 7/8 of which arrive from other ranks) plus the FP32 copy of the
// gathered logits over its HBM bandwidth (64 x 248320 x (2 read + 4
// written) bytes, _copy_logits_to_buffer): two kernels, one after the other.
func TestSGLangGathersLogits(t *testing.T) {
	m, err := LookupPreset("Qwen3.5-397B-A17B")
	if err != nil {
		t.Fatal(err)
	}
	g := gpu(t, "h200")
	cost := map[string]float64{}
	for _, engine := range []string{"sglang", "vllm"} {
		e, err := NewEngine(m, g, Parallel{TP: 8, EP: 8, PP: 1}, EngineConfig{Precision: FP8, EngineName: engine, SchedOverhead: -1, SpecOverhead: -1})
		if err != nil {
			t.Fatal(err)
		}
		cost[engine] = e.lmHead(shape{seqs: 16, q: 4, logits: 64}, m.Vocab)
	}
	gather := 64 * float64(m.Vocab) * 2 * 7 / 8 / g.NVLinkBandwidth
	cp := 64 * float64(m.Vocab) * 6 / g.HBMBandwidth
	if extra := cost["sglang"] - cost["vllm"]; extra < gather+cp {
		t.Errorf("SGLang lm_head %.1f us, other %.1f us: extra %.1f us below the gather's %.1f us + the FP32 copy's %.1f us", cost["sglang"]*1e6, cost["vllm"]*1e6, extra*1e6, gather*1e6, cp*1e6)
	}
}

// TestStateCommitMatchesMeasurement: SGLang's post-verify commit of the
// Gated DeltaNet state (update_mamba_state_after_mtp_verify) at TP8 with a
// BF16 state reads and writes 2 x 16 x 12,211,200 B for 16 requests, the
// bytes kernels/data/h200/mamba_commit.csv moved, where its two kernels took
// 97.891 + 5.342 us on the H200: the copy roofline must land within 10% of
// that. TensorRT-LLM is not priced with SGLang's commit.
func TestStateCommitMatchesMeasurement(t *testing.T) {
	m, err := LookupPreset("Qwen3.5-397B-A17B")
	if err != nil {
		t.Fatal(err)
	}
	g := gpu(t, "h200")
	for _, tc := range []struct {
		engine string
		wantUS float64
	}{{"sglang", 97.891 + 5.342}, {"trtllm", 0}} {
		e, err := NewEngine(m, g, Parallel{TP: 8, EP: 8, PP: 1}, EngineConfig{Precision: FP8, SSMDType: kernels.BF16, EngineName: tc.engine, SchedOverhead: -1, SpecOverhead: -1})
		if err != nil {
			t.Fatal(err)
		}
		if got := 2 * 16 * e.stateBytes(0); tc.engine == "sglang" && got != 390_758_400 {
			t.Errorf("commit bytes %.0f, want 390758400", got)
		}
		got := e.stateCommit(16) * 1e6
		if tc.wantUS == 0 && got != 0 || tc.wantUS > 0 && math.Abs(got/tc.wantUS-1) > 0.10 {
			t.Errorf("%s: state commit %.1f us for 16 requests, want %.1f", tc.engine, got, tc.wantUS)
		}
	}
}

// TestMeasuredMoEShardEP: the EP8 rank is looked up as an EP8 rank (its
// table's lines are keyed by EP size, so a plain 64-expert layer never
// reads them), and with skewed routing, which kernels does not model on an
// EP rank, the TP shard's line prices the experts as it did before the EP8
// table existed.
func TestMeasuredMoEShardEP(t *testing.T) {
	m, err := LookupPreset("Qwen3.5-397B-A17B")
	if err != nil {
		t.Fatal(err)
	}
	g := gpu(t, "h200")
	for _, tc := range []struct {
		name              string
		skew              float64
		ep, experts, topk int
		inter             int
	}{
		{"uniform: the EP8 rank", 0, 8, 64, 10, 1024},
		{"skewed: the TP8 shard", 0.5, 0, 512, 10, 128},
	} {
		e, err := NewEngine(m, g, Parallel{TP: 8, EP: 8, PP: 1}, EngineConfig{Precision: FP8, EngineName: "sglang", MoEBackend: "triton", MoESkew: tc.skew, SchedOverhead: -1, SpecOverhead: -1})
		if err != nil {
			t.Fatal(err)
		}
		_, s, ok := e.measuredMoEShard(64, kernels.FP8, false)
		if !ok || s.EP != tc.ep || s.Experts != tc.experts || s.TopK != tc.topk || s.Inter != tc.inter {
			t.Errorf("%s: %v %+v", tc.name, ok, s)
		}
	}
}
