package kernels

import (
	"fmt"
	"math"
	"strings"
)

// Each op's grid key and coordinates are defined once here, by its shape:
// the op methods adjust their roofline cost at that key, and rowGrid
// places a measured row at the same key, so a table row and the cost of
// the same shape cannot disagree on where they sit.

func gemmGrid(dt DType, m, n, k int) (gridKey, coords) {
	return gridKey{classGEMM, slotOf(dt), lineKey{n, k, 0, 0, 0}}, coords1(m)
}

func lmHeadGrid(dt DType, tokens, hidden, vocab int) (gridKey, coords) {
	return gridKey{classLMHead, slotOf(dt), lineKey{vocab, hidden, 0, 0, 0}}, coords1(tokens)
}

func normGrid(tokens, hidden int) (gridKey, coords) {
	return gridKey{classNorm, slotBF16, lineKey{}}, coords2(tokens, hidden)
}

func copyGrid(half int) (gridKey, coords) {
	return gridKey{classCopy, slotBF16, lineKey{}}, coords1(half)
}

func (s MoEShape) grid() (gridKey, coords) {
	return gridKey{classMoE, slotOf(s.DType), lineKey{s.Experts, min(s.TopK, s.Experts), s.Hidden, s.Inter, 0}}, coords1(s.Tokens)
}

func (s AttentionShape) grid() (gridKey, coords) {
	return gridKey{classAttention, slotOf(s.KVDType), lineKey{s.Heads, max(s.KVHeads, 1), s.HeadDim, 0, 0}}, coords3(s.KVLen, s.Batch, s.QLen)
}

func (s GDNShape) grid() (gridKey, coords) {
	return gridKey{classGDN, slotBF16, lineKey{s.VHeads, max(s.KHeads, 1), s.KDim, boolInt(s.KeepIntermediate && s.QLen > 1), 0}}, coords2(s.Batch, s.QLen)
}

// ShapeError is a shape no kernel runs: the op, the dimensions at fault
// (by the names of the op's measured-table columns) and what is wrong.
type ShapeError struct {
	Op     string
	Dims   []string
	Reason string
}

func (e *ShapeError) Error() string { return e.Op + " shape: " + e.Reason }

// dim is one named dimension of a shape.
type dim struct {
	name string
	v    int
}

// positive returns a ShapeError naming every dimension that is not
// positive, or nil. It does not allocate for a valid shape (the op
// methods price millions of shapes a sweep).
func positive(op string, dims ...dim) error {
	var bad, names []string
	for _, d := range dims {
		if d.v <= 0 {
			bad = append(bad, fmt.Sprintf("%s %d", d.name, d.v))
			names = append(names, d.name)
		}
	}
	if len(bad) > 0 {
		return &ShapeError{op, names, "needs positive " + strings.Join(bad, ", ")}
	}
	return nil
}

// divides reports the grouped-head rule: heads must be a multiple of the
// key/value heads (each KV head serves heads/kvHeads query heads).
func divides(op, headsName string, heads, kvHeads int) error {
	if kvHeads > 0 && heads%kvHeads != 0 {
		return &ShapeError{op, []string{headsName, "kv_heads"}, fmt.Sprintf("%s %d not divisible by kv_heads %d", headsName, heads, kvHeads)}
	}
	if kvHeads < 0 {
		return &ShapeError{op, []string{"kv_heads"}, fmt.Sprintf("kv_heads %d is negative", kvHeads)}
	}
	return nil
}

// ValidateGEMM reports a GEMM shape with a dimension that is not positive.
func ValidateGEMM(m, n, k int) error { return positive("gemm", dim{"m", m}, dim{"n", n}, dim{"k", k}) }

// ValidateLMHead reports an lm_head shape with a dimension that is not positive.
func ValidateLMHead(tokens, hidden, vocab int) error {
	return positive("lm_head", dim{"tokens", tokens}, dim{"hidden", hidden}, dim{"vocab", vocab})
}

// ValidateNorm reports an RMSNorm shape with a dimension that is not positive.
func ValidateNorm(tokens, hidden int) error {
	return positive("rmsnorm", dim{"tokens", tokens}, dim{"hidden", hidden})
}

// Validate reports a MoE shape no kernel runs: a dimension that is not
// positive, or more experts per token than experts.
func (s MoEShape) Validate() error {
	if err := positive("moe", dim{"tokens", s.Tokens}, dim{"experts", s.Experts}, dim{"topk", s.TopK}, dim{"hidden", s.Hidden}, dim{"inter", s.Inter}); err != nil {
		return err
	}
	switch ep := s.ep(); {
	case s.EP < 0 || s.EP > maxMoEEP:
		return &ShapeError{"moe", []string{"ep"}, fmt.Sprintf("ep %d: want 1..%d", s.EP, maxMoEEP)}
	case ep == 1 && s.TopK > s.Experts:
		return &ShapeError{"moe", []string{"topk", "experts"}, fmt.Sprintf("topk %d exceeds experts %d", s.TopK, s.Experts)}
	case ep > 1 && s.Experts > math.MaxInt32/ep:
		return &ShapeError{"moe", []string{"experts", "ep"}, fmt.Sprintf("experts %d x ep %d is too large", s.Experts, ep)}
	case ep > 1 && s.TopK > s.Experts*ep:
		return &ShapeError{"moe", []string{"topk", "experts", "ep"}, fmt.Sprintf("topk %d exceeds the layer's experts %d x ep %d", s.TopK, s.Experts, ep)}
	case ep > 1 && s.Skew > 0:
		// The busiest rank under skewed routing depends on which ranks hold
		// the popular experts; no placement is modelled.
		return &ShapeError{"moe", []string{"skew", "ep"}, "skewed routing on an expert-parallel rank is not modelled (the busiest rank depends on where the popular experts are placed): use skew 0 or ep 1"}
	}
	return nil
}

// Validate reports an attention shape no kernel runs: a dimension that is
// not positive, or query heads that the KV heads do not divide (KVHeads 0
// means one).
func (s AttentionShape) Validate() error {
	if err := positive("attention", dim{"batch", s.Batch}, dim{"q_len", s.QLen}, dim{"kv_len", s.KVLen}, dim{"heads", s.Heads}, dim{"head_dim", s.HeadDim}); err != nil {
		return err
	}
	return divides("attention", "heads", s.Heads, s.KVHeads)
}

// Validate reports a Gated DeltaNet shape no kernel runs: a dimension
// that is not positive, or value heads that the key heads do not divide
// (KHeads 0 means one).
func (s GDNShape) Validate() error {
	if err := positive("gdn", dim{"batch", s.Batch}, dim{"q_len", s.QLen}, dim{"v_heads", s.VHeads}, dim{"k_dim", s.KDim}, dim{"v_dim", s.VDim}); err != nil {
		return err
	}
	return divides("gdn", "v_heads", s.VHeads, s.KHeads)
}
