package kernels

import "testing"

func benchCoster(b testing.TB) *Coster {
	g := mustGPU(b, "h200")
	return newCoster(g, calibrate(g, syntheticOps(b, true), syntheticCollectives(b)), SourceRoofline)
}

// A sweep prices millions of ops: none may allocate.
func TestOpCostsDoNotAllocate(t *testing.T) {
	c := benchCoster(t)
	ops := map[string]func(){
		"gemm": func() { c.GEMM(FP8, 37, 4096, 4096) },
		"moe":  func() { c.MoE(MoEShape{Tokens: 24, Experts: 128, TopK: 8, Hidden: 2048, Inter: 768, DType: BF16}) },
		"moe skew": func() {
			c.MoE(MoEShape{Tokens: 24, Experts: 256, TopK: 8, Hidden: 7168, Inter: 256, DType: NVFP4, Skew: 0.7})
		},
		"attention": func() {
			c.Attention(AttentionShape{Batch: 6, QLen: 3, KVLen: 30000, Heads: 32, KVHeads: 4, HeadDim: 128})
		},
		"gdn": func() {
			c.GatedDeltaNet(GDNShape{Batch: 7, QLen: 4, KHeads: 16, VHeads: 32, KDim: 128, VDim: 128, KeepIntermediate: true})
		},
		"norm":       func() { c.Norm(100, 5000) },
		"lm_head":    func() { c.LMHeadSample(8, 4096, 151936, BF16) },
		"collective": func() { c.Collective(AllReduce, 3<<20, 6) },
	}
	plain := newCoster(mustGPU(t, "gb300"), nil, SourceRoofline)
	ops["collective uncalibrated"] = func() { plain.Collective(AllToAll, 1<<20, 72) }
	for name, f := range ops {
		f() // warm caches (Zipf table)
		if a := testing.AllocsPerRun(100, f); a != 0 {
			t.Errorf("%s allocates %v times per call", name, a)
		}
	}
}

func BenchmarkGEMM(b *testing.B) {
	c := benchCoster(b)
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		c.GEMM(FP8, 1+i%8192, 4096, 4096)
	}
}

// A GEMM shape the table lacks: the nearest measured shape is searched.
func BenchmarkGEMMUnmeasuredShape(b *testing.B) {
	c := NewCoster(mustGPU(b, "h200"))
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		c.GEMM(BF16, 1+i%8192, 5000, 3000)
	}
}

func BenchmarkMoE(b *testing.B) {
	c := benchCoster(b)
	s := MoEShape{Experts: 128, TopK: 8, Hidden: 2048, Inter: 768, DType: BF16}
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		s.Tokens = 1 + i%8192
		c.MoE(s)
	}
}

func BenchmarkMoESkewed(b *testing.B) {
	c := benchCoster(b)
	s := MoEShape{Experts: 256, TopK: 8, Hidden: 7168, Inter: 256, DType: NVFP4, Skew: 0.7}
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		s.Tokens = 1 + i%8192
		c.MoE(s)
	}
}

func BenchmarkAttention(b *testing.B) {
	c := benchCoster(b)
	s := AttentionShape{Batch: 6, QLen: 3, Heads: 32, KVHeads: 4, HeadDim: 128}
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		s.KVLen = 1024 + i%100000
		c.Attention(s)
	}
}

func BenchmarkCollective(b *testing.B) {
	c := benchCoster(b)
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		c.Collective(AllReduce, float64(4096+i%(1<<20)), 8)
	}
}

// Loading the embedded H200 tables: parse and fit, paid once per process
// by the first NewCoster.
func BenchmarkLoadH200Tables(b *testing.B) {
	g := mustGPU(b, "h200")
	for b.Loop() {
		ops, _, _, err := MeasuredTables("h200")
		if err != nil || ops == nil {
			b.Skip("no measured H200 table in this build")
		}
		calibrate(g, ops.Rows, nil)
	}
}
