package simulate

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"

	"github.com/specsim/specsim/simulate/agentx"
)

// TraceWorkload is the AgentX workload as InferenceX runs it: recorded
// session trees replayed by AIPerf's agentic-replay rules (package agentx).
type TraceWorkload struct {
	Source string
	Traces []*agentx.Trace
	// Replay is the client configuration; Conc is set per scenario.
	Replay agentx.Config

	usable  []Request // every request of the usable traces, for Sample
	meanCtx float64
	maxCtx  int
	// think is the mean recorded idle gap before a request that waits on
	// another, capped at the tree idle cap: the mean-field estimate's think
	// time between a response and the session's next request.
	think float64
	// par is the requests of the usable trees over the requests on their
	// longest dependency paths: a tree whose chains run side by side
	// drives par requests per response-plus-think cycle of its critical
	// path (Little's law over the tree with equal cycles).
	par float64
	// client memoizes clientAt per replay configuration at a
	// concurrency; a pointer, so that copies (a sweep's shortened window)
	// share it.
	client *clientMemo
}

type clientMemo struct {
	mu sync.Mutex
	m  map[agentx.Config]*clientSide
	// prepared is the corpus made ready for replays (agentx.Prepare),
	// shared by every event simulation of the workload and its copies.
	pmu      sync.Mutex
	prepared map[prepKey]*agentx.Prepared
}

// prepKey is what agentx.Prepare reads.
type prepKey struct {
	first                 *agentx.Trace
	n                     int
	maxTraces, maxContext int
}

// clientSide is what the replay's client alone does at one concurrency
// and window (clientAt).
type clientSide struct {
	// think is the think time per chain that reproduces the replay's
	// request rate: par*conc over the profiled requests per second.
	think float64
	// strata are the profiled requests the estimate samples, stratified
	// by output length (stratify).
	strata []Request
}

// clientAt replays the traces at concurrency conc against a server that
// answers at once (agentx.ClientRate). Its rate differs from one over the
// mean recorded gap (think) by what the replay does around the gaps:
// lanes start at a sampled turn after a warm-up with no idle delay, drained
// trees restart cold at turn 0, the idle caps shift timers, and the rate is
// counted over last end - first start of a finite window; the same rules
// pick which requests are profiled (more cold first turns than the
// corpus). With a server taking 1-4 s per request instead the think moves
// by under 5% at conc 16 and above, up to 15% at conc 4 (embedded corpus;
// testdata/agentx-log.md). Nil when the replay profiles nothing.
func (tw *TraceWorkload) clientAt(conc int) *clientSide {
	cfg := tw.Replay
	cfg.Conc = conc
	tw.client.mu.Lock()
	defer tw.client.mu.Unlock()
	if v, ok := tw.client.m[cfg]; ok {
		return v
	}
	var v *clientSide
	if rate, recs, err := agentx.ClientRate(tw.Traces, cfg, 0); err == nil && rate > 0 {
		reqs := make([]Request, len(recs))
		for i, r := range recs {
			reqs[i] = Request{ISL: r.Input, OSL: max(r.Output, 1), Cached: min(r.Shared, r.Input-1)}
		}
		v = &clientSide{think: tw.par * float64(conc) / rate, strata: stratify(reqs)}
	}
	tw.client.m[cfg] = v
	return v
}

// NewTraceWorkload prepares traces (nil = the embedded public corpus) for
// replay under cfg.
func NewTraceWorkload(source string, traces []*agentx.Trace, cfg agentx.Config) (*TraceWorkload, error) {
	if traces == nil {
		var err error
		if traces, err = agentx.DefaultTraces(); err != nil {
			return nil, err
		}
		source = agentx.DefaultCorpusName
	}
	c := cfg
	c.Conc = 1
	if err := c.Validate(); err != nil {
		return nil, err
	}
	tw := &TraceWorkload{Source: source, Traces: traces, Replay: cfg, client: &clientMemo{m: map[agentx.Config]*clientSide{}}}
	use := traces
	if cfg.MaxTraces > 0 && len(use) > cfg.MaxTraces {
		use = use[:cfg.MaxTraces]
	}
	var sum, think float64
	waits, nReq, nPath := 0, 0, 0
	for _, t := range use {
		if cfg.MaxContext > 0 && t.PeakContext() > cfg.MaxContext || t.RootTurns() < 2 {
			continue
		}
		tw.maxCtx = max(tw.maxCtx, t.PeakContext())
		depth := make([]int, len(t.Requests))
		longest := 0
		for p, q := range t.Requests {
			for _, d := range q.Preds {
				depth[p] = max(depth[p], depth[d])
			}
			depth[p]++
			longest = max(longest, depth[p])
		}
		nReq += len(t.Requests)
		nPath += longest
		for _, q := range t.Requests {
			tw.usable = append(tw.usable, Request{ISL: int(q.In), OSL: max(int(q.Out), 1), Cached: min(int(q.Shared), int(q.In)-1)})
			sum += float64(q.In) + float64(q.Out)/2
			if len(q.Preds) > 0 {
				think += min(q.Gap, cfg.TraceIdleCap)
				waits++
			}
		}
	}
	if len(tw.usable) == 0 {
		return nil, fmt.Errorf("%s: no usable trace (each needs two root turns and a peak context within max-context %d)", source, cfg.MaxContext)
	}
	tw.meanCtx = sum / float64(len(tw.usable))
	tw.par = float64(nReq) / float64(nPath)
	if waits > 0 {
		tw.think = think / float64(waits)
	}
	return tw, nil
}

// LoadTraceWorkload reads --agentx-trace DIR|FILE.
func LoadTraceWorkload(path string, cfg agentx.Config) (*TraceWorkload, error) {
	ts, err := agentx.LoadTraces(path, cfg.MaxTraces)
	if err != nil {
		return nil, err
	}
	return NewTraceWorkload(path, ts, cfg)
}

// sample draws one recorded request (for the mean-field estimate, which has
// no sessions): its prompt, output and client-side shared prefix.
func (tw *TraceWorkload) sample(r *rand.Rand) Request {
	return tw.usable[r.IntN(len(tw.usable))]
}

// replayKeys are the AgentX keys that set the client replay.
const replayKeys = "duration, start-min, start-max, warmup-per-lane, system-idle-cap, trace-idle-cap, max-context, max-traces, seed"

// parseReplayKey applies one AgentX key=value to the replay config; it
// reports false when k is not a replay key.
func parseReplayKey(c *agentx.Config, k, v string) (bool, error) {
	v = strings.TrimSpace(v)
	num := func() (float64, error) {
		if (k == "system-idle-cap" || k == "trace-idle-cap") && (v == "off" || v == "inf") {
			return math.Inf(1), nil
		}
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
			return 0, agentXError(k, v, "not a number")
		}
		return f, nil
	}
	whole := func(f float64, limit float64) (int, error) {
		if f < 0 || f > limit || f != math.Trunc(f) {
			return 0, agentXError(k, v, "want a whole number in 0.."+fmtNum(limit))
		}
		return int(f), nil
	}
	switch k {
	case "duration", "start-min", "start-max", "warmup-per-lane", "system-idle-cap", "trace-idle-cap", "max-context", "max-traces", "seed":
	default:
		return false, nil
	}
	f, err := num()
	if err != nil {
		return true, err
	}
	switch k {
	case "duration":
		c.Duration = f
	case "start-min":
		c.StartMin = f
	case "start-max":
		c.StartMax = f
	case "system-idle-cap":
		c.SystemIdleCap = f
	case "trace-idle-cap":
		c.TraceIdleCap = f
	case "warmup-per-lane":
		c.WarmupPerLane, err = whole(f, 1<<20)
	case "max-context":
		c.MaxContext, err = whole(f, 1<<30)
	case "max-traces":
		c.MaxTraces, err = whole(f, agentx.MaxCorpusFiles)
	case "seed":
		var s int
		s, err = whole(f, 1<<53)
		c.Seed = uint64(s)
	}
	return true, err
}

// AgentXReport is what the AgentX client saw, beside the serving metrics.
type AgentXReport struct {
	Corpus string `json:"corpus"`
	agentx.Stats
	WindowS        float64 `json:"window_s"`
	ProfiledS      float64 `json:"profiled_s"` // last end - first start
	TotalTPS       float64 `json:"total_tokens_per_s"`
	SharedFraction float64 `json:"client_shared_fraction"`
	// CachedFraction is cached over prompt tokens of the profiled
	// requests (prefix_cache.hit_rate counts warm-up too).
	CachedFraction float64    `json:"server_cached_fraction"`
	E2ELp75        float64    `json:"e2el_p75_s"`
	E2ELMean       float64    `json:"e2el_mean_s"`
	TTFTMeanMs     float64    `json:"ttft_mean_ms"`
	TPOTMeanMs     float64    `json:"tpot_mean_ms"`
	ISLMean        float64    `json:"isl_mean"`
	OSLMean        float64    `json:"osl_mean"`
	QuarterTPS     [4]float64 `json:"quarter_tokens_per_s"`
	// Steady is true when total tokens/s in the two halves of the window
	// agree within 10%.
	Steady bool `json:"steady_state"`
}

// agentxResult turns the replay's profiled records into the reported
// metrics, as InferenceX's request_metrics.py computes them.
func (p *Plan) agentxResult(rp *agentx.Replay, cachedTok, inputTok float64) *Result {
	t0, t1, _ := rp.Window()
	m := rp.Brief(t0, t1)
	res := &Result{Topology: p.sc.Topology.String(), Conc: p.sc.Conc, Steps: p.sc.Spec.Steps, GPUs: p.gpus,
		Requests: m.Requests, Limits: p.caps}
	res.TTFTms, res.TTFTp90ms = m.TTFT.P50*1e3, m.TTFT.P90*1e3
	res.TPOTms, res.TPOTp90ms = m.TPOT.P50*1e3, m.TPOT.P90*1e3
	if res.TPOTms > 0 {
		res.Interactivity = 1e3 / res.TPOTms
	}
	res.NormalizedInteractivity = m.E2ENormInteractivity
	res.E2EL = Percentiles{P50: m.E2EL.P50, P90: m.E2EL.P90}
	res.TputPerGPU = m.TotalTPS / float64(p.gpus)
	res.OutputPerGPU = m.OutputTPS / float64(p.gpus)
	p.setAcceptance(res)
	mem := p.memory()
	res.MemoryGiB = mem.Report(min(mem.KVPerToken*p.sc.Workload.MeanContext()*float64(max(mem.MaxRunning, 1)), max(mem.KVCapacity, 0)))
	rep := &AgentXReport{Corpus: p.sc.Workload.Trace.Source, Stats: rp.Stats(), WindowS: t1 - t0, ProfiledS: m.DurationS,
		TotalTPS: m.TotalTPS, E2ELp75: m.E2EL.P75, E2ELMean: m.E2EL.Mean, TTFTMeanMs: m.TTFT.Mean * 1e3, TPOTMeanMs: m.TPOT.Mean * 1e3, ISLMean: m.ISL.Mean, OSLMean: m.OSL.Mean, QuarterTPS: m.QuarterTPS}
	if m.InputTokens > 0 {
		rep.SharedFraction = float64(m.SharedTokens) / float64(m.InputTokens)
	}
	if inputTok > 0 {
		rep.CachedFraction = cachedTok / inputTok
	}
	q := m.QuarterTPS
	rep.Steady = q[0]+q[1] > 0 && math.Abs((q[2]+q[3])/(q[0]+q[1])-1) <= 0.1
	res.AgentX = rep
	return res
}

// newReplay starts the AgentX client of a trace workload (nil otherwise).
func (p *Plan) newReplay() (*agentx.Replay, error) {
	tw := p.sc.Workload.Trace
	if tw == nil {
		return nil, nil
	}
	cfg := tw.Replay
	cfg.Conc = p.sc.Conc
	if err := cfg.Validate(); err != nil || tw.client == nil || len(tw.Traces) == 0 {
		return agentx.NewReplay(tw.Traces, cfg)
	}
	key := prepKey{tw.Traces[0], len(tw.Traces), cfg.MaxTraces, cfg.MaxContext}
	c := tw.client
	c.pmu.Lock()
	prep := c.prepared[key]
	if prep == nil {
		var err error
		if prep, err = agentx.Prepare(tw.Traces, cfg.MaxTraces, cfg.MaxContext); err != nil {
			c.pmu.Unlock()
			return nil, err
		}
		if c.prepared == nil {
			c.prepared = map[prepKey]*agentx.Prepared{}
		}
		c.prepared[key] = prep
	}
	c.pmu.Unlock()
	return prep.Replay(cfg)
}

// SweepAgentXWindow is the profiled window, in seconds, of the event
// replays a sweep runs on its frontier points: 900 s, the shortest
// --benchmark-duration the inferencex-agentx-mvp scenario accepts
// (docs/tutorials/agentx-mvp.md). predict replays the full duration.
const SweepAgentXWindow = 900
