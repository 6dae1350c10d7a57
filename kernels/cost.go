package kernels

import (
	"fmt"
	"math"
)

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
	// SourceExtrapolated: an engine-kernel table of this GPU outside its
	// measured range (held at the smallest size, proportional beyond the largest).
	SourceExtrapolated = "measured-extrapolated"
	// SourceTPEquivalent: an EP rank's MoE outside the token range of its
	// EP table, priced from the measured line of the TP shard with the same
	// expert work per rank (all experts at inter/EP).
	SourceTPEquivalent = "measured-tp-equivalent"
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
	note                                     string
	kind                                     string
	fitted                                   [numClasses][numSlots]int
	engine                                   *engineIndex // engine-kernel tables (enginetables.go); nil where none
	zipf                                     *zipfMemo
}

// Calibration says where the Coster's efficiencies come from, for output:
// measured tables of this GPU, another GPU's carried over, or defaults.
func (c *Coster) Calibration() string { return c.note }

// Calibration kinds (Coster.CalibrationKind).
const (
	CalibrationMeasured    = "measured"     // this GPU's measured tables
	CalibrationCarriedOver = "carried-over" // the H200's fitted efficiencies, scaled by datasheet figures
	CalibrationDefaults    = "defaults"     // no measured table in this build
)

// CalibrationKind is Calibration as one of the constants above.
func (c *Coster) CalibrationKind() string { return c.kind }

// GPU returns the figures the Coster prices with.
func (c *Coster) GPU() *GPU { return c.gpu.clone() }

// NewCoster prices ops on g with the calibrations of the catalog g came
// from: interpolating g's measured tables where the project has them,
// otherwise with efficiencies fitted to the H200's tables and carried over
// (Source "roofline-carried-over"). A GPU not from a catalog is priced with
// default efficiencies.
func NewCoster(g *GPU) *Coster {
	var cal, h *calibration
	if g.cal != nil {
		cal = g.cal.fit(g.Name)
		if cal == nil {
			h = g.cal.fit("h200")
		}
	}
	if cal == nil {
		// No table for this GPU: carry the H200's efficiencies over.
		if h != nil {
			coll := *h.coll
			coll.table = nil // measured lines belong to the H200's fabric
			carried := &calibration{eff: h.eff, coll: &coll}
			note := "efficiencies fitted on the H200's measured tables, carried over to " + g.Name + " by its datasheet bandwidth and peak rates; NVLink collectives scaled by link bandwidth"
			if sameSilicon(g, g.cal.cat, "h200") && h.tables != nil {
				// Same die, same kernels: the H200's kernel-by-kernel
				// departures from the roofline hold too, only the memory
				// system differs, and the roofline carries that.
				carried.tables = h.tables.withInside(SourceCarryOver)
				note += "; same GH100 die, so the H200's measured per-shape corrections apply as well"
			}
			c := newCoster(g, carried, SourceCarryOver)
			c.kind = CalibrationCarriedOver
			c.note = note
			return c
		}
		c := newCoster(g, nil, SourceRoofline)
		c.kind = CalibrationDefaults
		c.note = "datasheet roofline with default efficiencies (no measured table in this build)"
		return c
	}
	c := newCoster(g, cal, SourceRoofline)
	c.kind = CalibrationMeasured
	c.note = "measured tables kernels/data/" + g.Name + " (interpolated in the measured grid; elsewhere the fitted roofline, anchored to the nearest measured shape)"
	return c
}

// sameSilicon reports whether g has the compute die of the named catalog
// GPU (same architecture and dense rates; H100 SXM and H200 share GH100 and
// differ in HBM only).
func sameSilicon(g *GPU, cat *Catalog, name string) bool {
	o, err := cat.Lookup(name)
	if err != nil || g.Arch == "" || g.Arch != o.Arch || len(g.Peak) != len(o.Peak) {
		return false
	}
	for dt, v := range o.Peak {
		if g.Peak[dt] != v {
			return false
		}
	}
	return true
}

func newCoster(g *GPU, cal *calibration, offTable string) *Coster {
	c := &Coster{
		gpu:            *g.clone(),
		eff:            defaultEfficiencies(),
		offTable:       offTable,
		eagerLaunch:    defaultEagerLaunch,
		graphLaunch:    defaultGraphLaunch,
		graphPerKernel: defaultGraphPerKernel,
		zipf:           &zipfMemo{},
	}
	if cal != nil {
		c.eff = cal.eff
		c.fitted = cal.fitted
		c.tables = cal.tables
		c.coll = cal.coll
	}
	if c.coll == nil {
		c.coll = defaultCollectiveModel()
	}
	if g.cal != nil {
		c.engine = g.cal.engineIndex(g.Name)
	} else {
		c.engine = buildEngineIndex(g.Name)
	}
	return c
}

// ClassEfficiency is the efficiency one op class and dtype is priced with,
// and how many measured rows it was fitted on (0: a default, or borrowed
// from a measured dtype; see Coster.Efficiencies).
type ClassEfficiency struct {
	Class      string     `json:"class"`
	DType      DType      `json:"dtype"`
	Efficiency Efficiency `json:"efficiency"`
	FittedRows int        `json:"fitted_rows"`
}

// Efficiencies lists the efficiencies of every op class for BF16 and FP8
// (and NVFP4 where the GPU computes it natively).
func (c *Coster) Efficiencies() []ClassEfficiency {
	var out []ClassEfficiency
	dts := []DType{BF16, FP8}
	if c.gpu.Peak[NVFP4] > 0 {
		dts = append(dts, NVFP4)
	}
	for class := range numClasses {
		for _, dt := range dts {
			out = append(out, ClassEfficiency{Class: class.String(), DType: dt, Efficiency: c.eff[class][slotOf(dt)], FittedRows: c.fitted[class][slotOf(dt)]})
		}
	}
	return out
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
	return c.rooflineUnits(class, dt, bytes, flops, rate, 0)
}

func (c *Coster) rooflineUnits(class opClass, dt DType, bytes, flops, rate, units float64) Cost {
	t, bound := c.eff[class][slotOf(dt)].timeUnits(bytes/c.gpu.HBMBandwidth, flops/rate, units)
	return Cost{Seconds: t, Bytes: bytes, FLOPs: flops, Source: c.offTable, Bound: bound}
}

func f(i int) float64 { return float64(i) }

// GEMM prices y[M,N] = x[M,K] W[N,K]^T with dt weights: the weights are
// read once, activations in dt where the GPU computes in it natively (FP8,
// NVFP4 on Blackwell) and BF16 otherwise, BF16 output.
// FP8 weights are block-scaled as the FP8 checkpoints ship them (see
// hopperBlockFP8Mem).
// A dimension that is not positive is a [ShapeError].
func (c *Coster) GEMM(dt DType, m, n, k int) (Cost, error) {
	if err := ValidateGEMM(m, n, k); err != nil {
		return Cost{}, err
	}
	cost := c.tensorScaledGEMM(dt, m, n, k)
	if dt == FP8 {
		c.blockScaledFP8(&cost, c.eff[classGEMM][slotFP8].Fixed, f(n)*f(k))
	}
	return cost, nil
}

// tensorScaledGEMM is GEMM with per-tensor FP8 scales: what the H200
// collector timed (torch._scaled_mm) and what the tables are fitted to,
// of a valid shape (ValidateGEMM).
func (c *Coster) tensorScaledGEMM(dt DType, m, n, k int) Cost {
	cost := c.gemmRoofline(classGEMM, dt, m, n, k)
	gk, gc := gemmGrid(dt, m, n, k)
	c.tables.adjust(&cost, gk, gc)
	return cost
}

// hopperBlockFP8Mem is the share of HBM bandwidth a block-scaled FP8 GEMM
// (1x128 activation and 128x128 weight scales, the format of every FP8
// checkpoint this project knows: DeepSeek-V3/R1, Qwen3 FP8, GLM FP8,
// MiniMax) streams its weights at on Hopper, after the op's fixed time.
// SM90 tensor cores take no scales, so the kernels promote each 128-deep
// partial sum to FP32 on CUDA cores and rescale it there, which keeps them
// well short of the per-tensor-scaled kernels at decode sizes. Measured on
// the H200 (kernels/data/h200/fp8_blockscaled.csv, method in
// kernels/collect/NOTES.md): cuBLASLt's SM90 block-scaled GEMM through
// torch.nn.functional.scaled_mm on DeepSeek-V3's seven dense decode shapes
// at M <= 64 needs weights/(latency - 4.2 us fitted fixed time) = 0.52 of
// 4.8 TB/s (median of 49 rows; 0.24-0.69 by shape, thin N = 2048 slowest),
// 1.41x the per-tensor torch._scaled_mm latency of the same run. DeepGEMM,
// which SGLang and TensorRT-LLM run on Hopper, was not available there;
// its published H800 figures (0.71 of 3.35 TB/s at M = 64) suggest it
// streams faster, so this is the measured kernel, not an upper bound.
// Blackwell applies the scales in the MMA (tcgen05 block scaling) and
// keeps the fitted efficiencies.
const hopperBlockFP8Mem = 0.52

// blockScaledFP8 slows a memory-bound FP8 op on Hopper to the weight
// stream of block-scaled kernels: weightBytes cannot move faster than
// hopperBlockFP8Mem of HBM bandwidth, after fixed (the op's fixed time).
// Where that floor sets the time the cost is no longer the measured
// per-tensor interpolation, and its Source says so.
func (c *Coster) blockScaledFP8(cost *Cost, fixed, weightBytes float64) {
	if c.gpu.Arch != "hopper" || !(weightBytes > 0) {
		return
	}
	floor := fixed + weightBytes/(c.gpu.HBMBandwidth*hopperBlockFP8Mem)
	if floor > cost.Seconds {
		cost.Seconds, cost.Bound, cost.Source = floor, "memory", c.offTable
	}
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
	Tokens, Experts, TopK, Hidden, Inter int       // Experts and Inter as held by this GPU (EP, TP shards)
	DType                                DType     // expert weight format
	Skew                                 float64   // Zipf exponent of expert popularity; 0 = uniform
	Kernel                               MoEKernel // implementation priced; "" = MoEFused
	// EP is the expert-parallel size (0 or 1: none). With EP > 1 the shape
	// is one rank of a layer of Experts*EP experts: Tokens are the whole
	// batch (every rank sees every token), TopK the layer's picks per token
	// over all Experts*EP experts, of which this rank computes the ones it
	// holds (about TopK/EP per token).
	EP int
}

// maxMoEEP bounds MoEShape.EP.
const maxMoEEP = 1 << 16

// ep is s.EP with 0 read as 1.
func (s MoEShape) ep() int { return max(s.EP, 1) }

// MoEKernel is the implementation a MoE cost prices.
type MoEKernel string

const (
	// MoEFused is a serving engine's fused routed-expert kernels (SGLang
	// and vLLM fused_moe, FlashInfer/TensorRT-LLM): routing and alignment,
	// a grouped gate_up GEMM with the activation fused, a grouped down GEMM
	// with the combine. Priced with the dense-GEMM efficiencies fitted on
	// the H200 (a grouped GEMM over padded per-expert rows is a GEMM) and
	// the fixed time of fusedMoEKernels kernels. Divide by a Backend's
	// Efficiency for slower runners.
	MoEFused MoEKernel = "fused"
	// MoETorchGrouped is the PyTorch reference path the H200 collector
	// times (sort by expert, gather, torch._grouped_mm gate_up, silu*up,
	// grouped down, weighted combine): about ten kernels, 60-100 us of
	// fixed cost at decode sizes. Priced with the MoE efficiencies fitted
	// to, and interpolated in, the measured MoE table; "kernels validate"
	// scores this path.
	MoETorchGrouped MoEKernel = "torch-grouped"
	// MoETriton is SGLang's Triton fused MoE (fused_moe_triton), priced from
	// the GPU's measured moe_triton table where it covers the layer, else as
	// MoEFused.
	MoETriton MoEKernel = "triton"
)

// fusedMoEKernels is how many kernels a fused MoE layer launches.
const fusedMoEKernels = 3

// Row tiles of grouped GEMM kernels: each touched expert's rows are padded
// to one, so sparse decode batches pay for whole tiles. Engines' fused
// kernels pick small row tiles when experts get few tokens (Triton
// fused_moe BLOCK_SIZE_M 16, TensorRT-LLM's tile_tokens_dim from 8 up);
// PyTorch's grouped GEMM uses CUTLASS tiles of 64 or more.
const (
	fusedMoETile = 16
	torchMoETile = 64
)

// MoE prices the routed experts of one layer: gate_up GEMM [hidden -> 2
// inter], silu(gate)*up, down GEMM [inter -> hidden] over the distinct
// experts the tokens touch (ExpectedDistinctExperts), plus permuting the
// token rows in and out. Weight bytes count touched experts only; compute
// counts rows padded to the kernel's row tile per touched expert (half a
// tile wasted on average, a whole one at least). s.Kernel picks the
// implementation (an engine's fused kernels by default). A shape no kernel
// runs is a [ShapeError] (MoEShape.Validate).
func (c *Coster) MoE(s MoEShape) (Cost, error) {
	if err := s.Validate(); err != nil {
		return Cost{}, err
	}
	if cost, ok := c.engineMoE(s); ok {
		return cost, nil
	}
	return c.moe(s), nil
}

// moe is MoE's roofline of a valid shape. An EP rank (s.EP > 1, uniform
// routing: Validate refuses skew there) touches each of its experts with
// the probability a token picks that expert, TopK/(Experts*EP), so it
// touches 1/EP of the layer's expected distinct experts and computes
// Tokens*TopK/EP routed rows in expectation; it still gathers and combines
// every token's row (SGLang's StandardDispatcher hands every rank all
// tokens, other ranks' experts filtered out).
func (c *Coster) moe(s MoEShape) Cost {
	topk := s.TopK
	dt := s.DType
	if dt == "" {
		dt = BF16
	}
	ep := s.ep()
	d := expectedDistinct(c.zipf, s.Tokens, s.Experts*ep, topk, s.Skew) / f(ep)
	h, in := f(s.Hidden), f(s.Inter)
	rows := f(s.Tokens) * f(topk) / f(ep)
	wb, ab := dt.Bytes(), c.gpu.activationDType(dt).Bytes()
	weights := d * 3 * h * in * wb
	// Per routed row: gate_up reads x and writes 2I, the activation reads 2I
	// and writes I, down reads I and writes H; plus gather and combine of
	// the token rows (read and write H each).
	act := rows*(h*ab+2*in*2+2*in*2+in*2+in*ab+h*2) + f(s.Tokens)*h*2*2
	tile := float64(fusedMoETile)
	if s.Kernel == MoETorchGrouped {
		tile = torchMoETile
	}
	padded := math.Max(d*tile, rows+d*tile/2)
	useful := 2 * rows * 3 * h * in
	rate, _ := c.gpu.ComputeRate(dt)
	if s.Kernel == MoETorchGrouped {
		cost := c.roofline(classMoE, dt, weights+act, 2*padded*3*h*in, rate)
		cost.FLOPs = useful
		if s.Skew == 0 && ep == 1 {
			gk, gc := s.grid()
			c.tables.adjust(&cost, gk, gc)
		}
		return cost
	}
	e := c.eff[classGEMM][slotOf(dt)]
	e.Fixed *= fusedMoEKernels
	t, bound := e.time((weights+act)/c.gpu.HBMBandwidth, 2*padded*3*h*in/rate)
	cost := Cost{Seconds: t, Bytes: weights + act, FLOPs: useful, Source: c.offTable, Bound: bound}
	if dt == FP8 {
		c.blockScaledFP8(&cost, e.Fixed, weights)
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

// mlaDecodeCompute is the compute efficiency of MLA decode kernels on
// Hopper: FlashMLA's dense decode reaches 660 of 989 dense BF16 TFLOP/s on
// an H800 (deepseek-ai/FlashMLA README).
const mlaDecodeCompute = 660.0 / 989

// mlaBlackwellRatio is how much of its Hopper rate an MLA decode kernel
// reaches on Blackwell: FlashMLA has no dense decode kernel for SM100, and
// its sparse decode kernel (same MQA-mode math, BF16 MMA) reaches 350
// TFLOP/s on a B200 against 410 on an H800 (FlashMLA README, "not really
// optimized yet"). Blackwell's doubled tensor peak is not reached by the
// MLA decode kernels published for it, so on Blackwell MLA decode runs at
// 660 x 350/410 = 563 TFLOP/s, not at two thirds of 2.25 PFLOP/s. No fit:
// both figures are the kernel authors' benchmarks.
const mlaBlackwellRatio = 350.0 / 410

// mlaDecodeRate is the BF16 FLOP/s of compute-bound MLA decode on g.
func mlaDecodeRate(g *GPU) float64 {
	hopperRate := mlaDecodeCompute * 989e12
	if g.Arch == "blackwell" {
		return math.Min(mlaDecodeCompute*g.Peak[BF16], mlaBlackwellRatio*hopperRate)
	}
	return mlaDecodeCompute * g.Peak[BF16]
}

// mmaRows is the row count of a warpgroup tensor-core tile (wgmma M = 64).
const mmaRows = 64

// mlaRopeDim is the rotary part of an MLA head (DeepSeek-V3, Kimi-K2): the
// value projection uses the latent without it.
const mlaRopeDim = 64

// Attention prices attention of QLen new queries per sequence against
// KVLen cached tokens. Decode (QLen 1) and verify (QLen k+1) read each
// sequence's KV once for all its queries, as flash decoding kernels fold the
// query group into one tile; prefill is causal and usually compute-bound.
// MLA reads one latent vector per token shared by K and V. A shape no
// kernel runs is a [ShapeError] (AttentionShape.Validate).
func (c *Coster) Attention(s AttentionShape) (Cost, error) {
	if err := s.Validate(); err != nil {
		return Cost{}, err
	}
	return c.attention(s), nil
}

func (c *Coster) attention(s AttentionShape) Cost {
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
	// Decode kernels fold each KV head's query group (q_len x heads/kv_heads
	// rows) into one tile of the tensor-core instruction, 64 rows on Hopper
	// and Blackwell: a GQA group of 8 with one query fills an eighth of it,
	// MLA's 128 heads fill it. Compute is priced on padded rows.
	work := flops
	if !s.Prefill {
		rows := q * h / kvh
		if s.MLA {
			rows = q * h
		}
		work = flops * math.Ceil(rows/mmaRows) * mmaRows / rows
	}
	// An FP8 KV cache halves the bytes read and is never slower in the
	// math than BF16, in every kernel SGLang v0.5.14 picks for it
	// (server_args.py ServerArgs._get_default_attn_backend and, for
	// Qwen3.5, _handle_model_specific_adjustments): FA3 on Hopper casts Q
	// to FP8 and runs FP8 tensor-core MMAs (flashattention_backend.py
	// FlashAttentionBackend.forward_decode/forward_extend, k_descale and
	// v_descale); trtllm-gen on Blackwell quantizes Q to FP8 likewise
	// (trtllm_mha_backend.py TRTLLMHAAttnBackend._maybe_quantize_q);
	// Triton's grouped decode casts Q to the cache dtype before tl.dot
	// (triton_ops/decode_attention.py _fwd_grouped_kernel_stage1).
	// Without measured FP8 rows the math is priced at the BF16 rate and
	// efficiency, and the BF16 table's per-shape correction, so FP8 KV
	// costs at most what BF16 does for the same shape. (FA3's MLA path, DeepSeek on Hopper, instead
	// casts the layer's whole FP8 pool to BF16 before the kernel,
	// flashattention_backend.py forward_decode "absorbed multi-latent
	// attention": a pool-sized copy this shape cannot price.)
	rate, _ := c.gpu.ComputeRate(BF16)
	var cost Cost
	if s.MLA && !s.Prefill {
		// The H200 table has no MLA rows (PyTorch has no flash kernel for
		// a 576-wide head); dedicated MLA decode kernels are compute-
		// efficient (mlaDecodeRate).
		e := c.eff[class][slotOf(kvDT)]
		e.Compute = mlaDecodeRate(&c.gpu) / rate
		t, bound := e.timeUnits(bytes/c.gpu.HBMBandwidth, work/rate, attentionUnits(s))
		cost = Cost{Seconds: t, Bytes: bytes, Source: c.offTable, Bound: bound}
	} else {
		cost = c.rooflineUnits(class, kvDT, bytes, work, rate, attentionUnits(s))
	}
	cost.FLOPs = flops
	if !s.Prefill && !s.MLA {
		gk, gc := s.grid()
		if gk.slot != slotBF16 && !c.tables.has(classAttention, gk.slot) {
			// No table of this KV dtype: the BF16 table's correction for
			// the same shape, whose kernel does the same math (above). The
			// cost stays a roofline: nothing of this dtype was measured.
			gk.slot = slotBF16
			src := cost.Source
			c.tables.adjust(&cost, gk, gc)
			cost.Source = src
		} else {
			c.tables.adjust(&cost, gk, gc)
		}
	}
	return cost
}

// attentionUnits are the independent work units an attention kernel
// spreads over the SMs: (sequence, KV head) pairs for decode, with MLA
// sharing one latent head; (sequence, query head, 128-query tile) for
// prefill.
func attentionUnits(s AttentionShape) float64 {
	switch {
	case s.Prefill:
		return f(s.Batch) * f(s.Heads) * math.Ceil(f(s.QLen)/128)
	case s.MLA:
		return f(s.Batch)
	}
	return f(s.Batch) * f(max(s.KVHeads, 1))
}

// GDNShape is one Gated DeltaNet (linear attention) layer on one GPU.
type GDNShape struct {
	Batch, QLen, KHeads, VHeads, KDim, VDim int
	KeepIntermediate                        bool  // verify: write the state after every token for rollback
	StateDType                              DType // recurrent state format; "" means FP32
}

// GatedDeltaNet prices the Gated DeltaNet kernel of QLen tokens per
// sequence. Where the GPU has engine-kernel tables for the head layout it
// is the engine's measured kernel of the mode the shape implies (one token
// decode, KeepIntermediate verify, 17 or more tokens the chunked prefill
// kernel; GPU time, see GDN); otherwise the reference model: each value
// head's [KDim x VDim] state is read once and written once, or QLen times
// when the intermediate states are kept so that a rejected draft can roll
// back, and per token and head the update costs about 8*KDim*VDim FLOPs
// (decay, k^T S, the rank-1 correction and q^T S) on CUDA cores. A shape
// no kernel runs is a [ShapeError] (GDNShape.Validate).
func (c *Coster) GatedDeltaNet(s GDNShape) (Cost, error) {
	if err := s.Validate(); err != nil {
		return Cost{}, err
	}
	if m, ok := gdnModeOf(s); ok {
		if g, ok := c.engineGDN(s, m); ok {
			return g.Cost, nil
		}
	}
	return c.gdnReference(s), nil
}

// gdnReference is GatedDeltaNet's reference model of a valid shape (the
// roofline, interpolated in ops.csv's reference-kernel rows where they
// cover the shape): what PredictRow's gdn rows are.
func (c *Coster) gdnReference(s GDNShape) Cost {
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
	cost := c.rooflineUnits(classGDN, BF16, state+io, flops, rate, b*vh)
	if s.KDim == s.VDim && sd == FP32 {
		gk, gc := s.grid()
		c.tables.adjust(&cost, gk, gc)
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
// twice the activations: price it as two. A dimension that is not
// positive is a [ShapeError].
func (c *Coster) Norm(tokens, hidden int) (Cost, error) {
	if err := ValidateNorm(tokens, hidden); err != nil {
		return Cost{}, err
	}
	return c.norm(tokens, hidden), nil
}

func (c *Coster) norm(tokens, hidden int) Cost {
	t, h := f(tokens), f(hidden)
	cost := c.roofline(classNorm, BF16, 2*t*h*2+2*h, 4*t*h, c.gpu.Peak[BF16])
	gk, gc := normGrid(tokens, hidden)
	c.tables.adjust(&cost, gk, gc)
	return cost
}

// Elementwise prices a memory-bound kernel that moves bytes in total
// (reads plus writes), like a copy of bytes/2. bytes that are not a
// positive finite number are a [ShapeError].
func (c *Coster) Elementwise(bytes float64) (Cost, error) {
	if !(bytes > 0) || math.IsInf(bytes, 1) {
		return Cost{}, &ShapeError{"elementwise", []string{"bytes"}, fmt.Sprintf("needs positive finite bytes, got %g", bytes)}
	}
	return c.elementwise(bytes), nil
}

func (c *Coster) elementwise(bytes float64) Cost {
	cost := c.roofline(classCopy, BF16, bytes, 0, c.gpu.Peak[BF16])
	if half := bytes / 2; half < 1<<50 {
		gk, gc := copyGrid(int(half))
		c.tables.adjust(&cost, gk, gc)
	}
	return cost
}

// lmHeadRowTile is the row tile of the vocabulary-wide lm_head GEMM: with
// N in the tens of thousands cuBLAS runs large tiles, and a batch of 400
// rows computes as 512 (the H200 measurements between powers of two show
// it; held-aside lm_head error 6% -> 3% median). Dense GEMMs pick tiles
// per shape and are priced unpadded.
const lmHeadRowTile = 128

// paddedRows is the row count a GEMM's tensor cores compute with row tile
// tile. Batches within one tile run narrower tiles (and are memory-bound
// anyway), so only rows beyond one tile are padded.
func paddedRows(m, tile int) float64 {
	if m <= tile {
		return f(m)
	}
	return math.Ceil(f(m)/f(tile)) * f(tile)
}

// LMHeadSample prices the lm_head matmul over tokens rows, writing BF16
// logits, and greedy sampling (one more pass over the logits as FP32). A
// dimension that is not positive is a [ShapeError].
func (c *Coster) LMHeadSample(tokens, hidden, vocab int, dt DType) (Cost, error) {
	if err := ValidateLMHead(tokens, hidden, vocab); err != nil {
		return Cost{}, err
	}
	return c.lmHeadSample(tokens, hidden, vocab, dt), nil
}

func (c *Coster) lmHeadSample(tokens, hidden, vocab int, dt DType) Cost {
	if dt == "" {
		dt = BF16
	}
	t, h, v := f(tokens), f(hidden), f(vocab)
	ad := c.gpu.activationDType(dt)
	bytes := v*h*dt.Bytes() + t*h*ad.Bytes() + t*v*BF16.Bytes() + t*v*FP32.Bytes()
	rate, _ := c.gpu.ComputeRate(dt)
	cost := c.roofline(classLMHead, dt, bytes, 2*paddedRows(tokens, lmHeadRowTile)*v*h, rate)
	cost.FLOPs = 2 * t * v * h
	gk, gc := lmHeadGrid(dt, tokens, hidden, vocab)
	c.tables.adjust(&cost, gk, gc)
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
