package kernels

import (
	"fmt"
	"strings"
)

// Ops lists the op names of measured tables and of PredictRow.
func Ops() []string {
	return []string{"gemm", "moe", "attention", "gdn", "rmsnorm", "lm_head", "copy"}
}

// rowOp is one table row as the op it measures: its validation, its grid
// and its price, each defined by the op's shape.
type rowOp struct {
	valid error
	grid  func() (gridKey, coords)
	price func(c *Coster) Cost
}

// opOf reads a row as the collector defines its op:
// gemm (m,n,k; FP8 with per-tensor scales), moe (tokens, experts, topk, hidden, inter; the PyTorch
// grouped-GEMM path, MoETorchGrouped), attention (batch, q_len, kv_len, heads, kv_heads,
// head_dim; dtype is the KV cache's), gdn (batch, q_len, heads = value
// heads, kv_heads = key heads, head_dim for both key and value; q_len > 1
// keeps intermediate states, as verify does), rmsnorm (tokens, hidden),
// lm_head (m = tokens, n = vocab, k = hidden) and copy (n = bytes copied).
func opOf(r OpRow) (rowOp, bool) {
	switch r.Op {
	case "gemm":
		return rowOp{ValidateGEMM(r.M, r.N, r.K),
			func() (gridKey, coords) { return gemmGrid(r.DType, r.M, r.N, r.K) },
			func(c *Coster) Cost { return c.tensorScaledGEMM(r.DType, r.M, r.N, r.K) }}, true
	case "moe":
		s := MoEShape{Tokens: r.Tokens, Experts: r.Experts, TopK: r.TopK, Hidden: r.Hidden, Inter: r.Inter, DType: r.DType, Kernel: MoETorchGrouped}
		return rowOp{s.Validate(), s.grid, func(c *Coster) Cost { return c.moe(s) }}, true
	case "attention":
		s := AttentionShape{Batch: r.Batch, QLen: r.QLen, KVLen: r.KVLen, Heads: r.Heads,
			KVHeads: r.KVHeads, HeadDim: r.HeadDim, KVDType: r.DType}
		return rowOp{s.Validate(), s.grid, func(c *Coster) Cost { return c.attention(s) }}, true
	case "gdn":
		s := GDNShape{Batch: r.Batch, QLen: r.QLen, KHeads: r.KVHeads, VHeads: r.Heads,
			KDim: r.HeadDim, VDim: r.HeadDim, KeepIntermediate: r.QLen > 1}
		return rowOp{s.Validate(), s.grid, func(c *Coster) Cost { return c.gdnReference(s) }}, true
	case "rmsnorm", "norm":
		return rowOp{ValidateNorm(r.Tokens, r.Hidden),
			func() (gridKey, coords) { return normGrid(r.Tokens, r.Hidden) },
			func(c *Coster) Cost { return c.norm(r.Tokens, r.Hidden) }}, true
	case "lm_head":
		return rowOp{ValidateLMHead(r.M, r.K, r.N),
			func() (gridKey, coords) { return lmHeadGrid(r.DType, r.M, r.K, r.N) },
			func(c *Coster) Cost { return c.lmHeadSample(r.M, r.K, r.N, r.DType) }}, true
	case "copy":
		return rowOp{positive("copy", dim{"n", r.N}),
			func() (gridKey, coords) { return copyGrid(r.N) },
			func(c *Coster) Cost { return c.elementwise(2 * f(r.N)) }}, true
	}
	return rowOp{}, false
}

// PredictRow prices one table row as the collector defines its op (see
// opOf); a row whose shape no kernel runs is a [ShapeError].
func (c *Coster) PredictRow(r OpRow) (Cost, error) {
	op, ok := opOf(r)
	if !ok {
		return Cost{}, fmt.Errorf("unknown op %q: want %s", r.Op, strings.Join(Ops(), ", "))
	}
	if op.valid != nil {
		return Cost{}, op.valid
	}
	return op.price(c), nil
}

// rowGrid is where a measured row sits: its grid (op class, dtype,
// categorical dimensions) and its continuous coordinates, the first being
// the line's varying dimension, as its shape defines them. ok is false
// for rows PredictRow rejects.
func rowGrid(r OpRow) (k gridKey, c coords, ok bool) {
	op, known := opOf(r)
	if !known || op.valid != nil {
		return gridKey{}, coords{}, false
	}
	k, c = op.grid()
	return k, c, true
}

// rowUnits are the parallel work units the op of a row reports to the
// roofline (see Efficiency.HalfUnits); 0 where it reports none.
func rowUnits(r OpRow) float64 {
	switch r.Op {
	case "attention":
		return attentionUnits(AttentionShape{Batch: r.Batch, KVHeads: r.KVHeads})
	case "gdn":
		return f(r.Batch) * f(r.Heads)
	}
	return 0
}

// lineOf identifies the measured line a row lies on: its grid and every
// continuous coordinate but the first.
type lineID struct {
	grid gridKey
	rest [maxGridDims - 1]float64
}

func lineOf(k gridKey, c coords) lineID {
	id := lineID{grid: k}
	copy(id.rest[:], c.v[1:])
	return id
}
