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
// is priced from SGLang's measured kernel (kernels/data/h200/gdn_recurrent.csv),
// where a BF16 state is SLOWER than an FP32 one at batch 64 (its per-token
// [128 x 8] BF16 tile stores; kernels/collect/NOTES.md): at TP8 (8 value, 2
// key heads), 64 sequences x 4 tokens, 100.612 us BF16 against 65.518 us
// FP32 per layer. The step's GDN time must move by that measured ratio.
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
	if !(b16.GDN > f32.GDN) {
		t.Errorf("GDN time with a BF16 state %.3f ms, FP32 %.3f ms: the measured verify kernel is slower with BF16", b16.GDN*1e3, f32.GDN*1e3)
	}
	// The kernel is one part of the layer's GDN time (projections and the
	// convolution do not depend on the state dtype): the difference is 45
	// layers x (100.612 - 65.518) us.
	if d := b16.GDN - f32.GDN; !near(d, 45*(100.612-65.518)*1e-6, 0.02) {
		t.Errorf("BF16 - FP32 GDN time %.1f us, want 45 x 35.094 us = %.1f us", d*1e6, 45*35.094)
	}
	if b16.MoE != f32.MoE || b16.Attention != f32.Attention {
		t.Errorf("the SSM dtype moved other parts of the step")
	}
}
