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

// TestMambaSSMDTypePricesStateTraffic: a BF16 state moves half the state
// bytes of an FP32 one in a decode step's Gated DeltaNet update.
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
		t.Errorf("GDN time with a BF16 state %.3f ms, FP32 %.3f ms: want less", b16.GDN*1e3, f32.GDN*1e3)
	}
	if b16.MoE != f32.MoE || b16.Attention != f32.Attention {
		t.Errorf("the SSM dtype moved other parts of the step")
	}
}
