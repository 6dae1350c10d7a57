package simulate

// Predict runs the event simulation of one deployment at concurrency conc
// and draft length k (0 = no speculation).
func Predict(r *Resolved, t Topology, conc, k int) (*Result, error) {
	sc, err := r.Scenario(t, conc, k)
	if err != nil {
		return nil, err
	}
	p, err := NewPlan(sc, r.GPU)
	if err != nil {
		return nil, err
	}
	return p.Simulate()
}

// EstimatePoint is Predict's mean-field counterpart (see Plan.Estimate).
func EstimatePoint(r *Resolved, t Topology, conc, k int) (*Result, error) {
	sc, err := r.Scenario(t, conc, k)
	if err != nil {
		return nil, err
	}
	p, err := NewPlan(sc, r.GPU)
	if err != nil {
		return nil, err
	}
	return p.Estimate()
}
