package simulate

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
