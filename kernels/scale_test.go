package kernels

import (
	"math"
	"testing"
)

func TestScaledDividesBoundTimes(t *testing.T) {
	g, err := DefaultCatalog().Lookup("h200")
	if err != nil {
		t.Fatal(err)
	}
	c := NewCoster(g)
	// A 10 GB copy is memory-bound: its fixed few us are negligible, so
	// half the bandwidth doubles it.
	mem1 := must(t)(c.Elementwise(1e10)).Seconds
	mem2 := must(t)(c.Scaled(0.5, 1).Elementwise(1e10)).Seconds
	if r := mem2 / mem1; math.Abs(r-2) > 1e-3 {
		t.Errorf("copy at half bandwidth: %.4fx the time, want 2x", r)
	}
	// A 16k cube BF16 GEMM is compute-bound: half the peak doubles it,
	// half the bandwidth leaves it (within the blend near the ridge).
	g1 := must(t)(c.GEMM(BF16, 16384, 16384, 16384)).Seconds
	g2 := must(t)(c.Scaled(1, 0.5).GEMM(BF16, 16384, 16384, 16384)).Seconds
	if r := g2 / g1; math.Abs(r-2) > 0.01 {
		t.Errorf("GEMM at half peak: %.4fx the time, want 2x", r)
	}
	if r := must(t)(c.Scaled(0.5, 1).GEMM(BF16, 16384, 16384, 16384)).Seconds / g1; math.Abs(r-1) > 0.02 {
		t.Errorf("compute-bound GEMM at half bandwidth: %.4fx the time, want about 1x", r)
	}
	// The original is untouched and bad factors leave the costs alone.
	if must(t)(c.Elementwise(1e10)).Seconds != mem1 || must(t)(c.Scaled(math.NaN(), -1).Elementwise(1e10)).Seconds != mem1 {
		t.Error("Scaled changed the original, or took a non-positive factor")
	}
}
