package simulate

import (
	"math"
	"testing"
)

// TestWaitDistMM1 checks the Beneš wait against the M/M/1 queue's closed
// form: P(W > x) = rho exp(-(1-rho) x / E[S]), so the u-quantile is
// E[S] / (1-rho) ln(rho / (1-u)) for u > 1-rho and 0 below.
func TestWaitDistMM1(t *testing.T) {
	const n = 20000
	s := make([]float64, n)
	for i := range s {
		s[i] = -math.Log(1 - (float64(i)+0.5)/n) // exponential, mean 1
	}
	ss := newServiceSample(s)
	for _, c := range []struct{ rho, u float64 }{
		{0.3, 0.5}, {0.3, 0.9}, {0.3, 0.99},
		{0.5, 0.6}, {0.5, 0.9}, {0.5, 0.99},
		{0.8, 0.5}, {0.8, 0.9}, {0.8, 0.99},
		{0.95, 0.5}, {0.95, 0.9}, {0.95, 0.999},
	} {
		wd := newWaitDist(c.rho, []serviceSample{ss}, []float64{1})
		want := 0.0
		if c.u > 1-c.rho {
			want = math.Log(c.rho/(1-c.u)) / (1 - c.rho)
		}
		got := wd.quantile(c.u)
		if math.Abs(got-want) > 0.02*want+0.02 {
			t.Errorf("rho %.2f u %.3f: quantile %.4f, M/M/1 closed form %.4f", c.rho, c.u, got, want)
		}
		if m, pk := wd.mean(), c.rho/(1-c.rho); math.Abs(m-pk) > 0.02*pk {
			t.Errorf("rho %.2f: mean %.4f, Pollaczek-Khinchine %.4f", c.rho, m, pk)
		}
	}
}

// TestWaitDistMD1 checks the Beneš wait against Erlang's M/D/1 waiting
// time distribution (service time 1, arrival rate rho): P(W <= t) =
// (1-rho) sum_{k=0}^{floor(t)} (rho (k-t))^k / k! exp(-rho (k-t)), inverted
// by bisection.
func TestWaitDistMD1(t *testing.T) {
	erlang := func(rho, x float64) float64 {
		sum, fact := 0.0, 1.0
		for k := 0; float64(k) <= x; k++ {
			if k > 0 {
				fact *= float64(k)
			}
			a := rho * (float64(k) - x)
			sum += math.Pow(a, float64(k)) / fact * math.Exp(-a)
		}
		return (1 - rho) * sum
	}
	ss := newServiceSample([]float64{1, 1, 1, 1})
	for _, c := range []struct{ rho, u float64 }{
		{0.3, 0.8}, {0.3, 0.95}, {0.5, 0.7}, {0.5, 0.9}, {0.5, 0.99}, {0.8, 0.5}, {0.8, 0.9}, {0.8, 0.99},
	} {
		lo, hi := 0.0, 15.0 // the alternating series loses its digits much past 15
		for range 60 {
			if mid := (lo + hi) / 2; erlang(c.rho, mid) < c.u {
				lo = mid
			} else {
				hi = mid
			}
		}
		want := (lo + hi) / 2
		wd := newWaitDist(c.rho, []serviceSample{ss}, []float64{1})
		if got := wd.quantile(c.u); math.Abs(got-want) > 0.02*want+0.02 {
			t.Errorf("rho %.2f u %.2f: quantile %.4f, Erlang's M/D/1 %.4f", c.rho, c.u, got, want)
		}
		if m, pk := wd.mean(), c.rho/(2*(1-c.rho)); math.Abs(m-pk) > 0.02*pk {
			t.Errorf("rho %.2f: mean %.4f, Pollaczek-Khinchine %.4f", c.rho, m, pk)
		}
	}
}

// TestWaitDistMixture: a mixture's wait is the wait of the pooled sample
// (0.75 of the mass at 1, 0.25 at 9; E[S] 3, E[S^2] 21, P-K mean
// rho 21 / (6 (1-rho))).
func TestWaitDistMixture(t *testing.T) {
	a := newServiceSample([]float64{1, 1})
	b := newServiceSample([]float64{9})
	pooled := newServiceSample([]float64{1, 1, 1, 9})
	for _, rho := range []float64{0.2, 0.5, 0.9} {
		mix := newWaitDist(rho, []serviceSample{a, b}, []float64{0.75, 0.25})
		one := newWaitDist(rho, []serviceSample{pooled}, []float64{1})
		if pk := rho * 21 / (6 * (1 - rho)); math.Abs(mix.mean()-pk) > 0.02*pk {
			t.Errorf("rho %.1f: mean %.4f, Pollaczek-Khinchine %.4f", rho, mix.mean(), pk)
		}
		for _, u := range []float64{0.5, 0.9, 0.99} {
			if x, y := mix.quantile(u), one.quantile(u); math.Abs(x-y) > 1e-9*(1+y) {
				t.Errorf("rho %.1f u %.2f: mixture %.6f, pooled %.6f", rho, u, x, y)
			}
		}
	}
}
