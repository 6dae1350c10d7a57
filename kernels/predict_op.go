package kernels

import (
	"fmt"
	"math"
	"strings"
)

// OpQuery is one op to price by itself, as "specsim kernels predict"
// takes it: the op and shape of a table row, and the choices a measured
// row does not carry.
type OpQuery struct {
	// Row.Op is an op of Ops, or "collective" (Collective names which),
	// "allreduce", "allgather", "reducescatter" or "alltoall"; Row.DType
	// is the weight dtype (the KV cache's for attention).
	Row        OpRow
	Collective string  // op "collective": the collective's name
	Bytes      float64 // collectives: the message size
	GPUs       int     // collectives: the GPUs taking part
	MoEKernel  MoEKernel
	Skew       float64 // MoE: Zipf exponent of expert popularity, 0..4
	// MoE: expert-parallel size (0 or 1: none); with EP > 1 the row is one
	// rank, as MoEShape.EP reads it.
	EP int
	// Attention: causal prefill and DeepSeek latent attention, priced by
	// Attention; otherwise the row as PredictRow prices it.
	Prefill, MLA bool
	StateDType   DType   // GDN recurrent state: FP32 or BF16
	GDNMode      GDNMode // "" = DefaultGDNMode of the row's q_len
	Reference    bool    // GDN: the reference model, no intermediate states
}

// OpPrediction is the price of an OpQuery.
type OpPrediction struct {
	Cost
	Op        string    // the op priced (a collective's own name)
	MoEKernel MoEKernel // MoE: the implementation priced
	// GDN: the mode, the engine kernel measured ("" for the reference
	// model), the state dtype of the rows used and the eager wall time.
	Mode         GDNMode
	Kernel       string
	StateDType   DType
	EagerSeconds float64
	Note         string
}

// QueryError is a choice of an OpQuery that no op takes: the OpQuery
// field, its value and why. A bad shape is a [ShapeError].
type QueryError struct {
	Field, Value, Reason string
}

func (e *QueryError) Error() string { return e.Field + " " + e.Value + ": " + e.Reason }

// CheckDType reports a weight dtype the op cannot compute in on c's GPU,
// as a QueryError of field "DType": NVFP4 GEMM, MoE and lm_head weights
// on a GPU without FP4 tensor cores (GPU.NoFP4), which no engine runs
// there as W4A4.
func (c *Coster) CheckDType(op string, dt DType) error {
	switch strings.ToLower(op) {
	case "gemm", "moe", "lm_head":
		if why := c.gpu.NoFP4(); dt == NVFP4 && why != "" {
			return &QueryError{"DType", string(dt), why}
		}
	}
	return nil
}

// PredictOp prices q alone on c; a dtype the GPU cannot compute the op
// in is refused (CheckDType).
func (c *Coster) PredictOp(q OpQuery) (OpPrediction, error) {
	r := q.Row
	r.Op = strings.ToLower(r.Op)
	p := OpPrediction{Op: r.Op}
	if err := c.CheckDType(r.Op, r.DType); err != nil {
		return p, err
	}
	switch r.Op {
	case "collective", "allreduce", "allgather", "reducescatter", "alltoall":
		name := q.Collective
		if r.Op != "collective" {
			name = r.Op
		}
		cop, err := ParseCollectiveOp(name)
		if err != nil {
			return p, &QueryError{"Collective", name, err.Error()}
		}
		if q.GPUs < 2 {
			return p, &QueryError{"GPUs", fmt.Sprint(q.GPUs), "a collective needs 2 or more"}
		}
		if !(q.Bytes > 0) || math.IsInf(q.Bytes, 1) {
			return p, &QueryError{"Bytes", fmt.Sprint(q.Bytes), "want a finite size > 0"}
		}
		p.Op, p.Cost = string(cop), c.Collective(cop, q.Bytes, q.GPUs)
		return p, nil
	case "moe":
		if !(q.Skew >= 0 && q.Skew <= 4) {
			return p, &QueryError{"Skew", fmt.Sprint(q.Skew), "want 0..4"}
		}
		k := q.MoEKernel
		if k != MoEFused && k != MoETorchGrouped && k != MoETriton {
			return p, &QueryError{"MoEKernel", string(k), fmt.Sprintf("want %s, %s or %s", MoETorchGrouped, MoEFused, MoETriton)}
		}
		s := MoEShape{Tokens: r.Tokens, Experts: r.Experts, TopK: r.TopK, Hidden: r.Hidden, Inter: r.Inter, DType: r.DType, Skew: q.Skew, Kernel: k, EP: q.EP}
		cost, err := c.MoE(s)
		p.Cost, p.MoEKernel = cost, k
		if err == nil && (cost.Source == SourceMeasured || cost.Source == SourceExtrapolated || cost.Source == SourceTPEquivalent) {
			p.Note = c.MoETableNote(s)
		}
		return p, err
	case "attention":
		if !q.Prefill && !q.MLA {
			break
		}
		cost, err := c.Attention(AttentionShape{Batch: r.Batch, QLen: r.QLen, KVLen: r.KVLen, Heads: r.Heads,
			KVHeads: max(r.KVHeads, 1), HeadDim: r.HeadDim, KVDType: r.DType, Prefill: q.Prefill, MLA: q.MLA})
		p.Cost = cost
		return p, err
	case "gdn":
		return c.predictGDN(q, p)
	}
	cost, err := c.PredictRow(r)
	p.Cost = cost
	return p, err
}

func (c *Coster) predictGDN(q OpQuery, p OpPrediction) (OpPrediction, error) {
	r, sd := q.Row, q.StateDType
	if sd != FP32 && sd != BF16 {
		return p, &QueryError{"StateDType", string(sd), "want fp32 or bf16"}
	}
	shape := GDNShape{Batch: r.Batch, QLen: r.QLen, KHeads: max(r.KVHeads, 1), VHeads: r.Heads, KDim: r.HeadDim, VDim: r.HeadDim, StateDType: sd}
	if q.Reference {
		if q.GDNMode != "" {
			return p, &QueryError{"GDNMode", string(q.GDNMode), "the reference model has no mode"}
		}
		cost, err := c.GatedDeltaNetReference(shape)
		p.Cost, p.Mode, p.StateDType = cost, "reference", sd
		return p, err
	}
	mode := q.GDNMode
	if mode == "" {
		mode = DefaultGDNMode(r.QLen)
	}
	g, err := c.GDN(shape, mode)
	if err != nil {
		return p, err
	}
	p.Cost, p.Mode, p.Kernel, p.StateDType, p.EagerSeconds = g.Cost, g.Mode, g.Kernel, g.StateDType, g.EagerSeconds
	if g.StateSubstituted {
		p.Note = fmt.Sprintf("no %s-state rows for this head layout: priced from the %s-state rows (prefill reads and writes the state once per sequence)", sd, g.StateDType)
	}
	return p, nil
}
