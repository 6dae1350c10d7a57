package simulate

import "math/bits"

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
	// forward(s) and draftForward(s) of a prefill batch, by prefillShapeKey.
	forward memoTable[Breakdown]
	draft   memoTable[float64]
	// one is the time of a prefill batch of one part (most prefill
	// batches), by prefillPartKey: one lookup where the parts below take
	// several.
	one memoTable[float64]
	// part is what a part of n new tokens costs in attention whatever the
	// context before it, by n: the projections (attentionProj) and the
	// linear layers (partLinear); partCost adds the attention kernels.
	part memoTable[partPrice]
	// ctx is partCost by n<<32 | before.
	ctx memoTable[[2]float64]
	gdn memoTable[gdnPrefillCost] // gdnPrefill(tokens)
	// moments are the prefill service-time moments of a workload's
	// requests on this engine (Plan.prefillMoments).
	moments map[momentKey]prefillMoments
	// pricing is set while a prefill cost above is computed: its ops
	// (GEMMs over a batch's token count) seldom repeat, so the op memos
	// (engineops.go) are bypassed rather than filled.
	pricing bool
	// noMixers is set while prefillForward prices a forward whose
	// attention and linear-attention layers Prefill replaces: layerCost
	// leaves them out (see mixersPriced).
	noMixers bool
	// mixers is 1 when no prefill shape of positive token counts raises a
	// shape error in the attention or linear-attention layers, 2 when one
	// does, 0 before mixersValid looked.
	mixers uint8
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

// memoTable is a memo keyed by a uint64 (below 1<<64-1): open addressing
// with linear probing over a power-of-two table, at most three quarters
// full, where a Go map would hash and chase its groups. A slot holds its
// full key (plus one, so that zero marks an empty slot) next to the value;
// a table of maxMemoEntries starts over.
type memoTable[V any] struct {
	slots []memoSlot[V]
	n     int
	shift uint8 // 64 - log2(len(slots))
}

type memoSlot[V any] struct {
	key uint64 // key+1, 0 for empty
	val V
}

func (t *memoTable[V]) home(key uint64) uint64 {
	return (key * 0x9e3779b97f4a7c15) >> t.shift
}

// get returns the value stored under key.
func (t *memoTable[V]) get(key uint64) (V, bool) {
	if t.n > 0 {
		mask := uint64(len(t.slots) - 1)
		for i := t.home(key); ; i = (i + 1) & mask {
			sl := &t.slots[i]
			if sl.key == key+1 {
				return sl.val, true
			}
			if sl.key == 0 {
				break
			}
		}
	}
	var zero V
	return zero, false
}

// put stores v under key (absent), growing the table at three quarters
// full and starting it over at maxMemoEntries.
func (t *memoTable[V]) put(key uint64, v V) {
	if t.n >= maxMemoEntries {
		clear(t.slots)
		t.n = 0
	}
	if 4*(t.n+1) > 3*len(t.slots) {
		old := t.slots
		size := max(2*len(old), 64)
		t.slots = make([]memoSlot[V], size)
		t.shift = uint8(64 - bits.Len(uint(size-1)))
		t.n = 0
		for _, sl := range old {
			if sl.key != 0 {
				t.insert(sl.key, sl.val)
			}
		}
	}
	t.insert(key+1, v)
}

func (t *memoTable[V]) insert(stored uint64, v V) {
	mask := uint64(len(t.slots) - 1)
	i := t.home(stored - 1)
	for t.slots[i].key != 0 {
		i = (i + 1) & mask
	}
	t.slots[i] = memoSlot[V]{stored, v}
	t.n++
}

// prefillShapeKey packs a prefill batch's shape (no context before, not a
// verify) into a memo key; ok is false for shapes it cannot hold.
func prefillShapeKey(s shape) (key uint64, ok bool) {
	if !s.prefill || s.verify || s.ctx != 0 || s.seqs < 0 || s.seqs >= 1<<12 ||
		s.q < 0 || s.q >= 1<<31 || s.logits < 0 || s.logits >= 1<<20 {
		return 0, false
	}
	return uint64(s.seqs)<<51 | uint64(s.q)<<20 | uint64(s.logits), true
}

// prefillForward is forward(s), memoized.
func (e *Engine) prefillForward(s shape) Breakdown {
	key, ok := prefillShapeKey(s)
	if !stepMemo || !ok {
		return e.forward(s)
	}
	if b, ok := e.pm.forward.get(key); ok {
		return b
	}
	if e.shared != nil {
		if b, ok := e.sharedShards().fwd.get(key); ok {
			e.pm.forward.put(key, b)
			return b
		}
	}
	clean := e.shapeErr == nil
	b := unmemoizedOps(e, func() Breakdown {
		if e.Par.PP > 1 || !e.mixersValid() {
			return e.forward(s)
		}
		e.pm.noMixers = true
		defer func() { e.pm.noMixers = false }()
		return e.forward(s)
	})
	e.pm.forward.put(key, b)
	if e.shared != nil && clean && e.shapeErr == nil {
		e.sharedShards().fwd.put(key, b)
	}
	return b
}

// mixersValid reports whether the target's attention and linear-attention
// layers price every prefill shape of positive token counts without a
// shape error. Their shapes' only other dimensions are the Engine's own
// (heads, head and state sizes), and the kernels refuse a shape only for a
// dimension that is not positive or heads that do not divide (kernels'
// Validate methods), so one shape of one token decides. When they do,
// prefillForward leaves them out of the forward: Prefill replaces its
// attention and GDN with each part's, and below PP2 no other field reads
// them (the pipeline bubble does).
func (e *Engine) mixersValid() bool {
	if e.pm.mixers == 0 {
		saved := e.shapeErr
		e.shapeErr = nil
		s := shape{seqs: 1, q: 1, prefill: true}
		unmemoizedOps(e, func() float64 {
			if e.kinds().full > 0 {
				e.attention(1, 1, s, e.Target.Attention)
			}
			if e.kinds().full < e.Model.Layers {
				e.linearAttention(1, 1, s, e.Target.Attention)
			}
			return 0
		})
		e.pm.mixers = 1
		if e.shapeErr != nil {
			e.pm.mixers = 2
		}
		e.shapeErr = saved
	}
	return e.pm.mixers == 1
}

// prefillDraft is draftForward(s), memoized.
func (e *Engine) prefillDraft(s shape) float64 {
	key, ok := prefillShapeKey(s)
	if !stepMemo || !ok {
		return e.draftForward(s)
	}
	if t, ok := e.pm.draft.get(key); ok {
		return t
	}
	t := unmemoizedOps(e, func() float64 { return e.draftForward(s) })
	e.pm.draft.put(key, t)
	return t
}

// partPrice is what partCost reads of a part's n new tokens alone.
type partPrice struct {
	pre, post1, post2 float64 // attentionProj(n)
	lin               float64 // partLinear
}

// partCost is one request's prefill chunk of n new tokens after before
// tokens as Prefill prices it: in its full layers (full times attention
// over it, 0 when full is 0) and its linear ones (partLinear, 0 when lin
// is 0). full and lin are the Engine's own layer counts, so (n, before)
// keys the memo (ctx), and n that of what does not read before (part).
func (e *Engine) partCost(n, before, full, lin int) (att, gdn float64) {
	ps := shape{seqs: 1, q: n, ctx: before, prefill: true}
	if !stepMemo || n < 0 {
		if full > 0 {
			att = float64(full) * e.attention(n, 1, ps, e.Target.Attention)
		}
		if lin > 0 {
			gdn = e.partLinear(n, lin)
		}
		return att, gdn
	}
	if n >= 1<<31 || before < 0 || before >= 1<<32 {
		return e.partCostN(n, before, full, lin)
	}
	key := uint64(n)<<32 | uint64(before)
	if v, ok := e.pm.ctx.get(key); ok {
		return v[0], v[1]
	}
	att, gdn = e.partCostN(n, before, full, lin)
	e.pm.ctx.put(key, [2]float64{att, gdn})
	return att, gdn
}

// partCostN is partCost priced from the memo of what reads n alone,
// kept there when pricing raised no shape error on an engine free of one.
func (e *Engine) partCostN(n, before, full, lin int) (att, gdn float64) {
	ps := shape{seqs: 1, q: n, ctx: before, prefill: true}
	if pp, ok := e.pm.part.get(uint64(n)); ok {
		if full > 0 {
			att = float64(full) * e.attentionWith(attnProj{pre: pp.pre, post1: pp.post1, post2: pp.post2}, 1, ps)
		}
		return att, pp.lin
	}
	clean := e.shapeErr == nil
	var p attnProj
	if full > 0 {
		p = unmemoizedOps(e, func() attnProj { return e.attentionProj(n, e.Target.Attention) })
		att = float64(full) * e.attentionWith(p, 1, ps)
	}
	if lin > 0 {
		gdn = unmemoizedOps(e, func() float64 { return e.partLinear(n, lin) })
	}
	if clean && p.preErr == nil && p.postErr == nil && e.shapeErr == nil {
		e.pm.part.put(uint64(n), partPrice{p.pre, p.post1, p.post2, gdn})
	}
	return att, gdn
}

// partLinear is the linear-attention layers' cost of one request's prefill
// chunk of n new tokens: lin layers times linearAttention over it (whose
// prefill path reads neither the context before nor the sequence count).
func (e *Engine) partLinear(n, lin int) float64 {
	ps := shape{seqs: 1, q: n, prefill: true}
	return float64(lin) * e.linearAttention(n, 1, ps, e.Target.Attention)
}

// gdnPrefillMemo is gdnPrefill(tokens), memoized.
func (e *Engine) gdnPrefillMemo(tokens int) (gpu, eager float64, ok bool) {
	if !stepMemo || tokens < 0 {
		return e.gdnPrefill(tokens)
	}
	if c, hit := e.pm.gdn.get(uint64(tokens)); hit {
		return c.gpu, c.eager, c.ok
	}
	gpu, eager, ok = e.gdnPrefill(tokens)
	e.pm.gdn.put(uint64(tokens), gdnPrefillCost{gpu, eager, ok})
	return gpu, eager, ok
}

// prefillPartKey packs one prefill part and whether the draft runs into a
// memo key; ok is false for parts it cannot hold.
func prefillPartKey(p PrefillPart, spec bool) (key uint64, ok bool) {
	if p.New < 0 || p.New >= 1<<30 || p.Before < 0 || p.Before >= 1<<32 {
		return 0, false
	}
	key = uint64(p.New)<<34 | uint64(p.Before)<<2
	if p.Last {
		key |= 2
	}
	if spec {
		key |= 1
	}
	return key, true
}

// prefillTime is Prefill(parts, spec).Total(), memoized for a batch of
// one part.
func (e *Engine) prefillTime(parts []PrefillPart, spec bool) float64 {
	if len(parts) != 1 || !stepMemo {
		return e.Prefill(parts, spec).Total()
	}
	key, ok := prefillPartKey(parts[0], spec)
	if !ok {
		return e.Prefill(parts, spec).Total()
	}
	if t, ok := e.pm.one.get(key); ok {
		return t
	}
	t := e.Prefill(parts, spec).Total()
	e.pm.one.put(key, t)
	return t
}
