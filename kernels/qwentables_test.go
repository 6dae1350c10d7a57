package kernels

import (
	"math"
	"testing"
)

// TestQwenTablesAtMeasuredPoints: on the H200 the readers return the
// committed measurements (kernels/data/h200/gdn_chunk.csv, moe_triton.csv)
// at their own points and the geometric mean halfway between two of them.
func TestQwenTablesAtMeasuredPoints(t *testing.T) {
	g, err := LookupGPU("h200")
	if err != nil {
		t.Fatal(err)
	}
	c := NewCoster(g)
	near := func(got, want float64) bool { return math.Abs(got-want) <= 1e-9*want }
	gpu, eager, ok := c.GDNChunkPrefill(1024, 8, 2, 128, FP32)
	if !ok || !near(gpu.Seconds, 53.772e-6) || !near(eager.Seconds, 710.189e-6) || gpu.Source != SourceMeasured {
		t.Errorf("GDN chunk TP8 1024 tokens: %.3f / %.3f us (%v, %s), want 53.772 / 710.189", gpu.Seconds*1e6, eager.Seconds*1e6, ok, gpu.Source)
	}
	mid, _, _ := c.GDNChunkPrefill(1448, 8, 2, 128, FP32) // ~sqrt(1024*2048)
	if want := math.Sqrt(53.772 * 84.600); math.Abs(mid.Seconds*1e6-want) > 0.05 {
		t.Errorf("GDN chunk TP8 1448 tokens: %.3f us, want ~%.3f", mid.Seconds*1e6, want)
	}
	if _, _, ok := c.GDNChunkPrefill(1024, 7, 2, 128, FP32); ok {
		t.Error("7 v-heads: no measured line, want ok=false")
	}
	d, ok := c.GDNRecurrent(64, 1, 8, 128, BF16)
	if !ok || !near(d.Seconds, 25.150e-6) {
		t.Errorf("GDN decode TP8 batch 64 bf16: %.3f us (%v), want 25.150", d.Seconds*1e6, ok)
	}
	v3, _ := c.GDNRecurrent(16, 3, 8, 128, FP32) // halfway between q 2 (12.433) and q 4 (17.702)
	if !near(v3.Seconds, (12.433+17.702)/2*1e-6) {
		t.Errorf("GDN verify TP8 batch 16 q 3 fp32: %.3f us, want %.4f", v3.Seconds*1e6, (12.433+17.702)/2)
	}
	m, ok := c.TritonMoE(64, 512, 10, 4096, 128, BF16)
	if !ok || !near(m.Seconds, 282.613e-6) {
		t.Errorf("Triton MoE bf16 TP8 64 tokens: %.3f us (%v), want 282.613", m.Seconds*1e6, ok)
	}
	m, _ = c.TritonMoE(40, 512, 10, 4096, 128, BF16) // between the 32- and 48-token points
	if want := math.Exp(math.Log(194.592) + math.Log(40.0/32)/math.Log(48.0/32)*math.Log(255.563/194.592)); math.Abs(m.Seconds*1e6-want) > 1e-6 {
		t.Errorf("Triton MoE bf16 TP8 40 tokens: %.3f us, want %.3f", m.Seconds*1e6, want)
	}
	if _, ok := c.TritonMoE(64, 256, 8, 7168, 2048, FP8); ok {
		t.Error("DeepSeek shape: no measured line, want ok=false")
	}
}

// TestQwenTablesCarryOver: on the B200 the GPU time shrinks by the smaller
// of the bandwidth and BF16 ratios and is labelled carried over.
func TestQwenTablesCarryOver(t *testing.T) {
	h, _ := LookupGPU("h200")
	b, _ := LookupGPU("b200")
	want := math.Min(b.HBMBandwidth/h.HBMBandwidth, b.Peak[BF16]/h.Peak[BF16])
	hc, _ := NewCoster(h).TritonMoE(64, 512, 10, 4096, 128, BF16)
	bc, ok := NewCoster(b).TritonMoE(64, 512, 10, 4096, 128, BF16)
	if !ok || math.Abs(hc.Seconds/bc.Seconds-want) > 1e-9 || bc.Source != SourceCarryOver {
		t.Errorf("b200/h200 speed-up %.4f (%s), want %.4f carried over", hc.Seconds/bc.Seconds, bc.Source, want)
	}
}
