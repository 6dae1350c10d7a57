package simulate

import "github.com/specsim/specsim/kernels"

// GPUSpec is the GPU type of a deployment and how many GPUs share one
// NVLink domain (GPUsPerNode; 0 keeps the catalog's: 8 for HGX, 72 for
// NVL72 racks).
type GPUSpec struct {
	GPU         *kernels.GPU
	GPUsPerNode int
}

func (g GPUSpec) domain() int {
	d := g.GPU.NVLinkDomain
	if g.GPUsPerNode > 0 {
		d = g.GPUsPerNode
	}
	return max(d, 1)
}

// withDomain returns a copy of the GPU whose NVLink domain is the
// deployment's, so that collectives over more GPUs than a domain holds go
// over the network.
func (g GPUSpec) withDomain() *kernels.GPU {
	c := *g.GPU
	c.NVLinkDomain = g.domain()
	return &c
}

// Node is how many GPUs one host holds (the catalog's gpus_per_node, at
// most the deployment's NVLink domain): an instance larger than it spans
// nodes.
func (g GPUSpec) Node() int {
	n := g.GPU.GPUsPerNode
	if n < 1 {
		n = g.GPU.NVLinkDomain
	}
	return max(1, min(n, g.domain()))
}
