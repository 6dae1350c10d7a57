package simulate

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// The synthetic workloads draw from named distributions (gonum distuv):
// each is checked against that distribution's reference value, with a
// tolerance of four standard errors of the sample size.
func TestWorkloadDistributions(t *testing.T) {
	const n = 20000
	a := DefaultAgentX()
	a.ISLMin, a.ISLMax, a.OSLMax = 1, 1<<40, 1<<40 // no clamping
	w := Workload{Name: "agentx", AgentX: a}
	r := rand.New(rand.NewPCG(7, 7))
	isl, osl, hit := make([]float64, n), make([]float64, n), 0.0
	for i := range n {
		q := w.Sample(r)
		isl[i], osl[i] = float64(q.ISL), float64(q.OSL)
		hit += float64(q.Cached) / float64(q.ISL)
	}
	// Log-normal median e^mu = the configured median; the sample median's
	// standard error is m*sigma*sqrt(2*pi)/(2*sqrt(n)).
	for _, c := range []struct {
		name          string
		xs            []float64
		median, sigma float64
	}{{"ISL", isl, a.ISLMedian, a.ISLSigma}, {"OSL", osl, a.OSLMedian, a.OSLSigma}} {
		slices.Sort(c.xs)
		got := c.xs[n/2]
		se := c.median * c.sigma * math.Sqrt(2*math.Pi) / (2 * math.Sqrt(n))
		if math.Abs(got-c.median) > 4*se+1 {
			t.Errorf("%s median %v, want %v ± %.0f", c.name, got, c.median, 4*se+1)
		}
	}
	// Beta mean alpha/(alpha+beta) = CacheHit; variance mu(1-mu)/(conc+1).
	// Cached tokens are truncated to whole tokens: at most one token of the
	// shortest prompt drawn (isl[0] once sorted).
	mu := a.CacheHit
	se := math.Sqrt(mu*(1-mu)/(a.CacheConc+1)) / math.Sqrt(n)
	if got := hit / n; math.Abs(got-mu) > 4*se+1/isl[0] {
		t.Errorf("mean cache hit %v, want %v ± %v", got, mu, 4*se+1/isl[0])
	}
	// MeanContext: the log-normal means median*exp(sigma^2/2), by hand.
	d := DefaultAgentX()
	want := 64000*math.Exp(0.9*0.9/2) + 650*math.Exp(0.5)/2
	if got := (&Workload{Name: "agentx", AgentX: d}).MeanContext(); math.Abs(got-want) > 1e-9*want {
		t.Errorf("MeanContext = %v, want %v", got, want)
	}
	// bench_serving's range ratio: uniform on [ratio*len, len], mean
	// (1+ratio)/2*len, standard deviation (1-ratio)*len/sqrt(12).
	f := Workload{Name: "fixed", ISL: 1000, OSL: 200, RangeRatio: 0.5}
	sum := 0.0
	for range n {
		q := f.Sample(r)
		if q.ISL < 500 || q.ISL > 1000 || q.OSL < 100 || q.OSL > 200 {
			t.Fatalf("range-ratio draw %+v outside [ratio*len, len]", q)
		}
		sum += float64(q.ISL)
	}
	if se := 500 / math.Sqrt(12*n); math.Abs(sum/n-749.5) > 4*se+0.5 { // int() truncates: mean 750 - 0.5
		t.Errorf("range-ratio ISL mean %v, want 749.5 ± %v", sum/n, 4*se+0.5)
	}
	// One seed, one sequence.
	a1, a2 := rand.New(rand.NewPCG(1, 2)), rand.New(rand.NewPCG(1, 2))
	for range 100 {
		if x, y := w.Sample(a1), w.Sample(a2); x != y {
			t.Fatalf("same seed, different draws: %+v and %+v", x, y)
		}
	}
}
