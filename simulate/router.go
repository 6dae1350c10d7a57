package simulate

import "math/rand/v2"

// router sends each request to a target (one attention-DP rank of one
// instance of a pool) the way the AgentX recipes' Dynamo frontend does:
// --router-mode kv with --router-session-affinity-ttl-secs 3600 and the
// X-Dynamo-Session-ID header (recipes/qwen3.5 disagg-variants.yaml; AIPerf
// sets the header from the conversation's correlation id,
// AIPERF_HTTP_X_DYNAMO_SESSION_ID_FROM_CORRELATION_ID). A session's first
// request, or one after the affinity has been idle past its TTL, goes to the
// target with the least outstanding work, which is what the KV router's
// cost (prefill tokens to compute plus active decode blocks) reduces to when
// nothing is cached yet; every later request of the session goes where the
// first went, so its prefix is on that target. Dynamo exposes each DP rank
// of an SGLang worker as its own routing target (worker id, dp rank), so the
// same rule spreads sessions over DP ranks. Targets that tie on that cost
// are picked uniformly at random, as Dynamo's worker selector does
// (ai-dynamo/dynamo lib/kv-router/src/scheduling/selector/default.rs,
// minimum_cost_index: reservoir sampling over equal costs), not by index:
// an index rule piles new sessions onto the first targets of an idle pool.
type router struct {
	ttl float64
	// bind holds each session's affinity: sessions are numbered densely
	// from 0, so by index below maxDenseSession, in bindBig above it.
	bind    []binding
	bindBig map[int]binding
	load    []int64 // tokens outstanding per target
	live    []int   // requests outstanding per target
	routed  []int64 // requests routed per target, for the imbalance report
	noAffin bool
	rng     *rand.Rand // tie-breaks
}

type binding struct {
	last   float64
	target int32
	ok     bool
}

// maxDenseSession bounds the sessions bind indexes.
const maxDenseSession = 1 << 22

// DefaultAffinityTTL is --router-session-affinity-ttl-secs in the recipes.
const DefaultAffinityTTL = 3600

func newRouter(targets int, ttl float64, seed uint64) *router {
	if ttl <= 0 {
		ttl = DefaultAffinityTTL
	}
	return &router{ttl: ttl, bindBig: map[int]binding{}, load: make([]int64, targets), live: make([]int, targets), routed: make([]int64, targets),
		rng: rand.New(rand.NewPCG(seed, 0x726f757465))}
}

// route picks the target of a request of session (negative: no session
// identity) that brings tokens of work, at time now.
func (r *router) route(session, tokens int, now float64) int {
	t := -1
	if b := r.binding(session); b.ok && !r.noAffin && now-b.last <= r.ttl {
		t = int(b.target)
	}
	if t < 0 {
		t = r.leastLoaded()
	}
	switch b := (binding{last: now, target: int32(t), ok: true}); {
	case session < 0:
	case session < maxDenseSession:
		if session >= len(r.bind) {
			r.bind = append(r.bind, make([]binding, session+1-len(r.bind))...)
			r.bind = r.bind[:cap(r.bind)]
		}
		r.bind[session] = b
	default:
		r.bindBig[session] = b
	}
	r.load[t] += int64(tokens)
	r.live[t]++
	r.routed[t]++
	return t
}

// done returns a request's work to the router.
func (r *router) done(target, tokens int) {
	r.load[target] -= int64(tokens)
	r.live[target]--
}

// leastLoaded is the target with the least outstanding work (then the
// fewest requests); ties are broken uniformly at random.
func (r *router) leastLoaded() int {
	best, ties := 0, 1
	for i := 1; i < len(r.load); i++ {
		switch {
		case r.load[i] < r.load[best] || (r.load[i] == r.load[best] && r.live[i] < r.live[best]):
			best, ties = i, 1
		case r.load[i] == r.load[best] && r.live[i] == r.live[best]:
			ties++
			if r.rng.IntN(ties) == 0 {
				best = i
			}
		}
	}
	return best
}

// binding is session's affinity (ok false for none).
func (r *router) binding(session int) binding {
	switch {
	case session < 0:
		return binding{}
	case session < len(r.bind):
		return r.bind[session]
	case session < maxDenseSession:
		return binding{}
	}
	return r.bindBig[session]
}

// forget drops a session's affinity (its tree ended).
func (r *router) forget(session int) {
	if session >= 0 && session < len(r.bind) {
		r.bind[session] = binding{}
	}
	delete(r.bindBig, session)
}
