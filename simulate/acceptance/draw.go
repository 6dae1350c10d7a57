package acceptance

import (
	"math"
	"sort"
)

// Draws is what [Draw] saw: the count of each accepted length and the
// moments of all draws and of each request's mean.
type Draws struct {
	K          int
	Batch      int
	Iterations int
	// Counts[l] is how many draws had length l (index 0 unused, l = 1..K+1).
	Counts []int64
	Mean   float64 // over every draw
	Std    float64 // population standard deviation over every draw
	// PerRequest are the minimum, median and maximum over the batch slots of
	// each slot's mean length over the iterations (the median of an even
	// batch is the mean of the two middle values).
	PerRequest struct{ Min, P50, Max float64 }
}

// Draw runs s for iterations verify steps of a batch of batch requests at
// draft length k; request i is batch slot i in every step.
func Draw(s Sampler, k, batch, iterations int) *Draws {
	d := &Draws{K: k, Batch: batch, Iterations: iterations, Counts: make([]int64, k+2)}
	perRequest := make([]int64, batch)
	out := make([]int, batch)
	for range iterations {
		s.Step(out)
		for i, l := range out {
			d.Counts[l]++
			perRequest[i] += int64(l)
		}
	}
	total := float64(batch) * float64(iterations)
	var sum int64
	for l, c := range d.Counts {
		sum += int64(l) * c
	}
	d.Mean = float64(sum) / total
	variance := 0.0
	for l, c := range d.Counts {
		dl := float64(l) - d.Mean
		variance += dl * dl * float64(c)
	}
	d.Std = math.Sqrt(variance / total)
	means := make([]float64, batch)
	for i, s := range perRequest {
		means[i] = float64(s) / float64(iterations)
	}
	sort.Float64s(means)
	mid := len(means) / 2
	p50 := means[mid]
	if len(means)%2 == 0 {
		p50 = (means[mid-1] + means[mid]) / 2
	}
	d.PerRequest.Min, d.PerRequest.P50, d.PerRequest.Max = means[0], p50, means[len(means)-1]
	return d
}
