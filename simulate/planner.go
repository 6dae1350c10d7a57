package simulate

import (
	"fmt"
	"math"
	"slices"
	"strings"
)

// The engine's memory planner. SGLang sizes its pools at start-up from what
// --mem-fraction-static leaves once the weights are loaded, and refuses to
// start only when nothing is left; everything else (pool tokens, mamba
// state slots, request slots) is sized to fit and caps what runs. The
// functions below follow, in order:
//
//   - sgl-project/sglang python/sglang/srt/model_executor/model_runner_kv_cache_mixin.py
//     _profile_available_bytes: rest = free_after_load - free_before_load*(1-mem_fraction_static),
//     "Loaded weights leave no GPU memory for the KV cache" when rest <= 0;
//   - same file, handle_max_mamba_cache: the linear-attention (mamba) state
//     pool, three ways (--max-mamba-cache-size; = max_running_requests when
//     the radix cache is off; otherwise a mamba_full_memory_ratio split of
//     rest), plus the speculative intermediate states kept for verify:
//     mamba_cache_per_req x capped requests x speculative_num_draft_tokens;
//   - same file, _calculate_mamba_ratio: state slots per running request,
//     MAMBA_CACHE_SIZE_MAX_RUNNING_REQUESTS_RATIO = 3 with the radix cache
//     (+2 ping-pong slots for the extra_buffer strategy under the overlap
//     scheduler), 1 without;
//   - python/sglang/srt/model_executor/pool_configurator.py
//     DefaultPoolConfigurator: KV cell bytes over the stage's full-attention
//     layers, scaled by (1 + draft layers / target layers) for EAGLE/MTP, and
//     the pool page-aligned;
//   - same mixin, _resolve_max_num_reqs: request slots per DP rank
//     min(max_running_requests/dp, clamp(tokens/context_len*512, 2048, 4096)),
//     or min(that estimate, tokens/2) when unset, then at most
//     max_mamba_cache_size / mamba ratio;
//   - python/sglang/srt/server_args.py _handle_gpu_memory_settings: the
//     automatic --mem-fraction-static (reserve for activations and CUDA
//     graphs), used when --mem-fraction is 0.
//
// vLLM (gpu_memory_utilization x HBM minus weights and a profiled
// activation peak) puts mamba state in the same paged pool as KV (hybrid
// KV-cache manager) and caps requests with max_num_seqs; TensorRT-LLM gives
// the KV cache free_gpu_memory_fraction of what is left after loading (see
// Engine.Memory). Both are modelled by the simpler rule in Engine.Memory:
// state for the running requests comes off the top.

// DefaultCUDAGraphMaxBS is the largest decode batch per rank the simulation
// replays as a CUDA graph when the query sets none.
const DefaultCUDAGraphMaxBS = 256

// SGLangSpecDefaultRunning is the max_running_requests SGLang sets when it
// speculates and none is given (server_args.py _handle_speculative_decoding).
const SGLangSpecDefaultRunning = 48

// PoolConfig is what the planner reads: the server flags of one role.
type PoolConfig struct {
	Role        role
	MemFraction float64 // 0 = the engine's own rule (SGLang: automatic)
	// MaxRunning is --max-running-requests for the whole instance (divided
	// over attention-DP ranks, as SGLang does); 0 = unset.
	MaxRunning int
	// RunningFrom names where MaxRunning came from when the user gave
	// none ("" = --max-running).
	RunningFrom string
	Steps       int  // speculative draft steps; draft tokens = Steps+1 (topk 1)
	Chunk       int  // --chunked-prefill-size (for the automatic fraction)
	RadixCache  bool // prefix cache on (off on disaggregated decode workers, as the recipes set)
	// ExtraBuffer: --mamba-scheduler-strategy extra_buffer (the prefill
	// recipes' setting) keeps ping-pong state slots per request.
	ExtraBuffer bool
	// ExtraBufferLazy: extra_buffer_lazy, one ping-pong slot instead of two.
	ExtraBufferLazy bool
	MambaCache      int // --max-mamba-cache-size; 0 = unset
	PageSize        int // 0 = 64, the recipes' --page-size
	// HiCacheRatio / HiCacheGiB size the host KV tier (--hicache-ratio of
	// the device pool, or --hicache-size GB which wins when set); 0 = off.
	HiCacheRatio float64
	HiCacheGiB   float64
}

// runningSource names where c's MaxRunning came from: the rule that set
// it when the user gave none, else the role's flag.
func (c PoolConfig) runningSource() string {
	switch {
	case c.RunningFrom != "":
		return c.RunningFrom
	case c.Role == rolePrefill:
		return "--prefill-max-running"
	}
	return "--max-running"
}

// AgentXDRAMUtilization is the dram-utilization of the InferenceX AgentX
// master configs (qwen3.5-fp4-gb300-dynamo-sglang-agentic): the share of
// host DRAM the launcher gives HiCache, as --hicache-size GB per rank
// (InferenceX benchmarks: HICACHE_SIZE = TOTAL_CPU_DRAM_GB / TP, the node
// budget generate_sweep_configs derives from dram-utilization). The
// recipes' own --hicache-ratio 0.9 cannot be what ran: SGLang's
// HostKVCache asserts a host pool larger than the device pool, and a size
// wins over the ratio.
const AgentXDRAMUtilization = 0.90

// AgentXHostTierGB is the host KV tier an AgentX replay gives each GPU of a
// role that prefills when none is asked for, in GB: AgentXDRAMUtilization
// of the host memory per GPU.
func AgentXHostTierGB(gpu string) float64 {
	return hostDRAMPerGPU(gpu) * AgentXDRAMUtilization / 1e9
}

// hostDRAMPerGPU is host memory per GPU in bytes: GB200/GB300 trays pair two
// Grace CPUs (up to 480 GB LPDDR5X each) with four GPUs; DGX H100/H200 and
// B300 carry 2 TB for 8 GPUs, DGX B200 4 TB.
func hostDRAMPerGPU(gpu string) float64 {
	switch gpu {
	case "gb200", "gb300":
		return 240e9
	case "b200":
		return 512e9
	case "h100", "h200", "b300":
		return 256e9
	}
	return 0
}

// SGLang's planner constants (sources in the comment above).
const (
	mambaRatioRadix       = 3 // MAMBA_CACHE_SIZE_MAX_RUNNING_REQUESTS_RATIO
	mambaRatioExtraBuffer = 2 // MAMBA_CACHE_V2_ADDITIONAL_RATIO_OVERLAP
	// MAMBA_CACHE_V2_ADDITIONAL_RATIO_OVERLAP_LAZY
	mambaRatioExtraBufferLazy = 1
	mambaFullMemoryRatio      = 0.9 // --mamba-full-memory-ratio default
	defaultPageSize           = 64
	reqSlotsFloor             = 2048
	reqSlotsCeil              = 4096
)

// SGLangAutoMemFraction is --mem-fraction-static when it is not given:
// (capacity - reserved) / capacity with reserved, in MiB, 512 + 1.5 per
// chunked-prefill token + 2 per CUDA-graph batch size + 1024 per 8 GPUs,
// DP attention's padding, at least 10 GiB on GPUs over 60 GiB, and 2 GiB more
// for an EAGLE/MTP draft (server_args.py _handle_gpu_memory_settings).
func SGLangAutoMemFraction(hbmBytes float64, chunk, cudaGraphMaxBS int, par Parallel, spec bool) float64 {
	capMiB := hbmBytes / (1 << 20)
	reserved := 512 + 1.5*float64(max(chunk, 2048)) + 2*float64(cudaGraphMaxBS) + float64(par.TP*par.PP)/8*1024
	if par.DPAttention {
		reserved += 3 * float64(cudaGraphMaxBS*par.TP)
		if cudaGraphMaxBS > 300 {
			reserved += 1.5 * float64(cudaGraphMaxBS*par.TP)
		}
	}
	if capMiB > 60*1024 {
		reserved = math.Max(reserved, 10*1024)
	}
	if spec {
		reserved += 2 * 1024
	}
	return math.Round((capMiB-reserved)/capMiB*1000) / 1000
}

// planSGLang sizes the pools of one GPU of the instance for workload w.
func (e *Engine) planSGLang(w *Workload, c PoolConfig) Memory {
	spec := c.Steps > 0
	frac, from := c.MemFraction, "--mem-fraction"
	if frac == 0 {
		frac = SGLangAutoMemFraction(e.GPU.HBMBytes, c.Chunk, e.CUDAGraphMaxBS, e.Par, spec)
		from = "sglang automatic (server_args._handle_gpu_memory_settings)"
	}
	page := c.PageSize
	if page <= 0 {
		page = defaultPageSize
	}
	mem := Memory{HBM: e.GPU.HBMBytes, Fraction: frac, FractionFrom: from, Weights: e.weightBytes(), PageSize: page}
	if spec {
		mem.Draft = e.draftBytes()
	}
	mem.Budget = mem.HBM * frac
	mem.KVPerToken = e.kvPerToken(spec)
	mem.MaxRequest = w.MaxContext()
	ctxLen := e.Model.MaxContext
	if ctxLen <= 0 {
		ctxLen = 262144
	}
	return sglangPools(mem, e.stateBytes(0), e.Par.AttentionDP(), ctxLen, w.MeanContext(), c)
}

// sglangPools is the planner's arithmetic on one GPU: mem carries the
// budget, weights, draft and KV bytes per token; perReq is one request's
// linear-attention state (0 for models without linear attention).
func sglangPools(mem Memory, perReq float64, dp, ctxLen int, meanCtx float64, c PoolConfig) Memory {
	spec := c.Steps > 0
	page, frac, from := mem.PageSize, mem.Fraction, mem.FractionFrom
	rest := mem.Budget - mem.Weights - mem.Draft
	var b strings.Builder
	fmt.Fprintf(&b, "per GPU: HBM %.1f GiB x mem-fraction %.3f (%s) = %.1f GiB\n", mem.HBM/gib, frac, from, mem.Budget/gib)
	fmt.Fprintf(&b, "  target weights %.1f GiB + draft %.1f GiB = %.1f GiB", mem.Weights/gib, mem.Draft/gib, (mem.Weights+mem.Draft)/gib)
	if rest <= 0 {
		// The one refusal: _profile_available_bytes raises here.
		fmt.Fprintf(&b, ", %.1f GiB more than the budget: the weights alone do not fit\n", -rest/gib)
		b.WriteString("  use more GPUs per instance (tp, ep or pp), a lower precision or a higher --mem-fraction")
		mem.Explanation = b.String()
		return mem
	}
	perRankRun := 0
	if c.MaxRunning > 0 {
		perRankRun = max(c.MaxRunning/dp, 1)
	}
	draftTokens := 0
	if spec {
		draftTokens = c.Steps + 1
	}
	mem.MambaRatio = 1
	if perReq > 0 {
		ratio := 1
		if c.RadixCache {
			ratio = mambaRatioRadix
			if c.ExtraBufferLazy {
				ratio += mambaRatioExtraBufferLazy
			} else if c.ExtraBuffer {
				ratio += mambaRatioExtraBuffer
			}
		}
		mem.MambaRatio = ratio
		// handle_max_mamba_cache asserts max_running_requests is set when
		// speculating (server_args sets 48 when it is not).
		specRun := perRankRun
		if specRun == 0 {
			specRun = SGLangSpecDefaultRunning / dp
		}
		var slots int
		var inter float64
		switch {
		case c.MambaCache > 0:
			slots = c.MambaCache / dp
			inter = perReq * float64(min(specRun, slots/ratio)*draftTokens)
			mem.MambaFrom = "--max-mamba-cache-size"
		case !c.RadixCache && perRankRun > 0:
			slots = perRankRun
			inter = perReq * float64(slots*draftTokens)
			mem.MambaFrom = "= max-running (radix cache off)"
		default:
			budget := rest * mambaFullMemoryRatio / (1 + mambaFullMemoryRatio)
			if spec {
				slots = int(budget / (perReq * (1 + float64(draftTokens)/float64(ratio))))
				inter = perReq * float64(min(specRun, slots/ratio)*draftTokens)
			} else {
				slots = int(budget / perReq)
			}
			mem.MambaFrom = fmt.Sprintf("%.2f:1 split with the KV pool (mamba_full_memory_ratio)", mambaFullMemoryRatio)
		}
		mem.MambaSlots = slots
		mem.State = float64(slots)*perReq + inter
		if slots <= 0 {
			fmt.Fprintf(&b, "\n  linear-attention state: %.0f MiB a request leaves no mamba slot in %.2f GiB", perReq/(1<<20), rest/gib)
			b.WriteString("\n  lower --max-running, use more GPUs per instance or a higher --mem-fraction")
			mem.Explanation = b.String()
			return mem
		}
		rest -= mem.State
	}
	mem.KVCapacity = rest
	if rest > 0 && mem.KVPerToken > 0 {
		mem.TokensFit = int(min(rest/mem.KVPerToken, 1<<40)) / page * page
	}
	if mem.TokensFit <= 0 {
		fmt.Fprintf(&b, "\n  + linear-attention state %.1f GiB (%d slots) leaves no KV page", mem.State/gib, mem.MambaSlots)
		b.WriteString("\n  lower --max-running, use more GPUs per instance or a higher --mem-fraction")
		mem.Explanation = b.String()
		return mem
	}
	// _resolve_max_num_reqs.
	est := min(max(int(float64(mem.TokensFit)/float64(ctxLen)*512), reqSlotsFloor), reqSlotsCeil)
	slots := min(est, mem.TokensFit/2)
	mem.ReqSlotsFrom = "pool estimate (tokens/context_len*512, clamped 2048..4096)"
	if perRankRun > 0 {
		slots = min(perRankRun, est)
		mem.ReqSlotsFrom = c.runningSource()
	}
	if perReq > 0 && mem.MambaSlots/mem.MambaRatio < slots {
		slots = mem.MambaSlots / mem.MambaRatio
		mem.ReqSlotsFrom = fmt.Sprintf("mamba slots (%d / %d per request)", mem.MambaSlots, mem.MambaRatio)
	}
	if slots < 1 {
		fmt.Fprintf(&b, "\n  %d mamba slots at %d per request leave no request slot", mem.MambaSlots, mem.MambaRatio)
		b.WriteString("\n  lower --max-running, use more GPUs per instance or a higher --mem-fraction")
		mem.Explanation = b.String()
		return mem
	}
	mem.ReqSlots = slots
	mem.MaxRunning = slots * dp
	mem.KVNeeded = mem.KVPerToken * meanCtx * float64(min(slots, max(perRankRun, 1)))
	mem.Feasible = true
	mem.LongestFits = mem.TokensFit >= mem.MaxRequest
	if ratio, gb := c.HiCacheRatio, c.HiCacheGiB; gb > 0 {
		// HostKVCache: hicache_size in GB wins over the ratio.
		mem.HostTokens = int(gb * 1e9 / mem.KVPerToken)
	} else if ratio > 0 {
		mem.HostTokens = int(float64(mem.TokensFit) * ratio)
	}
	return mem
}

// RunningCap is what limits the requests one instance runs at once, for
// reports: the smallest of the concurrency it sees, the engine's request
// slots (from --max-running, mamba slots or the pool estimate) and the
// requests of mean context its KV pool holds.
type RunningCap struct {
	Role     string `json:"role"`
	Running  int    `json:"max_running"`
	CappedBy string `json:"capped_by"`
	// Deployed is the running-cap flag the role is deployed with
	// (Plan.DeployedMaxRunning; 0: unset) and DeployedFrom where it came
	// from: what recipe emit writes.
	Deployed       int     `json:"deployed_max_running"`
	DeployedFrom   string  `json:"deployed_max_running_from"`
	ReqSlots       int     `json:"request_slots_per_rank"`
	ReqSlotsFrom   string  `json:"request_slots_from"`
	PoolTokens     int     `json:"pool_tokens_per_rank"`
	PoolRequests   int     `json:"pool_requests_at_mean_context"`
	MambaSlots     int     `json:"mamba_slots_per_rank"`
	MambaFrom      string  `json:"mamba_slots_from,omitempty"`
	HostTokens     int     `json:"hicache_tokens_per_rank"`
	CUDAGraphMaxBS int     `json:"cuda_graph_max_bs"`
	Fraction       float64 `json:"mem_fraction"`
	Note           string  `json:"note,omitempty"`
}

// runningCap names the binding limit of one instance. reserve is what the
// simulation's admission reserves for a request (Workload.MeanReservation;
// 0: none to report).
func runningCap(r role, e *Engine, mem Memory, conc int, meanCtx, reserve float64) RunningCap {
	dp := e.Par.AttentionDP()
	rc := RunningCap{Role: r.String(), ReqSlots: mem.ReqSlots, ReqSlotsFrom: mem.ReqSlotsFrom, PoolTokens: mem.TokensFit,
		MambaSlots: mem.MambaSlots, MambaFrom: mem.MambaFrom, HostTokens: mem.HostTokens, CUDAGraphMaxBS: e.CUDAGraphMaxBS, Fraction: mem.Fraction}
	if meanCtx > 0 {
		rc.PoolRequests = int(float64(mem.TokensFit)/meanCtx) * dp
	}
	rc.Running, rc.CappedBy = conc, "concurrency"
	if s := mem.ReqSlots * dp; s > 0 && s < rc.Running {
		rc.Running, rc.CappedBy = s, mem.ReqSlotsFrom
	}
	if r != rolePrefill && rc.PoolRequests < rc.Running {
		rc.Running, rc.CappedBy = max(rc.PoolRequests, 1), "KV pool tokens (requests of mean context)"
	}
	if r != rolePrefill && ceilDiv(rc.Running, dp) > e.CUDAGraphMaxBS {
		rc.Note = fmt.Sprintf("decode batches above cuda-graph-max-bs %d per rank run without CUDA graphs", e.CUDAGraphMaxBS)
	}
	if n := wholeOutputNote(r, e, mem, rc.Running, reserve); n != "" {
		if rc.Note != "" {
			n = rc.Note + "; " + n
		}
		rc.Note = n
	}
	if mem.HostTokens > 0 && mem.HostTokens <= mem.TokensFit && e.EngineName == "sglang" {
		n := fmt.Sprintf("a %d-token host tier is not larger than the %d-token device pool, which SGLang's HostKVCache refuses at start-up (give --hicache-size)", mem.HostTokens, mem.TokensFit)
		if rc.Note != "" {
			n = rc.Note + "; " + n
		}
		rc.Note = n
	}
	if !mem.LongestFits && mem.MaxRequest > 0 {
		n := fmt.Sprintf("the longest request (%d tokens) exceeds the %d-token pool; the engine rejects such requests", mem.MaxRequest, mem.TokensFit)
		if rc.Note != "" {
			n = rc.Note + "; " + n
		}
		rc.Note = n
	}
	return rc
}

// wholeOutputNote says when a vLLM decode worker's admission, which the
// simulation runs reserving a request's prompt and whole output in its
// rank's pool (TensorRT-LLM's default GUARANTEED_NO_EVICT rule; aggregated
// instances and SGLang's decode workers follow their engine's own rule,
// admission.go), runs fewer requests at once than running, the most the
// role runs at the workload's mean context: vLLM allocates pages as tokens
// are written and preempts. "" when the reservation does not bind or the
// role is not a vLLM decode worker.
func wholeOutputNote(r role, e *Engine, mem Memory, running int, reserve float64) string {
	if r != roleDecode || reserve <= 0 || mem.TokensFit <= 0 || e.EngineName != "vllm" {
		return ""
	}
	dp := e.Par.AttentionDP()
	whole := max(int(float64(mem.TokensFit)/reserve), 1) * dp
	if whole >= running {
		return ""
	}
	return fmt.Sprintf("admission reserves each request's prompt and whole output (%.0f tokens, TensorRT-LLM's rule), so at most %d run at once; vLLM, which allocates pages as tokens are written and preempts, would run up to %d: throughput and TTFT at this concurrency are pessimistic (README, Known limits)", reserve, whole, running)
}

func (r role) String() string {
	switch r {
	case rolePrefill:
		return "prefill"
	case roleDecode:
		return "decode"
	}
	return "agg"
}

// ServerConfig holds the server flags beyond the step model's: per-role
// caps, the mamba pool and the prefix cache.
type ServerConfig struct {
	// PrefillMaxRunning is --max-running-requests of disaggregated prefill
	// workers (0 = the concurrency a worker sees); Scenario.MaxRunning
	// applies to aggregated instances and decode workers, as the recipes
	// set them.
	PrefillMaxRunning int `json:"prefill_max_running,omitempty"`
	MambaCache        int `json:"mamba_cache,omitempty"` // --max-mamba-cache-size (0 = unset)
	// PrefillMambaCache is --max-mamba-cache-size of disaggregated prefill
	// workers (0 = MambaCache), as PrefillMaxRunning is to MaxRunning.
	PrefillMambaCache int `json:"prefill_mamba_cache,omitempty"`
	// PrefillMemFraction is the memory share of disaggregated prefill
	// workers (0 = the query's MemFraction), as PrefillMaxRunning is to
	// MaxRunning.
	PrefillMemFraction float64 `json:"prefill_mem_fraction,omitempty"`
	PageSize           int     `json:"page_size,omitempty"` // --page-size (0 = 64)
	// MambaStrategy is --mamba-scheduler-strategy: "" or "auto" (SGLang's
	// rule, mambaExtraBuffer), "no_buffer", "extra_buffer" or
	// "extra_buffer_lazy". It sizes the state slots a running request
	// takes where the radix cache is on.
	MambaStrategy string `json:"mamba_scheduler_strategy,omitempty"`
	// HiCacheRatio is --hicache-ratio (negative = no host tier; 0 with no
	// HiCacheGiB = the workload's default: for AgentX trace replays, which
	// every SGLang AgentX recipe runs with HiCache, AgentXDRAMUtilization of
	// the GPU's host DRAM; none otherwise).
	HiCacheRatio float64 `json:"hicache_ratio,omitempty"`
	HiCacheGiB   float64 `json:"hicache_gib,omitempty"` // --hicache-size in GB (wins over the ratio)
	// PrefillDraft loads the draft on disaggregated prefill workers too.
	// Off by default: the AgentX disaggregated base recipe passes no
	// speculative flags to its prefill role (only the TP2 override does),
	// so the prefill worker holds neither draft weights nor draft KV.
	PrefillDraft bool `json:"prefill_draft,omitempty"`
	// AutoMemFraction: a zero mem fraction means the engine's own rule
	// (SGLangAutoMemFraction) rather than DefaultMemFraction.
	AutoMemFraction bool `json:"auto_mem_fraction,omitempty"`
	// NoPrefixCache turns the radix cache off everywhere (decode workers
	// never have it: the recipes pass --disable-radix-cache there).
	NoPrefixCache bool `json:"no_prefix_cache,omitempty"`
}

// poolConfig is the planner input for one role seeing conc sessions.
func (sc *Scenario) poolConfig(r role, conc, chunk int, frac float64, gpu string) PoolConfig {
	s := sc.Server
	steps := sc.Spec.Steps
	if r == rolePrefill && !s.PrefillDraft {
		steps = 0
	}
	// The radix cache is on where requests can share a prefix: trace
	// replays and fixed workloads with --cached. A fixed random-token
	// workload has nothing to share and is planned with it off (modelling
	// choice: with it on, SGLang's 3 mamba slots a request would cap the
	// running requests; --max-mamba-cache-size sizes that pool).
	radix := !s.NoPrefixCache && r != roleDecode && (sc.Workload.Trace != nil || sc.Workload.Name != "fixed" || sc.Workload.CachedFraction > 0)
	mambaCache := s.MambaCache
	if r == rolePrefill && s.PrefillMambaCache > 0 {
		mambaCache = s.PrefillMambaCache
	}
	if r == rolePrefill && s.PrefillMemFraction > 0 {
		frac = s.PrefillMemFraction
	}
	c := PoolConfig{Role: r, MemFraction: frac, Steps: steps, Chunk: chunk, RadixCache: radix,
		MambaCache: mambaCache, PageSize: s.PageSize, HiCacheRatio: s.HiCacheRatio, HiCacheGiB: s.HiCacheGiB}
	c.ExtraBuffer, c.ExtraBufferLazy = mambaExtraBuffer(s.MambaStrategy, sc.Model.HFArch)
	switch {
	case c.HiCacheRatio < 0:
		c.HiCacheRatio = 0
	case c.HiCacheRatio == 0 && c.HiCacheGiB == 0 && sc.Workload.Trace != nil && sc.Engine.EngineName != "vllm" && !s.NoPrefixCache:
		// vLLM gets none: its recipes here carry no host KV tier; nor
		// does a pool without a prefix cache, which the tier extends.
		c.HiCacheGiB = AgentXHostTierGB(gpu)
	}
	run := sc.MaxRunning
	if r == rolePrefill {
		run = s.PrefillMaxRunning
	}
	switch {
	case run > 0:
	case sc.Workload.Trace == nil:
		// Closed loop: never more in flight than the sessions.
		run = conc
		c.RunningFrom = "concurrency per worker (no --max-running)"
	case sc.Engine.EngineName != "vllm" && sc.Engine.EngineName != "trtllm" && steps > 0:
		// A trace replay's trees run parallel subagents, so the sessions
		// are no cap. SGLang sets max_running_requests to 48 when it
		// speculates without one (server_args.py
		// _handle_speculative_decoding) and sizes the speculative state
		// buffers for it; a worker serving more trees than that is
		// deployed with one request per tree, as recipes raise it. With
		// no speculation, and on vLLM and TensorRT-LLM, the engine's own
		// limits decide (0).
		run = SGLangSpecDefaultRunning
		c.RunningFrom = fmt.Sprintf("SGLang's speculative default %d (no --max-running)", run)
		if conc > run {
			run = conc
			c.RunningFrom = fmt.Sprintf("session trees per worker, above SGLang's speculative default %d (no --max-running)", SGLangSpecDefaultRunning)
		}
	}
	c.MaxRunning = run
	if r == roleDecode {
		c.HiCacheRatio, c.HiCacheGiB = 0, 0
	}
	return c
}

// validate checks the server flags' ranges.
func (s ServerConfig) validate() error {
	switch {
	case s.PrefillMaxRunning < 0 || s.PrefillMaxRunning > 1<<20:
		return fmt.Errorf("--prefill-max-running %d: want 0..%d", s.PrefillMaxRunning, 1<<20)
	case s.MambaCache < 0 || s.MambaCache > 1<<20:
		return fmt.Errorf("--max-mamba-cache-size %d: want 0..%d", s.MambaCache, 1<<20)
	case !(s.PrefillMemFraction >= 0 && s.PrefillMemFraction <= 1):
		return fmt.Errorf("--prefill-mem-fraction %g: want (0, 1], or 0 for --mem-fraction", s.PrefillMemFraction)
	case s.PrefillMambaCache < 0 || s.PrefillMambaCache > 1<<20:
		return fmt.Errorf("--prefill-max-mamba-cache-size %d: want 0..%d", s.PrefillMambaCache, 1<<20)
	case !slices.Contains([]string{"", "auto", "no_buffer", "extra_buffer", "extra_buffer_lazy"}, s.MambaStrategy):
		return fmt.Errorf("--mamba-scheduler-strategy %q: want auto, no_buffer, extra_buffer or extra_buffer_lazy", s.MambaStrategy)
	case s.PageSize < 0 || s.PageSize > 4096:
		return fmt.Errorf("--page-size %d: want 0..4096 tokens", s.PageSize)
	case !(s.HiCacheRatio >= -1 && s.HiCacheRatio <= 1000):
		return fmt.Errorf("--hicache-ratio %g: want 0..1000 (host tier as a multiple of the device pool)", s.HiCacheRatio)
	case !(s.HiCacheGiB >= 0 && s.HiCacheGiB <= 1<<20):
		return fmt.Errorf("--hicache-size %g: want 0..%d GB", s.HiCacheGiB, 1<<20)
	}
	return nil
}

// mambaExtraBufferArchs are the architectures SGLang v0.5.14 runs the
// extra_buffer mamba strategy for (server_args.py
// _support_mamba_cache_extra_buffer, with the default triton linear
// attention backend).
var mambaExtraBufferArchs = map[string]bool{
	"Qwen3_5ForConditionalGeneration": true, "Qwen3_5MoeForConditionalGeneration": true,
	"Qwen3NextForCausalLM": true, "InternS2PreviewForConditionalGeneration": true,
	"MiniCPMV4_6ForConditionalGeneration": true, "BailingMoeV2_5ForCausalLM": true,
	"FalconH1ForCausalLM": true, "GraniteMoeHybridForCausalLM": true,
	"NemotronHForCausalLM": true, "NemotronHPuzzleForCausalLM": true,
}

// mambaExtraBuffer resolves --mamba-scheduler-strategy for a radix-cache
// role (the planner applies it only there, as _calculate_mamba_ratio
// does): SGLang v0.5.14's "auto" (server_args.py _handle_mamba_radix_cache)
// picks extra_buffer when the overlap scheduler is on or the page size is
// above 1 and the architecture supports it, otherwise no_buffer. The
// simulator's SGLang runs the overlap scheduler, so auto means
// extra_buffer for the architectures above.
func mambaExtraBuffer(strategy, arch string) (extra, lazy bool) {
	switch strategy {
	case "extra_buffer":
		return true, false
	case "extra_buffer_lazy":
		return true, true
	case "no_buffer":
		return false, false
	}
	return mambaExtraBufferArchs[arch], false
}
