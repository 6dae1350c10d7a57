package kernels

import (
	"math"

	"gonum.org/v1/gonum/optimize"
)

// nelderMead minimises f from x0 with gonum's downhill simplex, starting
// from a simplex of the given edge, and stops after maxEval evaluations or
// when the best value stops improving by more than tol. The fits here have
// 3-4 parameters and objectives with kinks (max() and clamps), where a
// derivative-free method is the robust choice. A NaN objective counts as
// +Inf so that the simplex walks away from it.
func nelderMead(fn func([]float64) float64, x0 []float64, step float64, maxEval int, tol float64) ([]float64, float64) {
	problem := optimize.Problem{Func: func(x []float64) float64 {
		if v := fn(x); !math.IsNaN(v) {
			return v
		}
		return math.Inf(1)
	}}
	settings := &optimize.Settings{
		FuncEvaluations: maxEval,
		Converger:       &optimize.FunctionConverge{Absolute: tol, Iterations: 4 * (len(x0) + 1)},
	}
	res, err := optimize.Minimize(problem, append([]float64(nil), x0...), settings, &optimize.NelderMead{SimplexSize: step})
	if res == nil || (err != nil && len(res.X) != len(x0)) {
		return x0, problem.Func(x0)
	}
	return res.X, res.F
}
