package acceptance

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

var benchSink uint64

// BenchmarkDraw reports ns per drawn length for every method at batch 1 and
// 64, beside "raw": one Uint64 from the same PCG generator, in the same
// run. The goal is every method within 2x of raw.
func BenchmarkDraw(b *testing.B) {
	b.Run("raw", func(b *testing.B) {
		r := rand.NewPCG(1, pcgStream)
		var s uint64
		for range b.N {
			s += r.Uint64()
		}
		benchSink = s
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N), "ns/length")
	})
	dist := []float64{.07, .13, .14, .08, .14, .05, .39} // Qwen3.5 thinking on, k=6
	for _, m := range Methods() {
		for _, batch := range []int{1, 64} {
			b.Run(fmt.Sprintf("%s/batch=%d", m, batch), func(b *testing.B) {
				s, err := New(Config{Method: m, K: 6, TargetAL: 4.80, Dist: dist, Seed: 1})
				if err != nil {
					b.Fatal(err)
				}
				out := make([]int, batch)
				b.ResetTimer()
				for range b.N {
					s.Step(out)
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*batch), "ns/length")
			})
		}
	}
}
