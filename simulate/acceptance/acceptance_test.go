package acceptance

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/gonum/stat/distuv"

	"github.com/specsim/specsim/golden"
)

// run draws iterations steps of a batch and returns the per-length counts
// (index l) and the per-step lengths of request 0.
func run(t testing.TB, s Sampler, k, batch, iterations int) (counts []int64, first []int) {
	t.Helper()
	counts = make([]int64, k+2)
	out := make([]int, batch)
	for range iterations {
		s.Step(out)
		for _, l := range out {
			if l < 1 || l > k+1 {
				t.Fatalf("length %d outside [1, %d]", l, k+1)
			}
			counts[l]++
		}
		first = append(first, out[0])
	}
	return counts, first
}

func mean(counts []int64) (m float64, n int64) {
	var s int64
	for l, c := range counts {
		s += int64(l) * c
		n += c
	}
	return float64(s) / float64(n), n
}

func mustNew(t testing.TB, c Config) Sampler {
	t.Helper()
	s, err := New(c)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// SGLang match-expected at 4.80: floor 4 w.p. 0.2, ceil 5 w.p. 0.8, one draw
// per step for the batch. With N = 20000 independent steps the share of 5s
// has sd sqrt(0.8*0.2/N) = 0.0028 and the sample variance of a Bernoulli
// has sd sqrt((mu4 - sigma^4)/N) = sqrt((0.0832-0.0256)/N) = 0.0017; the
// tolerances are 5 sd.
func TestMatchExpected480(t *testing.T) {
	const n = 20000
	s := mustNew(t, Config{Method: SGLangMatchExpected, K: 6, TargetAL: 4.80, Seed: 11})
	out := make([]int, 64)
	fives, sum, sumsq := 0, 0.0, 0.0
	for range n {
		s.Step(out)
		for _, l := range out {
			if l != out[0] {
				t.Fatalf("step lengths differ within the batch: %v", out)
			}
		}
		if out[0] != 4 && out[0] != 5 {
			t.Fatalf("length %d, want only 4 or 5", out[0])
		}
		if out[0] == 5 {
			fives++
		}
		sum += float64(out[0])
		sumsq += float64(out[0] * out[0])
	}
	share := float64(fives) / n
	m := sum / n
	variance := sumsq/n - m*m
	if !near(share, 0.8, 5*math.Sqrt(0.16/n)) {
		t.Errorf("P(5) = %v, want 0.8 +- %v", share, 5*math.Sqrt(0.16/n))
	}
	if !near(variance, 0.16, 5*math.Sqrt((0.0832-0.0256)/n)) {
		t.Errorf("variance %v, want 0.16", variance)
	}
	if s.ExpectedMean() != 4.80 || !s.(SharedDraw).SharesDraw() {
		t.Errorf("expected mean %v shared %v", s.ExpectedMean(), s.(SharedDraw).SharesDraw())
	}
	_, v := golden.Moments(s.(Analytic).Marginal())
	if !near(v, 0.16, 1e-12) {
		t.Errorf("analytic variance %v, want 0.16", v)
	}
}

// Integer targets and the ends of [1, k+1] draw nothing and give a constant.
func TestMatchExpectedDeterministic(t *testing.T) {
	for _, tt := range []struct {
		al   float64
		k    int
		want int
	}{{4, 6, 4}, {1, 3, 1}, {4, 3, 4}} {
		s := mustNew(t, Config{Method: SGLangMatchExpected, K: tt.k, TargetAL: tt.al, Seed: 1})
		counts, _ := run(t, s, tt.k, 8, 100)
		if counts[tt.want] != 800 {
			t.Errorf("AL %v k=%d: counts %v, want all %d", tt.al, tt.k, counts, tt.want)
		}
	}
}

// sglang-multinomial: round(clamp(N(3.24, 1), 1, 4)). Its mean, by the
// tail-sum formula E[L] = 1 + sum_{l=1..3} P(X > l + 1/2), is 3.127 (the
// figure in the notes); the sampler must agree with that and with a literal
// simulation of SGLang's code.
func TestMultinomialBias(t *testing.T) {
	norm := distuv.Normal{Mu: 3.24, Sigma: 1}
	want := 1.0
	for l := 1; l <= 3; l++ {
		want += norm.Survival(float64(l) + 0.5)
	}
	if !near(want, 3.127, 0.0005) {
		t.Fatalf("independent expectation %v, not about 3.127", want)
	}
	s := mustNew(t, Config{Method: SGLangMultinomial, K: 3, TargetAL: 3.24, Seed: 5})
	if !near(s.ExpectedMean(), want, 1e-12) {
		t.Errorf("ExpectedMean %v, want %v", s.ExpectedMean(), want)
	}
	// 200000 shared draws: sd of the mean = 0.857/sqrt(2e5) = 0.0019; 5 sd.
	const n = 200000
	counts, _ := run(t, s, 3, 4, n)
	m, _ := mean(counts)
	if !near(m, want, 5*0.857/math.Sqrt(n)) {
		t.Errorf("sampled mean %v, want %v", m, want)
	}
	// The literal algorithm: x ~ N(3.24, 1), clamp to [1, 4], round half to even.
	rng := rand.New(rand.NewPCG(9, 9))
	lit := make([]float64, 4)
	const m2 = 1_000_000
	for range m2 {
		x := min(4, max(1, 3.24+rng.NormFloat64()))
		lit[int(math.RoundToEven(x))-1]++
	}
	marg := s.(Analytic).Marginal()
	for i := range lit {
		p := lit[i] / m2
		if tol := 5 * math.Sqrt(marg[i]*(1-marg[i])/m2); !near(p, marg[i], tol) {
			t.Errorf("P(L=%d): literal %v, sampler's %v (tol %v)", i+1, p, marg[i], tol)
		}
	}
}

// vLLM's _acceptance_length_to_rates, checked against its docstring
// examples (3.5 with 5 drafts, 2.0 with 4) and the full-acceptance end.
func TestVLLMRates(t *testing.T) {
	tests := []struct {
		al   float64
		n    int
		want []float64
	}{
		{3.5, 5, []float64{1, 1, 0.5, 0, 0}},
		{2.0, 4, []float64{1, 0, 0, 0}},
		{4.0, 3, []float64{1, 1, 1}},
		{1.0, 2, []float64{0, 0}},
	}
	for _, tt := range tests {
		if got := vllmRates(tt.al, tt.n); !slices.Equal(got, tt.want) {
			t.Errorf("rates(%v, %d) = %v, want %v", tt.al, tt.n, got, tt.want)
		}
	}
	// c_i = p_i / p_(i-1), 0 after a zero.
	got := conditionalRates([]float64{0.7, 0.35, 0, 0})
	if !near(got[0], 0.7, 1e-7) || !near(got[1], 0.5, 1e-7) || got[2] != 0 || got[3] != 0 {
		t.Errorf("conditional rates %v", got)
	}
}

// vLLM synthetic: every request and position draws independently. A literal
// per-position simulation (accept while u < c_i) must give the sampler's
// distribution, and requests in one step must not share a length.
func TestVLLMSyntheticMatchesPerPosition(t *testing.T) {
	for _, tt := range []struct {
		al float64
		k  int
	}{{4.80, 6}, {2.5, 3}, {1.3, 1}} {
		s := mustNew(t, Config{Method: VLLMSynthetic, K: tt.k, TargetAL: tt.al, Seed: 3})
		cond := conditionalRates(vllmRates(tt.al, tt.k))
		rng := rand.New(rand.NewPCG(4, 4))
		const n = 400000
		lit := make([]float64, tt.k+1)
		for range n {
			l := 1
			for _, c := range cond {
				if rng.Float64() >= c {
					break
				}
				l++
			}
			lit[l-1]++
		}
		marg := s.(Analytic).Marginal()
		for i := range lit {
			p := lit[i] / n
			if tol := 5*math.Sqrt(marg[i]*(1-marg[i])/n) + 1e-12; !near(p, marg[i], tol) {
				t.Errorf("AL %v k=%d P(L=%d): per-position %v, sampler %v", tt.al, tt.k, i+1, p, marg[i])
			}
		}
		if !near(s.ExpectedMean(), tt.al, 1e-7) {
			t.Errorf("AL %v: expected mean %v", tt.al, s.ExpectedMean())
		}
	}
	s := mustNew(t, Config{Method: VLLMSynthetic, K: 6, TargetAL: 4.80, Seed: 3})
	out := make([]int, 64)
	s.Step(out)
	if slices.Min(out) == slices.Max(out) {
		t.Errorf("64 requests all drew %d: P = 0.8^64 + 0.2^64 < 1e-6 if independent", out[0])
	}
}

// With synthetic_acceptance_rates set to a consistent golden curve's
// prefix acceptance, vLLM's per-position process reproduces the golden
// distribution of L exactly: P(L = 1+j) = p_j - p_(j+1).
func TestVLLMRatesFromGoldenCurve(t *testing.T) {
	c := qwenCurve(t)
	want, _ := c.Distribution(6)
	p := c.PrefixAcceptance()[:6]
	s := mustNew(t, Config{Method: VLLMSynthetic, K: 6, Rates: p, Seed: 1})
	got := s.(Analytic).Marginal()
	for i := range want {
		// vLLM keeps conditional rates in float32: 1e-7 relative.
		if !near(got[i], want[i], 1e-6) {
			t.Errorf("P(L=%d) = %v, want %v", i+1, got[i], want[i])
		}
	}
	for _, bad := range []Config{
		{Method: VLLMSynthetic, K: 6, Rates: p[:5]},
		{Method: VLLMSynthetic, K: 2, Rates: []float64{0.5, 0.6}},
		{Method: VLLMSynthetic, K: 2, Rates: []float64{1.5, 0.6}},
		{Method: VLLMSynthetic, K: 2, Rates: []float64{0.5, 0.4}, TargetAL: 2},
		{Method: Chain, K: 2, Rates: []float64{0.5, 0.4}},
	} {
		if _, err := New(bad); err == nil {
			t.Errorf("%+v accepted", bad)
		}
	}
}

// TensorRT-LLM: over 65536 consecutive steps each slot reads every pool
// entry exactly once, so the sampled mean of any slot equals ExpectedMean
// exactly, and that is within pool noise (sd sqrt(0.16/65536) = 0.0016) of
// the target.
func TestTRTLLMPool(t *testing.T) {
	s := mustNew(t, Config{Method: TRTLLM, K: 6, TargetAL: 4.80, Seed: 21})
	counts, _ := run(t, s, 6, 3, trtPoolSize)
	for l, c := range counts {
		if c != 0 && l != 4 && l != 5 {
			t.Errorf("length %d drawn %d times; force 3.8 gives only 4 or 5", l, c)
		}
	}
	m, _ := mean(counts)
	if !near(m, s.ExpectedMean(), 1e-12) {
		t.Errorf("mean over one pool period %v, ExpectedMean %v", m, s.ExpectedMean())
	}
	if !near(s.ExpectedMean(), 4.80, 5*math.Sqrt(0.16/trtPoolSize)) {
		t.Errorf("ExpectedMean %v far from 4.80", s.ExpectedMean())
	}
	// An integer force draws nothing; full acceptance gives k+1.
	for _, tt := range []struct {
		al   float64
		k    int
		want int
	}{{4.0, 6, 4}, {7.0, 6, 7}, {3.0, 2, 3}} {
		s := mustNew(t, Config{Method: TRTLLM, K: tt.k, TargetAL: tt.al, Seed: 1})
		counts, _ := run(t, s, tt.k, 5, 50)
		if counts[tt.want] != 250 {
			t.Errorf("AL %v k=%d: %v, want all %d", tt.al, tt.k, counts, tt.want)
		}
	}
	// The pool index of slot i at step c is (c*6007 + i*1009) mod 65536, as in
	// _apply_force_accepted_tokens (the counter is bumped before use).
	h := mustNew(t, Config{Method: TRTLLM, K: 6, TargetAL: 4.80, Seed: 21}).(*trtllm)
	out := make([]int, 5)
	for c := uint64(1); c <= 3; c++ {
		h.Step(out)
		for i, l := range out {
			want := 4
			if h.pool[(c*6007+uint64(i)*1009)%65536] < h.below {
				want = 5
			}
			if l != want {
				t.Fatalf("step %d slot %d: %d, want %d", c, i, l, want)
			}
		}
	}
	// frac(3.8) = 0.7999999999999998 compares as float32 0.8 = 13421773/2^24.
	if h.below != 13421773 {
		t.Errorf("threshold %d/2^24, want 13421773", h.below)
	}
	if _, err := New(Config{Method: TRTLLM, K: 3, TargetAL: 1}); err == nil || !strings.Contains(err.Error(), "off") {
		t.Errorf("AL 1 (force 0 = off): %v", err)
	}
}

// Chain at Qwen3.5 thinking on, k=6: support 1..7 with P(L) from p_j
// (.07 .13 .14 .08 .14 .05 .39). Pearson chi-square over 64 x 20000 draws
// with 6 degrees of freedom must stay below its 1 - 1e-4 quantile (27.86).
func TestChainQwenK6(t *testing.T) {
	c := qwenCurve(t)
	d, _ := c.Distribution(6)
	s := mustNew(t, Config{Method: Chain, K: 6, Dist: d, Seed: 17})
	counts, _ := run(t, s, 6, 64, 20000)
	want := []float64{.07, .13, .14, .08, .14, .05, .39}
	n := float64(64 * 20000)
	chi := 0.0
	for l := 1; l <= 7; l++ {
		if counts[l] == 0 {
			t.Errorf("L=%d never drawn", l)
		}
		e := want[l-1] * n
		chi += (float64(counts[l]) - e) * (float64(counts[l]) - e) / e
	}
	limit := distuv.ChiSquared{K: 6}.Quantile(1 - 1e-4)
	if chi > limit {
		t.Errorf("chi-square %v > %v: counts %v", chi, limit, counts)
	}
	if !near(s.ExpectedMean(), 4.80, 1e-12) {
		t.Errorf("ExpectedMean %v", s.ExpectedMean())
	}
}

func qwenCurve(t testing.TB) *golden.Curve {
	s, err := golden.Default()
	if err != nil {
		t.Fatal(err)
	}
	c, err := s.Curve("qwen3.5", golden.ThinkingOn)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// The acceptance criterion: k=6, 64 x 20000 draws within 0.02 of
// 4.80 for match-expected, chain and vllm-synthetic. (Standard errors:
// 0.4/sqrt(20000) = 0.003 for the shared draw, 2.12/sqrt(1.28e6) = 0.002
// for chain, so 0.02 is more than 6 sd.)
func TestDoneWhen(t *testing.T) {
	d, _ := qwenCurve(t).Distribution(6)
	for _, m := range []string{SGLangMatchExpected, Chain, VLLMSynthetic} {
		s := mustNew(t, Config{Method: m, K: 6, TargetAL: 4.80, Dist: d, Seed: 1})
		counts, _ := run(t, s, 6, 64, 20000)
		got, _ := mean(counts)
		if !near(got, 4.80, 0.02) {
			t.Errorf("%s: mean %v, want 4.80 +- 0.02", m, got)
		}
		switch m {
		case SGLangMatchExpected:
			if counts[4]+counts[5] != 64*20000 {
				t.Errorf("match-expected emitted other than 4 and 5: %v", counts)
			}
		case Chain:
			for l := 1; l <= 7; l++ {
				if counts[l] == 0 {
					t.Errorf("chain never drew %d", l)
				}
			}
		}
	}
}

func TestEmpirical(t *testing.T) {
	h, err := LoadHistogram("testdata/histogram.csv")
	if err != nil {
		t.Fatal(err)
	}
	// 100, 300, 0, 600 of 1000: mean 0.1 + 0.6 + 2.4 = 3.1.
	s := mustNew(t, Config{Method: Empirical, K: 3, Dist: h.Distribution(), Seed: 2})
	if !near(s.ExpectedMean(), 3.1, 1e-12) {
		t.Errorf("ExpectedMean %v, want 3.1", s.ExpectedMean())
	}
	counts, _ := run(t, s, 3, 16, 10000)
	if counts[3] != 0 {
		t.Errorf("L=3 has no mass but was drawn %d times", counts[3])
	}
	// Padding: k=5 accepts the histogram; k=2 cannot hold L=4.
	if _, err := New(Config{Method: Empirical, K: 5, Dist: h.Distribution()}); err != nil {
		t.Error(err)
	}
	if _, err := New(Config{Method: Empirical, K: 2, Dist: h.Distribution()}); err == nil {
		t.Error("L=4 accepted at k=2")
	}
}

func TestConfigErrors(t *testing.T) {
	tests := []struct {
		c    Config
		want string
	}{
		{Config{Method: "eagle", K: 3, TargetAL: 2}, "unknown acceptance method"},
		{Config{Method: SGLangMatchExpected, K: 0, TargetAL: 2}, "outside 1..64"},
		{Config{Method: SGLangMatchExpected, K: 65, TargetAL: 2}, "outside 1..64"},
		{Config{Method: VLLMSynthetic, K: 3, TargetAL: 4.5}, "outside [1, 4]"},
		{Config{Method: SGLangMultinomial, K: 3, TargetAL: 0.5}, "outside [1, 4]"},
		{Config{Method: TRTLLM, K: 3, TargetAL: math.NaN()}, "outside"},
		{Config{Method: Chain, K: 3}, "no distribution"},
		{Config{Method: Chain, K: 3, Dist: []float64{0, 0}}, "no mass"},
		{Config{Method: Chain, K: 3, Dist: []float64{-1, 2}}, "not a probability"},
		{Config{Method: Chain, K: 1, Dist: []float64{0.5, 0.4, 0.1}}, "allows L up to 2"},
	}
	for _, tt := range tests {
		_, err := New(tt.c)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%+v: %v, want %q", tt.c, err, tt.want)
		}
	}
	if len(Methods()) != 6 {
		t.Errorf("Methods() = %v", Methods())
	}
}

// Same seed, same draws; another seed, other draws.
func TestReproducible(t *testing.T) {
	d, _ := qwenCurve(t).Distribution(6)
	for _, m := range Methods() {
		draw := func(seed uint64) []int {
			s := mustNew(t, Config{Method: m, K: 6, TargetAL: 4.37, Dist: d, Seed: seed})
			var all []int
			out := make([]int, 16)
			for range 200 {
				s.Step(out)
				all = append(all, out...)
			}
			return all
		}
		a, b, c := draw(42), draw(42), draw(43)
		if !slices.Equal(a, b) {
			t.Errorf("%s: same seed, different draws", m)
		}
		if slices.Equal(a, c) {
			t.Errorf("%s: seeds 42 and 43 gave identical draws", m)
		}
	}
}

// Steps draws what as many Steps would, in order, and the Steps after it
// go on from there.
func TestStepsAhead(t *testing.T) {
	for _, tt := range []struct {
		method string
		al     float64
		k      int
	}{
		{SGLangMatchExpected, 4.8, 6},
		{SGLangMatchExpected, 4, 6}, // an integer target draws nothing
		{SGLangMultinomial, 3.24, 3},
		{SGLangMultinomial, 4.8, 6},
	} {
		c := Config{Method: tt.method, K: tt.k, TargetAL: tt.al, Seed: 7}
		stepped := mustNew(t, c)
		var want []int
		out := make([]int, 3)
		for range 300 {
			stepped.Step(out)
			want = append(want, out[0])
		}
		ahead := mustNew(t, c).(SharedDraw)
		got := make([]int, 300)
		ahead.Steps(got[:1])
		ahead.Steps(got[1:100])
		for i := 100; i < 200; i++ {
			ahead.(Sampler).Step(out)
			got[i] = out[0]
		}
		ahead.Steps(got[200:])
		if !slices.Equal(got, want) {
			t.Errorf("%s AL %v: Steps and Step drew differently", tt.method, tt.al)
		}
	}
}

func TestStepDoesNotAllocate(t *testing.T) {
	d, _ := qwenCurve(t).Distribution(6)
	for _, m := range Methods() {
		s := mustNew(t, Config{Method: m, K: 6, TargetAL: 4.80, Dist: d, Seed: 1})
		out := make([]int, 64)
		if a := testing.AllocsPerRun(100, func() { s.Step(out) }); a != 0 {
			t.Errorf("%s: %v allocations per Step", m, a)
		}
	}
}

// The alias table's implied probabilities, summed over its cells, must be
// the input to 2^-32 per cell.
func TestAliasTableExact(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := range 200 {
		n := 1 + rng.IntN(12)
		p := make([]float64, n)
		for i := range p {
			if rng.IntN(4) > 0 {
				p[i] = rng.Float64()
			}
		}
		p[rng.IntN(n)] += 0.1
		sum := 0.0
		for _, v := range p {
			sum += v
		}
		tab, err := newAliasTable(p)
		if err != nil {
			t.Fatal(err)
		}
		got := make([]float64, len(tab.cells)+1)
		for _, c := range tab.cells {
			keep := float64(c.keep) / (1 << 32)
			got[c.other+c.diff-1] += keep / float64(len(tab.cells))
			got[c.other-1] += (1 - keep) / float64(len(tab.cells))
		}
		for i := range got {
			want := 0.0
			if i < n {
				want = p[i] / sum
			}
			if !near(got[i], want, 1e-9) {
				t.Fatalf("trial %d: P(%d) = %v, want %v", trial, i, got[i], want)
			}
		}
	}
}

func near(a, b, tol float64) bool { return math.Abs(a-b) <= tol }

func TestTargetCurve(t *testing.T) {
	c := qwenCurve(t)
	for _, tt := range []struct {
		method string
		want   float64
	}{{SGLangMatchExpected, 4.80}, {Chain, 4.80}, {VLLMSynthetic, 4.80}} {
		s, _, err := Target{Method: tt.method, Curve: c}.Sampler(6, 1)
		if err != nil || !near(s.ExpectedMean(), tt.want, 1e-6) {
			t.Errorf("%s: %v, %v", tt.method, s, err)
		}
	}
	for _, k := range []int{0, 9} {
		if _, _, err := (Target{Method: SGLangMatchExpected, Curve: c}).Sampler(k, 1); err == nil {
			t.Errorf("k=%d accepted", k)
		}
	}
	if _, _, err := (Target{Method: Empirical, Curve: c}).Sampler(6, 1); err == nil {
		t.Error("empirical from a curve accepted")
	}
}
