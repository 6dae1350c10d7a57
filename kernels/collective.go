package kernels

import (
	"fmt"
	"math"
)

// CollectiveOp names a NCCL collective.
type CollectiveOp string

// The collectives the cost model prices.
const (
	AllReduce     CollectiveOp = "allreduce"
	AllGather     CollectiveOp = "allgather"
	ReduceScatter CollectiveOp = "reducescatter"
	AllToAll      CollectiveOp = "alltoall"
)

// CollectiveOps lists the collectives in a fixed order.
func CollectiveOps() []CollectiveOp {
	return []CollectiveOp{AllReduce, AllGather, ReduceScatter, AllToAll}
}

// ParseCollectiveOp accepts the names above, with or without '_' or '-'.
func ParseCollectiveOp(s string) (CollectiveOp, error) {
	switch normalizeName(s) {
	case "allreduce":
		return AllReduce, nil
	case "allgather":
		return AllGather, nil
	case "reducescatter":
		return ReduceScatter, nil
	case "alltoall", "all2all":
		return AllToAll, nil
	}
	return "", fmt.Errorf("unknown collective %q: want allreduce, allgather, reducescatter or alltoall", s)
}

func normalizeName(s string) string {
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '_' || c == '-' || c == ' ':
		case c >= 'A' && c <= 'Z':
			b = append(b, c+'a'-'A')
		default:
			b = append(b, c)
		}
	}
	return string(b)
}

func collectiveIndex(op CollectiveOp) int {
	switch op {
	case AllReduce:
		return 0
	case AllGather:
		return 1
	case ReduceScatter:
		return 2
	case AllToAll:
		return 3
	}
	return -1
}

// collectiveParams describe one collective on one fabric:
//
//	t = Base + PerStep*steps + wireBytes/(linkBandwidth*BusEff)
//
// steps is the number of sequential ring steps (2(n-1) for all-reduce,
// n-1 otherwise) and wireBytes what each GPU sends: the algorithm's
// traffic factor times the per-GPU message.
type collectiveParams struct {
	Base, PerStep, BusEff float64
}

// collectiveModel holds parameters per op for NVLink (fitted to a measured
// table where one exists) and for the network beyond the NVLink domain.
type collectiveModel struct {
	nvlink  [4]collectiveParams
	network collectiveParams
	table   *collectiveTable // measured lines of the GPU the model was fitted on; nil when carried over
}

// defaultCollectiveModel: NCCL reaches a bus bandwidth of about 80% of
// NVLink's per-direction rate on large messages (nccl-tests busbw ~360 of
// 450 GB/s on HGX H100/H200); small-message latency is a few microseconds
// plus under a microsecond per ring step inside a CUDA graph. AIC uses a
// 10 us point-to-point latency for the network (systems/*.yaml p2p_latency).
func defaultCollectiveModel() *collectiveModel {
	m := &collectiveModel{network: collectiveParams{Base: 10e-6, PerStep: 5e-6, BusEff: 0.85}}
	for i := range m.nvlink {
		m.nvlink[i] = collectiveParams{Base: 6e-6, PerStep: 0.8e-6, BusEff: 0.8}
	}
	return m
}

// trafficFactor is what each GPU sends per byte of its message inside a
// ring of n: all-reduce 2(n-1)/n; all-gather (n-1) (the message is the
// local shard); reduce-scatter and all-to-all (n-1)/n (the message is the
// full local input).
func trafficFactor(op CollectiveOp, n float64) float64 {
	switch op {
	case AllReduce:
		return 2 * (n - 1) / n
	case AllGather:
		return n - 1
	}
	return (n - 1) / n
}

func ringSteps(op CollectiveOp, n float64) float64 {
	if op == AllReduce {
		return 2 * (n - 1)
	}
	return n - 1
}

// nvlinkTime prices a collective of n GPUs all inside one NVLink domain.
func (p collectiveParams) time(op CollectiveOp, bytes, n, bandwidth float64) float64 {
	return p.Base + p.PerStep*ringSteps(op, n) + trafficFactor(op, n)*bytes/(bandwidth*p.BusEff)
}

// Collective prices one collective over gpus GPUs, bytes being the per-GPU
// message (the tensor for all-reduce, the local shard for all-gather, the
// full local input for reduce-scatter and all-to-all). Inside the NVLink
// domain it uses the measured table (interpolated) or the fitted model;
// beyond it, hierarchical algorithms: the NVLink part among the d GPUs of a
// domain plus the network part among the m = ceil(gpus/d) domains, each
// GPU's NIC carrying its share.
func (c *Coster) Collective(op CollectiveOp, bytes float64, gpus int) Cost {
	idx := collectiveIndex(op)
	if gpus <= 1 || !(bytes > 0) || idx < 0 {
		return Cost{Source: c.offTable, Bound: "latency"}
	}
	m := c.coll
	if m == nil {
		m = defaultCollectiveModel()
	}
	n := f(gpus)
	nv := m.nvlink[idx]
	if gpus <= c.gpu.NVLinkDomain {
		t := nv.time(op, bytes, n, c.gpu.NVLinkBandwidth)
		cost := Cost{Seconds: t, Bytes: trafficFactor(op, n) * bytes, Source: c.offTable, Bound: "network"}
		if t < 2*(nv.Base+nv.PerStep*ringSteps(op, n)) {
			cost.Bound = "latency"
		}
		m.table.adjust(&cost, op, gpus, bytes)
		return cost
	}
	d := f(c.gpu.NVLinkDomain)
	domains := math.Ceil(n / d)
	net := m.network
	var intra, inter, wire float64
	switch op {
	case AllReduce:
		intra = nv.time(op, bytes, d, c.gpu.NVLinkBandwidth)
		inter = net.time(AllReduce, bytes/d, domains, c.gpu.NetworkBandwidth)
		wire = trafficFactor(op, d)*bytes + trafficFactor(op, domains)*bytes/d
	case AllGather:
		intra = nv.Base + nv.PerStep*(d-1) + (n-1)*bytes/(c.gpu.NVLinkBandwidth*nv.BusEff)
		inter = net.Base + net.PerStep*(domains-1) + (domains-1)*bytes/(c.gpu.NetworkBandwidth*net.BusEff)
		wire = (n - 1) * bytes
	case ReduceScatter:
		shard := bytes / n
		intra = nv.Base + nv.PerStep*(d-1) + (n-1)*shard/(c.gpu.NVLinkBandwidth*nv.BusEff)
		inter = net.Base + net.PerStep*(domains-1) + (domains-1)*shard/(c.gpu.NetworkBandwidth*net.BusEff)
		wire = (n - 1) * shard
	case AllToAll:
		// Destinations in the own domain go over NVLink, the rest over the
		// NIC, concurrently.
		intra = nv.Base + nv.PerStep*(d-1) + (d-1)/n*bytes/(c.gpu.NVLinkBandwidth*nv.BusEff)
		inter = net.Base + net.PerStep*(domains-1) + (n-d)/n*bytes/(c.gpu.NetworkBandwidth*net.BusEff)
		wire = (n - 1) / n * bytes
		return Cost{Seconds: math.Max(intra, inter), Bytes: wire, Source: c.offTable, Bound: "network"}
	}
	return Cost{Seconds: intra + inter, Bytes: wire, Source: c.offTable, Bound: "network"}
}
