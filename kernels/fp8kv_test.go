package kernels

import "testing"

// An FP8 KV cache halves the KV bytes and runs the math no slower than
// BF16 (Coster.attention), so on every GPU, with its own calibration
// (measured on the H200, carried over elsewhere), FP8 KV attention costs at
// most what BF16 KV does for the same shape, and its bytes are BF16's
// less half the KV.
func TestFP8KVAttentionNeverAboveBF16(t *testing.T) {
	shapes := []struct {
		name string
		s    AttentionShape
		// bf16Bytes and kvBytes by hand: KV b*l*2*kvh*d*2 (MLA b*l*d*2),
		// Q and O b*q*h*(d+dv)*2.
		bf16Bytes, kvBytes float64
	}{
		// The review's shape: Qwen3.5 full attention at TP2, 7 queries
		// (verify at 6 drafts), 64 sequences of 4096.
		{"qwen3.5 verify", AttentionShape{Batch: 64, QLen: 7, KVLen: 4096, Heads: 16, KVHeads: 1, HeadDim: 256},
			64*4096*2*256*2 + 64*7*16*512*2, 64 * 4096 * 2 * 256 * 2},
		{"gqa decode", AttentionShape{Batch: 8, QLen: 1, KVLen: 32768, Heads: 64, KVHeads: 8, HeadDim: 128},
			8*32768*2*8*128*2 + 8*64*256*2, 8 * 32768 * 2 * 8 * 128 * 2},
		{"gqa verify small", AttentionShape{Batch: 1, QLen: 4, KVLen: 1024, Heads: 32, KVHeads: 4, HeadDim: 128},
			1024*2*4*128*2 + 4*32*256*2, 1024 * 2 * 4 * 128 * 2},
		{"mla decode", AttentionShape{Batch: 32, QLen: 2, KVLen: 8192, Heads: 16, KVHeads: 1, HeadDim: 576, MLA: true},
			32*8192*576*2 + 32*2*16*(576+512)*2, 32 * 8192 * 576 * 2},
		{"prefill", AttentionShape{Batch: 1, QLen: 2048, KVLen: 8192, Heads: 16, KVHeads: 2, HeadDim: 256, Prefill: true},
			8192*2*2*256*2 + 2048*16*512*2, 8192 * 2 * 2 * 256 * 2},
	}
	for _, gpu := range []string{"h200", "h100", "b200", "b300", "gb200", "gb300"} {
		c := NewCoster(mustGPU(t, gpu))
		for _, tc := range shapes {
			t.Run(gpu+"/"+tc.name, func(t *testing.T) {
				bf := tc.s
				bf.KVDType = BF16
				f8 := tc.s
				f8.KVDType = FP8
				b := must(t)(c.Attention(bf))
				f := must(t)(c.Attention(f8))
				if !near(b.Bytes, tc.bf16Bytes, 1e-12) || !near(f.Bytes, tc.bf16Bytes-tc.kvBytes/2, 1e-12) {
					t.Errorf("bytes bf16 %v fp8 %v; want %v and %v", b.Bytes, f.Bytes, tc.bf16Bytes, tc.bf16Bytes-tc.kvBytes/2)
				}
				if f.FLOPs != b.FLOPs {
					t.Errorf("flops fp8 %v != bf16 %v", f.FLOPs, b.FLOPs)
				}
				if f.Seconds > b.Seconds {
					t.Errorf("fp8 KV %.2f us > bf16 KV %.2f us", f.Seconds*1e6, b.Seconds*1e6)
				}
				if f.Source == SourceMeasured {
					t.Errorf("fp8 KV source %q: nothing of it was measured", f.Source)
				}
			})
		}
	}
}

// Without measured FP8 attention rows the FP8 KV efficiencies are BF16's:
// the GEMM-only discount for FP8 tensor cores does not apply.
func TestFP8KVAttentionEfficiency(t *testing.T) {
	for _, gpu := range []string{"h200", "b200"} {
		c := NewCoster(mustGPU(t, gpu))
		for _, class := range []string{"attention", "attention_prefill"} {
			b, _ := c.Efficiency(class, BF16)
			f, _ := c.Efficiency(class, FP8)
			if b != f {
				t.Errorf("%s %s: fp8 %+v, bf16 %+v", gpu, class, f, b)
			}
		}
		g, _ := c.Efficiency("gemm", BF16)
		f, _ := c.Efficiency("gemm", FP8)
		if g == f {
			t.Errorf("%s gemm: fp8 and bf16 efficiencies equal (%+v): the FP8 GEMM fit was lost", gpu, g)
		}
	}
}
