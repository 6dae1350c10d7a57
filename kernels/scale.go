package kernels

// Scaled returns a copy of c whose memory and compute efficiencies of every
// op class are multiplied by mem and compute (1 leaves them as they are).
// Interpolated measured tables still apply their per-shape residuals on top,
// so a scale moves table-priced and roofline-priced ops alike. Calibration
// from end-to-end runs uses it (simulate.Calibration); values that are not
// positive and finite leave the efficiency unchanged.
func (c *Coster) Scaled(mem, compute float64) *Coster {
	s := *c
	ok := func(v float64) bool { return v > 0 && v < 1e6 }
	for class := range numClasses {
		for slot := range numSlots {
			e := s.eff[class][slot]
			if ok(mem) {
				e.Mem *= mem
			}
			if ok(compute) {
				e.Compute *= compute
			}
			s.eff[class][slot] = e
		}
	}
	return &s
}
