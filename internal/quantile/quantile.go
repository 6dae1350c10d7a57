// Package quantile is the one quantile definition of the project: linear
// interpolation between order statistics, Hyndman and Fan's type 7, the
// default of R's quantile and of NumPy's percentile (which the benchmark
// clients, SGLang's bench_serving and vLLM's benchmark_serving, report
// their p50/p90/p99 with). gonum's stat.Quantile offers Empirical and
// LinInterp, whose interpolation is type 4 (the median of 1, 2, 3, 4 is 2
// there, 2.5 here), so it does not fit. Package kernels, which imports
// nothing from the project, keeps a copy that its tests check against this
// one.
package quantile

import (
	"math"
	"sort"
)

// Sorted is the q-quantile (0 <= q <= 1) of sorted values: the order
// statistics at floor and ceil of q*(n-1), interpolated linearly. It is 0
// for no values.
func Sorted(sorted []float64, q float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	pos := q * float64(len(sorted)-1)
	lo := int(math.Floor(pos))
	hi := min(lo+1, len(sorted)-1)
	return sorted[lo] + (pos-float64(lo))*(sorted[hi]-sorted[lo])
}

// Of is the q-quantile of values in any order; values is left unchanged.
func Of(values []float64, q float64) float64 {
	s := append([]float64(nil), values...)
	sort.Float64s(s)
	return Sorted(s, q)
}
