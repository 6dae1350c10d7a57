package kernels

// Scaled returns a copy of c that prices every op as if the GPU's HBM
// bandwidth were mem times and its tensor-core peaks compute times the
// datasheet figures: the memory-bound and compute-bound parts of each
// kernel divide by the factor (1 leaves them as they are), fixed
// per-kernel times and collectives do not move. Measured tables still apply
// their per-shape residuals on top, so table-priced and roofline-priced
// ops scale alike. Calibration from end-to-end runs uses it
// (simulate.CalParams); factors that are not positive and finite are
// taken as 1.
func (c *Coster) Scaled(mem, compute float64) *Coster {
	s := *c
	ok := func(v float64) bool { return v > 0 && v < 1e6 }
	if ok(mem) {
		s.gpu.HBMBandwidth *= mem
	}
	if ok(compute) && compute != 1 {
		peak := make(map[DType]float64, len(c.gpu.Peak))
		for dt, v := range c.gpu.Peak {
			peak[dt] = v * compute
		}
		s.gpu.Peak = peak
	}
	return &s
}
