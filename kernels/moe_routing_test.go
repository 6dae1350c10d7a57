package kernels

import (
	"math"
	"math/rand/v2"
	"testing"
)

// monteCarloDistinct counts distinct experts touched when each of tokens
// tokens draws topk distinct experts, expert i weighted by w[i] (sampling
// without replacement, the way a top-k router picks).
func monteCarloDistinct(rng *rand.Rand, tokens, topk int, w []float64, trials int) float64 {
	e := len(w)
	seen := make([]int, e)
	picked := make([]bool, e)
	var total float64
	for trial := 1; trial <= trials; trial++ {
		count := 0
		for range tokens {
			for i := range picked {
				picked[i] = false
			}
			for range topk {
				var sum float64
				for i, x := range w {
					if !picked[i] {
						sum += x
					}
				}
				u := rng.Float64() * sum
				j := 0
				for ; j < e-1; j++ {
					if picked[j] {
						continue
					}
					if u -= w[j]; u < 0 {
						break
					}
				}
				for picked[j] {
					j--
				}
				picked[j] = true
				if seen[j] != trial {
					seen[j] = trial
					count++
				}
			}
		}
		total += float64(count)
	}
	return total / float64(trials)
}

func TestExpectedDistinctExpertsMonteCarlo(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	uniform := func(e int) []float64 {
		w := make([]float64, e)
		for i := range w {
			w[i] = 1
		}
		return w
	}
	zipf := func(e int, s float64) []float64 {
		w := make([]float64, e)
		for i := range w {
			w[i] = math.Pow(float64(i+1), -s)
		}
		return w
	}
	tests := []struct {
		tokens, experts, topk int
		skew, tol             float64
	}{
		{1, 256, 8, 0, 0.01},
		{4, 256, 8, 0, 0.02},
		{32, 256, 8, 0, 0.02},
		{16, 64, 6, 0, 0.02},
		// Skewed routing: the independent-picks formula approximates
		// sampling without replacement.
		{8, 128, 8, 0.8, 0.06},
		{64, 128, 8, 1.2, 0.06},
	}
	for _, tc := range tests {
		w := uniform(tc.experts)
		if tc.skew > 0 {
			w = zipf(tc.experts, tc.skew)
		}
		mc := monteCarloDistinct(rng, tc.tokens, tc.topk, w, 2000)
		got := ExpectedDistinctExperts(tc.tokens, tc.experts, tc.topk, tc.skew)
		if !near(got, mc, tc.tol) {
			t.Errorf("T=%d E=%d topk=%d skew=%v: formula %.2f, Monte Carlo %.2f", tc.tokens, tc.experts, tc.topk, tc.skew, got, mc)
		}
	}
}

func TestExpectedDistinctExpertsLimits(t *testing.T) {
	if got := ExpectedDistinctExperts(1, 256, 8, 0); !near(got, 8, 1e-12) {
		t.Errorf("one token touches %v experts, want 8", got)
	}
	if got := ExpectedDistinctExperts(100000, 256, 8, 0); !near(got, 256, 1e-9) {
		t.Errorf("many tokens touch %v experts, want all 256", got)
	}
	if got := ExpectedDistinctExperts(3, 4, 8, 0); got != 4 {
		t.Errorf("topk >= experts touches %v, want 4", got)
	}
	for _, T := range []int{1, 4, 16, 64, 256} {
		u := ExpectedDistinctExperts(T, 256, 8, 0)
		s := ExpectedDistinctExperts(T, 256, 8, 1)
		if s > u+1e-9 {
			t.Errorf("T=%d: skewed routing touches more experts (%.2f) than uniform (%.2f)", T, s, u)
		}
	}
}
