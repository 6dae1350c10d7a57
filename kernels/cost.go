package kernels

import "math"

// Cost is the predicted time of one op and the traffic and work it was
// priced from.
type Cost struct {
	Seconds float64
	Bytes   float64 // bytes moved to and from device memory (or over the fabric, for collectives)
	FLOPs   float64 // useful floating-point operations
	Source  string  // "measured-interpolated" | "roofline" | "roofline-carried-over"
	Bound   string  // what limits it: "memory", "compute", "latency" (fixed per-kernel time) or "network"
}

// Sources a Cost can carry.
const (
	SourceMeasured  = "measured-interpolated" // interpolated in a table measured on this GPU
	SourceRoofline  = "roofline"              // roofline with efficiencies fitted on this GPU (or defaults where none were measured)
	SourceCarryOver = "roofline-carried-over" // roofline with another GPU's fitted efficiencies, scaled by datasheet figures
)

// Add returns the sum of two costs; the source and bound of the larger one
// win.
func (c Cost) Add(o Cost) Cost {
	s := c
	if o.Seconds > c.Seconds {
		s.Source, s.Bound = o.Source, o.Bound
	}
	s.Seconds += o.Seconds
	s.Bytes += o.Bytes
	s.FLOPs += o.FLOPs
	return s
}

// Coster prices ops on one GPU. It holds the GPU's figures, the fitted
// efficiencies and, where the GPU was measured, the interpolating tables.
// A Coster is safe for concurrent use and its methods do not allocate.
type Coster struct {
	gpu                                      GPU
	eff                                      [numClasses][numSlots]Efficiency
	offTable                                 string // Source of a cost priced by the roofline
	tables                                   *opTables
	coll                                     *collectiveModel
	eagerLaunch, graphLaunch, graphPerKernel float64
}

// GPU returns the figures the Coster prices with.
func (c *Coster) GPU() *GPU { return c.gpu.clone() }

// NewCoster prices ops on g: interpolating g's measured tables where the
// project has them, otherwise with efficiencies fitted to the H200's tables
// and carried over (Source "roofline-carried-over").
func NewCoster(g *GPU) *Coster {
	cal := calibrationFor(g.Name)
	if cal == nil {
		// No table for this GPU: carry the H200's efficiencies over.
		if h := calibrationFor("h200"); h != nil {
			return newCoster(g, &calibration{eff: h.eff, coll: h.coll}, SourceCarryOver)
		}
		return newCoster(g, nil, SourceRoofline)
	}
	return newCoster(g, cal, SourceRoofline)
}

func newCoster(g *GPU, cal *calibration, offTable string) *Coster {
	c := &Coster{
		gpu:            *g.clone(),
		eff:            defaultEfficiencies(),
		offTable:       offTable,
		eagerLaunch:    defaultEagerLaunch,
		graphLaunch:    defaultGraphLaunch,
		graphPerKernel: defaultGraphPerKernel,
	}
	if cal != nil {
		c.eff = cal.eff
		c.tables = cal.tables
		c.coll = cal.coll
	}
	return c
}

// Efficiency reports the efficiencies the Coster uses for an op class
// ("gemm", "moe", "attention", "attention_prefill", "gdn", "rmsnorm",
// "lm_head", "copy") and weight dtype.
func (c *Coster) Efficiency(class string, dt DType) (Efficiency, bool) {
	for i, n := range classNames {
		if n == class {
			return c.eff[i][slotOf(dt)], true
		}
	}
	return Efficiency{}, false
}

func (c *Coster) roofline(class opClass, dt DType, bytes, flops, rate float64) Cost {
	t, bound := c.eff[class][slotOf(dt)].time(bytes/c.gpu.HBMBandwidth, flops/rate)
	return Cost{Seconds: t, Bytes: bytes, FLOPs: flops, Source: c.offTable, Bound: bound}
}

func f(i int) float64 { return float64(i) }

// GEMM prices y[M,N] = x[M,K] W[N,K]^T with dt weights: the weights are
// read once, activations in dt where the GPU computes in it natively (FP8,
// NVFP4 on Blackwell) and BF16 otherwise, BF16 output.
func (c *Coster) GEMM(dt DType, m, n, k int) Cost {
	if m <= 0 || n <= 0 || k <= 0 {
		return Cost{Source: c.offTable}
	}
	cost := c.gemmRoofline(classGEMM, dt, m, n, k)
	c.tables.adjust(&cost, classGEMM, dt, lineKey{n, k, 0, 0, 0}, m)
	return cost
}

func (c *Coster) gemmRoofline(class opClass, dt DType, m, n, k int) Cost {
	ad := c.gpu.activationDType(dt)
	bytes := f(n)*f(k)*dt.Bytes() + f(m)*f(k)*ad.Bytes() + f(m)*f(n)*BF16.Bytes()
	flops := 2 * f(m) * f(n) * f(k)
	rate, _ := c.gpu.ComputeRate(dt)
	return c.roofline(class, dt, bytes, flops, rate)
}

// MoEShape is one MoE layer's routed experts on one GPU.
type MoEShape struct {
	Tokens, Experts, TopK, Hidden, Inter int     // Experts and Inter as held by this GPU (EP, TP shards)
	DType                                DType   // expert weight format
	Skew                                 float64 // Zipf exponent of expert popularity; 0 = uniform
}

// moeTile is the row tile of grouped GEMM kernels: each touched expert's
// rows are padded to it, so sparse decode batches pay for whole tiles.
const moeTile = 64

// MoE prices the routed experts of one layer: gate_up GEMM [hidden -> 2
// inter], silu(gate)*up, down GEMM [inter -> hidden] over the distinct
// experts the tokens touch (ExpectedDistinctExperts), plus permuting the
// token rows in and out. Weight bytes count touched experts only; compute
// counts rows padded to a 64-row tile per touched expert.
func (c *Coster) MoE(s MoEShape) Cost {
	if s.Tokens <= 0 || s.Experts <= 0 || s.TopK <= 0 || s.Hidden <= 0 || s.Inter <= 0 {
		return Cost{Source: c.offTable}
	}
	topk := min(s.TopK, s.Experts)
	dt := s.DType
	if dt == "" {
		dt = BF16
	}
	d := ExpectedDistinctExperts(s.Tokens, s.Experts, topk, s.Skew)
	h, in := f(s.Hidden), f(s.Inter)
	rows := f(s.Tokens) * f(topk)
	wb, ab := dt.Bytes(), c.gpu.activationDType(dt).Bytes()
	weights := d * 3 * h * in * wb
	// Per routed row: gate_up reads x and writes 2I, the activation reads 2I
	// and writes I, down reads I and writes H; plus gather and combine of
	// the token rows (read and write H each).
	act := rows*(h*ab+2*in*2+2*in*2+in*2+in*ab+h*2) + f(s.Tokens)*h*2*2
	padded := math.Max(d*moeTile, rows+d*moeTile/2)
	useful := 2 * rows * 3 * h * in
	rate, _ := c.gpu.ComputeRate(dt)
	cost := c.roofline(classMoE, dt, weights+act, 2*padded*3*h*in, rate)
	cost.FLOPs = useful
	if s.Skew == 0 {
		c.tables.adjust(&cost, classMoE, dt, lineKey{s.Experts, topk, s.Hidden, s.Inter, 0}, s.Tokens)
	}
	return cost
}

// AttentionShape is one attention layer on one GPU.
type AttentionShape struct {
	Batch, QLen, KVLen, Heads, KVHeads, HeadDim int
	KVDType                                     DType
	Prefill                                     bool // causal over QLen new tokens (KVLen includes them)
	MLA                                         bool // DeepSeek-style latent attention: KVHeads=1, HeadDim = kv_lora_rank + rope dim
}

// mlaRopeDim is the rotary part of an MLA head (DeepSeek-V3, Kimi-K2): the
// value projection uses the latent without it.
const mlaRopeDim = 64

// Attention prices attention of QLen new queries per sequence against
// KVLen cached tokens. Decode (QLen 1) and verify (QLen k+1) read each
// sequence's KV once for all its queries, as flash decoding kernels fold the
// query group into one tile; prefill is causal and usually compute-bound.
// MLA reads one latent vector per token shared by K and V.
func (c *Coster) Attention(s AttentionShape) Cost {
	if s.Batch <= 0 || s.QLen <= 0 || s.KVLen <= 0 || s.Heads <= 0 || s.HeadDim <= 0 {
		return Cost{Source: c.offTable}
	}
	kvDT := s.KVDType
	if kvDT == "" {
		kvDT = BF16
	}
	b, q, l, h, d := f(s.Batch), f(s.QLen), f(s.KVLen), f(s.Heads), f(s.HeadDim)
	kvh := f(max(s.KVHeads, 1))
	dv := d
	kvPerToken := 2 * kvh * d
	if s.MLA {
		kvPerToken = d
		if s.HeadDim > mlaRopeDim {
			dv = d - mlaRopeDim
		}
	}
	bytes := b*l*kvPerToken*kvDT.Bytes() + b*q*h*(d+dv)*BF16.Bytes()
	keys := l // keys each query attends to
	class := classAttention
	if s.Prefill {
		class = classPrefill
		q = math.Min(q, l)
		keys = l - q + (q+1)/2
	}
	flops := 2 * b * h * q * keys * (d + dv)
	rate, _ := c.gpu.ComputeRate(BF16) // FP8 KV is dequantized to BF16 for the math
	cost := c.roofline(class, kvDT, bytes, flops, rate)
	if !s.Prefill && !s.MLA {
		c.tables.adjust(&cost, classAttention, kvDT, lineKey{s.Batch, s.QLen, s.Heads, max(s.KVHeads, 1), s.HeadDim}, s.KVLen)
	}
	return cost
}

// GDNShape is one Gated DeltaNet (linear attention) layer on one GPU.
type GDNShape struct {
	Batch, QLen, KHeads, VHeads, KDim, VDim int
	KeepIntermediate                        bool  // verify: write the state after every token for rollback
	StateDType                              DType // recurrent state format; "" means FP32
}

// GatedDeltaNet prices the recurrent state update of QLen tokens per
// sequence: each value head's [KDim x VDim] state is read once and written
// once, or QLen times when the intermediate states are kept so that a
// rejected draft can roll back. Per token and head the update costs about
// 8*KDim*VDim FLOPs (decay, k^T S, the rank-1 correction and q^T S) on CUDA
// cores.
func (c *Coster) GatedDeltaNet(s GDNShape) Cost {
	if s.Batch <= 0 || s.QLen <= 0 || s.VHeads <= 0 || s.KDim <= 0 || s.VDim <= 0 {
		return Cost{Source: c.offTable}
	}
	sd := s.StateDType
	if sd == "" {
		sd = FP32
	}
	b, q, vh, kd, vd := f(s.Batch), f(s.QLen), f(s.VHeads), f(s.KDim), f(s.VDim)
	kh := f(max(s.KHeads, 1))
	writes := 1.0
	if s.KeepIntermediate {
		writes = q
	}
	state := b * vh * kd * vd * sd.Bytes() * (1 + writes)
	// q and k per key head, v and the output per value head, gate and beta.
	io := b * q * (2*kh*kd + 2*vh*vd + 2*vh) * BF16.Bytes()
	flops := 8 * b * q * vh * kd * vd
	rate, _ := c.gpu.ComputeRate(FP32)
	cost := c.roofline(classGDN, BF16, state+io, flops, rate)
	if s.KDim == s.VDim && sd == FP32 {
		c.tables.adjust(&cost, classGDN, BF16, lineKey{s.QLen, s.VHeads, max(s.KHeads, 1), s.KDim, boolInt(s.KeepIntermediate)}, s.Batch)
	}
	return cost
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// Norm prices an RMSNorm over tokens rows of hidden BF16 values (read the
// input and the weight, write the output). A fused residual-add norm moves
// twice the activations: price it as two.
func (c *Coster) Norm(tokens, hidden int) Cost {
	if tokens <= 0 || hidden <= 0 {
		return Cost{Source: c.offTable}
	}
	t, h := f(tokens), f(hidden)
	cost := c.roofline(classNorm, BF16, 2*t*h*2+2*h, 4*t*h, c.gpu.Peak[BF16])
	c.tables.adjust(&cost, classNorm, BF16, lineKey{hidden, 0, 0, 0, 0}, tokens)
	return cost
}

// Elementwise prices a memory-bound kernel that moves bytes in total
// (reads plus writes), like a copy of bytes/2.
func (c *Coster) Elementwise(bytes float64) Cost {
	if !(bytes > 0) {
		return Cost{Source: c.offTable}
	}
	cost := c.roofline(classCopy, BF16, bytes, 0, c.gpu.Peak[BF16])
	if half := bytes / 2; half < 1<<50 {
		c.tables.adjust(&cost, classCopy, BF16, lineKey{}, int(half))
	}
	return cost
}

// LMHeadSample prices the lm_head matmul over tokens rows, writing BF16
// logits, and greedy sampling (one more pass over the logits as FP32).
func (c *Coster) LMHeadSample(tokens, hidden, vocab int, dt DType) Cost {
	if tokens <= 0 || hidden <= 0 || vocab <= 0 {
		return Cost{Source: c.offTable}
	}
	if dt == "" {
		dt = BF16
	}
	t, h, v := f(tokens), f(hidden), f(vocab)
	ad := c.gpu.activationDType(dt)
	bytes := v*h*dt.Bytes() + t*h*ad.Bytes() + t*v*BF16.Bytes() + t*v*FP32.Bytes()
	rate, _ := c.gpu.ComputeRate(dt)
	cost := c.roofline(classLMHead, dt, bytes, 2*t*v*h, rate)
	c.tables.adjust(&cost, classLMHead, dt, lineKey{vocab, hidden, 0, 0, 0}, tokens)
	return cost
}

// Launch costs of kernels: without CUDA graphs each kernel pays the host
// launch path (PyTorch dispatch plus cudaLaunchKernel, 5-10 us; 6 us
// assumed), which is exposed whenever the GPU work per kernel is shorter.
// A CUDA graph replays them with one host launch (about 10 us) and a small
// per-node cost; the gaps between kernels inside a graph are already part of
// each op's fitted Fixed time.
const (
	defaultEagerLaunch    = 6e-6
	defaultGraphLaunch    = 10e-6
	defaultGraphPerKernel = 0.05e-6
)

// Launch prices launching kernels kernels, inside one CUDA graph or not.
func (c *Coster) Launch(kernels int, cudaGraph bool) Cost {
	if kernels <= 0 {
		return Cost{Source: SourceRoofline, Bound: "latency"}
	}
	if cudaGraph {
		return Cost{Seconds: c.graphLaunch + f(kernels)*c.graphPerKernel, Source: SourceRoofline, Bound: "latency"}
	}
	return Cost{Seconds: f(kernels) * c.eagerLaunch, Source: SourceRoofline, Bound: "latency"}
}
