package simulate

import "github.com/specsim/specsim/kernels"

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
	return o.keep(o.e.Coster.GEMM(dt, m, n, k))
}

func (o engineOps) MoE(s kernels.MoEShape) kernels.Cost { return o.keep(o.e.Coster.MoE(s)) }

func (o engineOps) Attention(s kernels.AttentionShape) kernels.Cost {
	return o.keep(o.e.Coster.Attention(s))
}

func (o engineOps) GatedDeltaNet(s kernels.GDNShape) kernels.Cost {
	return o.keep(o.e.Coster.GatedDeltaNet(s))
}

func (o engineOps) Norm(tokens, hidden int) kernels.Cost {
	return o.keep(o.e.Coster.Norm(tokens, hidden))
}

func (o engineOps) Elementwise(bytes float64) kernels.Cost {
	return o.keep(o.e.Coster.Elementwise(bytes))
}

func (o engineOps) LMHeadSample(tokens, hidden, vocab int, dt kernels.DType) kernels.Cost {
	return o.keep(o.e.Coster.LMHeadSample(tokens, hidden, vocab, dt))
}
