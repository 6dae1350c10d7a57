package simulate

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"

	"gonum.org/v1/gonum/stat/distuv"

	"github.com/specsim/specsim/simulate/agentx"
)

// Workload is what the benchmark clients send: either fixed lengths (the
// 1k/1k and 8k/1k scenarios) or the agentic-coding distributions.
type Workload struct {
	Name string // "fixed" or "agentx"
	// Fixed lengths (Name == "fixed").
	ISL, OSL int
	// CachedFraction is the prefix-cache hit of every fixed request.
	CachedFraction float64
	// RangeRatio draws fixed lengths uniformly from [RangeRatio*L, L]
	// (bench_serving --random-range-ratio); 1 = exact lengths.
	RangeRatio float64
	// Agentic distributions (Name == "agentx").
	AgentX AgentX
	// Trace is the AgentX trace replay (Name == "agentx"); when set, the
	// event simulation replays sessions from it and the distributions above
	// are not used.
	Trace *TraceWorkload
}

// AgentX describes long-context agentic coding turns (InferenceX AgentX
// replays Claude-Code traces, dataset semianalysis_cc_traces_weka_062126_256k).
// ISL and OSL are log-normal, clipped; the cached-prefix fraction is Beta.
// Defaults and their sources are in the README section "Workloads".
type AgentX struct {
	ISLMedian  float64 `json:"isl_median"`  // tokens; default 64k
	ISLSigma   float64 `json:"isl_sigma"`   // log-normal shape; default 0.9
	ISLMin     int     `json:"isl_min"`     // default 1024
	ISLMax     int     `json:"isl_max"`     // default 256k (the dataset's max_context_length 262144 minus headroom)
	OSLMedian  float64 `json:"osl_median"`  // default 650
	OSLSigma   float64 `json:"osl_sigma"`   // default 1.0
	OSLMax     int     `json:"osl_max"`     // default 8192
	CacheHit   float64 `json:"cache_hit"`   // mean cached-prefix fraction; default 0.93
	CacheConc  float64 `json:"cache_conc"`  // Beta concentration a+b; default 20
	FirstTurns float64 `json:"first_turns"` // share of requests that start a session cold (no cache); default 0
	// Replay is the AgentX client of a trace replay (agentx.DefaultConfig).
	Replay agentx.Config `json:"-"`
}

// DefaultAgentX returns the agentic workload with its documented defaults.
func DefaultAgentX() AgentX {
	return AgentX{ISLMedian: 64000, ISLSigma: 0.9, ISLMin: 1024, ISLMax: 256000,
		OSLMedian: 650, OSLSigma: 1.0, OSLMax: 8192, CacheHit: 0.93, CacheConc: 20, Replay: agentx.DefaultConfig(1)}
}

// FixedWorkload is ISL/OSL tokens with no prefix cache.
func FixedWorkload(isl, osl int) Workload {
	return Workload{Name: "fixed", ISL: isl, OSL: osl}
}

// Request is one client request.
type Request struct {
	ISL    int // prompt tokens, cached ones included
	OSL    int // output tokens
	Cached int // prompt tokens served from the prefix cache
}

// Validate checks the workload's numbers.
func (w *Workload) Validate() error {
	switch w.Name {
	case "fixed":
		if w.ISL < 1 || w.ISL > 4<<20 {
			return &Error{Field: "ISL", Value: strconv.Itoa(w.ISL), Reason: fmt.Sprintf("want 1..%d tokens", 4<<20)}
		}
		if w.OSL < 1 || w.OSL > 1<<20 {
			return &Error{Field: "OSL", Value: strconv.Itoa(w.OSL), Reason: fmt.Sprintf("want 1..%d tokens", 1<<20)}
		}
		if !(w.RangeRatio >= 0 && w.RangeRatio <= 1) {
			return &Error{Field: "RangeRatio", Value: fmt.Sprint(w.RangeRatio), Reason: "want [0, 1]"}
		}
		if !(w.CachedFraction >= 0 && w.CachedFraction < 1) {
			return &Error{Field: "Cached", Value: fmtNum(w.CachedFraction), Reason: "want a prompt share in [0, 1)"}
		}
	case "agentx":
		a := w.AgentX
		switch {
		case !(a.ISLMedian >= 1 && a.ISLMedian <= 4<<20):
			return agentXError("isl-median", fmtNum(a.ISLMedian), fmt.Sprintf("want 1..%d tokens", 4<<20))
		case !(a.OSLMedian >= 1 && a.OSLMedian <= 1<<20):
			return agentXError("osl-median", fmtNum(a.OSLMedian), fmt.Sprintf("want 1..%d tokens", 1<<20))
		case !(a.ISLSigma >= 0 && a.ISLSigma <= 4):
			return agentXError("isl-sigma", fmtNum(a.ISLSigma), "want 0..4")
		case !(a.OSLSigma >= 0 && a.OSLSigma <= 4):
			return agentXError("osl-sigma", fmtNum(a.OSLSigma), "want 0..4")
		case a.ISLMin < 1 || a.ISLMin > 4<<20:
			return agentXError("isl-min", strconv.Itoa(a.ISLMin), fmt.Sprintf("want 1..%d tokens", 4<<20))
		case a.ISLMax < a.ISLMin || a.ISLMax > 4<<20:
			return agentXError("isl-max", strconv.Itoa(a.ISLMax), fmt.Sprintf("want isl-min %d..%d tokens", a.ISLMin, 4<<20))
		case a.OSLMax < 1 || a.OSLMax > 1<<20:
			return agentXError("osl-max", strconv.Itoa(a.OSLMax), fmt.Sprintf("want 1..%d tokens", 1<<20))
		case !(a.CacheHit >= 0 && a.CacheHit < 1):
			return agentXError("cache-hit", fmtNum(a.CacheHit), "want [0, 1)")
		case !(a.CacheConc > 0 && a.CacheConc <= 1e6):
			return agentXError("cache-conc", fmtNum(a.CacheConc), "want (0, 1000000]")
		case !(a.FirstTurns >= 0 && a.FirstTurns <= 1):
			return agentXError("first-turns", fmtNum(a.FirstTurns), "want [0, 1]")
		}
	default:
		return fmt.Errorf("workload %q: want fixed or agentx", w.Name)
	}
	return nil
}

// MaxContext is the largest ISL+OSL a request can reach.
func (w *Workload) MaxContext() int {
	if w.Trace != nil {
		return w.Trace.maxCtx
	}
	if w.Name == "agentx" {
		return w.AgentX.ISLMax + w.AgentX.OSLMax
	}
	return w.ISL + w.OSL
}

// MeanContext estimates the average context a running request holds (prompt
// plus half its output), for memory sizing.
func (w *Workload) MeanContext() float64 {
	if w.Trace != nil {
		return w.Trace.meanCtx
	}
	if w.Name == "agentx" {
		islD, oslD := w.AgentX.lengths(nil)
		isl := math.Min(islD.Mean(), float64(w.AgentX.ISLMax))
		osl := math.Min(oslD.Mean(), float64(w.AgentX.OSLMax))
		return isl + osl/2
	}
	f := 1.0
	if w.RangeRatio > 0 && w.RangeRatio < 1 {
		f = (1 + w.RangeRatio) / 2
	}
	return f * (float64(w.ISL) + float64(w.OSL)/2)
}

// MeanReservation is the mean prompt plus whole output of the workload's
// requests: the KV a whole-output admission reserves for one (0 for the
// trace replay, whose requests reserve through the prefix cache).
func (w *Workload) MeanReservation() float64 {
	if w.Trace != nil {
		return 0
	}
	if w.Name == "agentx" {
		islD, oslD := w.AgentX.lengths(nil)
		return math.Min(islD.Mean(), float64(w.AgentX.ISLMax)) + math.Min(oslD.Mean(), float64(w.AgentX.OSLMax))
	}
	f := 1.0
	if w.RangeRatio > 0 && w.RangeRatio < 1 {
		f = (1 + w.RangeRatio) / 2
	}
	return f * float64(w.ISL+w.OSL)
}

// ThinkTime is the mean time a session waits between a response and its
// next request (the trace replay's recorded gaps; 0 for closed loops).
func (w *Workload) ThinkTime() float64 {
	if w.Trace != nil {
		return w.Trace.think
	}
	return 0
}

// Sample draws one request.
func (w *Workload) Sample(r *rand.Rand) Request {
	if w.Trace != nil {
		return w.Trace.sample(r)
	}
	if w.Name != "agentx" {
		isl, osl := w.ISL, w.OSL
		if w.RangeRatio > 0 && w.RangeRatio < 1 {
			// bench_serving's --random-range-ratio: uniform in [ratio*len, len].
			isl = max(1, int(distuv.Uniform{Min: w.RangeRatio * float64(isl), Max: float64(isl), Src: r}.Rand()))
			osl = max(1, int(distuv.Uniform{Min: w.RangeRatio * float64(osl), Max: float64(osl), Src: r}.Rand()))
		}
		return Request{ISL: isl, OSL: osl, Cached: int(float64(isl) * w.CachedFraction)}
	}
	a := w.AgentX
	islD, oslD := a.lengths(r)
	isl := clampInt(int(math.Round(islD.Rand())), a.ISLMin, a.ISLMax)
	osl := clampInt(int(math.Round(oslD.Rand())), 1, a.OSLMax)
	hit := 0.0
	if a.FirstTurns == 0 || r.Float64() >= a.FirstTurns {
		hit = a.cacheHit(r)
	}
	cached := min(int(hit*float64(isl)), isl-1)
	return Request{ISL: isl, OSL: osl, Cached: max(cached, 0)}
}

func clampInt(v, lo, hi int) int { return max(lo, min(hi, v)) }

// lengths are the synthetic AgentX prompt and output lengths before
// clamping: log-normal with medians ISLMedian and OSLMedian (Mu = ln
// median) and shapes ISLSigma and OSLSigma, drawing from src.
func (a *AgentX) lengths(src rand.Source) (isl, osl distuv.LogNormal) {
	return distuv.LogNormal{Mu: math.Log(a.ISLMedian), Sigma: a.ISLSigma, Src: src},
		distuv.LogNormal{Mu: math.Log(a.OSLMedian), Sigma: a.OSLSigma, Src: src}
}

// cacheHit draws a warm request's cached-prefix fraction: Beta with mean
// CacheHit and concentration CacheConc (alpha + beta); a degenerate
// parameter pins it to its end.
func (a *AgentX) cacheHit(src rand.Source) float64 {
	alpha, beta := a.CacheHit*a.CacheConc, (1-a.CacheHit)*a.CacheConc
	switch {
	case !(alpha > 0):
		return 0
	case !(beta > 0):
		return 1
	}
	return distuv.Beta{Alpha: alpha, Beta: beta, Src: src}.Rand()
}

// ParseAgentXOverrides applies "key=value,key=value" overrides to a (the
// Query's AgentX). Keys: isl-median, isl-sigma, isl-min, isl-max,
// osl-median, osl-sigma, osl-max, cache-hit, cache-conc, first-turns, and
// the replay keys. A bad pair is an [*Error]: on "AgentX" when it is not
// key=value, else on "AgentX.KEY" with the value given.
func ParseAgentXOverrides(a *AgentX, s string) error {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil
	}
	seen := map[string]string{} // key: the value given
	for _, kv := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(kv), "=")
		if !ok {
			if strings.TrimSpace(kv) == "" {
				return &Error{Field: "AgentX", Value: s, Reason: "an empty pair: want key=value,..."}
			}
			return &Error{Field: "AgentX", Value: kv, Reason: "want key=value"}
		}
		k = strings.TrimSpace(k)
		if _, twice := seen[k]; twice {
			return agentXError(k, v, "given twice")
		}
		seen[k] = strings.TrimSpace(v)
		if ok, err := parseReplayKey(&a.Replay, k, v); ok {
			if err != nil {
				return err
			}
			continue
		}
		f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
			return agentXError(k, v, "not a number")
		}
		asInt := func() (int, error) {
			if f < 0 || f > 1<<30 || f != math.Trunc(f) {
				return 0, agentXError(k, v, "want a whole token count")
			}
			return int(f), nil
		}
		var e error
		switch strings.TrimSpace(k) {
		case "isl-median":
			a.ISLMedian = f
		case "isl-sigma":
			a.ISLSigma = f
		case "isl-min":
			a.ISLMin, e = asInt()
		case "isl-max":
			a.ISLMax, e = asInt()
		case "osl-median":
			a.OSLMedian = f
		case "osl-sigma":
			a.OSLSigma = f
		case "osl-max":
			a.OSLMax, e = asInt()
		case "cache-hit":
			a.CacheHit = f
		case "cache-conc":
			a.CacheConc = f
		case "first-turns":
			a.FirstTurns = f
		default:
			return agentXError(k, v, "not a key: want isl-median, isl-sigma, isl-min, isl-max, osl-median, osl-sigma, osl-max, cache-hit, cache-conc or first-turns, or one of the replay keys "+replayKeys)
		}
		if e != nil {
			return e
		}
	}
	// A value out of range is restated as typed, when it was given.
	given := func(e *Error) error {
		if v, ok := seen[strings.TrimPrefix(e.Field, "AgentX.")]; ok {
			e.Value = v
		}
		return e
	}
	w := Workload{Name: "agentx", AgentX: *a}
	if err := w.Validate(); err != nil {
		var e *Error
		if errors.As(err, &e) {
			return given(e)
		}
		return err
	}
	c := a.Replay
	c.Conc = 1
	if err := c.Validate(); err != nil {
		var ce *agentx.ConfigError
		if errors.As(err, &ce) {
			return given(&Error{Field: "AgentX." + ce.Key, Value: ce.Value, Reason: ce.Reason, Err: err})
		}
		return err
	}
	return nil
}

// fmtNum prints a setting's number as Go reads it back, integers without an
// exponent: 1073741824, not 1.073741824e+09.
func fmtNum(f float64) string {
	if f == math.Trunc(f) && math.Abs(f) < 1e15 {
		return strconv.FormatFloat(f, 'f', -1, 64)
	}
	return strconv.FormatFloat(f, 'g', -1, 64)
}

// agentXError is a bad AgentX key=value pair: the key is the field.
func agentXError(k, v, reason string) error {
	return &Error{Field: "AgentX." + k, Value: strings.TrimSpace(v), Reason: reason}
}
