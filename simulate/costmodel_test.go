package simulate

import (
	"testing"

	"github.com/specsim/specsim/kernels"
)

// TestMambaSSMDTypeSizesState checks the linear-attention cache of one
// request against the arithmetic of SGLang's MambaPool for Qwen3.5-397B at
// TP8: per Gated DeltaNet layer and rank, 64/8 value heads of 128x128
// states plus a conv window of (2*16*128 + 64*128)/8 channels x 3 in BF16;
// 45 such layers; one intermediate state and window per draft token (k+1)
// when speculating.
func TestMambaSSMDTypeSizesState(t *testing.T) {
	m, err := LookupPreset("Qwen3.5-397B-A17B")
	if err != nil {
		t.Fatal(err)
	}
	g := gpu(t, "h200")
	conv := 12288.0 / 8 * 3 * 2
	for _, c := range []struct {
		ssm       kernels.DType
		stateByte float64
	}{{kernels.FP32, 4}, {kernels.BF16, 2}, {"", 2}} {
		e, err := NewEngine(m, g, Parallel{TP: 8, EP: 8, PP: 1}, EngineConfig{Precision: FP8, SSMDType: c.ssm, SchedOverhead: -1, SpecOverhead: -1})
		if err != nil {
			t.Fatal(err)
		}
		per := 45 * (8*128*128*c.stateByte + conv)
		if got := e.stateBytes(0); !near(got, per, 1e-12) {
			t.Errorf("%q: state without speculation %.0f B, want %.0f", c.ssm, got, per)
		}
		if got := e.stateBytes(3); !near(got, 5*per, 1e-12) {
			t.Errorf("%q: state at k=3 %.0f B, want %.0f (1 + 4 draft tokens)", c.ssm, got, 5*per)
		}
	}
}

// TestMambaSSMDTypePricesStateTraffic: the SSM dtype picks the state dtype
// the Gated DeltaNet kernels are priced with. On the H200 the verify step
// is priced from SGLang v0.5.14's measured kernel
// (kernels/data/h200/gdn_verify_sigmoid.csv, fused sigmoid gating with
// intermediate states), where a BF16 state is faster than an FP32 one: at
// TP8 (8 value, 2 key heads), 64 sequences x 4 tokens, 31.311 us BF16
// against 51.843 us FP32 per layer. (The 2026-01-01 kernel,
// gdn_recurrent.csv, was slower with BF16.) The step's GDN time must move
// by that measured difference.
func TestMambaSSMDTypePricesStateTraffic(t *testing.T) {
	m, _ := LookupPreset("Qwen3.5-397B-A17B")
	g := gpu(t, "h200")
	step := func(d kernels.DType) Breakdown {
		e, err := NewEngine(m, g, Parallel{TP: 8, EP: 8, PP: 1}, EngineConfig{Precision: FP8, SSMDType: d, SchedOverhead: 0, SpecOverhead: 0})
		if err != nil {
			t.Fatal(err)
		}
		return e.DecodeStep(64, 3, 1024)
	}
	f32, b16 := step(kernels.FP32), step(kernels.BF16)
	if !(b16.GDN < f32.GDN) {
		t.Errorf("GDN time with a BF16 state %.3f ms, FP32 %.3f ms: the measured verify kernel is faster with BF16", b16.GDN*1e3, f32.GDN*1e3)
	}
	// The kernel is one part of the layer's GDN time (projections and the
	// convolution do not depend on the state dtype): the difference is 45
	// layers x (31.311 - 51.843) us, plus that of the post-verify state
	// commit, which reads and writes each of the 64 requests' state: per
	// request 45 x (8 x 128 x 128 state entries + 1536 x 3 BF16 conv
	// entries), 12,211,200 B in BF16 and 24,007,680 B in FP32 (x 2 x 64:
	// 1,563,033,600 B in BF16, the bytes mamba_commit.csv moved for 64
	// requests), on the copy roofline.
	c := kernels.NewCoster(g)
	commit := func(perReq float64) float64 { return must(t)(c.Elementwise(2 * 64 * perReq)).Seconds }
	want := 45*(31.311-51.843)*1e-6 + commit(12_211_200) - commit(24_007_680)
	if d := b16.GDN - f32.GDN; !near(d, want, 0.02) {
		t.Errorf("BF16 - FP32 GDN time %.1f us, want 45 x -20.532 us + the commit's %.1f us = %.1f us", d*1e6, (commit(12_211_200)-commit(24_007_680))*1e6, want*1e6)
	}
	if b16.MoE != f32.MoE || b16.Attention != f32.Attention {
		t.Errorf("the SSM dtype moved other parts of the step")
	}
}

func TestMambaSSMDTypeFlag(t *testing.T) {
	for _, c := range []struct {
		in   string
		want kernels.DType
		ok   bool
	}{{"bfloat16", kernels.BF16, true}, {"float32", kernels.FP32, true}, {"", "", true}, {"int8", "", false}, {"fp9", "", false}} {
		q := Query{Model: "Qwen3.5-397B-A17B", GPU: "h200", Precision: "fp8", Workload: "fixed", ISL: 1024, OSL: 1024, MambaSSMDType: c.in, SchedOverhead: -1, SpecOverhead: -1}
		r, err := q.Resolve(testCurves, testCatalog)
		if (err == nil) != c.ok {
			t.Errorf("%q: err %v, want ok=%v", c.in, err, c.ok)
			continue
		}
		if err == nil && r.Engine.SSMDType != c.want {
			t.Errorf("%q: resolved %q, want %q", c.in, r.Engine.SSMDType, c.want)
		}
	}
}

// TestSpecV2HidesSpeculativeHostTime: with SGLANG_ENABLE_SPEC_V2 the MTP
// iteration's host time is the plain decode's 0.15 ms; without it 0.15 +
// 0.35 ms. An explicit --spec-overhead-ms still wins.
func TestSpecV2HidesSpeculativeHostTime(t *testing.T) {
	m, _ := LookupPreset("Qwen3.5-397B-A17B")
	g := gpu(t, "h200")
	host := func(v2 bool, spec float64) float64 {
		e, err := NewEngine(m, g, Parallel{TP: 8, EP: 8, PP: 1}, EngineConfig{Precision: FP8, SpecV2: v2, SchedOverhead: -1, SpecOverhead: spec})
		if err != nil {
			t.Fatal(err)
		}
		b := e.DecodeStep(8, 3, 1024)
		if !near(b.Launch+b.Gap+b.Host, b.Overhead, 1e-12) {
			t.Errorf("overhead split %.4f+%.4f+%.4f ms does not add to %.4f ms", b.Launch*1e3, b.Gap*1e3, b.Host*1e3, b.Overhead*1e3)
		}
		return b.Host
	}
	if got := host(false, -1); !near(got, 0.5e-3, 1e-9) {
		t.Errorf("spec v1 host %.3f ms, want 0.50", got*1e3)
	}
	if got := host(true, -1); !near(got, 0.15e-3, 1e-9) {
		t.Errorf("spec v2 host %.3f ms, want 0.15", got*1e3)
	}
	if got := host(true, 0.2e-3); !near(got, 0.35e-3, 1e-9) {
		t.Errorf("spec v2 with --spec-overhead-ms 0.2: host %.3f ms, want 0.35", got*1e3)
	}
}

// TestAllReducePaths: SGLang inside NVLink takes the custom all-reduce,
// TensorRT-LLM keeps the NCCL model; the FlashInfer fusion removes the two
// RMSNorms of a decode layer and keeps them for a forward over 2048 tokens.
func TestAllReducePaths(t *testing.T) {
	m, _ := LookupPreset("Qwen3.5-397B-A17B")
	g := gpu(t, "h200")
	c := kernels.NewCoster(g)
	msg := float64(8*m.Hidden) * 2 // 8 tokens, BF16
	for _, tc := range []struct {
		engine string
		want   float64
	}{{"sglang", func() float64 { v, _ := c.CustomAllReduce(msg, 8); return v.Seconds }()}, {"trtllm", c.Collective("allreduce", msg, 8).Seconds}} {
		e, err := NewEngine(m, g, Parallel{TP: 8, EP: 8, PP: 1}, EngineConfig{Precision: FP8, EngineName: tc.engine, SchedOverhead: -1, SpecOverhead: -1})
		if err != nil {
			t.Fatal(err)
		}
		if got := e.tpAllReduce(msg); !near(got, tc.want, 1e-12) {
			t.Errorf("%s: all-reduce %.2f us, want %.2f", tc.engine, got*1e6, tc.want*1e6)
		}
	}
	e, _ := NewEngine(m, g, Parallel{TP: 8, EP: 8, PP: 1}, EngineConfig{Precision: FP8, AllReduceFusion: true, SchedOverhead: -1, SpecOverhead: -1})
	if got := e.fusedNorms(8); got != 2 {
		t.Errorf("decode layer: %d fused norms, want 2", got)
	}
	if got := e.fusedNorms(4096); got != 0 {
		t.Errorf("4096-token forward: %d fused norms, want 0 (beyond the 2048-token workspace)", got)
	}
}

// TestGDNPrefillFromChunkTable: on the H200 a 4096-token prefill's Gated
// DeltaNet kernel is the measured chunked kernel (gdn_chunk.csv, TP8: 8 v /
// 2 k heads, 151 us under a graph), not the token-by-token recurrence; an
// eager prefill layer costs at least the measured eager call (688 us).
func TestGDNPrefillFromChunkTable(t *testing.T) {
	m, _ := LookupPreset("Qwen3.5-397B-A17B")
	g := gpu(t, "h200")
	e, err := NewEngine(m, g, Parallel{TP: 8, EP: 8, PP: 1}, EngineConfig{Precision: FP8, SSMDType: kernels.FP32, SchedOverhead: 0, SpecOverhead: 0})
	if err != nil {
		t.Fatal(err)
	}
	c := kernels.NewCoster(g)
	const T = 4096
	kh, vh := 2, 8
	proj := must(t)(c.GEMM("fp8", T, 2*kh*128+2*vh*128+2*vh, m.Hidden)).Seconds + must(t)(c.Elementwise(float64(T*(2*kh*128+vh*128))*2*2)).Seconds +
		must(t)(c.GEMM("fp8", T, m.Hidden, vh*128)).Seconds
	got := e.linearAttention(T, 1, shape{seqs: 1, q: T, prefill: true}, "fp8")
	if want := proj + 150.900e-6; !near(got, want, 1e-6) {
		t.Errorf("GDN prefill layer %.1f us, want %.1f (projections + measured chunk kernel)", got*1e6, want*1e6)
	}
	if floor := e.gdnEagerFloor(T); !near(floor, 687.694e-6, 1e-6) {
		t.Errorf("eager floor %.1f us, want 687.7", floor*1e6)
	}
	pre := e.Prefill([]PrefillPart{{New: T, Last: true}}, false)
	if lin := 45.0; !(pre.GDN >= lin*687.694e-6*(1-1e-9)) {
		t.Errorf("prefill GDN %.2f ms, want at least 45 x the eager call (%.2f ms)", pre.GDN*1e3, lin*0.687694)
	}
}
