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

// CheckPlan runs the planning Predict runs before it simulates (Scenario,
// then NewPlan: memory feasibility of every role, running caps) and
// returns its error: nil exactly when Predict would start simulating.
// recipe emit calls it so that it never writes a deployment predict
// refuses.
func CheckPlan(r *Resolved, t Topology, conc, k int) error {
	sc, err := r.Scenario(t, conc, k)
	if err != nil {
		return err
	}
	_, err = NewPlan(sc, r.GPU)
	return err
}
