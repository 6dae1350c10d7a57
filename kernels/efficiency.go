package kernels

import "math"

// opClass is a family of kernels that share one set of fitted efficiencies.
type opClass int

const (
	classGEMM opClass = iota
	classMoE
	classAttention // decode and verify: a few queries per sequence against its KV cache
	classPrefill   // causal attention over many new tokens
	classGDN
	classNorm
	classLMHead // lm_head matmul plus greedy sampling
	classCopy   // device memory copies and elementwise kernels
	numClasses
)

var classNames = [numClasses]string{"gemm", "moe", "attention", "attention_prefill", "gdn", "rmsnorm", "lm_head", "copy"}

func (c opClass) String() string { return classNames[c] }

// dtypeSlot indexes per-dtype efficiencies. FP16 shares BF16's.
type dtypeSlot int

const (
	slotBF16 dtypeSlot = iota
	slotFP8
	slotNVFP4
	slotINT8
	slotINT4
	slotFP32
	numSlots
)

func slotOf(dt DType) dtypeSlot {
	switch dt {
	case FP8:
		return slotFP8
	case NVFP4:
		return slotNVFP4
	case INT8:
		return slotINT8
	case INT4:
		return slotINT4
	case FP32:
		return slotFP32
	}
	return slotBF16
}

// Efficiency turns datasheet roofline times into a kernel time:
//
//	t = Fixed + (tm^P + tc^P)^(1/P),  tm = bytes/(bandwidth*Mem), tc = flops/(peak*Compute)
//
// Mem and Compute are the fractions of the datasheet bandwidth and peak that
// large kernels reach. Fixed is the time a kernel costs however small it is
// (the gap between kernels in a CUDA graph, ramp-up and tail); it is the
// same thing as the saturating efficiency eff = e_max*x/(x+x_half) with
// x_half = Fixed*e_max*rate, written in a form that carries over to other
// GPUs as a time. P blends the two limits near the ridge point, where real
// kernels are slower than the plain max (P = infinity gives the max).
//
// Kernels that split their work into few independent units (attention
// over batch x KV heads, the GDN state update over batch x value heads)
// cannot keep every SM streaming when there are few of them: their memory
// efficiency is further multiplied by units/(units + HalfUnits).
type Efficiency struct {
	Mem       float64 `json:"mem"`
	Compute   float64 `json:"compute"`
	Fixed     float64 `json:"fixed_s"` // seconds
	P         float64 `json:"p"`
	HalfUnits float64 `json:"half_units"` // work units at which memory efficiency halves; used only by ops that report units
}

// time is the kernel time for roofline times at full datasheet rates.
func (e Efficiency) time(memSeconds, computeSeconds float64) (float64, string) {
	return e.timeUnits(memSeconds, computeSeconds, 0)
}

// timeUnits is time for an op split into units parallel work units (0:
// not applicable).
func (e Efficiency) timeUnits(memSeconds, computeSeconds, units float64) (float64, string) {
	tm := memSeconds / e.Mem
	if units > 0 {
		tm *= (units + e.HalfUnits) / units
	}
	tc := computeSeconds / e.Compute
	var t float64
	switch {
	case tm == 0:
		t = tc
	case tc == 0:
		t = tm
	default:
		hi, lo := tm, tc
		if lo > hi {
			hi, lo = lo, hi
		}
		t = hi * math.Pow(1+math.Pow(lo/hi, e.P), 1/e.P)
	}
	bound := "memory"
	if tc > tm {
		bound = "compute"
	}
	if e.Fixed > t {
		bound = "latency"
	}
	return e.Fixed + t, bound
}

// defaultEfficiencies are the starting points before any table is fitted:
// leads from the H200 measured here (a copy reaches ~4.3 of 4.8 TB/s, a big
// BF16 matmul ~790 of 989 TFLOP/s, DESIGN.md) and AIConfigurator's 3 us
// constant memory latency (systems/*.yaml mem_empirical_constant_latency).
// Fitting to measured tables replaces them class by class.
func defaultEfficiencies() (e [numClasses][numSlots]Efficiency) {
	base := [numClasses]Efficiency{
		classGEMM:      {Mem: 0.85, Compute: 0.80, Fixed: 4e-6, P: 4, HalfUnits: 1},
		classMoE:       {Mem: 0.70, Compute: 0.60, Fixed: 15e-6, P: 3, HalfUnits: 1},
		classAttention: {Mem: 0.75, Compute: 0.50, Fixed: 6e-6, P: 3, HalfUnits: 1},
		classPrefill:   {Mem: 0.80, Compute: 0.60, Fixed: 8e-6, P: 3, HalfUnits: 1},
		classGDN:       {Mem: 0.50, Compute: 0.50, Fixed: 5e-6, P: 3, HalfUnits: 1},
		classNorm:      {Mem: 0.75, Compute: 1, Fixed: 3e-6, P: 4, HalfUnits: 1},
		classLMHead:    {Mem: 0.80, Compute: 0.75, Fixed: 12e-6, P: 4, HalfUnits: 1},
		classCopy:      {Mem: 4.3 / 4.8, Compute: 1, Fixed: 2e-6, P: 4, HalfUnits: 1},
	}
	for c := range numClasses {
		for s := range numSlots {
			e[c][s] = base[c]
		}
		// Low-precision tensor-core GEMMs reach a smaller share of their
		// doubled peak (scaling, narrower tiles). Attention's dtype is the
		// KV cache's, and its math is priced at the BF16 rate
		// (Coster.attention): an FP8 KV cache takes BF16's efficiencies.
		if c == classAttention || c == classPrefill {
			continue
		}
		for _, s := range []dtypeSlot{slotFP8, slotNVFP4, slotINT8} {
			e[c][s].Compute *= 0.85
		}
	}
	return e
}
