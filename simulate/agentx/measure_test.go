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
		f    func(i, n int) float64
	}{
		{"uniform", func(int, int) float64 { return rng.Float64() }},
		{"ties", func(int, int) float64 { return float64(rng.IntN(7)) }},
		{"constant", func(int, int) float64 { return 3.5 }},
		{"ascending", func(i, _ int) float64 { return float64(i) }},
		{"descending", func(i, _ int) float64 { return -float64(i) }},
		{"lognormal", func(int, int) float64 { return math.Exp(2 * rng.NormFloat64()) }},
		{"organ-pipe", func(i, _ int) float64 { return float64(min(i, 1000-i)) }},
		{"signed-zeros", func(i, _ int) float64 { return []float64{0, math.Copysign(0, -1), 1}[i%3] }},
		// The values bracketed samples (every n/1024-th) are the largest:
		// every bracket misses and selection takes over.
		{"sample-blind", func(i, n int) float64 { return sampleBlind(rng, i, n) }},
		{"nan", func(i, _ int) float64 {
			if i%5 == 0 {
				return math.NaN()
			}
			return rng.Float64()
		}},
	}
	for _, g := range gens {
		for _, n := range []int{1, 2, 3, 5, 16, 17, 100, 1000, bracketMin - 1, bracketMin, 4097, 30011} {
			xs := make([]float64, n)
			for i := range xs {
				xs[i] = g.f(i, n)
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

// sampleBlind is the i-th of n values whose every value at a position
// bracketed samples (j*n/1024, j < 1024) is above all the others.
func sampleBlind(rng *rand.Rand, i, n int) float64 {
	if j := (i*1024 + n - 1) / n; j < 1024 && j*n/1024 == i {
		return 1e9 + float64(i)
	}
	return rng.Float64()
}

// bracketed gives up, rather than answer wrong, when its sample misses
// the quantiles; on data whose sample is representative it answers.
func TestBracketedFallsBack(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, c := range []struct {
		name string
		f    func(i, n int) float64
		ok   bool
	}{
		{"uniform", func(int, int) float64 { return rng.Float64() }, true},
		{"ascending", func(i, _ int) float64 { return float64(i) }, true},
		{"sample-blind", func(i, n int) float64 { return sampleBlind(rng, i, n) }, false},
	} {
		for _, n := range []int{bracketMin, 30011} {
			xs := make([]float64, n)
			for i := range xs {
				xs[i] = c.f(i, n)
			}
			if _, ok := bracketed(xs, []float64{0.5, 0.75, 0.9, 0.95}); ok != c.ok {
				t.Errorf("%s n=%d: bracketed answered %v, want %v", c.name, n, ok, c.ok)
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
		got := measure(rs.chunks, rs.n, 10, 300, false)
		if want := Measure(rs.all(), 10, 300); got != want {
			t.Errorf("%d records: chunked %+v, want %+v", n, got, want)
		}
	}
}

// Brief gives Measure's figures with the percentiles a serving report
// leaves out zeroed, below and above the size where quantiles brackets.
func TestBrief(t *testing.T) {
	for _, n := range []int{1, 7, 1000, bracketMin + 3, 3 * recordChunk} {
		var rs records
		for i := range n {
			arrival := float64(i%997) * 0.37
			first := arrival + float64(i%13)*0.011
			rs.add(Record{Request: Request{ID: i, Arrival: arrival, Input: 100 + i*7919%5000, Output: 1 + i*104729%700, Shared: i % 64},
				First: first, End: first + float64(i*31%701)*0.019})
		}
		want := Measure(rs.all(), 10, 300)
		want.E2EL.P95 = 0
		want.TTFT.P75, want.TTFT.P95 = 0, 0
		want.TPOT.P75, want.TPOT.P95 = 0, 0
		want.ISL = Dist{Mean: want.ISL.Mean}
		want.OSL = Dist{Mean: want.OSL.Mean}
		r := &Replay{rec: rs}
		if got := r.Brief(10, 300); got != want {
			t.Errorf("%d records: brief %+v, want %+v", n, got, want)
		}
	}
}

// BenchmarkMeasure is Measure over the 25,845 profiled records of a
// refinement's 900 s window at concurrency 1024 (synthetic values of
// that shape: heavy-tailed latencies, prompts and outputs).
func BenchmarkMeasure(b *testing.B) {
	rng := rand.New(rand.NewPCG(3, 4))
	rs := make([]Record, 25845)
	for i := range rs {
		arrival := rng.Float64() * 900
		first := arrival + math.Exp(rng.NormFloat64()-1)
		out := 1 + int(math.Exp(5+1.5*rng.NormFloat64()))
		rs[i] = Record{Request: Request{ID: i, Arrival: arrival, Input: 1000 + rng.IntN(150000), Output: out, Shared: rng.IntN(100000)},
			First: first, End: first + float64(out)*0.01*(1+rng.Float64())}
	}
	b.Run("full", func(b *testing.B) {
		for b.Loop() {
			Measure(rs, 0, 900)
		}
	})
	r := &Replay{rec: records{chunks: [][]Record{rs}, n: len(rs)}}
	b.Run("brief", func(b *testing.B) {
		for b.Loop() {
			r.Brief(0, 900)
		}
	})
}
