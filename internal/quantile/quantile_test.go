package quantile

import "testing"

// Reference values from R 4.x, quantile(x, p) with the default type = 7,
// and NumPy's percentile(x, 100*p) (method "linear"); worked by hand:
// position p*(n-1) between order statistics.
func TestType7(t *testing.T) {
	for _, tt := range []struct {
		x    []float64
		q    float64
		want float64
	}{
		{[]float64{1, 2, 3, 4}, 0.5, 2.5},   // between 2 and 3
		{[]float64{1, 2, 3, 4}, 0.1, 1.3},   // 0.3 of the way from 1 to 2
		{[]float64{1, 2, 3, 4}, 0.9, 3.7},   // position 2.7
		{[]float64{4, 1, 3, 2}, 0.9, 3.7},   // order does not matter
		{[]float64{10, 20, 30}, 0.5, 20},    // an odd count's median is the middle value
		{[]float64{10, 20, 30}, 0.99, 29.8}, // position 1.98
		{[]float64{5}, 0.9, 5},
		{[]float64{1, 2, 3, 4}, 0, 1},
		{[]float64{1, 2, 3, 4}, 1, 4},
		{nil, 0.5, 0},
	} {
		in := append([]float64(nil), tt.x...)
		if got := Of(tt.x, tt.q); got < tt.want-1e-12 || got > tt.want+1e-12 {
			t.Errorf("Of(%v, %v) = %v, want %v", tt.x, tt.q, got, tt.want)
		}
		for i := range in {
			if in[i] != tt.x[i] {
				t.Fatalf("Of reordered its input: %v", tt.x)
			}
		}
	}
}
