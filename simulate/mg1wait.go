package simulate

import (
	"math"
	"slices"
)

// serviceSample is an empirical service-time distribution: sorted values,
// each equally likely, with their prefix sums.
type serviceSample struct {
	s, sum []float64 // sum[i] = s[0] + ... + s[i-1]
}

func newServiceSample(s []float64) serviceSample {
	s = slices.Clone(s)
	slices.Sort(s)
	sum := make([]float64, len(s)+1)
	for i, v := range s {
		sum[i+1] = sum[i] + v
	}
	return serviceSample{s, sum}
}

// minMean is E[min(S, x)].
func (ss serviceSample) minMean(x float64) float64 {
	n := len(ss.s)
	if n == 0 {
		return 0
	}
	i, _ := slices.BinarySearch(ss.s, x)
	return (ss.sum[i] + float64(n-i)*x) / float64(n)
}

func (ss serviceSample) mean() float64 {
	if len(ss.s) == 0 {
		return 0
	}
	return ss.sum[len(ss.s)] / float64(len(ss.s))
}

func (ss serviceSample) max() float64 {
	if len(ss.s) == 0 {
		return 0
	}
	return ss.s[len(ss.s)-1]
}

// mg1Grid is how many grid steps the wait distribution is computed over.
const mg1Grid = 512

// waitDist is the waiting-time distribution of an M/G/1 FCFS queue at load
// rho whose service time is the mixture sum_i w_i S_i of empirical
// distributions, by the Pollaczek-Khinchine formula in Beneš's form: the
// wait is a geometric number N of independent residual service times,
// P(N = n) = (1-rho) rho^n, each drawn from the service time's equilibrium
// distribution F_e(x) = E[min(S, x)] / E[S] (Kleinrock, Queueing Systems
// I, 1975, sec. 5.7: W*(s) = (1-rho) / (1 - rho B_e*(s)), expanded as a
// geometric series; Asmussen, Applied Probability and Queues, 2003,
// VIII.5). The compound geometric sum is computed on a grid of mg1Grid
// steps by Panjer's recursion (Panjer, ASTIN Bulletin 12(1), 1981), the
// residual's mass rounded to the nearest grid point; the grid reaches
// three times the 0.99 quantile of the exponential two-part wait with the
// same mean, and past it the tail decays exponentially at the rate of its
// last half.
type waitDist struct {
	rho, h float64
	cdf    []float64 // P(W <= (k+1/2) h)
}

func newWaitDist(rho float64, parts []serviceSample, w []float64) waitDist {
	if rho <= 0 || len(parts) == 0 {
		return waitDist{}
	}
	rho = math.Min(rho, 0.999)
	var m1, m2, top float64
	for i, p := range parts {
		m1 += w[i] * p.mean()
		for _, v := range p.s {
			m2 += w[i] * v * v / float64(len(p.s))
		}
		top = math.Max(top, p.max())
	}
	if m1 <= 0 {
		return waitDist{}
	}
	minMean := func(x float64) float64 {
		t := 0.0
		for i, p := range parts {
			t += w[i] * p.minMean(x)
		}
		return t
	}
	resid := m2 / (2 * m1)                 // E[R], the residual's mean
	wq := rho / (1 - rho) * resid          // the wait's mean
	hi := 3 * wq / rho * math.Log(100*rho) // 3x the two-part wait's 0.99 quantile
	hi = math.Max(hi, 4*resid)
	h := hi / mg1Grid
	// f[j]: the residual's mass rounded to j h.
	jmax := min(int(math.Ceil(top/h))+1, mg1Grid)
	f := make([]float64, jmax+1)
	prev := 0.0
	for j := range f {
		c := minMean((float64(j)+0.5)*h) / m1
		f[j] = c - prev
		prev = c
	}
	d := 1 - rho*f[0]
	cdf := make([]float64, mg1Grid)
	g := make([]float64, mg1Grid)
	g[0] = (1 - rho) / d
	cdf[0] = g[0]
	for k := 1; k < mg1Grid; k++ {
		t := 0.0
		for j := 1; j <= min(k, jmax); j++ {
			t += f[j] * g[k-j]
		}
		g[k] = rho / d * t
		cdf[k] = cdf[k-1] + g[k]
	}
	return waitDist{rho: rho, h: h, cdf: cdf}
}

// quantile is the wait's u-quantile.
func (wd waitDist) quantile(u float64) float64 {
	if wd.h <= 0 || u <= 1-wd.rho {
		return 0
	}
	k, _ := slices.BinarySearch(wd.cdf, u)
	if k == 0 {
		// The atom at 0 (1-rho) and the residuals under h/2.
		return 0.5 * wd.h * (u - (1 - wd.rho)) / math.Max(wd.cdf[0]-(1-wd.rho), 1e-12)
	}
	if k < len(wd.cdf) {
		lo, hi := wd.cdf[k-1], wd.cdf[k]
		return (float64(k) - 0.5 + (u-lo)/math.Max(hi-lo, 1e-300)) * wd.h
	}
	// Past the grid: the tail's decay over its last half.
	n := len(wd.cdf)
	a, b := 1-wd.cdf[n/2], 1-wd.cdf[n-1]
	x := (float64(n) - 0.5) * wd.h
	if b <= 0 || a <= b {
		return x
	}
	gamma := math.Log(a/b) / (float64(n-1-n/2) * wd.h)
	return x + math.Log(b/(1-u))/gamma
}

// mean is E[W] of the gridded distribution.
func (wd waitDist) mean() float64 {
	if wd.h <= 0 {
		return 0
	}
	t, prev := 0.0, 0.0
	for k, c := range wd.cdf {
		t += float64(k) * wd.h * (c - prev)
		prev = c
	}
	return t
}
