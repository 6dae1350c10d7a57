package simulate

import (
	"fmt"
	"math"
)

// Bounds on the work one simulation may take. Measured on this project's
// CI machine (2 cores), a prefill forward costs the event loop about 12 us
// and a decode step of one request about 0.3 us, so each bound stands for
// roughly ten to twenty seconds of simulation.
const (
	MaxPrefillForwards = 2_000_000
	MaxDecodeSteps     = 50_000_000
)

// WorkError is a scenario whose simulation would exceed a work bound. Its
// message carries the arithmetic.
type WorkError struct{ Msg string }

func (e *WorkError) Error() string { return e.Msg }

// checkWork estimates the prefill forwards and per-request decode steps the
// scenario implies from the workload's means and refuses what exceeds the
// bounds, before any simulated second passes.
func (p *Plan) checkWork() error {
	if tw := p.sc.Workload.Trace; tw != nil {
		return tw.checkWork(p.sc.Conc, p.chunk, p.sc.Spec)
	}
	warmup, measured := p.requestCount()
	return checkWork(p.sc.Workload, warmup+measured, p.chunk, p.sc.Spec)
}

// checkWork is checkWork for a trace replay at concurrency conc, before
// any replay runs, at the traces' own mean lengths. How many requests a
// replay serves depends on how fast the server answers, which only the
// simulation tells; the count is the closed loop's (requestCount), a
// scale for the concurrency, and what bounds it is the concurrency.
func (tw *TraceWorkload) checkWork(conc, chunk int, spec Spec) error {
	if len(tw.usable) == 0 {
		return nil
	}
	if chunk <= 0 {
		chunk = DefaultChunk
	}
	var uncached, osl float64
	for _, r := range tw.usable {
		uncached += float64(r.ISL - r.Cached)
		osl += float64(r.OSL)
	}
	uncached, osl = math.Max(1, uncached/float64(len(tw.usable))), osl/float64(len(tw.usable))
	n := float64(conc + max(4*conc, 200))
	perReq := math.Ceil(uncached / float64(chunk))
	al := 1.0
	if spec.Steps > 0 && spec.AL > 1 {
		al = spec.AL
	}
	fwd, steps := n*perReq, n*osl/al
	if fwd <= MaxPrefillForwards && steps <= MaxDecodeSteps {
		return nil
	}
	return &WorkError{Msg: fmt.Sprintf("this replay would take about %.3g prefill forwards and %.3g request decode steps (%d session trees x 5 requests, with the traces' %.0f uncached prompt and %.0f output tokens on average, AL %.2f), more than one simulation allows (%d forwards, %d steps): lower --conc",
		fwd, steps, conc, uncached, osl, al, MaxPrefillForwards, MaxDecodeSteps)}
}

func checkWork(w Workload, requests, chunk int, spec Spec) error {
	if chunk <= 0 {
		chunk = DefaultChunk
	}
	n := float64(requests)
	prompt, cachedFrac, osl := w.means()
	uncached := math.Max(1, prompt*(1-cachedFrac))
	perReq := math.Ceil(uncached / float64(chunk))
	if fwd := n * perReq; fwd > MaxPrefillForwards {
		return &WorkError{Msg: fmt.Sprintf("this run would take about %.3g prefill forwards (%d requests x ceil(%.0f uncached prompt tokens / --chunk %d) = %d x %.0f), more than the %d one simulation allows: raise --chunk or lower --requests",
			fwd, requests, uncached, chunk, requests, perReq, MaxPrefillForwards)}
	}
	al := 1.0
	if spec.Steps > 0 && spec.AL > 1 {
		al = spec.AL
	}
	if steps := n * osl / al; steps > MaxDecodeSteps {
		return &WorkError{Msg: fmt.Sprintf("this run would take about %.3g request decode steps (%d requests x %.0f mean output tokens / AL %.2f), more than the %d one simulation allows: lower --requests or the output length",
			steps, requests, osl, al, MaxDecodeSteps)}
	}
	return nil
}

// checkSweepWork bounds a sweep before its first estimate: the mean-field
// estimates price prefills chunk by chunk, memoized per prefill engine
// (shared by every point whose prefill pool has its parallelism), and the
// requests they price are the same seeded draw at every point of one
// concurrency: meanFieldSamples requests (prefillMoments), each with and
// without its cached prefix (the whole prompt's prefill is memoized by
// prompt length, so it is counted at the uncached mean's chunks), with and
// without speculative prefill. Every point may also be re-run through the
// event simulation.
func checkSweepWork(r *Resolved, topos []Topology, steps int, concs []int) error {
	w := r.Workload
	chunk := r.Q.Chunk
	if chunk <= 0 {
		chunk = DefaultChunk
	}
	prompt, cachedFrac, _ := w.means()
	perReq := math.Ceil(math.Max(1, prompt*(1-cachedFrac)) / float64(chunk))
	samples := 2 * meanFieldSamples
	if w.Name == "fixed" {
		samples = 1
	}
	engines := map[Parallel]bool{}
	for _, t := range topos {
		if t.Disagg {
			engines[t.Prefill] = true
		} else {
			engines[t.Agg] = true
		}
	}
	variants := len(engines) * len(concs) * min(max(steps, 1), 2)
	if fwd := float64(variants) * float64(samples) * perReq; fwd > MaxPrefillForwards {
		return &WorkError{Msg: fmt.Sprintf("this sweep would price about %.3g prefill chunks (%d prefill engines x %d concurrencies x %d speculative-prefill variants x %d sampled prefills x %.0f chunks of --chunk %d), more than the %d allowed: raise --chunk or sweep fewer points",
			fwd, len(engines), len(concs), variants/max(len(engines)*len(concs), 1), samples, perReq, chunk, MaxPrefillForwards)}
	}
	for _, c := range concs {
		requests := r.Q.Requests
		if requests <= 0 {
			requests = max(4*c, 200)
		}
		if err := checkWork(w, c+requests, chunk, Spec{}); err != nil {
			return fmt.Errorf("refining a point at conc %d: %w", c, err)
		}
	}
	return nil
}

// means gives the workload's mean prompt length, mean cached fraction of a
// prompt and mean output length (log-normal means, clipped at the maxima).
func (w *Workload) means() (prompt, cached, osl float64) {
	if w.Name == "agentx" {
		a := w.AgentX
		prompt = math.Min(a.ISLMedian*math.Exp(a.ISLSigma*a.ISLSigma/2), float64(a.ISLMax))
		osl = math.Min(a.OSLMedian*math.Exp(a.OSLSigma*a.OSLSigma/2), float64(a.OSLMax))
		return prompt, a.CacheHit * (1 - a.FirstTurns), osl
	}
	f := 1.0
	if w.RangeRatio > 0 && w.RangeRatio < 1 {
		f = (1 + w.RangeRatio) / 2
	}
	return f * float64(w.ISL), w.CachedFraction, f * float64(w.OSL)
}
