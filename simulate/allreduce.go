package simulate

import (
	"math"

	"github.com/specsim/specsim/kernels"
)

// tpAllReduce prices one tensor-parallel all-reduce of msg bytes per GPU.
// SGLang runs its custom one-shot/two-shot all-reduce inside an NVLink
// domain (sgl-project/sglang python/sglang/srt/distributed/
// device_communicators/custom_all_reduce.py, CustomAllreduce, used by
// GroupCoordinator.all_reduce when the message fits its buffer), priced
// from the kernel authors' published H100 figures unless a collective
// table measured on this GPU covers the shape; other engines, and shapes
// it does not take, go to the NCCL model.
func (e *Engine) tpAllReduce(msg float64) float64 {
	if !stepMemo || e.pm.pricing {
		return e.tpAllReduceOf(msg)
	}
	om := e.opMemos()
	if t, ok := memoGet(&om.allReduce, msg); ok {
		return t
	}
	t := e.tpAllReduceOf(msg)
	memoPut(om.allReduce, msg, t)
	return t
}

// tpAllReduceOf is tpAllReduce, unmemoized.
func (e *Engine) tpAllReduceOf(msg float64) float64 {
	if e.EngineName == "sglang" {
		if c, ok := e.Coster.CustomAllReduce(msg, e.Par.TP); ok {
			return c.Seconds
		}
	}
	return e.Coster.Collective("allreduce", msg, e.Par.TP).Seconds
}

// fusedNorms is how many of a layer's two RMSNorms run inside the
// all-reduce kernel: with SGLang's FlashInfer all-reduce fusion on
// (resolveFusion) the residual add and RMSNorm that follow each TP all-reduce (after
// attention, and after the MoE before the next layer's input norm) are
// fused into FlashInfer's trtllm_allreduce_fusion kernel (sgl-project/
// sglang python/sglang/srt/layers/flashinfer_comm_fusion.py,
// flashinfer_allreduce_residual_rmsnorm), for forwards of at most its
// workspace's max_token_num (2048) tokens; their separate kernels go. The
// fused kernel is priced as the all-reduce alone (an assumption: the
// norm's work rides on data the kernel already holds in registers). The
// conditions are those of communicator.py apply_flashinfer_allreduce_fusion
// (SM90 or SM100 family, at most 2048 tokens, no DP attention), which hold
// even when the flag forces the fusion on.
func (e *Engine) fusedNorms(tokens int) int {
	if e.AllReduceFusion && e.EngineName == "sglang" && e.Par.TP > 1 && !e.Par.DPAttention && tokens <= fusionMaxTokens &&
		(sm90(e.GPU.Arch) || sm100(e.GPU.Arch)) {
		return 2
	}
	return 0
}

// fusionMaxTokens is the FlashInfer fusion workspace's max_token_num.
const fusionMaxTokens = 2048

// measuredMoE prices the routed experts from a measurement of the kernel
// the resolved backend runs, where one exists: SGLang's Triton fused MoE
// (the path of a BF16 draft that falls back, and of block-FP8 experts on
// Hopper) from the H200 table (kernels/data/h200/moe_triton.csv, through
// kernels' MoETriton). An EP rank is priced from a table of its own shard
// and EP size (E/EP experts at inter/MoETP, all tokens, the busiest rank
// derived from per-rank timings: moe_triton_ep8.csv) where one exists and
// routing is uniform; else on the TP shard of all
// experts at inter/TP (moe_triton.csv), which has the same weight bytes per
// rank and routed rows per expert but not the same time: on the H200 the
// EP shard's busiest rank took 1.06-1.21x the TP shard's time up to 8
// tokens and 0.67-0.95x from 12 (kernels/collect/NOTES.md round 5). On
// other GPUs the H200 figure is carried over (h200Carry). ok is false when the backend is
// another or the shape is not in the table (the roofline and the backend's
// efficiency then apply).
func (e *Engine) measuredMoE(tAll int, dt kernels.DType, draft bool) (float64, bool) {
	if !stepMemo || e.pm.pricing {
		return e.measuredMoEOf(tAll, dt, draft)
	}
	om := e.opMemos()
	key := moeKey{dt, tAll, draft}
	if v, ok := memoGet(&om.measuredMoE, key); ok {
		return v.t, v.ok
	}
	t, ok := e.measuredMoEOf(tAll, dt, draft)
	memoPut(om.measuredMoE, key, measuredCost{t, ok})
	return t, ok
}

type moeKey struct {
	dt    kernels.DType
	tAll  int
	draft bool
}

type measuredCost struct {
	t  float64
	ok bool
}

// measuredMoEOf is measuredMoE, unmemoized.
func (e *Engine) measuredMoEOf(tAll int, dt kernels.DType, draft bool) (float64, bool) {
	t, _, ok := e.measuredMoEShard(tAll, dt, draft)
	return t, ok
}

// measuredMoEShard is measuredMoE with the shard whose measurement priced it.
func (e *Engine) measuredMoEShard(tAll int, dt kernels.DType, draft bool) (float64, kernels.MoEShape, bool) {
	backend := e.TargetBackend
	if draft {
		backend = e.DraftBackend
	}
	if e.EngineName != "sglang" || backend != "triton" || tAll <= 0 {
		return 0, kernels.MoEShape{}, false
	}
	m, p := e.Model, e.Par
	tpShard := kernels.MoEShape{Tokens: tAll, Experts: m.Experts, TopK: m.TopK, Hidden: m.Hidden, Inter: m.MoEInter / p.TP,
		DType: dt, Skew: e.MoESkew, Kernel: kernels.MoETriton}
	shapes := []kernels.MoEShape{tpShard}
	if p.EP > 1 && e.MoESkew == 0 {
		// The rank's own shard first: SGLang's StandardDispatcher (layers/moe/
		// token_dispatcher/standard.py) hands every rank all tokens with the
		// ids of other ranks' experts mapped to -1, and the Triton kernel
		// (filter_expert) runs the rank's E/EP experts at inter/MoETP; a
		// table of that shard and EP size holds the busiest rank
		// (moe_triton_ep8.csv). Skewed routing on an EP rank is not modelled
		// (kernels.MoEShape.Validate): the TP shard's line prices it then.
		ep := tpShard
		ep.Experts, ep.Inter, ep.EP = m.Experts/p.EP, m.MoEInter/p.MoETP(), p.EP
		shapes = []kernels.MoEShape{ep, tpShard}
	}
	// An EP shard's table holds only the decode and verify batches it was
	// measured at (moe_triton_ep8.csv: 1-512 tokens); past them its
	// extrapolation grows linearly in tokens (4096 tokens: 2.4 ms against
	// the TP shard's measured 0.90 ms for the same FLOPs), so a prefill
	// chunk takes the TP shard's table, measured to 8192 tokens (kernels
	// prices the EP shape there from the same line, measured-tp-equivalent).
	measured := func(s kernels.MoEShape, c kernels.Cost) bool {
		if s.EP > 1 {
			return c.Source == kernels.SourceMeasured
		}
		return c.Source == kernels.SourceMeasured || c.Source == kernels.SourceExtrapolated
	}
	for _, s := range shapes {
		if c := e.ops().MoE(s); measured(s, c) {
			return c.Seconds, s, true
		}
	}
	hc, speed := e.h200Carry()
	if hc == nil {
		return 0, kernels.MoEShape{}, false
	}
	for _, s := range shapes {
		if c, err := hc.MoE(s); err == nil && measured(s, c) {
			return c.Seconds / speed, s, true
		}
	}
	return 0, kernels.MoEShape{}, false
}

// gdnPrefill prices the chunked Gated DeltaNet prefill kernel over tokens
// packed tokens on one rank: the measured kernel (SGLang's
// chunk_gated_delta_rule, kernels/data/h200/gdn_chunk.csv) under a CUDA
// graph, and its eager call (SGLang runs prefill eagerly; the host floor
// of that call was 0.45-0.9 ms on the measuring machine's CPU). Where the
// GPU has no table the H200 figure is carried over: the kernel time scaled
// by h200Carry, the host part kept. The reference model that would price
// it otherwise extrapolates the token-by-token recurrence to the whole
// chunk, more than an order of magnitude slower (issue 12).
func (e *Engine) gdnPrefill(tokens int) (gpu, eager float64, ok bool) {
	m, at := e.Model, e.Par.AttentionTP()
	if tokens <= 0 || m.LinearKDim != m.LinearVDim {
		return 0, 0, false
	}
	s := kernels.GDNShape{Batch: 1, QLen: tokens, KHeads: max(m.LinearKHeads/at, 1), VHeads: m.LinearVHeads / at,
		KDim: m.LinearKDim, VDim: m.LinearVDim, StateDType: e.SSM}
	if g, err := e.Coster.GDN(s, kernels.GDNPrefill); err == nil && g.Kernel != "" {
		return g.Seconds, math.Max(g.EagerSeconds, g.Seconds), true
	}
	hc, speed := e.h200Carry()
	if hc == nil {
		return 0, 0, false
	}
	g, err := hc.GDN(s, kernels.GDNPrefill)
	if err != nil || g.Kernel == "" {
		return 0, 0, false
	}
	gpu = g.Seconds / speed
	return gpu, math.Max(g.EagerSeconds-g.Seconds, 0) + gpu, true
}

// h200Ref is the H200 of the catalog an Engine's GPU came from, found once
// per Engine.
type h200Ref struct {
	c *kernels.Coster
	g *kernels.GPU
}

// h200Carry is the H200 Coster whose engine-kernel tables another GPU
// borrows, and how much faster than the H200 g runs a kernel limited by
// both memory and tensor cores: the smaller of the HBM bandwidth and dense
// BF16 ratios. nil on the H200 itself (its own tables apply) or when the
// catalog lacks it.
func (e *Engine) h200Carry() (*kernels.Coster, float64) {
	g := e.GPU
	if g == nil || g.Name == "h200" {
		return nil, 1
	}
	if e.h200 == nil {
		e.h200 = &h200Ref{}
		if h, err := g.Sibling("h200"); err == nil {
			e.h200.g, e.h200.c = h, kernels.NewCoster(h)
		}
	}
	h := e.h200.g
	if h == nil || h.HBMBandwidth <= 0 || h.Peak[kernels.BF16] <= 0 || g.HBMBandwidth <= 0 || g.Peak[kernels.BF16] <= 0 {
		return nil, 1
	}
	return e.h200.c, math.Min(g.HBMBandwidth/h.HBMBandwidth, g.Peak[kernels.BF16]/h.Peak[kernels.BF16])
}

// gdnEagerFloor is what one Gated DeltaNet layer of an eager prefill
// forward over tokens tokens per rank costs at least: the chunked kernel's
// eager call (gdnPrefill). Zero where no measurement covers the shape.
func (e *Engine) gdnEagerFloor(tokens int) float64 {
	_, eager, ok := e.gdnPrefillMemo(tokens)
	if !ok {
		return 0
	}
	return eager
}
