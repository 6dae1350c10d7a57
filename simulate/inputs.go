package simulate

// Inputs echoes what a prediction was made for, so that a JSON result
// names its own deployment and workload. The keys are written here, not
// derived from the Go field names, and stay stable.
type Inputs struct {
	Model     string `json:"model"`
	GPU       string `json:"gpu"`
	Precision string `json:"precision"`
	Engine    string `json:"engine"`
	Topology  string `json:"topology"`
	// Workload names the workload ("fixed", "agentx" trace replay or
	// "agentx-synthetic") and WorkloadParams gives it as sweep's inputs do.
	Workload       string         `json:"workload"`
	WorkloadParams WorkloadInputs `json:"workload_params"`
	Conc           int            `json:"conc"`
	Spec           string         `json:"spec"` // "mtp" or "none"
	K              int            `json:"k"`    // draft length, 0 without speculation
	// AL is the target acceptance length at K (bonus token included) and
	// ALSource where it comes from; null and "" without speculation.
	AL       *float64 `json:"al"`
	ALSource string   `json:"al_source"`
	Method   string   `json:"method"`
	Thinking string   `json:"thinking"`
	Seed     uint64   `json:"seed"`
	Version  string   `json:"version"` // the program's, set by the caller
}

// Inputs echoes the resolved query at a topology, concurrency and draft
// length.
func (r *Resolved) Inputs(t Topology, conc, k int) Inputs {
	q := r.Q
	in := Inputs{Model: r.Model.Name, GPU: r.GPU.GPU.Name, Precision: string(r.Precision), Engine: orDefault(q.Engine, "sglang"),
		Topology: t.String(), Conc: conc, Spec: "none", K: k, Method: r.Target.Method, Thinking: orDefault(q.Thinking, "on"), Seed: q.Seed}
	in.Workload, in.WorkloadParams = r.Workload.Name, newWorkloadInputs(&r.Workload)
	if k > 0 {
		in.Spec = "mtp"
		if p, err := r.Target.At(k); err == nil {
			al := p.AL
			in.AL, in.ALSource = &al, p.Source
		}
	}
	return in
}
