package simulate

import (
	"fmt"
	"math"
	"slices"

	"github.com/specsim/specsim/kernels"
)

// Engine prices the forwards of one serving instance: a model split by a
// Parallel layout on one GPU type, with its target and draft precisions.
// Step times are memoized, so an Engine is not safe for concurrent use.
type Engine struct {
	h200 *h200Ref // the catalog's H200, for carried-over kernel figures (allreduce.go)

	Model  *Model
	GPU    *kernels.GPU
	Coster *kernels.Coster
	Par    Parallel
	Target WeightDTypes
	Draft  WeightDTypes
	KV     kernels.DType
	SSM    kernels.DType // linear-attention state format
	// TargetMoEEff and DraftMoEEff divide MoE time: the runner backend's
	// efficiency relative to the best kernel for that dtype (a BF16 draft
	// falls back to a slower backend than the NVFP4 target's).
	TargetMoEEff, DraftMoEEff float64
	DraftBackend              string
	TargetBackend             string
	DraftFellBack             bool
	// EngineName is the serving engine ("sglang", "vllm", "trtllm").
	EngineName string
	// CUDAGraphMaxBS: decode batches up to this size replay a CUDA graph
	// (no per-kernel launch cost); larger ones launch eagerly.
	CUDAGraphMaxBS int
	// SchedOverhead is host time per engine iteration that the GPU waits
	// for (scheduling, sampling bookkeeping); SpecOverhead is added per
	// speculative iteration (draft/verify hand-offs the overlap scheduler
	// cannot hide).
	SchedOverhead, SpecOverhead float64
	MoESkew                     float64
	// LayerGap is the fixed time per decoder layer and forward (layerGap,
	// moved by a calibration's layer_fixed_us).
	LayerGap float64
	// AllReduceFusion: SGLang runs FlashInfer's all-reduce fusion
	// (resolveFusion: the engine's own rule or the flags); FusionNote says
	// why it is on or off ("" for other engines).
	AllReduceFusion bool
	FusionNote      string
	// SpecV2: SGLANG_ENABLE_SPEC_V2=1, the overlap scheduler for
	// speculative decoding.
	SpecV2 bool

	steps memoTable[Breakdown] // DecodeStep's, by stepKey
	// recent holds DecodeStep's most recent keys and values: successive
	// steps of an instance mostly repeat their key, and the instances
	// that share the Engine take turns.
	recent      stepCache
	memories    map[memoryKey]Memory   // plannedMemory's
	prefillMemo map[prefillKey]float64 // prefillTime's, by keys prefillTable cannot pack
	// prefillTable is prefillTime's memo by packed key (prefillKey.packed).
	prefillTable memoTable[float64]
	pm           prefillMemos // enginememo.go
	om           opMemos      // engineops.go
	layerKinds   *layerKinds
	shared       *sweepMemo   // a sweep's, shared with other workers' engines (nil: none)
	shards       engineShards // shared's of the engine's Parallel (sharedShards)
	shapeErr     error        // the first shape no kernel runs (engineops.go)
}

// stepKey packs DecodeStep's memo key: batch, draft length and ctx/256,
// each in its own bits, and 0 for none (the bounds are checked where
// it is used).
func stepKey(batch, k, ctx256 int) uint64 {
	return uint64(batch)<<40 | uint64(k)<<32 | uint64(ctx256)
}

// Breakdown is the time of one engine iteration by part, in seconds.
type Breakdown struct {
	Draft         float64 // all draft forwards of the iteration
	Attention     float64 // target: attention kernels and their projections
	MoE           float64 // target: routed experts (+ router)
	DenseGEMM     float64 // target: shared experts and dense MLP layers
	GDN           float64 // target: Gated DeltaNet projections and state updates
	LMHead        float64 // target: lm_head and sampling
	Norms         float64 // target: RMSNorms and elementwise
	Communication float64 // target: collectives and pipeline hand-offs
	Overhead      float64 // launches, inter-kernel gaps (layerGap) and host scheduling
	// The split of Overhead (not added again by Total): host launches not
	// hidden by a CUDA graph, the per-layer inter-kernel gaps, and host
	// scheduling the GPU waits for.
	Launch, Gap, Host float64
}

// Total is the iteration time in seconds.
func (b Breakdown) Total() float64 {
	return b.Draft + b.Attention + b.MoE + b.DenseGEMM + b.GDN + b.LMHead + b.Norms + b.Communication + b.Overhead
}

func (b Breakdown) plus(o Breakdown) Breakdown {
	return Breakdown{b.Draft + o.Draft, b.Attention + o.Attention, b.MoE + o.MoE, b.DenseGEMM + o.DenseGEMM,
		b.GDN + o.GDN, b.LMHead + o.LMHead, b.Norms + o.Norms, b.Communication + o.Communication, b.Overhead + o.Overhead,
		b.Launch + o.Launch, b.Gap + o.Gap, b.Host + o.Host}
}

// EngineConfig chooses an Engine's precision and engine knobs.
type EngineConfig struct {
	Precision Precision
	// DraftDType overrides the draft's shipped precision ("" keeps it).
	DraftDType kernels.DType
	KVDType    kernels.DType // "" = fp8 (the KV dtype InferenceX recipes set)
	EngineName string        // "sglang" (default), "vllm", "trtllm": picks MoE backends
	// MoEBackend and SpecMoEBackend are --moe-runner-backend and
	// --speculative-moe-runner-backend ("" = unset: the engine's default,
	// and the draft inherits the target's).
	MoEBackend, SpecMoEBackend string
	CUDAGraphMaxBS             int     // 0 = DefaultCUDAGraphMaxBS
	SchedOverhead              float64 // seconds; <0 = default
	SpecOverhead               float64 // seconds; <0 = default
	MoESkew                    float64
	// Calibration, when set, shifts fixed costs and scales kernel
	// rates on top of the cost model (see CalParams.apply).
	Calibration *CalParams
	// SSMDType is the linear-attention recurrent state's format (SGLang
	// --mamba-ssm-dtype): "" = bf16, what every InferenceX Qwen3.5 recipe
	// sets (SGLang's own default, and config.json's mamba_ssm_dtype, is
	// float32). It sizes the state pool and its speculative copies and
	// prices the bytes the state update moves.
	SSMDType kernels.DType
	// AllReduceFusion is SGLang's --enable-flashinfer-allreduce-fusion
	// (forces the fusion on: the RMSNorms after each TP all-reduce run
	// inside it) and NoAllReduceFusion its
	// --enforce-disable-flashinfer-allreduce-fusion (wins); with neither,
	// SGLang's own rule decides per instance (sglangAutoFusion).
	AllReduceFusion, NoAllReduceFusion bool
	// SpecV2 is SGLANG_ENABLE_SPEC_V2=1 (SGLang's speculative decoding on
	// the overlap scheduler): the default SpecOverhead becomes 0.
	SpecV2 bool
	// KernelTables (--kernel-table): measured kernels of this GPU from
	// AIConfigurator's databases; nil prices with the embedded tables.
	KernelTables *kernels.AICImport
}

// Host overheads per iteration. SGLang's overlap scheduler hides most host
// work of plain decode; speculative iterations serialize draft, verify and
// the draft-extend hand-off. Both are assumptions (not measured here); the
// flags --sched-overhead-ms and --spec-overhead-ms change them.
const (
	defaultSchedOverhead = 0.15e-3
	defaultSpecOverhead  = 0.35e-3
)

// NewEngine builds the cost model of one instance.
func NewEngine(m *Model, g *kernels.GPU, p Parallel, c EngineConfig) (*Engine, error) {
	if err := m.Validate(); err != nil {
		return nil, err
	}
	if err := p.fits(m); err != nil {
		return nil, err
	}
	e := &Engine{Model: m, GPU: g, Coster: kernels.NewCoster(g), Par: p,
		Target: m.TargetDTypes(c.Precision), Draft: m.DraftDTypes(c.Precision, c.DraftDType),
		KV: c.KVDType, CUDAGraphMaxBS: c.CUDAGraphMaxBS, MoESkew: c.MoESkew,
		SchedOverhead: c.SchedOverhead, SpecOverhead: c.SpecOverhead}
	if c.KernelTables != nil {
		e.Coster = kernels.CosterFromAIC(g, c.KernelTables)
	}
	if e.KV == "" {
		e.KV = "fp8"
	}
	e.SSM = c.SSMDType
	if e.SSM == "" {
		e.SSM = kernels.BF16
	}
	if e.CUDAGraphMaxBS <= 0 {
		e.CUDAGraphMaxBS = DefaultCUDAGraphMaxBS
	}
	if e.SchedOverhead < 0 {
		e.SchedOverhead = defaultSchedOverhead
	}
	if e.SpecOverhead < 0 {
		e.SpecOverhead = defaultSpecOverhead
		if c.SpecV2 && (c.EngineName == "" || c.EngineName == "sglang") {
			e.SpecOverhead = 0 // the overlap scheduler hides it (fixedcost.go)
		}
	}
	e.LayerGap = layerGap
	c.Calibration.apply(e)
	e.SpecV2 = c.SpecV2
	engine := c.EngineName
	if engine == "" {
		engine = "sglang"
	}
	if why := g.NoFP4(); c.Precision == FP4 && why != "" {
		return nil, &Error{Field: "Precision", Value: string(c.Precision), Reason: why}
	}
	// Architecture and quantization let the engine's model-specific rules
	// resolve an unset (auto) backend as it does at start-up (SGLang
	// v0.5.14 _handle_model_specific_adjustments: Qwen3.5 or DeepSeek-V3
	// on SM100 -> flashinfer_trtllm, which the draft then inherits).
	launch := kernels.MoELaunch{Engine: engine, Backend: c.MoEBackend, SpecBackend: c.SpecMoEBackend, GPUArch: g.Arch,
		Architecture: m.HFArch, Quantization: releaseQuantization(c.Precision)}
	e.EngineName = engine
	if e.deepEP() {
		// DeepEP all-to-all: SGLang's model rules (which need
		// --moe-a2a-backend none) do not apply, and an auto backend keeps
		// block-FP8 experts on DeepGEMM (fp8.py
		// is_deepgemm_moe_runner_backend_enabled).
		launch.A2A = "deepep"
		if (c.MoEBackend == "" || c.MoEBackend == "auto") && e.Target.Experts == kernels.FP8 {
			launch.Backend = "deep_gemm"
		}
	}
	tc, err := kernels.ResolveTargetMoE(launch, e.Target.Experts)
	if err != nil {
		return nil, fmt.Errorf("target MoE backend: %w", err)
	}
	// The draft's MoE runs on the backend the target asked for unless the
	// draft has its own; a format that backend does not take falls back
	// (SGLang: BF16 on flashinfer_cutedsl -> Triton).
	dc, err := kernels.ResolveDraftMoE(launch, e.Draft.Experts)
	if err != nil {
		return nil, fmt.Errorf("draft MoE backend: %w", err)
	}
	tb, db, fell := tc.Backend, dc.Backend, dc.FellBack
	e.TargetMoEEff, e.DraftMoEEff = positiveOr(tb.Efficiency, 1), positiveOr(db.Efficiency, 1)
	e.DraftBackend, e.DraftFellBack = db.Name, fell
	e.TargetBackend = tb.Name
	e.EngineName = engine
	e.AllReduceFusion, e.FusionNote = e.resolveFusion(c)
	return e, nil
}

func positiveOr(v, def float64) float64 {
	if v > 0 && !math.IsInf(v, 0) && !math.IsNaN(v) {
		return v
	}
	return def
}

// shape is one forward: seqs sequences of the instance, q new tokens each,
// attending to ctx earlier tokens (ctx excludes the q new ones).
type shape struct {
	seqs, q, ctx int
	verify       bool // linear attention keeps q intermediate states
	prefill      bool // causal prefill kernels, no CUDA graph
	logits       int  // rows that go through lm_head (all tokens in decode; one per request in prefill)
}

// ceilDiv for positive ints.
func ceilDiv(a, b int) int { return (a + b - 1) / b }

// layerCost prices one target decoder layer l for shape s on one GPU.
func (e *Engine) layerCost(l int, s shape, w WeightDTypes, moeEff float64) Breakdown {
	m, p, c := e.Model, e.Par, e.ops()
	seqsRank := ceilDiv(s.seqs, p.AttentionDP())
	ta := seqsRank * s.q // tokens on one attention rank
	tAll := s.seqs * s.q
	var b Breakdown
	switch {
	case e.pm.noMixers:
	case m.isFullAttention(l):
		b.Attention = e.attention(ta, seqsRank, s, w.Attention)
	default:
		b.GDN = e.linearAttention(ta, seqsRank, s, w.Attention)
	}
	// Feed-forward.
	mlpTokens, mlpTP := tAll, p.TP
	if p.DPAttention {
		mlpTokens, mlpTP = ta, 1
	}
	switch {
	case l < m.DenseLayers || m.Experts == 0:
		inter := m.DenseInter
		b.DenseGEMM = e.mlp(mlpTokens, inter/mlpTP, w.Dense)
	default:
		b.MoE = e.moe(ta, tAll, w.Experts, moeEff, false)
		if m.SharedExperts > 0 {
			b.DenseGEMM = e.mlp(mlpTokens, m.SharedExperts*m.SharedInter/mlpTP, w.Shared)
		}
	}
	b.Norms = float64(2-e.fusedNorms(tAll))*c.Norm(ta, m.Hidden).Seconds + e.auxKernels(l, ta, w)
	b.Communication = e.layerComm(ta, tAll)
	return b
}

// auxKernels prices the small kernels of a decoder layer that no GEMM,
// attention, MoE or norm above covers: the rotary embedding with the KV
// cache write, the two extra RMSNorms (MLA's q_a and kv_a latents, GQA's
// per-head q and k norms), the activation quantization in front of each
// block that runs quantized weights, and the router's top-k. Each is an
// activation-sized pass, so at decode sizes each costs the minimum time of
// a kernel (the measured H200 copy table's fixed time) even inside a CUDA
// graph; leaving them out made batch-1 steps ~0.7 ms too short.
func (e *Engine) auxKernels(l, ta int, w WeightDTypes) float64 {
	m := e.Model
	n := 1 // rope + KV cache write (or the linear-attention conv-state update)
	if m.isFullAttention(l) && (m.Attention != GQA || m.HeadDim > 0) {
		n += 2
	}
	if w.Attention != "bf16" {
		n++
	}
	moeLayer := l >= m.DenseLayers && m.Experts > 0
	if moeLayer {
		n++ // top-k routing
	}
	if (moeLayer && w.Experts != "bf16") || (!moeLayer && w.Dense != "bf16") {
		n++
	}
	return float64(n) * e.ops().Elementwise(float64(ta*m.Hidden)*2*2).Seconds
}

// attention prices projections and the attention kernel of a full layer.
func (e *Engine) attention(ta, seqs int, s shape, dt kernels.DType) float64 {
	return e.attentionWith(e.attentionProj(ta, dt), seqs, s)
}

// attnProj is the projections' part of attention, which reads the
// rank's token count alone: the GEMMs before the attention kernels summed
// in attention's order (pre), and the two after it, with the first shape
// error of each side, which attentionWith reports in attention's order.
type attnProj struct {
	pre, post1, post2 float64
	preErr, postErr   error
}

func (e *Engine) attentionProj(ta int, dt kernels.DType) attnProj {
	m, c := e.Model, e.ops()
	at := e.Par.AttentionTP()
	var p attnProj
	saved := e.shapeErr
	e.shapeErr = nil
	defer func() { e.shapeErr = saved }()
	t := 0.0
	switch m.Attention {
	case GQA:
		heads := m.Heads / at
		kvHeads := max(m.KVHeads/at, 1)
		gate := 1
		if m.OutputGate {
			gate = 2
		}
		t += c.GEMM(dt, ta, heads*m.HeadDim*gate+2*kvHeads*m.HeadDim, m.Hidden).Seconds
		p.preErr, e.shapeErr = e.shapeErr, nil
		p.post1 = c.GEMM(dt, ta, m.Hidden, heads*m.HeadDim).Seconds
	case MLA, DSA:
		heads := m.Heads / at
		qIn := m.Hidden
		if m.QLoRA > 0 {
			qIn = m.QLoRA
		}
		// Fused q_a + kv_a (replicated), then q_b, the absorbed k and v
		// up-projections, and o_proj.
		t += c.GEMM(dt, ta, m.QLoRA+m.KVLoRA+m.RopeDim, m.Hidden).Seconds
		t += c.GEMM(dt, ta, heads*(m.NopeDim+m.RopeDim), qIn).Seconds
		t += c.GEMM(dt, ta, heads*m.KVLoRA, m.NopeDim).Seconds
		if m.Attention == DSA {
			t += c.GEMM(dt, ta, m.IndexHeads*m.IndexHeadDim+m.IndexHeadDim, qIn).Seconds
		}
		p.preErr, e.shapeErr = e.shapeErr, nil
		p.post1 = c.GEMM(dt, ta, heads*m.VHeadDim, m.KVLoRA).Seconds
		p.post2 = c.GEMM(dt, ta, m.Hidden, heads*m.VHeadDim).Seconds
	}
	p.pre, p.postErr = t, e.shapeErr
	return p
}

// attentionWith adds the attention kernels for shape s to projections p,
// in attention's order of addition.
func (e *Engine) attentionWith(p attnProj, seqs int, s shape) float64 {
	m, c := e.Model, e.ops()
	at := e.Par.AttentionTP()
	kvLen := s.ctx + s.q
	t := p.pre
	c.keep(kernels.Cost{}, p.preErr)
	defer c.keep(kernels.Cost{}, p.postErr)
	switch m.Attention {
	case GQA:
		heads := m.Heads / at
		kvHeads := max(m.KVHeads/at, 1)
		t += c.Attention(kernels.AttentionShape{Batch: seqs, QLen: s.q, KVLen: kvLen, Heads: heads,
			KVHeads: kvHeads, HeadDim: m.HeadDim, KVDType: e.KV, Prefill: s.prefill}).Seconds
		t += p.post1
	case MLA, DSA:
		heads := m.Heads / at
		attLen := kvLen
		if m.Attention == DSA {
			attLen = min(kvLen, m.IndexTopK)
			t += c.Attention(kernels.AttentionShape{Batch: seqs, QLen: s.q, KVLen: kvLen, Heads: m.IndexHeads,
				KVHeads: 1, HeadDim: m.IndexHeadDim, KVDType: "fp8", Prefill: s.prefill, MLA: true}).Seconds
		}
		t += c.Attention(kernels.AttentionShape{Batch: seqs, QLen: s.q, KVLen: attLen, Heads: heads,
			KVHeads: 1, HeadDim: m.KVLoRA + m.RopeDim, KVDType: e.KV, Prefill: s.prefill, MLA: true}).Seconds
		t += p.post1
		t += p.post2
	}
	return t
}

// linearAttention prices a Gated DeltaNet layer: projections, the causal
// convolution and the recurrent state update.
func (e *Engine) linearAttention(ta, seqs int, s shape, dt kernels.DType) float64 {
	m, c := e.Model, e.ops()
	at := e.Par.AttentionTP()
	kh, vh := max(m.LinearKHeads/at, 1), m.LinearVHeads/at
	qkvz := 2*kh*m.LinearKDim + 2*vh*m.LinearVDim
	t := c.GEMM(dt, ta, qkvz+2*vh, m.Hidden).Seconds
	convCh := 2*kh*m.LinearKDim + vh*m.LinearVDim
	t += c.Elementwise(float64(ta*convCh) * 2 * 2).Seconds
	gb, gq := seqs, s.q
	if s.prefill {
		gb, gq = 1, ta
		if g, _, ok := e.gdnPrefillMemo(ta); ok {
			return t + g + c.GEMM(dt, ta, m.Hidden, vh*m.LinearVDim).Seconds
		}
	}
	t += c.GatedDeltaNet(kernels.GDNShape{Batch: gb, QLen: gq, KHeads: kh, VHeads: vh,
		KDim: m.LinearKDim, VDim: m.LinearVDim, KeepIntermediate: s.verify && s.q > 1, StateDType: e.SSM}).Seconds
	t += c.GEMM(dt, ta, m.Hidden, vh*m.LinearVDim).Seconds
	return t
}

// mlp prices a gated MLP (gate_up then down) of intermediate size inter.
func (e *Engine) mlp(tokens, inter int, dt kernels.DType) float64 {
	if inter <= 0 || tokens <= 0 {
		return 0
	}
	c, h := e.ops(), e.Model.Hidden
	return c.GEMM(dt, tokens, 2*inter, h).Seconds + c.GEMM(dt, tokens, h, inter).Seconds
}

// moe prices the router and the routed experts one GPU holds (the
// draft's when draft is set).
func (e *Engine) moe(ta, tAll int, dt kernels.DType, eff float64, draft bool) float64 {
	m, p, c := e.Model, e.Par, e.ops()
	router := c.GEMM("bf16", ta, m.Experts, m.Hidden).Seconds
	if t, ok := e.measuredMoE(tAll, dt, draft); ok {
		return router + t
	}
	tokens, topk := localRouting(tAll, m.TopK, p.EP)
	x := c.MoE(kernels.MoEShape{Tokens: tokens, Experts: m.Experts / p.EP, TopK: topk,
		Hidden: m.Hidden, Inter: m.MoEInter / p.MoETP(), DType: dt, Skew: e.MoESkew})
	return router + x.Seconds/eff
}

// localRouting restates tAll tokens routed top-k over all experts as the
// (tokens, top-k) pair that one EP rank's expert shard sees, so that the
// kernel's distinct-expert count E_l(1-(1-k_l/E_l)^T_l) equals the true
// expectation E/EP·(1-(1-topk/E)^tAll) and its routed rows equal
// tAll·topk/EP. When EP divides topk that is exact (all tokens, topk/EP
// picks each); otherwise each routed row counts as one token with one pick
// (the same expectation to first order in topk/E). Splitting the tokens
// instead (ceil(tAll/EP) tokens with all topk picks) makes one decode token
// touch topk experts on every rank: 4x the weight traffic at EP4, batch 1.
func localRouting(tAll, topk, ep int) (tokens, k int) {
	if ep <= 1 {
		return tAll, topk
	}
	if topk%ep == 0 {
		return tAll, topk / ep
	}
	return max(ceilDiv(tAll*topk, ep), 1), 1
}

// layerComm prices the collectives of one layer.
func (e *Engine) layerComm(ta, tAll int) float64 {
	p, c, h := e.Par, e.Coster, e.Model.Hidden
	if p.TP <= 1 {
		return 0
	}
	if p.DPAttention && e.deepEP() {
		// DeepEP dispatch and combine: each token goes only to the ranks
		// that hold one of its top-k experts (FP8 on the way out, BF16 back).
		r := e.ranksPerToken()
		dispatch := float64(ta) * r * float64(h) * 1
		return c.Collective("alltoall", dispatch, p.TP).Seconds + c.Collective("alltoall", 2*dispatch, p.TP).Seconds
	}
	if p.DPAttention {
		// Gather every rank's tokens for the experts, scatter the results back.
		msg := float64(ta*h) * 2
		return c.Collective("allgather", msg, p.TP).Seconds + c.Collective("reducescatter", msg*float64(p.TP), p.TP).Seconds
	}
	return 2 * e.tpAllReduce(float64(tAll*h)*2)
}

// deepEP reports whether the expert exchange of a DP-attention instance
// runs as DeepEP all-to-all: SGLang's way (--moe-a2a-backend deepep) to
// spread experts beyond one NVLink domain, as its multi-node DeepSeek
// deployments do. Inside one domain the engines gather every rank's tokens.
func (e *Engine) deepEP() bool {
	return e.EngineName == "sglang" && e.Par.EP == e.Par.TP && e.Par.TP > e.GPU.NVLinkDomain
}

// ranksPerToken is how many EP ranks one token's top-k experts sit on, for
// uniform routing: EP·(1-(1-1/EP)^topk).
func (e *Engine) ranksPerToken() float64 {
	ep := float64(e.Par.EP)
	return ep * -math.Expm1(float64(e.Model.TopK)*math.Log1p(-1/ep))
}

// forward prices one target forward for shape s over every layer.
func (e *Engine) forward(s shape) Breakdown {
	var b Breakdown
	m := e.Model
	// Layers repeat in few kinds; price each kind once.
	lk := e.kinds()
	var perKind [4]float64
	for i, k := range lk.kinds {
		lb := e.layerCost(k.first, s, e.Target, e.TargetMoEEff)
		b = b.plus(scale(lb, float64(k.n)))
		perKind[i] = lb.Total()
	}
	b.LMHead += e.lmHead(s, m.Vocab)
	b.Communication += e.pipelineComm(s)
	e.addForwardFixed(&b, s) // fixedcost.go
	if e.Par.PP > 1 {
		b.Communication += e.pipelineBubble(func(l int) float64 {
			return perKind[lk.of[l]]
		}, b.LMHead, b.Total())
	}
	return b
}

// layerKinds groups a model's decoder layers by what prices them (full or
// linear attention, dense or MoE feed-forward), in order of first
// appearance.
type layerKinds struct {
	kinds []struct{ first, n int }
	of    []uint8 // kind index of each layer
	full  int     // Model.FullAttentionLayers
}

// kinds returns the Engine's layer kinds, computed once.
func (e *Engine) kinds() *layerKinds {
	if e.layerKinds != nil {
		return e.layerKinds
	}
	m := e.Model
	lk := &layerKinds{of: make([]uint8, m.Layers)}
	var seen [4]int
	for l := range m.Layers {
		k := 0
		if m.isFullAttention(l) {
			k = 1
		}
		if l < m.DenseLayers || m.Experts == 0 {
			k += 2
		}
		if seen[k] == 0 {
			lk.kinds = append(lk.kinds, struct{ first, n int }{l, 0})
			seen[k] = len(lk.kinds)
		}
		i := seen[k] - 1
		lk.kinds[i].n++
		lk.of[l] = uint8(i)
	}
	lk.full = m.FullAttentionLayers()
	e.layerKinds = lk
	return lk
}

// layerGap is GPU time per decoder layer and forward that no kernel's own
// cost covers: the dependent kernels of a layer (norm, projections,
// attention, router, experts, all-reduce; a dozen to twenty of them) each
// wait for the previous grid to drain and the next to ramp up, and each
// collective waits for the slowest rank. CUDA graphs remove the host
// launches, not these gaps; the kernel costs were measured back to back in
// isolation, where they overlap. It is what separated a batch-1 step from
// the sum of its kernels (the TRT-LLM B200 min-latency rows were 1.2-2.4
// ms per step, 15-24%, short of their published figures).
//
// Fitted value 25 us: the throughput model's one parameter fitted to
// published serving results (kernels' MLA decode rate now comes from
// FlashMLA's own benchmarks), on a grid (0-40 us) to the median error of
// the eight "tune" rows of testdata/published.yaml only; the held-out rows
// took no part. About 1.2 us for each of a layer's ~20 kernels. Rechecked
// on the same rows after v12 (testdata/published-log.md): 25 us kept.
const layerGap = 25e-6

func scale(b Breakdown, f float64) Breakdown {
	return Breakdown{b.Draft * f, b.Attention * f, b.MoE * f, b.DenseGEMM * f, b.GDN * f, b.LMHead * f, b.Norms * f, b.Communication * f, b.Overhead * f,
		b.Launch * f, b.Gap * f, b.Host * f}
}

func (e *Engine) lmHead(s shape, vocab int) float64 {
	rows := ceilDiv(s.logits, e.Par.AttentionDP())
	if rows == 0 {
		return 0
	}
	at := e.Par.AttentionTP()
	shard := ceilDiv(vocab, at)
	t := e.ops().LMHeadSample(rows, e.Model.Hidden, shard, "bf16").Seconds
	switch {
	case at > 1 && e.EngineName == "sglang":
		// SGLang gathers the whole vocabulary's logits on every rank
		// (layers/logits_processor.py: LogitsProcessor._get_logits ->
		// tensor_model_parallel_all_gather), copies them to FP32
		// (_copy_logits_to_buffer) and samples over all of them. Bytes per
		// row beyond LMHeadSample, which already wrote the rank's shard in
		// BF16 and read it once in FP32: the copy reads 2 and writes 4 per
		// entry of the whole vocabulary (6 x vocab); sampling reads the
		// FP32 entries outside the shard (4 x (vocab - shard)).
		t += e.Coster.Collective("allgather", float64(rows*shard)*2, at).Seconds
		if c, err := e.Coster.Elementwise(float64(rows) * (6*float64(vocab) + 4*float64(vocab-shard))); err == nil {
			t += c.Seconds
		}
	case at > 1:
		// Vocab-parallel sampling gathers each rank's best candidates.
		t += e.Coster.Collective("allgather", float64(rows)*8, at).Seconds
	}
	return t
}

// pipelineComm is the activation hand-off between pipeline stages.
func (e *Engine) pipelineComm(s shape) float64 {
	if e.Par.PP <= 1 {
		return 0
	}
	msg := float64(ceilDiv(s.seqs, e.Par.AttentionDP())*s.q*e.Model.Hidden) * 2
	return float64(e.Par.PP-1) * e.Coster.Collective("allgather", msg, 2).Seconds
}

func (e *Engine) launch(kernelsPerForward int, s shape) float64 {
	graph := !s.prefill && ceilDiv(s.seqs, e.Par.AttentionDP()) <= e.CUDAGraphMaxBS
	return e.Coster.Launch(kernelsPerForward, graph).Seconds
}

// draftForward prices one forward of the draft module for shape s: the
// fusion projection, its decoder layer(s) at the draft's precision, and its
// lm_head with sampling.
func (e *Engine) draftForward(s shape) float64 {
	return e.draftSum(e.draftTerms(s), s)
}

// draftParts are the terms of draftForward(s) that do not read s.ctx
// (all but the attention kernels), with the first shape error of those
// priced before the kernels (fuseErr; proj keeps its own), after them in
// a layer (layerErr) and after the layers (tailErr), for draftSum to
// report in draftForward's order.
type draftParts struct {
	fuse     float64
	proj     attnProj
	layer    [4]float64 // added after each layer's attention, in order
	nLayer   int
	lmHead   float64
	fixed    float64
	fuseErr  error
	layerErr error
	tailErr  error
}

func (e *Engine) draftTerms(s shape) draftParts {
	m, d := e.Model, e.Model.Draft
	at := e.Par.AttentionTP()
	seqsRank := ceilDiv(s.seqs, e.Par.AttentionDP())
	ta := seqsRank * s.q
	tAll := s.seqs * s.q
	fuse := 2
	if d.Kind == "eagle3" {
		fuse = 3
	}
	var p draftParts
	saved := e.shapeErr
	e.shapeErr = nil
	defer func() { e.shapeErr = saved }()
	p.fuse = e.ops().GEMM(e.Draft.Attention, ta, m.Hidden, fuse*m.Hidden).Seconds
	p.fuseErr = e.shapeErr
	p.proj = e.attentionProj(ta, e.Draft.Attention)
	e.shapeErr = nil
	add := func(t float64) {
		p.layer[p.nLayer] = t
		p.nLayer++
	}
	if d.MoE && m.Experts > 0 {
		add(e.moe(ta, tAll, e.Draft.Experts, e.DraftMoEEff, true))
		if m.SharedExperts > 0 {
			mt, mtp := tAll, e.Par.TP
			if e.Par.DPAttention {
				mt, mtp = ta, 1
			}
			add(e.mlp(mt, m.SharedExperts*m.SharedInter/mtp, e.Draft.Shared))
		}
	} else {
		inter := d.DenseInter
		if inter == 0 {
			inter = m.DenseInter
		}
		add(e.mlp(ta, inter/at, e.Draft.Dense))
	}
	add(3*e.ops().Norm(ta, m.Hidden).Seconds + e.auxKernels(m.Layers-1, ta, e.Draft))
	add(e.layerComm(ta, tAll))
	p.layerErr, e.shapeErr = e.shapeErr, nil
	vocab := d.Vocab
	if vocab == 0 {
		vocab = m.Vocab
	}
	p.lmHead = e.lmHead(s, vocab)
	p.fixed = e.draftFixed(s)
	p.tailErr = e.shapeErr
	return p
}

// draftSum is draftForward(s) from its parts p (of a shape that differs
// from s in ctx at most), added in draftForward's order.
func (e *Engine) draftSum(p draftParts, s shape) float64 {
	d, c := e.Model.Draft, e.ops()
	seqsRank := ceilDiv(s.seqs, e.Par.AttentionDP())
	t := p.fuse
	c.keep(kernels.Cost{}, p.fuseErr)
	for range max(d.Layers, 1) {
		t += e.attentionWith(p.proj, seqsRank, shape{seqs: s.seqs, q: s.q, ctx: s.ctx, prefill: s.prefill})
		for _, x := range p.layer[:p.nLayer] {
			t += x
		}
		c.keep(kernels.Cost{}, p.layerErr)
	}
	t += p.lmHead
	t += p.fixed
	c.keep(kernels.Cost{}, p.tailErr)
	return t
}

// DecodeStep prices one decode iteration of batch requests (the whole
// instance) with mean context ctx and draft length k: k = 0 is plain
// decode; otherwise (k-1) draft steps at one token per request, the verify
// forward over k+1 tokens per request, and the draft-extend forward over the
// k+1 verified positions that also proposes the next iteration's first
// draft token (SGLang EAGLE/NEXTN worker with topk 1).
func (e *Engine) DecodeStep(batch, k, ctx int) Breakdown {
	if batch <= 0 {
		return Breakdown{}
	}
	var key uint64
	if batch < 1<<23 && k >= 0 && k < 1<<8 && ctx >= 0 && ctx>>8 < 1<<32 {
		key = stepKey(batch, k, ctx>>8)
		slot := stepSlot(key)
		if sl := &e.recent[slot]; sl.key == key {
			return sl.val
		}
		if b, ok := e.steps.get(key); ok {
			e.recent[slot] = stepCacheSlot{key, b}
			return b
		}
	}
	var b Breakdown
	shared := false
	if key != 0 && e.shared != nil {
		b, shared = e.sharedShards().steps.get(key)
	}
	if !shared {
		clean := e.shapeErr == nil
		b = e.priceStep(batch, k, ctx)
		if key != 0 && e.shared != nil && clean && e.shapeErr == nil {
			e.sharedShards().steps.put(key, b)
		}
	}
	if key != 0 {
		e.steps.put(key, b)
		slot := stepSlot(key)
		e.recent[slot] = stepCacheSlot{key, b}
	}
	return b
}

// priceStep is DecodeStep's iteration priced, its context rounded as the
// memo's key rounds it.
func (e *Engine) priceStep(batch, k, ctx int) Breakdown {
	ctxQ := (ctx>>8)<<8 + 128
	var b Breakdown
	if k == 0 {
		b = e.forward(shape{seqs: batch, q: 1, ctx: ctxQ, logits: batch})
		b.addOverhead(0, 0, e.SchedOverhead)
	} else {
		b = e.forward(shape{seqs: batch, q: k + 1, ctx: ctxQ, verify: true, logits: batch * (k + 1)})
		draft := 0.0
		if k > 1 {
			// The k-1 one-token draft steps differ in context alone.
			p := e.draftTerms(shape{seqs: batch, q: 1, ctx: ctxQ + 1, logits: batch})
			for j := 1; j < k; j++ {
				draft += e.draftSum(p, shape{seqs: batch, q: 1, ctx: ctxQ + j, logits: batch})
			}
		}
		draft += e.draftForward(shape{seqs: batch, q: k + 1, ctx: ctxQ, logits: batch * (k + 1)})
		b.Draft = draft
		b.GDN += e.stateCommit(batch)
		b.addOverhead(0, 0, e.SchedOverhead+e.SpecOverhead)
	}
	return b
}

// stepCache is a direct-mapped cache of DecodeStep's recent keys (0 for an
// empty slot: a key's batch is never 0) and values, small enough to stay
// in the processor's near caches where the tables behind it do not. At
// 2,048 slots (213 KB, in a core's L2) a settled 72-GPU GB300 sweep sends
// 5.2M of its 38M steps on to the table; at 256 it sent 14M.
type stepCache [stepCacheSize]stepCacheSlot

// stepCacheSlot holds a key beside its value: a hit reads one place.
type stepCacheSlot struct {
	key uint64
	val Breakdown
}

const stepCacheBits = 11
const stepCacheSize = 1 << stepCacheBits

func stepSlot(key uint64) uint64 { return (key * 0x9e3779b97f4a7c15) >> (64 - stepCacheBits) }

// stateCommit prices SGLang's post-verify commit of a hybrid model's
// linear-attention state (speculative/spec_utils.py
// commit_mamba_states_after_verify -> hybrid_linear_attn_backend.py
// update_mamba_state_after_mtp_verify): every request's accepted SSM state
// and convolution window of all its Gated DeltaNet layers copied from the
// intermediate cache, read and written once, on the copy roofline. Measured
// on the H200 at TP8 (kernels/data/h200/mamba_commit.csv): 103 us for 16
// requests, at the copy ceiling (this roofline: 98 us).
func (e *Engine) stateCommit(batch int) float64 {
	if e.EngineName != "sglang" || e.Model.LinearVHeads == 0 {
		return 0
	}
	bytes := 2 * e.stateBytes(0) * float64(ceilDiv(batch, e.Par.AttentionDP()))
	if bytes <= 0 {
		return 0
	}
	return e.ops().Elementwise(bytes).Seconds
}

// PrefillPart is one request's share of a prefill batch.
type PrefillPart struct {
	New    int // prompt tokens computed in this chunk
	Before int // tokens already in the KV cache (cached prefix + earlier chunks)
	Last   bool
}

// Prefill prices one prefill (extend) forward over parts: GEMMs and experts
// over all new tokens at once, attention per request, the draft module over
// the same tokens (it must fill its own KV cache), lm_head for requests whose
// prompt completes.
func (e *Engine) Prefill(parts []PrefillPart, spec bool) Breakdown {
	total, logits := 0, 0
	for _, p := range parts {
		total += p.New
		if p.Last {
			logits++
		}
	}
	if total == 0 {
		return Breakdown{}
	}
	m := e.Model
	// With DP attention the scheduler spreads the batch's requests over
	// the attention ranks: each rank projects its share of the tokens and
	// the experts see them all. forward prices that as dp sequences of
	// total/dp tokens (one per rank).
	dp := min(e.Par.AttentionDP(), len(parts))
	s := shape{seqs: dp, q: ceilDiv(total, dp), ctx: 0, prefill: true, logits: logits}
	b := e.prefillForward(s)
	// forward priced attention as one sequence of all tokens per rank;
	// replace it with each request's own causal attention over its context,
	// shared out over the ranks (no rank finishes before its longest request).
	b.Attention, b.GDN = 0, 0
	full := e.kinds().full
	lin := m.Layers - full
	var longest Breakdown
	for _, p := range parts {
		if p.New == 0 {
			continue
		}
		var one Breakdown
		one.Attention, one.GDN = e.partCost(p.New, p.Before, full, lin)
		b.Attention += one.Attention / float64(dp)
		b.GDN += one.GDN / float64(dp)
		longest.Attention = math.Max(longest.Attention, one.Attention)
		longest.GDN = math.Max(longest.GDN, one.GDN)
	}
	b.Attention = math.Max(b.Attention, longest.Attention)
	b.GDN = math.Max(b.GDN, longest.GDN)
	b.GDN = math.Max(b.GDN, float64(lin)*e.gdnEagerFloor(ceilDiv(total, dp)))
	if spec {
		b.Draft = e.prefillDraft(s)
	}
	b.addOverhead(0, 0, e.SchedOverhead)
	return b
}

// MixesContext reports whether the engine runs context (prefill) chunks
// inside generation iterations: TensorRT-LLM's in-flight batching fills
// each iteration up to max_num_tokens with the running requests'
// generation tokens and then context chunks. SGLang (and the simulator's
// default) runs a separate prefill batch first.
func (e *Engine) MixesContext() bool { return e.EngineName == "trtllm" }

// MixedExtra prices what context chunks add to a decode iteration of
// batch running requests (q tokens each) that carries them. Each context
// belongs to one attention rank (DP attention) and the ranks meet at every
// layer's expert exchange, so the iteration waits for the rank with the
// most context tokens: its projections and causal attention over them, its
// share of the feed-forward, the experts' extra routed rows (the weights
// are already read for the generation tokens) and the larger exchange.
// Contexts go to the least-loaded rank, largest first.
func (e *Engine) MixedExtra(batch, q int, parts []PrefillPart, spec bool) float64 {
	m, p := e.Model, e.Par
	dp := p.AttentionDP()
	load := make([]int, dp)
	owner := make([]int, len(parts))
	order := make([]int, len(parts))
	total := 0
	for i := range parts {
		order[i] = i
		total += parts[i].New
	}
	slices.SortStableFunc(order, func(a, b int) int { return parts[b].New - parts[a].New })
	for _, i := range order {
		r := slices.Index(load, slices.Min(load))
		load[r] += parts[i].New
		owner[i] = r
	}
	busiest := slices.Index(load, slices.Max(load))
	nb := load[busiest]
	if total == 0 || nb == 0 {
		return 0
	}
	seqsRank := ceilDiv(batch, dp)
	ta, tAll := seqsRank*q, batch*q
	var t float64
	full := m.FullAttentionLayers()
	logits := 0
	for i, pt := range parts {
		if owner[i] != busiest || pt.New == 0 {
			continue
		}
		ps := shape{seqs: 1, q: pt.New, ctx: pt.Before, prefill: true}
		if full > 0 {
			t += float64(full) * e.attention(pt.New, 1, ps, e.Target.Attention)
		}
		if lin := m.Layers - full; lin > 0 {
			t += float64(lin) * e.linearAttention(pt.New, 1, ps, e.Target.Attention)
		}
		if pt.Last {
			logits++
		}
	}
	mlpBase, mlpAdd, mlpTP := tAll, total, p.TP
	if p.DPAttention {
		mlpBase, mlpAdd, mlpTP = ta, nb, 1
	}
	dense, moeLayers := m.DenseLayers, m.Layers-m.DenseLayers
	if m.Experts == 0 {
		dense, moeLayers = m.Layers, 0
	}
	w := e.Target
	if dense > 0 {
		t += float64(dense) * (e.mlp(mlpBase+mlpAdd, m.DenseInter/mlpTP, w.Dense) - e.mlp(mlpBase, m.DenseInter/mlpTP, w.Dense))
	}
	if moeLayers > 0 {
		d := e.moe(ta+nb, tAll+total, w.Experts, e.TargetMoEEff, false) - e.moe(ta, tAll, w.Experts, e.TargetMoEEff, false)
		if m.SharedExperts > 0 {
			inter := m.SharedExperts * m.SharedInter / mlpTP
			d += e.mlp(mlpBase+mlpAdd, inter, w.Shared) - e.mlp(mlpBase, inter, w.Shared)
		}
		t += float64(moeLayers) * d
	}
	c := e.ops()
	// Norms and the small per-layer kernels (priced at the last layer's
	// kind) for the busiest rank's extra tokens. The exchange: a gather of
	// every rank's tokens grows by all the context tokens (priced as an
	// even share per rank), unless the engine pads every rank to the
	// busiest one (dpPadding); a DeepEP dispatch or a TP all-reduce waits
	// for the busiest sender.
	last := m.Layers - 1
	commRank := ta + nb
	if p.DPAttention && !e.deepEP() && !e.dpPadding() {
		commRank = ta + ceilDiv(total, dp)
	}
	perLayer := 2*(c.Norm(ta+nb, m.Hidden).Seconds-c.Norm(ta, m.Hidden).Seconds) +
		e.auxKernels(last, ta+nb, w) - e.auxKernels(last, ta, w) +
		e.layerComm(commRank, tAll+total) - e.layerComm(ta, tAll)
	t += float64(m.Layers) * perLayer
	if logits > 0 {
		t += e.lmHead(shape{seqs: 1, q: 1, logits: logits}, m.Vocab)
	}
	if spec {
		t += e.draftForward(shape{seqs: 1, q: nb, prefill: true, logits: logits})
	}
	return math.Max(t, 0)
}

// dpPadding reports whether the attention-DP gather in front of the
// experts pads every rank's tokens to the busiest rank's count: TensorRT-
// LLM does so for NVFP4 experts, whose gather runs after FP4 quantization
// with its scale factors (use_dp_padding in its DeepSeek and Qwen3 MoE
// modules); other formats gather variable sizes (all_rank_num_tokens).
func (e *Engine) dpPadding() bool {
	return e.EngineName == "trtllm" && e.Par.DPAttention && e.Target.Experts == kernels.NVFP4
}

// releaseQuantization is the engine's name for a release's quantization
// (SGLang quant_config.get_name()): NVIDIA's NVFP4 releases are ModelOpt
// checkpoints, the FP8 releases block-FP8 ("fp8"); BF16 has none.
func releaseQuantization(p Precision) string {
	switch p {
	case FP4:
		return "modelopt_fp4"
	case FP8:
		return "fp8"
	}
	return ""
}
