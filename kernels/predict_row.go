package kernels

import (
	"fmt"
	"strings"
)

// Ops lists the op names of measured tables and of PredictRow.
func Ops() []string {
	return []string{"gemm", "moe", "attention", "gdn", "rmsnorm", "lm_head", "copy"}
}

// PredictRow prices one table row as the H200 collector defines the op:
// gemm (m,n,k; FP8 with per-tensor scales), moe (tokens, experts, topk, hidden, inter; the PyTorch
// grouped-GEMM path, MoETorchGrouped), attention (batch, q_len, kv_len, heads, kv_heads,
// head_dim; dtype is the KV cache's), gdn (batch, q_len, heads = value
// heads, kv_heads = key heads, head_dim for both key and value; q_len > 1
// keeps intermediate states, as verify does), rmsnorm (tokens, hidden),
// lm_head (m = tokens, n = vocab, k = hidden) and copy (n = bytes copied).
func (c *Coster) PredictRow(r OpRow) (Cost, error) {
	need := func(cols ...string) error {
		var missing []string
		vals := map[string]int{"m": r.M, "n": r.N, "k": r.K, "tokens": r.Tokens, "experts": r.Experts,
			"topk": r.TopK, "hidden": r.Hidden, "inter": r.Inter, "batch": r.Batch, "q_len": r.QLen,
			"kv_len": r.KVLen, "heads": r.Heads, "head_dim": r.HeadDim}
		for _, col := range cols {
			if vals[col] <= 0 {
				missing = append(missing, col)
			}
		}
		if len(missing) > 0 {
			return fmt.Errorf("op %s needs positive %s", r.Op, strings.Join(missing, ", "))
		}
		return nil
	}
	switch r.Op {
	case "gemm":
		if err := need("m", "n", "k"); err != nil {
			return Cost{}, err
		}
		return c.tensorScaledGEMM(r.DType, r.M, r.N, r.K), nil
	case "moe":
		if err := need("tokens", "experts", "topk", "hidden", "inter"); err != nil {
			return Cost{}, err
		}
		return c.MoE(MoEShape{Tokens: r.Tokens, Experts: r.Experts, TopK: r.TopK, Hidden: r.Hidden, Inter: r.Inter, DType: r.DType, Kernel: MoETorchGrouped}), nil
	case "attention":
		if err := need("batch", "q_len", "kv_len", "heads", "head_dim"); err != nil {
			return Cost{}, err
		}
		return c.Attention(AttentionShape{Batch: r.Batch, QLen: r.QLen, KVLen: r.KVLen, Heads: r.Heads,
			KVHeads: max(r.KVHeads, 1), HeadDim: r.HeadDim, KVDType: r.DType}), nil
	case "gdn":
		if err := need("batch", "q_len", "heads", "head_dim"); err != nil {
			return Cost{}, err
		}
		return c.gdnReference(GDNShape{Batch: r.Batch, QLen: r.QLen, KHeads: max(r.KVHeads, 1), VHeads: r.Heads,
			KDim: r.HeadDim, VDim: r.HeadDim, KeepIntermediate: r.QLen > 1}), nil
	case "rmsnorm", "norm":
		if err := need("tokens", "hidden"); err != nil {
			return Cost{}, err
		}
		return c.Norm(r.Tokens, r.Hidden), nil
	case "lm_head":
		if err := need("m", "n", "k"); err != nil {
			return Cost{}, err
		}
		return c.LMHeadSample(r.M, r.K, r.N, r.DType), nil
	case "copy":
		if err := need("n"); err != nil {
			return Cost{}, err
		}
		return c.Elementwise(2 * f(r.N)), nil
	}
	return Cost{}, fmt.Errorf("unknown op %q: want %s", r.Op, strings.Join(Ops(), ", "))
}

// rowGrid is where a measured row sits: its grid (op class, dtype,
// categorical dimensions) and its continuous coordinates, the first being
// the line's varying dimension. It must match the adjust calls of the op
// methods. ok is false for rows PredictRow rejects.
func rowGrid(r OpRow) (k gridKey, c coords, ok bool) {
	switch r.Op {
	case "gemm":
		return gridKey{classGEMM, slotOf(r.DType), lineKey{r.N, r.K, 0, 0, 0}}, coords1(r.M), r.M > 0 && r.N > 0 && r.K > 0
	case "moe":
		return gridKey{classMoE, slotOf(r.DType), lineKey{r.Experts, min(r.TopK, r.Experts), r.Hidden, r.Inter, 0}}, coords1(r.Tokens),
			r.Tokens > 0 && r.Experts > 0 && r.TopK > 0 && r.Hidden > 0 && r.Inter > 0
	case "attention":
		return gridKey{classAttention, slotOf(r.DType), lineKey{r.Heads, max(r.KVHeads, 1), r.HeadDim, 0, 0}}, coords3(r.KVLen, r.Batch, r.QLen),
			r.Batch > 0 && r.QLen > 0 && r.KVLen > 0 && r.Heads > 0 && r.HeadDim > 0
	case "gdn":
		return gridKey{classGDN, slotBF16, lineKey{r.Heads, max(r.KVHeads, 1), r.HeadDim, boolInt(r.QLen > 1), 0}}, coords2(r.Batch, r.QLen),
			r.Batch > 0 && r.QLen > 0 && r.Heads > 0 && r.HeadDim > 0
	case "rmsnorm", "norm":
		return gridKey{classNorm, slotBF16, lineKey{}}, coords2(r.Tokens, r.Hidden), r.Tokens > 0 && r.Hidden > 0
	case "lm_head":
		return gridKey{classLMHead, slotOf(r.DType), lineKey{r.N, r.K, 0, 0, 0}}, coords1(r.M), r.M > 0 && r.N > 0 && r.K > 0
	case "copy":
		return gridKey{classCopy, slotBF16, lineKey{}}, coords1(r.N), r.N > 0
	}
	return gridKey{}, coords{}, false
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
