package acceptance

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"time"
)

var benchSink uint64

// BenchmarkDraw reports, for every method at batch 1 and 64, the ns per
// drawn length beside the ns of one raw Uint64 from the same PCG generator.
// The two are timed in alternating chunks of about 4096 lengths inside the
// same benchmark. On a loaded machine a chunk now and then loses its CPU,
// so besides the mean costs the benchmark keeps each side's fastest chunk:
// best-ns/length and best-raw-ns/draw, and x-raw, their ratio (the goal: at
// most 2).
func BenchmarkDraw(b *testing.B) {
	dist := []float64{.07, .13, .14, .08, .14, .05, .39} // Qwen3.5 thinking on, k=6
	for _, m := range Methods() {
		for _, batch := range []int{1, 64} {
			b.Run(fmt.Sprintf("%s/batch=%d", m, batch), func(b *testing.B) {
				s, err := New(Config{Method: m, K: 6, TargetAL: 4.80, Dist: dist, Seed: 1})
				if err != nil {
					b.Fatal(err)
				}
				raw := rand.NewPCG(1, pcgStream)
				out := make([]int, batch)
				chunk := max(1, 4096/batch)
				var methodTime, rawTime time.Duration
				bestMethod, bestRaw := math.Inf(1), math.Inf(1)
				var sink uint64
				b.ResetTimer()
				for done := 0; done < b.N; done += chunk {
					n := min(chunk, b.N-done)
					t0 := time.Now()
					for range n {
						s.Step(out)
					}
					t1 := time.Now()
					for range n * batch {
						sink += raw.Uint64()
					}
					t2 := time.Now()
					methodTime += t1.Sub(t0)
					rawTime += t2.Sub(t1)
					if n == chunk {
						per := float64(n * batch)
						bestMethod = min(bestMethod, float64(t1.Sub(t0).Nanoseconds())/per)
						bestRaw = min(bestRaw, float64(t2.Sub(t1).Nanoseconds())/per)
					}
				}
				benchSink = sink
				lengths := float64(b.N * batch)
				b.ReportMetric(float64(methodTime.Nanoseconds())/lengths, "ns/length")
				b.ReportMetric(float64(rawTime.Nanoseconds())/lengths, "raw-ns/draw")
				if !math.IsInf(bestMethod, 1) {
					b.ReportMetric(bestMethod, "best-ns/length")
					b.ReportMetric(bestRaw, "best-raw-ns/draw")
					b.ReportMetric(bestMethod/bestRaw, "x-raw")
				}
			})
		}
	}
}
