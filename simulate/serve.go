package simulate

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"strconv"

	quant "github.com/specsim/specsim/internal/quantile"
	"github.com/specsim/specsim/simulate/acceptance"
	"github.com/specsim/specsim/simulate/agentx"
)

// Spec is the speculative-decoding setting of a run.
type Spec struct {
	Steps  int       // draft length k; 0 = no speculation
	AL     float64   // target acceptance length (bonus token included)
	Method string    // acceptance sampler (acceptance.Methods())
	Dist   []float64 // P(L = l) for the chain and empirical methods
}

// Serving knobs with the engines' usual values.
const (
	DefaultChunk       = 16384 // --chunked-prefill-size in the InferenceX AgentX recipes
	DefaultMemFraction = 0.9
	DefaultMethod      = acceptance.SGLangMatchExpected // SGLang's; DefaultMethodFor gives each engine its own
	maxSimEvents       = 20_000_000
	maxSimSeconds      = 7 * 24 * 3600
)

// DefaultMethodFor is the acceptance sampler of an engine's own forced
// acceptance, the one a run with --al follows when --method is not given:
// TensorRT-LLM's TLLM_SPEC_DECODE_FORCE_NUM_ACCEPTED_TOKENS (per request),
// vLLM's synthetic rejection sampler, and SGLang's
// SGLANG_SIMULATE_ACC_METHOD=match-expected otherwise ("" is SGLang).
func DefaultMethodFor(engine string) string {
	switch engine {
	case "trtllm":
		return acceptance.TRTLLM
	case "vllm":
		return acceptance.VLLMSynthetic
	}
	return DefaultMethod
}

// Scenario is one deployment under one load.
type Scenario struct {
	Model    *Model
	Topology Topology
	Engine   EngineConfig
	Workload Workload
	Conc     int // closed-loop sessions
	Spec     Spec
	// MaxRunning caps running requests per instance (0 = only the KV pool
	// and the concurrency limit it).
	MaxRunning  int
	Chunk       int     // chunked-prefill tokens per prefill forward (0 = DefaultChunk)
	MemFraction float64 // 0 = DefaultMemFraction
	Requests    int     // measured requests (0 = default)
	Seed        uint64
	Server      ServerConfig // the engine knobs of planner.go and the prefix cache

	engines map[Parallel]*Engine // shared across a sweep's scenarios (memoized step times)
	shared  *sweepMemo           // shared across a sweep's workers (nil: not)
}

// Percentiles holds p50 and p90.
type Percentiles struct {
	P50 float64 `json:"p50"`
	P90 float64 `json:"p90"`
}

// Result is what a scenario achieves.
type Result struct {
	Topology      string      `json:"topology"`
	Conc          int         `json:"conc"`
	Steps         int         `json:"steps"`
	TPOTms        float64     `json:"tpot_ms"`
	TTFTms        float64     `json:"ttft_ms"`
	Interactivity float64     `json:"interactivity"`
	TputPerGPU    float64     `json:"tput_per_gpu"`
	OutputPerGPU  float64     `json:"output_tput_per_gpu"`
	E2EL          Percentiles `json:"e2el_s"`
	AL            float64     `json:"al"`
	StepMS        StepReport  `json:"step_ms"`
	MemoryGiB     GiB         `json:"memory_gib"`
	// Extra detail beyond the issue's keys.
	TPOTp90ms               float64 `json:"tpot_ms_p90"`
	TTFTp90ms               float64 `json:"ttft_ms_p90"`
	ALRealized              float64 `json:"al_realized"`
	Method                  string  `json:"method"`
	GPUs                    int     `json:"gpus"`
	DecodeBatch             float64 `json:"decode_batch_mean"`
	Requests                int     `json:"requests"`
	Sim                     string  `json:"sim"` // "event" or "mean-field"
	NormalizedInteractivity float64 `json:"normalized_interactivity_p90"`
	// Limits says, per role, what caps its running requests (planner.go).
	Limits []RunningCap `json:"limits"`
	// Cache is the prefix cache's outcome (prefixcache.go); nil when off.
	Cache *CacheReport `json:"prefix_cache,omitempty"`
	// RankImbalance is the mean over decode steps of the fullest DP
	// rank's batch times the ranks over the batch (1 = even; DP
	// attention only, else 0).
	RankImbalance float64 `json:"dp_rank_imbalance,omitempty"`
	// Retracted counts the requests taken out of a running batch whose KV
	// pool ran short (SGLang's retractions, vLLM's preemptions;
	// admission.go), over the whole run: an aggregated instance prefills
	// them again, an SGLang decode worker loads their KV back from the host.
	Retracted int `json:"retracted,omitempty"`
	// AgentX is the trace replay's client side (agentx_workload.go).
	AgentX *AgentXReport `json:"agentx,omitempty"`
}

// StepReport is the mean decode iteration, in milliseconds, by part.
type StepReport struct {
	Total         float64      `json:"total"`
	Draft         float64      `json:"draft"`
	Verify        VerifyReport `json:"verify"`
	Communication float64      `json:"communication"`
	Overhead      float64      `json:"overhead"`
	// OverheadSplit is Overhead by cause (included in it, not added again).
	OverheadSplit OverheadReport `json:"overhead_split"`
	// Sources says where fixed costs and collectives come from (see
	// Resolved.CostNotes); filled by callers that report it.
	Sources []string `json:"sources,omitempty"`
}

// OverheadReport splits a step's fixed costs, in milliseconds.
type OverheadReport struct {
	Launch   float64 `json:"launch"`    // host launches not hidden by a CUDA graph
	LayerGap float64 `json:"layer_gap"` // inter-kernel gaps, layerGap per layer and forward
	Host     float64 `json:"host"`      // host scheduling the GPU waits for
}

// VerifyReport splits the verify (or plain decode) forward by op class.
type VerifyReport struct {
	Attention float64 `json:"attention"`
	MoE       float64 `json:"moe"`
	DenseGEMM float64 `json:"dense_gemm"`
	GDN       float64 `json:"gdn"`
	LMHead    float64 `json:"lm_head"`
	Norms     float64 `json:"norms"`
}

// Report converts a breakdown in seconds to milliseconds.
func (b Breakdown) Report() StepReport {
	ms := 1e3
	return StepReport{Total: b.Total() * ms, Draft: b.Draft * ms, Communication: b.Communication * ms, Overhead: b.Overhead * ms,
		Verify: VerifyReport{Attention: b.Attention * ms, MoE: b.MoE * ms, DenseGEMM: b.DenseGEMM * ms, GDN: b.GDN * ms,
			LMHead: b.LMHead * ms, Norms: b.Norms * ms},
		OverheadSplit: OverheadReport{Launch: b.Launch * ms, LayerGap: b.Gap * ms, Host: b.Host * ms}}
}

// InfeasibleError is a deployment that cannot hold the model and workload.
type InfeasibleError struct {
	Where string
	Mem   Memory
}

func (e *InfeasibleError) Error() string {
	return fmt.Sprintf("%s does not fit in memory:\n%s", e.Where, e.Mem.Explanation)
}

// role of a simulated instance.
type role int

const (
	roleAgg role = iota
	rolePrefill
	roleDecode
)

// request in flight.
type simRequest struct {
	// The lengths, gen, ctx and rank (what joining and leaving a decode
	// batch read and write) share one 64-byte line of the 128-byte
	// struct (slab). While the request runs, its lane's hot holds gen
	// and ctx (memberState).
	Request
	gen  int   // output tokens emitted
	ctx  int   // current context length
	rank int32 // the request's DP rank on its instance (server.go)
	// redo is the output a retracted request had emitted, which it
	// prefills again after its prompt (admission.go).
	redo int32
	// measured; admitted: holds its rank's slot and KV; cached: holds a
	// prefix-cache chain; held: holds its decode rank's slot and KV from
	// before its prefill (SGLang's decode preallocation).
	measured, admitted, cached, held bool
	hostLoad                         int32 // prompt tokens to load from the host tier (server side)
	done                             int   // prompt tokens prefilled (cached ones count as done)
	session                          int
	arrival                          float64
	firstToken                       float64 // time of the first output token
	finishAt                         float64 // time of the last output token
	// Server side (server.go): the session's shared prefix (-1: the
	// workload fixed Cached), the client's id.
	shared int
	from   int // session whose cached prefix shared refers to on a first turn, or -1
	id     int
	// The router targets the request holds (-1: none): its prefill (or
	// aggregated) target, and its decode target in a disaggregated pool.
	target, dtarget int32
}

// prompt is what r prefills: its prompt, and after a retraction the
// output it had emitted.
func (r *simRequest) prompt() int { return r.ISL + int(r.redo) }

// instance is one simulated engine (or one pipeline microbatch lane of it).
type instance struct {
	role    role
	eng     *Engine
	waiting []*simRequest
	// running is the decode batch in the order the ranks' schedulers
	// draw for it: by DP rank, each rank's requests in the order they
	// joined (join). ctxSum is their context lengths summed, live their
	// count per rank and top the largest count (stale: to recount).
	running  []*simRequest
	hot      []memberState
	acc      []int // decodeDone's scratch: each rank's accepted length
	ctxSum   int
	live     []int
	top      int
	topStale bool
	busy     bool
	capRun   int
	capTok   int // KV tokens the lane can hold
	sampler  acceptance.Sampler
	draws    []int
	// The lane's decode iterations summed in its own iteration order: the
	// step breakdown and the DP rank imbalance (fullest rank's batch
	// times the ranks over the batch). Simulate adds the lanes' sums in
	// lane order, so that how the lanes' iterations interleave in time
	// does not reach the last bits of the report.
	stepSum Breakdown
	imbSum  float64
	// The decode iterations computed ahead (decoderun.go) and, with a
	// shared draw per verify step, each DP rank's sampler as such and
	// its queue of draws (draw).
	run    decodeRun
	shared []acceptance.SharedDraw
	ahead  []drawQueue
	// batchFreeDraws: the lane's sampler may run ahead (batchFreeDraws).
	batchFreeDraws bool
	steps          stepGroup // the latest iterations priced alike, not yet in stepSum
	// Attention-DP ranks: each has its own scheduler (sampler draw per
	// verify step), request slots, KV pool and prefix cache.
	ranks   int
	rankRun []int
	rankTok []int
	// kv is how the lane reserves KV (admission.go); under kvShare ratio
	// is each rank's new_token_ratio and runOff, roundOff what admission
	// reserves for the requests the rank holds and for this round's.
	kv       kvPolicy
	ratio    []float64
	runOff   []float64
	roundOff []int
	// retracted is kick's scratch: the requests a short pool gave up;
	// retractions counts them. resume holds a kvDecodeReserve lane's
	// retracted requests, whose KV waits on the host, first retracted
	// first.
	retracted   []*simRequest
	retractions int
	resume      []*simRequest
	// pre: requests routed to this decode lane that wait for their
	// rank's slot and KV before their prefill may start, in arrival
	// order (SGLang's PreallocQueue); preBlocked is preallocate's scratch.
	pre        []*simRequest
	preBlocked []bool
	samplers   []acceptance.Sampler
	caches     []*prefixCache
	target0    int // router target of rank 0 (entry instances)
	// The batch in flight, kept for its completion event and reused
	// (a lane runs one batch at a time): the prefill chunks and their
	// requests, the decode members in draw order (running as the
	// iteration started), and the completions.
	parts       []PrefillPart
	ctxMembers  []*simRequest
	members     []*simRequest
	prefillDone func(float64)
	decodeDone  func(float64)
}

// event is what happens at one of the event heap's times (heapEntry).
type event struct {
	inst int           // instance that finishes work, or that req arrives at
	req  *simRequest   // an arrival; nil for a completion
	fin  func(float64) // work completion
	// run marks the end of a decode run (decoderun.go), current while gen
	// is its lane's run.gen; a cut retires it.
	run bool
	gen int64
}

// eventHeap is a binary min-heap of events by (t, seq). seq is unique, so
// the order is total and the pops come out in the same sequence whatever
// the heap's internal layout; push and pop are container/heap's up and
// down on the concrete type (no interface calls in the event loop). An
// entry holds its keys and its event's index in the simulation's arena:
// no pointer, so sifting reads no event and needs no write barrier.
type eventHeap []heapEntry

type heapEntry struct {
	t   float64
	seq int64
	ev  int32
}

func (h eventHeap) less(i, j int) bool {
	if h[i].t != h[j].t {
		return h[i].t < h[j].t
	}
	return h[i].seq < h[j].seq
}

func (h *eventHeap) push(e heapEntry) {
	*h = append(*h, e)
	s := *h
	for j := len(s) - 1; j > 0; {
		i := (j - 1) / 2
		if !s.less(j, i) {
			break
		}
		s[i], s[j] = s[j], s[i]
		j = i
	}
}

func (h *eventHeap) pop() heapEntry {
	s := *h
	n := len(s) - 1
	s[0], s[n] = s[n], s[0]
	for i := 0; ; {
		j := 2*i + 1
		if j >= n {
			break
		}
		if j2 := j + 1; j2 < n && s.less(j2, j) {
			j = j2
		}
		if !s.less(j, i) {
			break
		}
		s[i], s[j] = s[j], s[i]
		i = j
	}
	e := s[n]
	*h = s[:n]
	return e
}

// ErrNoProfiledRequest is an AgentX replay whose profiled window held no
// request: the window (--agentx duration) is too short for the deployment.
var ErrNoProfiledRequest = errors.New("agentx replay profiled no request")

// Plan is a scenario resolved into engines, memory and limits, ready to run
// by event simulation (Simulate) or mean-field estimate (Estimate).
type Plan struct {
	sc       Scenario
	agg      *Engine
	prefill  *Engine
	decode   *Engine
	aggMem   Memory
	preMem   Memory
	decMem   Memory
	gpus     int
	chunk    int
	memFrac  float64
	gpuName  string
	transfer func(tokens int) float64
	caps     []RunningCap // per role, what limits its running requests
}

// DeployedMaxRunning is the running-request cap each role of the plan is
// deployed with, as the engine's instance-wide flag (SGLang
// --max-running-requests; vLLM --max-num-seqs and TensorRT-LLM
// max_batch_size before their per-rank split): the aggregated instance or
// the prefill workers first, then the decode workers; 0 where the flag is
// left to the engine's default.
func (p *Plan) DeployedMaxRunning() (first, decode int) {
	if len(p.caps) > 0 {
		first = p.caps[0].Deployed
	}
	if len(p.caps) > 1 {
		decode = p.caps[1].Deployed
	}
	return first, decode
}

// Limits is what caps each role's running requests, in role order (the
// aggregated instance or the prefill workers, then the decode workers).
func (p *Plan) Limits() []RunningCap { return p.caps }

// sizeReplayCap is pc, whose running cap the replay's rule chose
// (poolConfig), lowered where it runs idle or does not fit, and its
// memory. SGLang sizes the speculative state for every request the cap
// admits, while a role that decodes runs no more requests than its KV
// pool holds at the workload's mean context (runningCap): a cap above that
// buys state no request uses and takes it from the KV pool, and a recipe
// author lowers it, as they do when the worker does not start. So the cap
// is the most requests, up to the rule's, with which the worker fits and,
// on a role that decodes, whose state leaves KV for them all at the mean
// context; pc and mem unchanged when not even one does.
func (sc *Scenario) sizeReplayCap(e *Engine, r role, pc PoolConfig, mem Memory) (PoolConfig, Memory) {
	meanCtx := sc.Workload.MeanContext()
	// SGLang divides the cap over the attention-DP ranks (floored): the
	// cap is a whole number of requests per rank.
	dp := e.Par.AttentionDP()
	ok := func(n int, m Memory) bool {
		if !m.Feasible {
			return false
		}
		return r == rolePrefill || meanCtx <= 0 || int(float64(m.TokensFit)/meanCtx)*dp >= n
	}
	at := func(perRank int, why string) (PoolConfig, Memory) {
		c := pc
		c.MaxRunning = perRank * dp
		if why != "" {
			c.RunningFrom = fmt.Sprintf("%s, set to %d: %s", pc.RunningFrom, c.MaxRunning, why)
		}
		return c, e.plannedMemory(&sc.Workload, c)
	}
	top := max(pc.MaxRunning/dp, 1)
	if top*dp != pc.MaxRunning {
		pc, mem = at(top, fmt.Sprintf("%d a DP rank, as SGLang divides it", top))
	}
	if ok(pc.MaxRunning, mem) {
		return pc, mem
	}
	if _, m := at(1, ""); !ok(dp, m) {
		if m.Feasible {
			return at(1, "one request a DP rank, whose state leaves KV short of the mean context")
		}
		return pc, mem
	}
	lo, hi := 1, top // ok at lo, not at hi (requests per rank)
	for hi-lo > 1 {
		mid := lo + (hi-lo)/2
		if _, m := at(mid, ""); ok(mid*dp, m) {
			lo = mid
		} else {
			hi = mid
		}
	}
	why := "the most with which the worker fits"
	if _, m := at(lo+1, ""); m.Feasible {
		why = "the most whose speculative state leaves KV for them all at the mean context"
	}
	return at(lo, why)
}

// NewPlan resolves a scenario: engines per role and memory feasibility.
// It returns *InfeasibleError when weights and caches cannot fit.
func NewPlan(sc Scenario, gpu GPUSpec) (*Plan, error) {
	if sc.Conc < 1 || sc.Conc > 1<<16 {
		return nil, &Error{Field: "Conc", Value: strconv.Itoa(sc.Conc), Reason: fmt.Sprintf("want 1..%d sessions", 1<<16)}
	}
	if err := sc.Workload.Validate(); err != nil {
		return nil, err
	}
	if sc.Spec.Steps < 0 || sc.Spec.Steps > acceptance.MaxDraftLength {
		return nil, &Error{Field: "Steps", Value: strconv.Itoa(sc.Spec.Steps), Reason: fmt.Sprintf("want 0..%d", acceptance.MaxDraftLength)}
	}
	if sc.Spec.Steps > 0 && sc.Model.Draft.Kind == "" {
		return nil, fmt.Errorf("%s has no draft module to speculate with", sc.Model.Name)
	}
	p := &Plan{sc: sc, chunk: sc.Chunk, memFrac: sc.MemFraction, gpus: sc.Topology.GPUs(), gpuName: gpu.GPU.Name}
	if p.chunk <= 0 {
		p.chunk = DefaultChunk
	}
	if p.memFrac == 0 && !sc.Server.AutoMemFraction {
		p.memFrac = DefaultMemFraction
	}
	if !(p.memFrac >= 0 && p.memFrac <= 1) {
		return nil, &Error{Field: "MemFraction", Value: fmt.Sprint(p.memFrac), Reason: "want (0, 1], or 0 for the engine's own rule"}
	}
	build := func(par Parallel, r role, what string, conc int) (*Engine, Memory, error) {
		e := sc.engines[par]
		if e == nil {
			var err error
			if e, err = NewEngine(sc.Model, gpu.withDomain(), par, sc.Engine); err != nil {
				return nil, Memory{}, fmt.Errorf("%s: %w", what, err)
			}
			e.shared = sc.shared
			if sc.engines != nil {
				sc.engines[par] = e
			}
		}
		pc := sc.poolConfig(r, conc, p.chunk, p.memFrac, gpu.GPU.Name)
		mem := e.plannedMemory(&sc.Workload, pc)
		if pc.RunningFrom != "" && sc.Workload.Trace != nil {
			pc, mem = sc.sizeReplayCap(e, r, pc, mem)
		}
		flag, flagFrom := pc.MaxRunning, pc.runningSource()
		switch {
		case flag == 0 && e.EngineName != "sglang":
			// vLLM's and TensorRT-LLM's default, as planOther lowered it.
			flag, flagFrom = mem.ReqSlots*e.Par.AttentionDP(), mem.ReqSlotsFrom
		case flag == 0:
			flagFrom = "SGLang's pool-derived default"
		case flag < e.Par.AttentionDP():
			// SGLang floors the cap's division over the DP ranks; the
			// planner runs one a rank, which this flag deploys.
			flag = e.Par.AttentionDP()
			flagFrom += fmt.Sprintf(", raised to one request a DP rank (%d)", flag)
		}
		if !mem.Feasible {
			mem.Explanation += sc.runningHint(e, r, pc, conc)
			return nil, mem, &InfeasibleError{Where: fmt.Sprintf("%s (%s on %s, %s)", what, par, gpu.GPU.Name, sc.Model.Name), Mem: mem}
		}
		seen := conc
		if sc.Workload.Trace != nil {
			seen = 1 << 30 // trees are not a cap on requests (subagents run in parallel)
		}
		rc := runningCap(r, e, mem, seen, sc.Workload.MeanContext(), sc.Workload.MeanReservation())
		rc.Deployed, rc.DeployedFrom = flag, flagFrom
		p.caps = append(p.caps, rc)
		return e, mem, nil
	}
	t := sc.Topology
	var err error
	if !t.Disagg {
		p.agg, p.aggMem, err = build(t.Agg, roleAgg, "agg instance", sc.Conc)
		return p, err
	}
	perP := ceilDiv(sc.Conc, t.PrefillWorkers)
	if p.prefill, p.preMem, err = build(t.Prefill, rolePrefill, "prefill worker", perP); err != nil {
		return p, err
	}
	perD := ceilDiv(sc.Conc, t.DecodeWorkers)
	if p.decode, p.decMem, err = build(t.Decode, roleDecode, "decode worker", perD); err != nil {
		return p, err
	}
	// KV moves from every prefill GPU to the decode GPUs; inside one
	// NVLink domain over NVLink, otherwise over the scale-out network.
	g := gpu.GPU
	bw := g.NetworkBandwidth
	if t.GPUs() <= gpu.domain() {
		bw = g.NVLinkBandwidth
	}
	lanes := float64(min(t.Prefill.GPUs(), t.Decode.GPUs()))
	bytesPerToken := sc.Model.KVBytesPerToken(p.decode.KV) * float64(sc.Model.FullAttentionLayers())
	state := p.decode.stateBytes(0) * float64(t.Decode.AttentionTP()*t.Decode.PP)
	p.transfer = func(tokens int) float64 {
		return 0.5e-3 + (float64(tokens)*bytesPerToken+state)/(bw*lanes)
	}
	return p, nil
}

// runningHint explains a refusal that comes from the closed-loop default
// of --max-running (the sessions a role sees, as the InferenceX MTP
// scripts pass --max-running-requests $CONC): with the radix cache off
// SGLang sizes the mamba pool to max-running requests
// (model_runner_kv_cache_mixin.py handle_max_mamba_cache) and, speculating,
// their intermediate states too, so a large concurrency can leave no KV
// page where a lower cap would run. It names the largest --max-running
// that fits (bisected on the planner), or "" when the user set the cap,
// the workload is a trace replay, or even one running request does not fit.
func (sc *Scenario) runningHint(e *Engine, r role, pc PoolConfig, conc int) string {
	set := sc.MaxRunning
	if r == rolePrefill {
		set = sc.Server.PrefillMaxRunning
	}
	if set > 0 || sc.Workload.Trace != nil || pc.MaxRunning != conc || conc < 2 {
		return ""
	}
	fits := func(n int) bool {
		c := pc
		c.MaxRunning = n
		return e.PlanMemory(&sc.Workload, c).Feasible
	}
	if !fits(1) {
		return ""
	}
	lo, hi := 1, conc // fits(lo), !fits(hi)
	for hi-lo > 1 {
		if mid := lo + (hi-lo)/2; fits(mid) {
			lo = mid
		} else {
			hi = mid
		}
	}
	return fmt.Sprintf("\n  --max-running defaults to the %d sessions the %s role sees (a closed loop never has more in flight; the InferenceX MTP scripts pass --max-running-requests $CONC), and SGLang sizes the state pools to it; at most %d fit: pass --max-running %d and the other sessions queue", conc, r, lo, lo)
}

// Memory reports the per-GPU memory of the instance that decodes.
func (p *Plan) memory() Memory {
	if p.agg != nil {
		return p.aggMem
	}
	return p.decMem
}

func (p *Plan) decodeEngine() *Engine {
	if p.agg != nil {
		return p.agg
	}
	return p.decode
}

func (p *Plan) newSampler(seed uint64) (acceptance.Sampler, error) {
	s := p.sc.Spec
	if s.Steps == 0 {
		return nil, nil
	}
	method := s.Method
	if method == "" {
		method = DefaultMethodFor(p.decodeEngine().EngineName)
	}
	return acceptance.New(acceptance.Config{Method: method, K: s.Steps, TargetAL: s.AL, Dist: s.Dist, Seed: seed})
}

// lanes builds the simulated instances: a PP instance runs PP microbatch
// lanes, each with 1/PP of its running slots and KV pool.
func (p *Plan) lanes() ([]*instance, []int, []int, error) {
	var inst []*instance
	var entry, decodeIdx []int
	add := func(r role, e *Engine, mem Memory, n int, concPerInst int) error {
		for range n {
			pp := e.Par.PP
			capRun := max(mem.MaxRunning, 1)
			if p.sc.Workload.Trace == nil {
				capRun = min(concPerInst, capRun)
			}
			tokFit := mem.TokensFit * e.Par.AttentionDP()
			dp := e.Par.AttentionDP()
			for range pp {
				s, err := p.newSampler(p.sc.Seed*7919 + uint64(len(inst)) + 1)
				if err != nil {
					return err
				}
				in := &instance{role: r, eng: e, capRun: max(ceilDiv(capRun, pp), 1), capTok: max(tokFit/pp, 1), sampler: s,
					ranks: dp, rankRun: make([]int, dp), rankTok: make([]int, dp), live: make([]int, dp), samplers: []acceptance.Sampler{s}, batchFreeDraws: batchFreeDraws(s)}
				for j := 1; j < dp && s != nil; j++ {
					sj, err := p.newSampler(p.sc.Seed*7919 + uint64(len(inst)) + 1 + uint64(j)<<32)
					if err != nil {
						return err
					}
					in.samplers = append(in.samplers, sj)
				}
				if s != nil && in.batchFreeDraws {
					in.ahead = make([]drawQueue, dp)
					for _, sj := range in.samplers {
						in.shared = append(in.shared, sj.(acceptance.SharedDraw))
					}
				}
				if r != roleDecode && p.cacheOn() {
					for range dp {
						in.caches = append(in.caches, newPrefixCache(mem.PageSize, mem.TokensFit/pp, mem.HostTokens/pp))
					}
				}
				if r == roleDecode {
					in.kv = decodeKVPolicy(e.EngineName)
				}
				if r == roleAgg {
					in.kv = p.aggKVPolicy()
					in.ratio = make([]float64, dp)
					for j := range in.ratio {
						in.ratio[j] = sglangInitRatio
					}
				}
				if r != roleDecode {
					entry = append(entry, len(inst))
				}
				if r != rolePrefill {
					decodeIdx = append(decodeIdx, len(inst))
				}
				inst = append(inst, in)
			}
		}
		return nil
	}
	t := p.sc.Topology
	var err error
	if !t.Disagg {
		err = add(roleAgg, p.agg, p.aggMem, 1, p.sc.Conc)
	} else {
		if err = add(rolePrefill, p.prefill, p.preMem, t.PrefillWorkers, ceilDiv(p.sc.Conc, t.PrefillWorkers)); err == nil {
			err = add(roleDecode, p.decode, p.decMem, t.DecodeWorkers, ceilDiv(p.sc.Conc, t.DecodeWorkers))
		}
	}
	return inst, entry, decodeIdx, err
}

// requestCount is how many requests a run measures.
func (p *Plan) requestCount() (warmup, measured int) {
	measured = p.sc.Requests
	if measured <= 0 {
		measured = max(4*p.sc.Conc, 200)
	}
	return p.sc.Conc, measured
}

// Simulate replays the scenario through continuous batching, event by
// event: prefill batches (chunked, prefill first as SGLang schedules; under
// TensorRT-LLM the chunks ride in the generation iterations instead, see
// Engine.MixedExtra), decode iterations whose accepted lengths come from the
// engine's sampler, closed loop sessions that send their next request when
// the previous one ends.
func (p *Plan) Simulate() (*Result, error) { return p.shapeChecked(p.simulate()) }

// shapeChecked returns the first shape an engine of the plan priced that
// no kernel runs (Engine.Err) in place of the result: such a step was
// priced wrong, and so is anything built on it.
func (p *Plan) shapeChecked(r *Result, err error) (*Result, error) {
	for _, e := range []*Engine{p.agg, p.prefill, p.decode} {
		if e != nil && e.Err() != nil {
			return nil, fmt.Errorf("%s on %s: %w", p.sc.Model.Name, p.gpuName, e.Err())
		}
	}
	return r, err
}

func (p *Plan) simulate() (*Result, error) {
	if err := p.checkWork(); err != nil {
		return nil, err
	}
	inst, entry, decodeIdx, err := p.lanes()
	if err != nil {
		return nil, err
	}
	srv := p.newServer(inst, entry, decodeIdx)
	rp, err := p.newReplay()
	if err != nil {
		return nil, err
	}
	var cachedTok, inputTok float64
	rng := rand.New(rand.NewPCG(p.sc.Seed, 0x5eed))
	warmup, measuredN := p.requestCount()
	var (
		h         eventHeap
		seq       int64
		now       float64
		issued    int
		finished  []*simRequest
		windowT0  = -1.0
		tally     decodeTally
		completed int
		replayErr error
		events    int
	)
	var evs []event  // the events pending, by heapEntry.ev
	var free []int32 // slots of evs fired, for reuse
	push := func(t float64, inst int, req *simRequest, fin func(float64)) int32 {
		var i int32
		if n := len(free); n > 0 {
			i, free = free[n-1], free[:n-1]
		} else {
			i = int32(len(evs))
			evs = append(evs, event{})
		}
		seq++
		evs[i] = event{inst: inst, req: req, fin: fin}
		h.push(heapEntry{t, seq, i})
		return i
	}
	// pushRun schedules the end of lane i's decode run at t.
	pushRun := func(t float64, i int) {
		ev := &evs[push(t, i, nil, inst[i].decodeDone)]
		ev.run, ev.gen = true, inst[i].run.gen
	}
	var kick func(i int)
	var preallocate func(in *instance, t float64)
	var release func(in *instance, r *simRequest, t float64)
	// route picks a new request's entry instance and rank (and, with
	// SGLang disaggregated, its decode rank) and returns the instance it
	// goes to first: the entry instance, or the decode lane where it
	// waits for preallocation.
	route := func(r *simRequest) int {
		tg := srv.rt.route(r.session, r.ISL+r.OSL, now)
		r.target, r.rank = int32(tg), int32(srv.targetRank[tg])
		if srv.decodeAtDispatch {
			// SGLang: the decode rank preallocates first (preallocate).
			r.dtarget = int32(srv.drt.route(r.session, r.ISL, now))
			return srv.decodeInst[r.dtarget]
		}
		return srv.targetInst[tg]
	}
	// Requests are allocated in blocks (a simulation holds every one of
	// them to its end): one allocation per 256 instead of one each.
	var slab []simRequest
	newRequest := func(r simRequest) *simRequest {
		if len(slab) == 0 {
			slab = make([]simRequest, 256)
		}
		q := &slab[0]
		*q, slab = r, slab[1:]
		return q
	}
	issue := func(session int, t float64) {
		r := newRequest(simRequest{Request: p.sc.Workload.Sample(rng), session: session, arrival: t, shared: -1, from: -1, target: -1, dtarget: -1})
		r.done = r.Cached
		r.measured = issued >= warmup && issued < warmup+measuredN
		issued++
		push(t, route(r), r, nil)
	}
	issueReplay := func(q agentx.Request) {
		r := newRequest(simRequest{Request: Request{ISL: q.Input, OSL: q.Output}, session: q.Session, arrival: q.Arrival,
			shared: q.Shared, from: q.From, id: q.ID, measured: q.Phase == agentx.Profile, target: -1, dtarget: -1})
		if !p.cacheOn() {
			r.shared = 0
		}
		now = max(now, q.Arrival)
		push(q.Arrival, route(r), r, nil)
	}
	finish := func(r *simRequest, t float64) {
		r.finishAt = t
		completed++
		if rp != nil {
			if err := rp.Complete(r.id, r.firstToken, t); err != nil && replayErr == nil {
				replayErr = err
			}
			return
		}
		if r.measured {
			finished = append(finished, r)
		}
		if completed == warmup && windowT0 < 0 {
			windowT0 = t
		}
		if issued < warmup+measuredN+p.sc.Conc {
			issue(r.session, t)
		}
	}
	// admit gives a request its rank's slot and KV the first time it is
	// scheduled: from the prefix cache (hit decided here) or, without one,
	// from the rank's token pool. busy: the rank holds other requests (an
	// idle rank takes a request even when it is longer than the pool).
	admit := func(in *instance, r *simRequest) bool {
		rk := r.rank
		busy := in.rankRun[rk] > 0
		need := r.ISL + r.OSL
		if in.role == rolePrefill {
			need = r.ISL
		}
		if in.caches != nil && r.shared >= 0 {
			hit, ok := in.caches[rk].acquire(r.session, r.from, r.shared, r.ISL, need, now)
			if !ok && busy {
				return false
			}
			if ok {
				r.cached = true
				r.Cached = min(hit.Device+hit.Host, r.ISL-1)
				r.hostLoad = int32(min(hit.Host, r.Cached))
			} else {
				r.Cached = 0
			}
			r.done = r.Cached
		} else if r.shared >= 0 {
			r.Cached, r.done = 0, 0
		}
		if r.measured && r.shared >= 0 && r.redo == 0 {
			cachedTok += float64(r.Cached)
			inputTok += float64(r.ISL)
		}
		if !r.cached && in.role != rolePrefill {
			if in.kv != kvWhole {
				// The prompt's KV (and any output a retraction made it
				// prefill again); the output takes KV as it is written.
				prompt := r.prompt()
				if busy && !in.admits(r, prompt, p.sc.Spec.Steps) {
					return false
				}
				in.rankTok[rk] += prompt
				if in.kv == kvShare {
					in.roundOff[rk] += clippedOutput(r)
				}
			} else {
				if busy && in.rankTok[rk]+need > in.rankPool() {
					return false
				}
				in.rankTok[rk] += need
			}
		}
		in.rankRun[rk]++
		r.admitted = true
		return true
	}
	// preallocate gives the requests waiting at decode lane in their
	// rank's slot and KV, first come first served per rank (SGLang's
	// pop_preallocated stops at the first request that does not fit), and
	// sends each one given them to its prefill instance at time t: with
	// SGLang the prefill waits for that handshake (prefill.py's bootstrap
	// queue). An idle rank takes a request even when it is longer than the
	// pool, as admission does. A rank's request slots are its running cap
	// plus, when that cap is at most 32, twice as many for preallocated
	// requests (model_runner_kv_cache_mixin's DecodeReqToTokenPool
	// pre_alloc_size); the running batch itself stays within the cap.
	preallocate = func(in *instance, t float64) {
		rankCap := max(ceilDiv(in.capRun, in.ranks), 1)
		slots := rankCap
		if rankCap <= 32 {
			slots += 2 * rankCap
		}
		if len(in.preBlocked) < in.ranks {
			in.preBlocked = make([]bool, in.ranks)
		}
		blocked := in.preBlocked[:in.ranks]
		clear(blocked)
		nBlocked := 0
		if in.kv == kvDecodeReserve && len(in.resume) > 0 {
			// resume_retracted_reqs runs first, each DP rank's scheduler
			// over its own queue, and stops at the rank's first request
			// that does not fit: its KV comes back from the host.
			back := in.resume[:0]
			for _, r := range in.resume {
				rk := int(r.rank)
				if blocked[rk] || in.rankRun[rk] >= slots || !in.decodeFits(rk, r.ctx) {
					blocked[rk] = true
					back = append(back, r)
					continue
				}
				in.rankTok[rk] += r.ctx
				in.rankRun[rk]++
				r.held = true
				load := 0.0
				if srv.hostBW > 0 {
					load = float64(r.ctx) * in.eng.kvPerToken(p.sc.Spec.Steps > 0) / srv.hostBW
				}
				push(t+load, srv.decodeInst[r.dtarget], r, nil)
			}
			clear(in.resume[len(back):])
			in.resume = back
			// A rank with retracted requests waiting preallocates no
			// new one (they resume first).
			for _, b := range blocked {
				if b {
					nBlocked++
				}
			}
		}
		keep := in.pre[:0]
		for j, r := range in.pre {
			if nBlocked == in.ranks {
				keep = append(keep, in.pre[j:]...)
				break
			}
			rk := srv.decodeRank[r.dtarget]
			need := r.ISL + r.OSL
			fits := in.rankTok[rk]+need <= in.rankPool()
			if in.kv == kvDecodeReserve {
				need = r.ISL // the prompt's KV; the output's is written as it decodes
				fits = in.decodeFits(rk, need)
			}
			if !blocked[rk] && in.rankRun[rk] < slots && (fits || in.rankRun[rk] == 0) {
				in.rankTok[rk] += need
				in.rankRun[rk]++
				r.held = true
				push(t, srv.targetInst[r.target], r, nil)
				continue
			}
			if !blocked[rk] {
				blocked[rk] = true
				nBlocked++
			}
			keep = append(keep, r)
		}
		clear(in.pre[len(keep):])
		in.pre = keep
	}
	// release returns what admit (or preallocate) took, at time t, and
	// lets the decode lane preallocate for the requests it freed room for.
	release = func(in *instance, r *simRequest, t float64) {
		in.rankRun[r.rank]--
		switch {
		case r.cached:
			kept := r.ISL + r.OSL
			if in.role == rolePrefill {
				kept = r.ISL
			}
			in.caches[r.rank].release(r.session, kept, t)
			r.cached = false
		case in.kv != kvWhole:
			in.rankTok[r.rank] -= r.ctx
		case in.role != rolePrefill:
			in.rankTok[r.rank] -= r.ISL + r.OSL
		}
		if r.target >= 0 {
			srv.rt.done(int(r.target), r.ISL+r.OSL)
			r.target = -1
		}
		if r.dtarget >= 0 && in.role == roleDecode {
			srv.drt.done(int(r.dtarget), r.ISL)
			r.dtarget = -1
		}
		if len(in.pre) > 0 || len(in.resume) > 0 {
			preallocate(in, t)
		}
	}
	// advanceContexts moves the admitted chunks of in on at time t:
	// finished prompts emit their first token and start generating (or go
	// to a decode worker).
	advanceContexts := func(in *instance, t float64) {
		parts, ctxMembers := in.parts, in.ctxMembers
		prompted := 0
		for j, r := range ctxMembers {
			r.done += parts[j].New
			if r.done >= r.prompt() {
				prompted++
			}
		}
		// Drop the finished prompts from the queue, in order. Only this
		// batch's members moved (every other waiting request has
		// done < ISL since admit caps a hit at ISL-1), and they were
		// drawn from the queue's front, so the scan stops after the last
		// of them instead of walking a long queue on every batch.
		keep := in.waiting[:0]
		for j, r := range in.waiting {
			if prompted == 0 {
				keep = append(keep, in.waiting[j:]...)
				break
			}
			if r.done < r.prompt() {
				keep = append(keep, r)
			} else {
				prompted--
			}
		}
		clear(in.waiting[len(keep):])
		in.waiting = keep
		for _, r := range ctxMembers {
			if r.done < r.prompt() {
				continue
			}
			// The prefill's last position samples the next token: the
			// first, or after a retraction the next after those emitted.
			r.gen = int(r.redo) + 1
			r.ctx = r.ISL + int(r.redo) + 1
			if in.kv != kvWhole {
				in.rankTok[r.rank]++
			}
			if in.role == rolePrefill {
				release(in, r, t)
				r.admitted = false
				if r.dtarget < 0 {
					r.dtarget = int32(srv.drt.route(r.session, r.ISL, t))
				}
				d := srv.decodeInst[r.dtarget]
				r.rank = int32(srv.decodeRank[r.dtarget])
				arr := t + p.transfer(r.ISL)
				r.firstToken = arr
				if r.gen >= r.OSL {
					if r.held {
						if inst[d].kv != kvWhole {
							inst[d].rankTok[r.rank]++ // as if it had joined with its first token
						}
						release(inst[d], r, t)
						r.held = false
					} else {
						srv.drt.done(int(r.dtarget), r.ISL)
						r.dtarget = -1
					}
					finish(r, arr)
					continue
				}
				push(arr, d, r, nil)
				continue
			}
			if r.redo == 0 {
				r.firstToken = t
			}
			if r.gen >= r.OSL {
				release(in, r, t)
				finish(r, t)
				continue
			}
			in.join(r)
		}
	}
	kick = func(i int) {
		in := inst[i]
		if in.busy {
			return
		}
		rankCap := max(ceilDiv(in.capRun, in.ranks), 1)
		// Admit contexts within the token budget: a prefill batch first
		// (SGLang runs one whenever it can be formed), or chunks carried by
		// the next generation iteration (TensorRT-LLM in-flight batching).
		parts, ctxMembers := in.parts[:0], in.ctxMembers[:0]
		if in.role != roleDecode && len(in.waiting) > 0 {
			budget := p.chunk
			if in.kv == kvShare {
				in.shareOffsets()
			}
			for _, r := range in.waiting {
				if budget <= 0 {
					break
				}
				if !r.admitted && (in.rankRun[r.rank] >= rankCap || !admit(in, r)) {
					// Each DP rank schedules its own queue; one rank
					// being full does not hold back another's.
					if in.ranks > 1 {
						continue
					}
					break
				}
				n := min(r.prompt()-r.done, budget)
				parts = append(parts, PrefillPart{New: n, Before: r.done, Last: r.done+n >= r.prompt()})
				ctxMembers = append(ctxMembers, r)
				budget -= n
			}
		}
		if last := len(in.ctxMembers); last > len(ctxMembers) {
			clear(ctxMembers[len(ctxMembers):last]) // the previous batch's, in the same array
		}
		in.parts, in.ctxMembers = parts, ctxMembers
		hostLoad := 0
		for _, r := range ctxMembers {
			hostLoad += int(r.hostLoad)
			r.hostLoad = 0
		}
		srv.noteLoad(hostLoad)
		mixed := in.role == roleAgg && in.eng.MixesContext() && len(in.running) > 0
		if len(parts) > 0 && !mixed {
			dt := in.eng.prefillTime(parts, p.sc.Spec.Steps > 0 && (in.role != rolePrefill || p.sc.Server.PrefillDraft))
			in.busy = true
			push(now+srv.prefillWithLoad(dt, hostLoad), i, nil, in.prefillDone)
			return
		}
		if in.role == roleDecode {
			// Admit transferred requests into free slots and KV of the
			// rank the router sent them to; each rank's scheduler has its
			// own queue, so a full rank holds back only its own requests.
			// The client sees the first token (the prefill's) when the
			// request joins the running batch (SGLang's process_prebuilt
			// outputs it there), not when its KV lands.
			keep := in.waiting[:0]
			for _, r := range in.waiting {
				if r.held {
					if in.live[r.rank] < rankCap {
						r.admitted = true
						if r.redo == 0 {
							r.firstToken = now
							if in.kv != kvWhole {
								in.rankTok[r.rank]++ // the first token, decoded from here on
							}
						}
						in.join(r)
					} else {
						keep = append(keep, r)
					}
					continue
				}
				rk := r.rank
				need := r.ISL + r.OSL
				if in.rankRun[rk] < rankCap && (in.rankTok[rk]+need <= in.rankPool() || in.rankRun[rk] == 0) {
					in.rankTok[rk] += need
					in.rankRun[rk]++
					r.admitted = true
					r.firstToken = now
					in.join(r)
				} else {
					keep = append(keep, r)
				}
			}
			clear(in.waiting[len(keep):])
			in.waiting = keep
		}
		k := p.sc.Spec.Steps
		if in.kv != kvWhole {
			if len(in.running) == 0 {
				if in.kv == kvShare {
					for rk := range in.ratio {
						in.ratio[rk] = sglangInitRatio // the scheduler idles
					}
				}
				return
			}
			for rk := range in.ranks {
				if in.short(rk, k) {
					in.retracted = in.retract(rk, k, in.retracted)
				} else {
					in.decayRank(rk, 1)
				}
			}
			if back := in.retracted; len(back) > 0 {
				in.retractions += len(back)
				switch in.kv {
				case kvPaged:
					// vLLM puts each preempted request at the queue's
					// front as it preempts it: the last preempted first.
					slices.Reverse(back)
					in.waiting = append(append(make([]*simRequest, 0, len(back)+len(in.waiting)), back...), in.waiting...)
				case kvDecodeReserve:
					// Its KV waits on the host for room (preallocate).
					for _, r := range back {
						r.held = false
					}
					in.resume = append(in.resume, back...)
				default:
					in.waiting = append(in.waiting, back...)
				}
				clear(in.retracted)
				in.retracted = in.retracted[:0]
			}
		}
		if len(in.running) == 0 {
			return
		}
		bsz := len(in.running)
		ctxSum := in.ctxSum
		// Under DP attention every rank runs each forward in step, padded
		// to the fullest rank's batch (SGLang's DP-attention max_len
		// padding for the gathered MoE and the CUDA graph).
		priced := bsz
		if in.ranks > 1 {
			if in.topStale {
				in.top = 0
				for _, c := range in.live {
					in.top = max(in.top, c)
				}
				in.topStale = false
			}
			priced = in.top * in.ranks
		}
		in.members = in.running
		// The lane's latest pricing is DecodeStep's for its key, which
		// consecutive iterations mostly repeat.
		var b Breakdown
		if g := &in.steps; g.key != 0 && g.key == stepGroupKey(bsz, priced, ctxSum/bsz) {
			b = g.b
		} else {
			b = in.eng.DecodeStep(priced, k, ctxSum/bsz)
		}
		in.price(&tally, &b, bsz, priced, ctxSum/bsz)
		dt := b.Total()
		if len(parts) > 0 {
			dt = srv.prefillWithLoad(dt+in.eng.MixedExtra(bsz, k+1, parts, k > 0), hostLoad)
		}
		in.busy = true
		if in.run.backoff > 0 {
			in.run.backoff--
		} else if in.canRun() {
			end := in.runAhead(now+dt, ctxSum, priced, k, &b)
			events += len(in.run.ends)
			pushRun(end, i)
			return
		}
		push(now+dt, i, nil, in.decodeDone)
	}
	// Each lane's two completions, made once: they read the batch the
	// lane keeps (parts, ctxMembers, members).
	for i, in := range inst {
		in.prefillDone = func(t float64) {
			in.busy = false
			advanceContexts(in, t)
			kick(i)
		}
		in.decodeDone = func(t float64) {
			in.busy = false
			if in.run.on {
				in.endRun(&tally, len(in.run.ends))
			}
			// members is running itself, rank by rank (live[rk] of
			// each), with hot beside it: the requests that go on move
			// up over the finished.
			members, hot := in.members, in.hot
			in.members = nil
			w, ctxSum := 0, 0
			// leave takes members[j] out of the batch at its turn.
			leave := func(j int) {
				h, r := &hot[j], members[j]
				r.gen, r.ctx = r.OSL-int(h.left), h.ctx
				if in.live[h.rank] == in.top {
					in.topStale = true
				}
				in.live[h.rank]--
				release(in, r, t)
				finish(r, t)
			}
			if in.ahead != nil || in.sampler == nil {
				// One length per rank and step (a shared draw): each
				// rank draws, then the batch advances in order.
				if len(in.acc) < in.ranks {
					in.acc = make([]int, in.ranks)
				}
				acc := in.acc
				for rk, c := range in.live {
					if c == 0 {
						continue
					}
					l := 1
					if in.ahead != nil {
						q := &in.ahead[rk]
						if q.head == len(q.buf) {
							in.drawAhead(rk)
						}
						l = q.pop()
					}
					acc[rk] = l
					tally.accepted += l * c
				}
				tally.verifies += len(members)
				if in.kv != kvWhole {
					for rk, c := range in.live {
						if c > 0 {
							in.rankTok[rk] += acc[rk] * c
						}
					}
				}
				for j := range members {
					h := &hot[j]
					a := acc[h.rank]
					h.left -= int32(a)
					h.ctx += a
					if h.left <= 0 {
						leave(j)
						continue
					}
					ctxSum += h.ctx
					if w != j {
						members[w], hot[w] = members[j], *h
					}
					w++
				}
			} else {
				// One length per request: each rank's sampler draws for
				// its requests in order.
				for lo := 0; lo < len(members); {
					rk := int(hot[lo].rank)
					n := in.live[rk]
					if cap(in.draws) < n {
						in.draws = make([]int, len(members))
					}
					d := in.draws[:n]
					in.samplers[rk].Step(d)
					tally.verifies += n
					for j := lo; j < lo+n; j++ {
						h := &hot[j]
						acc := d[j-lo]
						tally.accepted += acc
						if in.kv != kvWhole {
							in.rankTok[rk] += acc
						}
						h.left -= int32(acc)
						h.ctx += acc
						if h.left <= 0 {
							leave(j)
							continue
						}
						ctxSum += h.ctx
						if w != j {
							members[w], hot[w] = members[j], *h
						}
						w++
					}
					lo += n
				}
			}
			clear(members[w:])
			in.running, in.hot, in.ctxSum = members[:w], hot[:w], ctxSum
			if len(in.parts) > 0 {
				advanceContexts(in, t)
			}
			kick(i)
		}
	}
	if rp == nil {
		for s := range p.sc.Conc {
			issue(s, 0)
		}
	}
	for {
		if rp != nil {
			if replayErr != nil {
				return nil, replayErr
			}
			if rp.Finished() {
				break
			}
			if t, ok := rp.PeekTime(); ok && (len(h) == 0 || t <= h[0].t) {
				issueReplay(rp.Pop())
				continue
			}
			if len(h) == 0 {
				return nil, fmt.Errorf("agentx replay stalled with %d requests in flight", rp.InFlight())
			}
		} else if len(h) == 0 || len(finished) >= measuredN {
			break
		}
		top := h.pop()
		ev := &evs[top.ev]
		if ev.run && ev.gen != inst[ev.inst].run.gen {
			*ev = event{}
			free = append(free, top.ev)
			continue
		}
		now = top.t
		events++
		if events > maxSimEvents || now > maxSimSeconds {
			if rp != nil {
				what := fmt.Sprintf("%d simulated seconds", maxSimSeconds)
				if now <= maxSimSeconds {
					what = fmt.Sprintf("%d events", maxSimEvents)
				}
				return nil, fmt.Errorf("agentx replay stopped at its cap of %s with %d requests still in flight: shorten --agentx duration=, or the deployment cannot keep up with this load", what, rp.InFlight())
			}
			if now > maxSimSeconds {
				return nil, fmt.Errorf("simulation stopped at its cap of %d simulated seconds with %d of %d requests done: lower --requests, or the deployment cannot keep up with this load", maxSimSeconds, len(finished), measuredN)
			}
			return nil, fmt.Errorf("simulation stopped at its cap of %d events with %d of %d requests done: lower --requests, or the deployment cannot keep up with this load", maxSimEvents, len(finished), measuredN)
		}
		target, req, fin := ev.inst, ev.req, ev.fin
		*ev = event{}
		free = append(free, top.ev)
		if req != nil {
			in := inst[target]
			if in.role == roleDecode && req.gen == 0 {
				in.pre = append(in.pre, req)
				preallocate(in, now)
				continue
			}
			in.waiting = append(in.waiting, req)
			if in.run.on {
				if at, ok := in.cut(&tally, now); ok {
					pushRun(at, target)
				}
			}
			kick(target)
			continue
		}
		fin(now)
	}
	for _, in := range inst {
		in.settle(&tally, now)
	}
	var res *Result
	if rp != nil {
		if rp.Profiled() == 0 {
			return nil, ErrNoProfiledRequest
		}
		res = p.agentxResult(rp, cachedTok, inputTok)
	} else {
		if len(finished) == 0 {
			return nil, fmt.Errorf("simulation finished no request")
		}
		res = p.summarize(finished, now-windowT0)
	}
	var stepSum Breakdown
	var imbSum float64
	for _, in := range inst {
		res.Retracted += in.retractions
		in.flushSteps()
		stepSum = stepSum.plus(in.stepSum)
		imbSum += in.imbSum
	}
	if tally.steps > 0 {
		res.StepMS = scale(stepSum, 1/float64(tally.steps)).Report()
		res.DecodeBatch = float64(tally.batchSum) / float64(tally.steps)
	}
	if tally.verifies > 0 {
		res.ALRealized = float64(tally.accepted) / float64(tally.verifies)
	}
	if tally.imbSteps > 0 {
		res.RankImbalance = imbSum / float64(tally.imbSteps)
	}
	res.Cache = srv.report()
	res.Sim = "event"
	return res, nil
}

// summarize turns finished requests into the reported metrics.
func (p *Plan) summarize(rs []*simRequest, window float64) *Result {
	n := len(rs)
	ttft := make([]float64, 0, n)
	tpot := make([]float64, 0, n)
	e2el := make([]float64, 0, n)
	norm := make([]float64, 0, n)
	var tokens, outTokens float64
	for _, r := range rs {
		e := r.finishAt
		ttft = append(ttft, r.firstToken-r.arrival)
		e2el = append(e2el, e-r.arrival)
		if r.OSL > 1 {
			tpot = append(tpot, (e-r.firstToken)/float64(r.OSL-1))
		}
		norm = append(norm, (e-r.arrival)/float64(r.OSL))
		tokens += float64(r.ISL + r.OSL)
		outTokens += float64(r.OSL)
	}
	return p.result(ttft, tpot, e2el, norm, tokens, outTokens, window, n)
}

func (p *Plan) result(ttft, tpot, e2el, norm []float64, tokens, outTokens, window float64, n int) *Result {
	q := latencies{
		ttft50: quantile(ttft, 0.5), ttft90: quantile(ttft, 0.9),
		tpot50: quantile(tpot, 0.5), tpot90: quantile(tpot, 0.9),
		norm90: quantile(norm, 0.9),
		e2el50: quantile(e2el, 0.5), e2el90: quantile(e2el, 0.9),
	}
	return p.resultOf(q, tokens, outTokens, window, n)
}

// latencies are the quantiles of the requests' latencies that a Result
// reports, in seconds.
type latencies struct {
	ttft50, ttft90, tpot50, tpot90, e2el50, e2el90, norm90 float64
}

// resultOf is result given the latencies' quantiles q.
func (p *Plan) resultOf(q latencies, tokens, outTokens, window float64, n int) *Result {
	res := &Result{Topology: p.sc.Topology.String(), Conc: p.sc.Conc, Steps: p.sc.Spec.Steps, GPUs: p.gpus, Requests: n, Limits: p.caps}
	res.TTFTms = q.ttft50 * 1e3
	res.TTFTp90ms = q.ttft90 * 1e3
	res.TPOTms = q.tpot50 * 1e3
	res.TPOTp90ms = q.tpot90 * 1e3
	if res.TPOTms > 0 {
		res.Interactivity = 1e3 / res.TPOTms
	}
	if q.norm90 > 0 {
		res.NormalizedInteractivity = 1 / q.norm90
	}
	res.E2EL = Percentiles{P50: q.e2el50, P90: q.e2el90}
	if window > 0 {
		res.TputPerGPU = tokens / window / float64(p.gpus)
		res.OutputPerGPU = outTokens / window / float64(p.gpus)
	}
	p.setAcceptance(res)
	mem := p.memory()
	e := p.decodeEngine()
	running := min(p.sc.Conc, max(mem.MaxRunning, 1))
	if p.sc.Topology.Disagg {
		running = ceilDiv(p.sc.Conc, p.sc.Topology.DecodeWorkers)
	}
	kvUsed := min(mem.KVPerToken*p.sc.Workload.MeanContext()*float64(ceilDiv(running, e.Par.AttentionDP())), max(mem.KVCapacity, 0))
	res.MemoryGiB = mem.Report(kvUsed)
	return res
}

// setAcceptance reports the target AL and the sampler's method (AL 1 and no
// method without speculation).
func (p *Plan) setAcceptance(res *Result) {
	res.AL = 1
	if p.sc.Spec.Steps > 0 {
		res.AL = p.sc.Spec.AL
		res.Method = p.sc.Spec.Method
		if res.Method == "" {
			res.Method = DefaultMethodFor(p.decodeEngine().EngineName)
		}
	}
}

// quantile of xs (package internal/quantile's definition); xs is sorted in
// place.
func quantile(xs []float64, q float64) float64 {
	sort.Float64s(xs)
	return quant.Sorted(xs, q)
}
