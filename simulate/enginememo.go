package simulate

// Memoized step costs of the prefill path. Every function memoized here is
// pure in its key: the Engine's fields are fixed once NewEngine returns
// (as DecodeStep's memo already assumes), and each key holds every input
// the function reads, unquantized, so a hit returns the very float64 a
// recomputation would. TestStepMemoIdentical checks that a predict's JSON
// is byte-identical with the memos off.

// stepMemo switches the memos below on; tests turn it off to compare.
var stepMemo = true

// maxMemoEntries bounds each memo; a full memo starts over.
const maxMemoEntries = 1 << 16

// prefillMemos holds one Engine's memoized prefill costs.
type prefillMemos struct {
	forward map[shape]Breakdown // forward(s) of a prefill batch
	draft   map[shape]float64   // draftForward(s) of a prefill batch
	// attention and linear are one request's causal attention over its
	// context in every full layer (keyed by new tokens and tokens before)
	// and its Gated DeltaNet cost in every linear layer (by new tokens:
	// the prefill kernel does not depend on the context before).
	attention map[uint64]float64 // by n<<32 | before
	linear    map[int]float64
	gdn       map[int]gdnPrefillCost // gdnPrefill(tokens)
	// moments are the prefill service-time moments of a workload's
	// requests on this engine (Plan.prefillMoments).
	moments map[momentKey]prefillMoments
	// pricing is set while a prefill cost above is computed: its ops
	// (GEMMs over a batch's token count) seldom repeat, so the op memos
	// (engineops.go) are bypassed rather than filled.
	pricing bool
}

// unmemoizedOps runs f with the op memos bypassed.
func unmemoizedOps[V any](e *Engine, f func() V) V {
	was := e.pm.pricing
	e.pm.pricing = true
	v := f()
	e.pm.pricing = was
	return v
}

type gdnPrefillCost struct {
	gpu, eager float64
	ok         bool
}

// memoGet looks key up in *m (allocating the map on first use).
func memoGet[K comparable, V any](m *map[K]V, key K) (V, bool) {
	if *m == nil {
		*m = make(map[K]V)
	}
	v, ok := (*m)[key]
	return v, ok
}

// memoPut stores v under key, starting the memo over when it is full.
func memoPut[K comparable, V any](m map[K]V, key K, v V) {
	if len(m) >= maxMemoEntries {
		clear(m)
	}
	m[key] = v
}

// prefillForward is forward(s), memoized.
func (e *Engine) prefillForward(s shape) Breakdown {
	if !stepMemo {
		return e.forward(s)
	}
	if b, ok := memoGet(&e.pm.forward, s); ok {
		return b
	}
	b := unmemoizedOps(e, func() Breakdown { return e.forward(s) })
	memoPut(e.pm.forward, s, b)
	return b
}

// prefillDraft is draftForward(s), memoized.
func (e *Engine) prefillDraft(s shape) float64 {
	if !stepMemo {
		return e.draftForward(s)
	}
	if t, ok := memoGet(&e.pm.draft, s); ok {
		return t
	}
	t := unmemoizedOps(e, func() float64 { return e.draftForward(s) })
	memoPut(e.pm.draft, s, t)
	return t
}

// partAttention is the full-attention layers' cost of one request's
// prefill chunk of n new tokens after before tokens: full layers times
// attention over it, as Prefill and MixedExtra price it.
func (e *Engine) partAttention(n, before, full int) float64 {
	f := func() float64 {
		ps := shape{seqs: 1, q: n, ctx: before, prefill: true}
		return float64(full) * e.attention(n, 1, ps, e.Target.Attention)
	}
	if !stepMemo || n < 0 || before < 0 || n >= 1<<31 || before >= 1<<32 {
		return f()
	}
	key := uint64(n)<<32 | uint64(before)
	if t, ok := memoGet(&e.pm.attention, key); ok {
		return t
	}
	t := unmemoizedOps(e, f)
	memoPut(e.pm.attention, key, t)
	return t
}

// partLinear is the linear-attention layers' cost of one request's prefill
// chunk of n new tokens: lin layers times linearAttention over it (whose
// prefill path reads neither the context before nor the sequence count).
func (e *Engine) partLinear(n, before, lin int) float64 {
	f := func() float64 {
		ps := shape{seqs: 1, q: n, ctx: before, prefill: true}
		return float64(lin) * e.linearAttention(n, 1, ps, e.Target.Attention)
	}
	if !stepMemo {
		return f()
	}
	if t, ok := memoGet(&e.pm.linear, n); ok {
		return t
	}
	t := unmemoizedOps(e, f)
	memoPut(e.pm.linear, n, t)
	return t
}

// gdnPrefillMemo is gdnPrefill(tokens), memoized.
func (e *Engine) gdnPrefillMemo(tokens int) (gpu, eager float64, ok bool) {
	if !stepMemo {
		return e.gdnPrefill(tokens)
	}
	if c, hit := memoGet(&e.pm.gdn, tokens); hit {
		return c.gpu, c.eager, c.ok
	}
	gpu, eager, ok = e.gdnPrefill(tokens)
	memoPut(e.pm.gdn, tokens, gdnPrefillCost{gpu, eager, ok})
	return gpu, eager, ok
}
