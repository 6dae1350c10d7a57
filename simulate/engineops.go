package simulate

import (
	"math"

	"github.com/specsim/specsim/kernels"
)

// engineOps prices an Engine's ops with its Coster. The Coster refuses a
// shape no kernel runs with a [kernels.ShapeError]; the engine's step
// functions return times, so the first such error is kept on the Engine
// (Engine.Err) and the simulation or estimate that priced the step
// returns it instead of a result.
type engineOps struct{ e *Engine }

func (e *Engine) ops() engineOps { return engineOps{e} }

// Err is the first shape the Engine priced that no kernel runs, or nil.
func (e *Engine) Err() error { return e.shapeErr }

func (o engineOps) keep(c kernels.Cost, err error) kernels.Cost {
	if err != nil && o.e.shapeErr == nil {
		o.e.shapeErr = err
	}
	return c
}

func (o engineOps) GEMM(dt kernels.DType, m, n, k int) kernels.Cost {
	if max(m, n, k) > math.MaxInt32 {
		return o.keep(o.e.Coster.GEMM(dt, m, n, k))
	}
	return seconds(o, &o.e.om.gemm, gemmKey{dt, int32(m), int32(n), int32(k)}, func() (kernels.Cost, error) { return o.e.Coster.GEMM(dt, m, n, k) })
}

func (o engineOps) MoE(s kernels.MoEShape) kernels.Cost {
	return memoOp(o, &o.e.om.moe, s, func() (kernels.Cost, error) { return o.e.Coster.MoE(s) })
}

// Attention is not memoized: its length is a request's context, which
// seldom repeats.
func (o engineOps) Attention(s kernels.AttentionShape) kernels.Cost {
	return o.keep(o.e.Coster.Attention(s))
}

func (o engineOps) GatedDeltaNet(s kernels.GDNShape) kernels.Cost {
	return memoOp(o, &o.e.om.gdn, s, func() (kernels.Cost, error) { return o.e.Coster.GatedDeltaNet(s) })
}

func (o engineOps) Norm(tokens, hidden int) kernels.Cost {
	return seconds(o, &o.e.om.norm, [2]int{tokens, hidden}, func() (kernels.Cost, error) { return o.e.Coster.Norm(tokens, hidden) })
}

func (o engineOps) Elementwise(bytes float64) kernels.Cost {
	return seconds(o, &o.e.om.elementwise, bytes, func() (kernels.Cost, error) { return o.e.Coster.Elementwise(bytes) })
}

func (o engineOps) LMHeadSample(tokens, hidden, vocab int, dt kernels.DType) kernels.Cost {
	return seconds(o, &o.e.om.lmHead, lmHeadKey{dt, tokens, hidden, vocab}, func() (kernels.Cost, error) {
		return o.e.Coster.LMHeadSample(tokens, hidden, vocab, dt)
	})
}

// opMemos holds an Engine's memoized op costs. A decode step's GEMMs,
// experts and norms depend on the batch only, so steps of one
// batch at other contexts reprice just their attention kernels. Each key is
// every argument of a Coster method, which is pure for a given Coster; the
// memos start over when the Engine's Coster is replaced (calibration).
type opMemos struct {
	coster      *kernels.Coster
	gemm        map[gemmKey]float64
	moe         map[kernels.MoEShape]opCost
	gdn         map[kernels.GDNShape]opCost
	norm        map[[2]int]float64
	elementwise map[float64]float64
	lmHead      map[lmHeadKey]float64
	allReduce   map[float64]float64     // tpAllReduce
	measuredMoE map[moeKey]measuredCost // measuredMoE
}

// opMemos returns e's op memos, started over if e's Coster was replaced.
func (e *Engine) opMemos() *opMemos {
	if e.om.coster != e.Coster {
		e.om = opMemos{coster: e.Coster}
	}
	return &e.om
}

type gemmKey struct {
	dt      kernels.DType
	m, n, k int32
}

type lmHeadKey struct {
	dt                  kernels.DType
	tokens, hidden, voc int
}

type opCost struct {
	c   kernels.Cost
	err error
}

// memoOp is price(), memoized in *m under key (see opMemos), with its error
// kept as keep keeps it.
func memoOp[K comparable](o engineOps, m *map[K]opCost, key K, price func() (kernels.Cost, error)) kernels.Cost {
	if !stepMemo || o.e.pm.pricing {
		return o.keep(price())
	}
	o.e.opMemos()
	if v, ok := memoGet(m, key); ok {
		return o.keep(v.c, v.err)
	}
	c, err := price()
	memoPut(*m, key, opCost{c, err})
	return o.keep(c, err)
}

// seconds is price(), memoized in *m under key as its Seconds alone (what
// the Engine reads of a GEMM, norm, elementwise or lm_head cost; the
// returned Cost carries nothing else). A shape error is not memoized.
func seconds[K comparable](o engineOps, m *map[K]float64, key K, price func() (kernels.Cost, error)) kernels.Cost {
	if !stepMemo || o.e.pm.pricing {
		return o.keep(price())
	}
	o.e.opMemos()
	if t, ok := memoGet(m, key); ok {
		return kernels.Cost{Seconds: t}
	}
	c, err := price()
	if err == nil {
		memoPut(*m, key, c.Seconds)
	}
	return o.keep(c, err)
}
