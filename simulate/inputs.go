package simulate

import "strings"

// Inputs echoes what a prediction was made for, so that a JSON result
// names its own deployment and workload and can be run again. The keys
// are sweep's (SweepInputs): specsim_version, steps, workload +
// workload_params, query (every flag given, server settings included;
// QueryInputs.ToQuery rebuilds it), gpus_per_host and nvlink_domain_gpus.
type Inputs struct {
	SpecsimVersion string `json:"specsim_version"` // the program's, set by the caller
	Model          string `json:"model"`
	// ModelAsked is the model as asked for (--model, or the recipe's model
	// name) where it differs from the Model it resolved to (an alias of a
	// preset, a hub name, a checkpoint directory); "" where the same.
	ModelAsked string `json:"model_asked,omitempty"`
	GPU        string `json:"gpu"`
	Precision  string `json:"precision"`
	Engine     string `json:"engine"`
	Topology   string `json:"topology"`
	// Workload names the workload ("fixed", "agentx" trace replay or
	// "agentx-synthetic") and WorkloadParams gives it as sweep's inputs do.
	Workload       string         `json:"workload"`
	WorkloadParams WorkloadInputs `json:"workload_params"`
	// Query is the query as given, as sweep echoes it: server settings
	// (max_running, mem_fraction, kv_dtype, server.*), overheads,
	// nvlink_domain_gpus; a zero value, left out, is the default.
	Query QueryInputs `json:"query"`
	// GPUsPerHost and NVLinkDomainGPUs are the host size and the NVLink
	// domain in effect (see SweepInputs).
	GPUsPerHost      int    `json:"gpus_per_host"`
	NVLinkDomainGPUs int    `json:"nvlink_domain_gpus"`
	Conc             int    `json:"conc"`
	Spec             string `json:"spec"`  // "mtp" or "none"
	Steps            int    `json:"steps"` // draft length k, 0 without speculation
	// AL is the target acceptance length at Steps (bonus token included)
	// and ALSource where it comes from; null and "" without speculation.
	AL       *float64 `json:"al"`
	ALSource string   `json:"al_source"`
	Method   string   `json:"method"`
	Thinking string   `json:"thinking"`
	Seed     uint64   `json:"seed"`
}

// Inputs echoes the resolved query at a topology, concurrency and draft
// length.
func (r *Resolved) Inputs(t Topology, conc, k int) Inputs {
	q := r.Q
	in := Inputs{Model: r.Model.Name, GPU: r.GPU.GPU.Name, Precision: string(r.Precision), Engine: orDefault(q.Engine, "sglang"),
		Topology: t.String(), Query: newQueryInputs(q), GPUsPerHost: r.GPU.Node(), NVLinkDomainGPUs: r.GPU.domain(),
		Conc: conc, Spec: "none", Steps: k, Method: r.Target.Method, Thinking: orDefault(q.Thinking, "on"), Seed: q.Seed}
	in.Workload, in.WorkloadParams = r.Workload.Name, newWorkloadInputs(&r.Workload)
	in.ModelAsked = r.ModelAsked()
	if k > 0 {
		in.Spec = "mtp"
		if p, err := r.Target.At(k); err == nil {
			al := p.AL
			in.AL, in.ALSource = &al, p.Source
		}
	}
	return in
}

// ModelAsked is the query's model name where it differs from the name of
// the model it resolved to ("" where they are the same but for case).
func (r *Resolved) ModelAsked() string {
	if strings.EqualFold(r.Q.Model, r.Model.Name) {
		return ""
	}
	return r.Q.Model
}
