package kernels

import (
	"math"
	"sort"
)

// nelderMead minimises f from x0 with the downhill simplex method
// (reflection 1, expansion 2, contraction 1/2, shrink 1/2), stopping after
// maxEval evaluations or when the simplex's values agree to tol. It stands
// in for gonum/optimize, whose package pulls in a module this project does
// not carry. Fits here have 3-4 parameters and a few hundred rows, so the
// method's robustness to the roofline's kinks matters more than its speed.
func nelderMead(fn func([]float64) float64, x0 []float64, step float64, maxEval int, tol float64) ([]float64, float64) {
	n := len(x0)
	type vertex struct {
		x []float64
		f float64
	}
	evals := 0
	eval := func(x []float64) float64 {
		evals++
		v := fn(x)
		if math.IsNaN(v) {
			return math.Inf(1)
		}
		return v
	}
	simplex := make([]vertex, n+1)
	for i := range simplex {
		x := append([]float64(nil), x0...)
		if i > 0 {
			x[i-1] += step
		}
		simplex[i] = vertex{x, eval(x)}
	}
	centroid := make([]float64, n)
	at := func(t float64, worst []float64) []float64 {
		x := make([]float64, n)
		for j := range x {
			x[j] = centroid[j] + t*(worst[j]-centroid[j])
		}
		return x
	}
	for evals < maxEval {
		sort.Slice(simplex, func(i, j int) bool { return simplex[i].f < simplex[j].f })
		if math.Abs(simplex[n].f-simplex[0].f) <= tol {
			break
		}
		for j := range centroid {
			centroid[j] = 0
			for i := 0; i < n; i++ {
				centroid[j] += simplex[i].x[j] / float64(n)
			}
		}
		worst := simplex[n].x
		xr := at(-1, worst)
		fr := eval(xr)
		switch {
		case fr < simplex[0].f:
			xe := at(-2, worst)
			if fe := eval(xe); fe < fr {
				simplex[n] = vertex{xe, fe}
			} else {
				simplex[n] = vertex{xr, fr}
			}
		case fr < simplex[n-1].f:
			simplex[n] = vertex{xr, fr}
		default:
			var xc []float64
			if fr < simplex[n].f {
				xc = at(-0.5, worst) // outside contraction
			} else {
				xc = at(0.5, worst) // inside contraction
			}
			if fc := eval(xc); fc < math.Min(fr, simplex[n].f) {
				simplex[n] = vertex{xc, fc}
				continue
			}
			for i := 1; i <= n; i++ {
				for j := range simplex[i].x {
					simplex[i].x[j] = simplex[0].x[j] + 0.5*(simplex[i].x[j]-simplex[0].x[j])
				}
				simplex[i].f = eval(simplex[i].x)
			}
		}
	}
	sort.Slice(simplex, func(i, j int) bool { return simplex[i].f < simplex[j].f })
	return simplex[0].x, simplex[0].f
}
