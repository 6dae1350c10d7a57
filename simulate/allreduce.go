package simulate

import "github.com/specsim/specsim/kernels"

// tpAllReduce prices one tensor-parallel all-reduce of msg bytes per GPU.
// SGLang runs its custom one-shot/two-shot all-reduce inside an NVLink
// domain (sgl-project/sglang python/sglang/srt/distributed/
// device_communicators/custom_all_reduce.py, CustomAllreduce, used by
// GroupCoordinator.all_reduce when the message fits its buffer), priced
// from the kernel authors' published H100 figures unless a collective
// table measured on this GPU covers the shape; other engines, and shapes
// it does not take, go to the NCCL model.
func (e *Engine) tpAllReduce(msg float64) float64 {
	if e.EngineName == "sglang" {
		if c, ok := e.Coster.CustomAllReduce(msg, e.Par.TP); ok {
			return c.Seconds
		}
	}
	return e.Coster.Collective("allreduce", msg, e.Par.TP).Seconds
}

// fusedNorms is how many of a layer's two RMSNorms run inside the
// all-reduce kernel: with SGLang's --enable-flashinfer-allreduce-fusion
// the residual add and RMSNorm that follow each TP all-reduce (after
// attention, and after the MoE before the next layer's input norm) are
// fused into FlashInfer's trtllm_allreduce_fusion kernel (sgl-project/
// sglang python/sglang/srt/layers/flashinfer_comm_fusion.py,
// flashinfer_allreduce_residual_rmsnorm), for forwards of at most its
// workspace's max_token_num (2048) tokens; their separate kernels go. The
// fused kernel is priced as the all-reduce alone (an assumption: the
// norm's work rides on data the kernel already holds in registers).
func (e *Engine) fusedNorms(tokens int) int {
	if e.AllReduceFusion && e.EngineName == "sglang" && e.Par.TP > 1 && !e.Par.DPAttention && tokens <= fusionMaxTokens {
		return 2
	}
	return 0
}

// fusionMaxTokens is the FlashInfer fusion workspace's max_token_num.
const fusionMaxTokens = 2048

// measuredMoE prices the routed experts from a measurement of the kernel
// the resolved backend runs, where one exists: SGLang's Triton fused MoE
// (the path of a BF16 draft that falls back, and of block-FP8 experts on
// Hopper) from kernels/data/h200/moe_triton.csv. The table times a TP
// shard of all experts (inter/TP each); an EP rank of the same TP group
// holds 1/EP of the experts at inter/MoETP, the same weight bytes per rank
// and the same routed rows per expert, so it is priced on the shard of
// inter/TP. ok is false when the backend is another or the shape is not
// in the table (the roofline and the backend's efficiency then apply).
func (e *Engine) measuredMoE(tAll int, dt kernels.DType, draft bool) (float64, bool) {
	backend := e.TargetBackend
	if draft {
		backend = e.DraftBackend
	}
	if e.EngineName != "sglang" || backend != "triton" {
		return 0, false
	}
	m := e.Model
	c, ok := e.Coster.TritonMoE(tAll, m.Experts, m.TopK, m.Hidden, m.MoEInter/e.Par.TP, dt)
	return c.Seconds, ok
}

// gdnEagerFloor is what one Gated DeltaNet layer of an eager prefill
// forward over tokens tokens per rank costs at least: SGLang runs prefill
// without a CUDA graph, and the chunked kernel's eager call (a handful of
// Triton launches behind autograd-Function and input checks) has a host
// floor of 0.45-0.9 ms per call measured on the H200 machine's CPU
// (kernels/data/h200/gdn_chunk.csv eager_us), above the GPU time below a
// few thousand tokens. Zero where the table does not cover the shape.
func (e *Engine) gdnEagerFloor(tokens int) float64 {
	m, at := e.Model, e.Par.AttentionTP()
	kh, vh := max(m.LinearKHeads/at, 1), m.LinearVHeads/at
	if tokens <= 0 || m.LinearKDim != m.LinearVDim {
		return 0
	}
	_, eager, ok := e.Coster.GDNChunkPrefill(tokens, vh, kh, m.LinearKDim, e.SSM)
	if !ok {
		return 0
	}
	// The layer's projections and convolution run eagerly too; the floor
	// is on the chunk call, so the layer costs at least that call plus
	// its other kernels' GPU time (already in the per-part price).
	return eager.Seconds
}
