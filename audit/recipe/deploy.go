package recipe

// Deployment is the hardware a variant asks srt-slurm for: GPU type, GPUs
// per node, and per role the worker count, nodes and GPUs per worker.
// Schema 2 sets these per role (roles.<role>.workers/nodes/gpus); schema 1
// under resources (<role>_workers, <role>_nodes, gpus_per_<role>).
type Deployment struct {
	GPUType     string
	GPUTypeLine int // the line of resources.gpu_type; 0 when unset
	GPUsPerNode int
	Roles       []RoleDeployment
}

// RoleDeployment is one role's share of a deployment; zero = not set.
type RoleDeployment struct {
	Name    string
	Workers int
	Nodes   int
	GPUs    int // per worker
}

// Deployment reads the variant's resources.
func (v *Variant) Deployment() Deployment {
	res := v.tree.Get("resources")
	d := Deployment{GPUType: res.Get("gpu_type").String()}
	if g := res.Get("gpu_type"); g != nil {
		d.GPUTypeLine = g.Line
	}
	d.GPUsPerNode, _ = res.Get("gpus_per_node").Int()
	for _, r := range v.Roles {
		rd := RoleDeployment{Name: r.Name}
		if role := v.tree.Get("roles", r.Name); role != nil {
			rd.Workers, _ = role.Get("workers").Int()
			rd.Nodes, _ = role.Get("nodes").Int()
			rd.GPUs, _ = role.Get("gpus").Int()
		} else {
			rd.Workers, _ = res.Get(r.Name + "_workers").Int()
			rd.Nodes, _ = res.Get(r.Name + "_nodes").Int()
			rd.GPUs, _ = res.Get("gpus_per_" + r.Name).Int()
		}
		d.Roles = append(d.Roles, rd)
	}
	return d
}

// ModelPrecision is model.precision as the recipe states it ("" if unset).
func (v *Variant) ModelPrecision() string { return v.tree.Get("model", "precision").String() }
