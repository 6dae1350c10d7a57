package simulate

import (
	"fmt"
	"strings"
)

const gib = 1 << 30

// Memory is the per-GPU memory budget of one instance, in bytes.
type Memory struct {
	HBM      float64 // the GPU's memory
	Fraction float64 // --mem-fraction as the engine reads it (FractionOfFree says of what)
	Budget   float64 // bytes the engine may use for weights and caches
	// FractionOfFree: TensorRT-LLM's kv_cache_config.free_gpu_memory_fraction
	// gives the KV cache that share of the memory left after the weights
	// (and draft, state) are loaded; SGLang's --mem-fraction-static and
	// vLLM's --gpu-memory-utilization are shares of all HBM.
	FractionOfFree bool
	Weights        float64 // target weights on the fullest GPU (one pipeline stage)
	Draft          float64 // draft weights (plus its own embedding and lm_head where the engine allocates them)
	State          float64 // linear-attention state caches for MaxRunning requests, incl. speculative intermediate states
	KVPerToken     float64 // KV bytes one context token occupies on this GPU (all its layers)
	KVNeeded       float64 // KV for the running requests at the workload's mean context
	KVCapacity     float64 // KV pool left after weights and state
	MaxRunning     int     // requests the engine admits at once
	TokensFit      int     // context tokens the KV pool holds on this GPU
	MaxRequest     int     // largest ISL+OSL of the workload
	Feasible       bool
	Explanation    string // the arithmetic, printed when infeasible

	// The planner's sizing (planner.go), per attention-DP rank.
	FractionFrom string // where Fraction came from
	PageSize     int
	MambaSlots   int    // linear-attention state slots
	MambaRatio   int    // state slots a running request takes
	MambaFrom    string // how MambaSlots was sized
	ReqSlots     int    // request slots (max running requests per rank)
	ReqSlotsFrom string
	HostTokens   int  // HiCache host-tier tokens
	LongestFits  bool // the workload's longest request fits the pool
}

// weightBytes counts one GPU's share of the target weights: a pipeline
// stage's layers, with attention split by attention TP, experts by EP and
// the expert TP, shared/dense MLPs by TP (replicated with DP attention), and
// the embedding and lm_head vocab-parallel (counted on the same GPU, as the
// first and last stages can coincide).
func (e *Engine) weightBytes() float64 {
	m, p, w := e.Model, e.Par, e.Target
	at := p.AttentionTP()
	mlpTP := p.TP
	if p.DPAttention {
		mlpTP = 1
	}
	var total float64
	for l := range m.Layers {
		if m.isFullAttention(l) {
			total += e.attentionParams() / float64(at) * w.Attention.Bytes()
		} else {
			total += e.linearParams() / float64(at) * w.Attention.Bytes()
		}
		switch {
		case l < m.DenseLayers || m.Experts == 0:
			inter := m.DenseInter
			if m.Experts == 0 {
				inter = m.MoEInter
			}
			total += 3 * float64(m.Hidden*inter) / float64(mlpTP) * w.Dense.Bytes()
		default:
			total += float64(m.Experts/p.EP) * 3 * float64(m.Hidden) * float64(m.MoEInter/p.MoETP()) * w.Experts.Bytes()
			total += 3 * float64(m.Hidden) * float64(m.SharedExperts) * float64(m.SharedInter) / float64(mlpTP) * w.Shared.Bytes()
			total += float64(m.Hidden*m.Experts) * 2 // router, BF16
		}
	}
	total /= float64(p.PP)
	total += 2 * float64(m.Vocab) * float64(m.Hidden) / float64(at) * 2 // embedding + lm_head, BF16
	return total
}

// attentionParams counts one full-attention layer's projection weights.
func (e *Engine) attentionParams() float64 {
	m := e.Model
	switch m.Attention {
	case MLA, DSA:
		qIn := m.Hidden
		if m.QLoRA > 0 {
			qIn = m.QLoRA
		}
		n := float64(m.Hidden * (m.QLoRA + m.KVLoRA + m.RopeDim))
		n += float64(qIn * m.Heads * (m.NopeDim + m.RopeDim))
		n += float64(m.KVLoRA * m.Heads * (m.NopeDim + m.VHeadDim))
		n += float64(m.Heads * m.VHeadDim * m.Hidden)
		if m.Attention == DSA {
			n += float64(qIn*m.IndexHeads*m.IndexHeadDim + m.Hidden*m.IndexHeadDim)
		}
		return n
	}
	gate := 1
	if m.OutputGate {
		gate = 2
	}
	return float64(m.Hidden * (m.Heads*m.HeadDim*gate + 2*m.KVHeads*m.HeadDim + m.Heads*m.HeadDim))
}

// linearParams counts one Gated DeltaNet layer's projection weights.
func (e *Engine) linearParams() float64 {
	m := e.Model
	qkvz := 2*m.LinearKHeads*m.LinearKDim + 2*m.LinearVHeads*m.LinearVDim
	return float64(m.Hidden*(qkvz+2*m.LinearVHeads) + m.LinearVHeads*m.LinearVDim*m.Hidden)
}

// draftBytes counts the draft's weights on one GPU.
func (e *Engine) draftBytes() float64 {
	m, p, d, w := e.Model, e.Par, e.Model.Draft, e.Draft
	at := p.AttentionTP()
	mlpTP := p.TP
	if p.DPAttention {
		mlpTP = 1
	}
	fuse := 2
	if d.Kind == "eagle3" {
		fuse = 3
	}
	total := float64(fuse*m.Hidden*m.Hidden) * w.Attention.Bytes()
	for range max(d.Layers, 1) {
		total += e.attentionParams() / float64(at) * w.Attention.Bytes()
		if d.MoE && m.Experts > 0 {
			total += float64(m.Experts/p.EP) * 3 * float64(m.Hidden) * float64(m.MoEInter/p.MoETP()) * w.Experts.Bytes()
			total += 3 * float64(m.Hidden) * float64(m.SharedExperts) * float64(m.SharedInter) / float64(mlpTP) * w.Shared.Bytes()
		} else {
			inter := d.DenseInter
			if inter == 0 {
				inter = m.DenseInter
			}
			total += 3 * float64(m.Hidden*inter) / float64(at) * w.Dense.Bytes()
		}
	}
	vocab := d.Vocab
	if vocab == 0 {
		vocab = m.Vocab
	}
	if d.OwnLMHead || d.Vocab != 0 {
		total += 2 * float64(vocab) * float64(m.Hidden) / float64(at) * 2
	}
	return total
}

// kvPerToken is the KV bytes one context token occupies on one GPU: the
// stage's full-attention layers, heads split by attention TP (GQA KV heads
// are replicated once TP exceeds them; MLA's latent is replicated), plus
// the draft layer's own KV when speculating.
func (e *Engine) kvPerToken(spec bool) float64 {
	m, p := e.Model, e.Par
	per := m.KVBytesPerToken(e.KV)
	if m.Attention == GQA {
		kvh := max(m.KVHeads/p.AttentionTP(), 1)
		per = per * float64(kvh) / float64(m.KVHeads)
	}
	layers := float64(m.FullAttentionLayers()) / float64(p.PP)
	if spec {
		layers += float64(max(m.Draft.Layers, 1))
	}
	return per * layers
}

// stateBytes is the linear-attention cache of one request on one GPU: the
// recurrent state of the stage's Gated DeltaNet layers in the engine's SSM
// format, plus, when speculating, one intermediate state and convolution
// window per draft token (k+1 with topk 1) kept for rollback after
// verification: SGLang's MambaPool allocates intermediate_ssm_state_cache
// [layers, slots, speculative_num_draft_tokens, heads, k_dim, v_dim] in the
// SSM dtype and intermediate_conv_window_cache likewise in the conv dtype
// (sgl-project/sglang python/sglang/srt/mem_cache/memory_pool.py, MambaPool).
func (e *Engine) stateBytes(k int) float64 {
	m, p := e.Model, e.Par
	lin := m.Layers - m.FullAttentionLayers()
	if lin == 0 {
		return 0
	}
	per := m.LinearStateBytes(e.SSM) / float64(p.AttentionTP()) * float64(lin) / float64(p.PP)
	if k == 0 {
		return per
	}
	return per * float64(2+k)
}

// Memory sizes one GPU of the instance for maxRunning requests of workload
// w with draft length k (0 = no draft loaded), prefix cache on.
func (e *Engine) Memory(w *Workload, maxRunning, k int, fraction float64) Memory {
	return e.PlanMemory(w, PoolConfig{Role: roleAgg, MemFraction: fraction, MaxRunning: maxRunning, Steps: k, RadixCache: true})
}

// PlanMemory sizes one GPU of the instance as its engine does at start-up:
// SGLang's planner (planner.go), or the simpler rule below for vLLM and
// TensorRT-LLM. It is infeasible only when the weights leave nothing.
func (e *Engine) PlanMemory(w *Workload, c PoolConfig) Memory {
	if e.EngineName == "sglang" {
		return e.planSGLang(w, c)
	}
	return e.planOther(w, c)
}

// memoryKey is what PlanMemory reads besides its engine.
type memoryKey struct {
	w Workload
	c PoolConfig
}

// plannedMemory is PlanMemory, memoized: a trace replay's pools do not
// depend on the concurrency, so a sweep plans each topology's once.
func (e *Engine) plannedMemory(w *Workload, c PoolConfig) Memory {
	key := memoryKey{*w, c}
	if m, ok := memoGet(&e.memories, key); ok && stepMemo {
		return m
	}
	m := e.PlanMemory(w, c)
	memoPut(e.memories, key, m)
	return m
}

// planOther is PlanMemory for vLLM and TensorRT-LLM.
func (e *Engine) planOther(w *Workload, c PoolConfig) Memory {
	fraction := c.MemFraction
	if fraction == 0 {
		fraction = DefaultMemFraction // vLLM gpu_memory_utilization, TensorRT-LLM free_gpu_memory_fraction defaults
	}
	maxRunning, from := c.MaxRunning, "--max-running"
	if maxRunning <= 0 {
		maxRunning, from = e.defaultMaxRunning(w, c.Steps, fraction)
	}
	mem := e.legacyMemory(w, maxRunning, c.Steps, fraction)
	mem.FractionFrom = "--mem-fraction"
	mem.PageSize = max(c.PageSize, 1)
	mem.MambaRatio = 1
	dp := e.Par.AttentionDP()
	mem.ReqSlots = ceilDiv(maxRunning, dp)
	mem.ReqSlotsFrom = from
	if maxRunning%dp != 0 {
		// vLLM's max-num-seqs and TensorRT-LLM's max_batch_size are per DP rank.
		mem.ReqSlotsFrom = fmt.Sprintf("%s %d, rounded up to %d per DP rank", from, maxRunning, mem.ReqSlots)
	}
	mem.LongestFits = mem.TokensFit >= mem.MaxRequest
	mem.Feasible = mem.KVCapacity > 0 && mem.TokensFit > 0
	if c.HiCacheGiB > 0 && mem.KVPerToken > 0 {
		mem.HostTokens = int(c.HiCacheGiB * 1e9 / mem.KVPerToken)
	} else if c.HiCacheRatio > 0 {
		mem.HostTokens = int(float64(mem.TokensFit) * c.HiCacheRatio)
	}
	return mem
}

// vLLM's max_num_seqs default: 1024 on GPUs of at least 70 GiB other than
// the A100, 256 on others (EngineArgs.get_batch_defaults,
// vllm/engine/arg_utils.py, for the OpenAI API server), per DP engine.
// TensorRT-LLM's max_batch_size default: BuildConfig.max_batch_size 2048
// (tensorrt_llm/builder.py), which trtllm-serve's --max_batch_size takes
// (tensorrt_llm/commands/serve.py), per attention-DP rank.
const (
	vllmMaxNumSeqsLarge   = 1024
	vllmMaxNumSeqsSmall   = 256
	trtllmMaxBatchSizeDef = 2048
)

// defaultMaxRunning is the running cap of a vLLM or TensorRT-LLM instance
// given none: the engine's default per rank times the attention-DP ranks.
// The state of that many requests is reserved up front here
// (legacyMemory); for a model with linear attention, where the pool left would not hold that many requests at
// the workload's mean context, the cap is lowered to the most whose state
// and mean-context KV fit together (bisected; at least one), as a pool
// shared by state and KV admits them, and from says so.
func (e *Engine) defaultMaxRunning(w *Workload, k int, fraction float64) (int, string) {
	perRank, from := trtllmMaxBatchSizeDef, "max_batch_size default"
	if e.EngineName == "vllm" {
		perRank, from = vllmMaxNumSeqsSmall, "--max-num-seqs default"
		if e.GPU.HBMBytes >= 70*gib && !strings.Contains(strings.ToLower(e.GPU.Name), "a100") {
			perRank = vllmMaxNumSeqsLarge
		}
	}
	dp := e.Par.AttentionDP()
	n := perRank * dp
	fits := func(n int) bool {
		m := e.legacyMemory(w, n, k, fraction)
		return m.Feasible && float64(m.TokensFit) >= float64(ceilDiv(n, dp))*w.MeanContext()
	}
	if e.stateBytes(k) == 0 || fits(n) {
		return n, from
	}
	if !fits(1) {
		return 1, fmt.Sprintf("%s %d, lowered to 1: one request's state and KV at the mean context do not fit", from, n)
	}
	lo, hi := 1, n // fits(lo), !fits(hi)
	for hi-lo > 1 {
		if mid := lo + (hi-lo)/2; fits(mid) {
			lo = mid
		} else {
			hi = mid
		}
	}
	return lo, fmt.Sprintf("%s %d, lowered to the requests whose state and KV fit", from, n)
}

// legacyMemory: state for the running requests comes off the top, the KV
// pool takes the rest.
func (e *Engine) legacyMemory(w *Workload, maxRunning, k int, fraction float64) Memory {
	spec := k > 0
	mem := Memory{HBM: e.GPU.HBMBytes, Fraction: fraction, Weights: e.weightBytes(), MaxRunning: maxRunning}
	if spec {
		mem.Draft = e.draftBytes()
	}
	// Attention-DP ranks hold only their own requests' caches.
	perRank := ceilDiv(maxRunning, e.Par.AttentionDP())
	mem.State = e.stateBytes(k) * float64(perRank)
	mem.KVPerToken = e.kvPerToken(spec)
	mem.KVNeeded = mem.KVPerToken * w.MeanContext() * float64(perRank)
	mem.MaxRequest = w.MaxContext()
	budget := mem.HBM * fraction
	mem.KVCapacity = budget - mem.Weights - mem.Draft - mem.State
	if e.EngineName == "trtllm" {
		// The fraction applies to what the loaded model leaves free. (The
		// engine measures that after a profiling forward, so its
		// activation workspace is not part of it; not modelled here.)
		fixed := mem.Weights + mem.Draft + mem.State
		mem.FractionOfFree = true
		mem.KVCapacity = fraction * (mem.HBM - fixed)
		budget = fixed + max(mem.KVCapacity, 0)
	}
	mem.Budget = budget
	if mem.KVPerToken > 0 && mem.KVCapacity > 0 {
		mem.TokensFit = int(min(mem.KVCapacity/mem.KVPerToken, 1<<40))
	}
	mem.Feasible = mem.KVCapacity > 0 && mem.TokensFit >= mem.MaxRequest
	if !mem.Feasible {
		var b strings.Builder
		if mem.FractionOfFree {
			fmt.Fprintf(&b, "per GPU: HBM %.1f GiB; TensorRT-LLM gives the KV cache mem-fraction %.2f of what the weights leave free\n", mem.HBM/gib, fraction)
		} else {
			fmt.Fprintf(&b, "per GPU: HBM %.1f GiB x mem-fraction %.2f = %.1f GiB available\n", mem.HBM/gib, fraction, budget/gib)
		}
		fmt.Fprintf(&b, "  target weights %.1f GiB + draft %.1f GiB + linear-attention state %.1f GiB (%d requests) = %.1f GiB\n",
			mem.Weights/gib, mem.Draft/gib, mem.State/gib, perRank, (mem.Weights+mem.Draft+mem.State)/gib)
		if mem.KVCapacity <= 0 {
			fmt.Fprintf(&b, "  nothing left for the KV cache (%.1f GiB short)\n", -mem.KVCapacity/gib)
		} else {
			fmt.Fprintf(&b, "  KV pool %.1f GiB / %.0f bytes per token = %d tokens < the longest request (%d tokens)\n",
				mem.KVCapacity/gib, mem.KVPerToken, mem.TokensFit, mem.MaxRequest)
		}
		b.WriteString("  use more GPUs per instance (tp, ep or pp), a lower precision, shorter contexts or a higher --mem-fraction")
		mem.Explanation = b.String()
	}
	return mem
}

// GiB is the per-GPU memory in GiB by part, for reports.
type GiB struct {
	Weights  float64 `json:"weights"`
	Draft    float64 `json:"draft"`
	State    float64 `json:"linear_state"`
	KV       float64 `json:"kv_cache"`
	Total    float64 `json:"total"`
	Capacity float64 `json:"capacity"`
}

// Report converts to GiB; kvUsed is the KV the caller sizes for the
// running requests (the running cap at the workload's mean context, at
// most the pool), not a measured occupancy.
func (m Memory) Report(kvUsed float64) GiB {
	g := GiB{Weights: m.Weights / gib, Draft: m.Draft / gib, State: m.State / gib, KV: kvUsed / gib,
		Capacity: m.Budget / gib}
	g.Total = g.Weights + g.Draft + g.State + g.KV
	return g
}
