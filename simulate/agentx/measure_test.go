package agentx

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestQuantilesBySelection checks that the selection quantiles return the
// very bits that Quantile's full sort does, on data with ties, NaN and
// signed zeros included.
func TestQuantilesBySelection(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	gens := []struct {
		name string
		f    func(i int) float64
	}{
		{"uniform", func(int) float64 { return rng.Float64() }},
		{"ties", func(int) float64 { return float64(rng.IntN(7)) }},
		{"constant", func(int) float64 { return 3.5 }},
		{"ascending", func(i int) float64 { return float64(i) }},
		{"descending", func(i int) float64 { return -float64(i) }},
		{"lognormal", func(int) float64 { return math.Exp(2 * rng.NormFloat64()) }},
		{"organ-pipe", func(i int) float64 { return float64(min(i, 1000-i)) }},
		{"signed-zeros", func(i int) float64 { return []float64{0, math.Copysign(0, -1), 1}[i%3] }},
		{"nan", func(i int) float64 {
			if i%5 == 0 {
				return math.NaN()
			}
			return rng.Float64()
		}},
	}
	for _, g := range gens {
		for _, n := range []int{1, 2, 3, 5, 16, 17, 100, 1000, 4097} {
			xs := make([]float64, n)
			for i := range xs {
				xs[i] = g.f(i)
			}
			want := make([]float64, 0, 4)
			for _, q := range []float64{0.5, 0.75, 0.9, 0.95} {
				want = append(want, Quantile(slices.Clone(xs), q))
			}
			got := quantiles(slices.Clone(xs), 0.5, 0.75, 0.9, 0.95)
			for i := range want {
				if math.Float64bits(got[i]) != math.Float64bits(want[i]) {
					t.Errorf("%s n=%d quantile %d: got %v (%#x), sort gives %v (%#x)", g.name, n, i, got[i], math.Float64bits(got[i]), want[i], math.Float64bits(want[i]))
				}
			}
		}
	}
}

// Measuring the records where a replay keeps them, chunk by chunk, gives
// what Measure gives over the same records in one slice.
func TestMeasureChunks(t *testing.T) {
	for _, n := range []int{0, 1, recordChunk - 1, recordChunk, 2*recordChunk + 17} {
		var rs records
		for i := range n {
			arrival := float64(i%997) * 0.37
			first := arrival + float64(i%13)*0.011
			rs.add(Record{Request: Request{ID: i, Arrival: arrival, Input: 100 + i%5000, Output: 1 + i%700, Shared: i % 64},
				First: first, End: first + float64(i%701)*0.019})
		}
		got := measure(rs.chunks, rs.n, 10, 300)
		if want := Measure(rs.all(), 10, 300); got != want {
			t.Errorf("%d records: chunked %+v, want %+v", n, got, want)
		}
	}
}
