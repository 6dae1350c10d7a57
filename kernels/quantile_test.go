package kernels

import (
	"testing"

	quant "github.com/specsim/specsim/internal/quantile"
)

// TestQuantileIsTheProjects: the package's copy of the quantile is the
// project's one definition.
func TestQuantileIsTheProjects(t *testing.T) {
	xs := [][]float64{nil, {5}, {1, 2, 3, 4}, {4, 1, 3, 2}, {0.1, 9, 3.3, 3.3, 7, 2.5, 100}}
	for _, x := range xs {
		for _, q := range []float64{0, 0.1, 0.25, 0.5, 0.9, 0.99, 1} {
			if a, b := quantile(x, q), quant.Of(x, q); a != b {
				t.Errorf("quantile(%v, %v) = %v, internal/quantile says %v", x, q, a, b)
			}
		}
	}
}
