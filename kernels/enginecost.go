package kernels

import (
	"fmt"
)

// GDNCost is a Gated DeltaNet layer priced by mode. Cost.Seconds is GPU
// time (CUDA-graph replay of the measured kernel); EagerSeconds is the wall
// time of one eager call issued back to back, which is what an engine that
// runs the kernel without graphs (SGLang prefill) pays when the host is the
// bottleneck, 0 where the table has no eager figure.
type GDNCost struct {
	Cost
	Mode         GDNMode
	Kernel       string // the engine kernel the table measured; "" when priced by the reference model
	StateDType   DType  // state dtype of the rows used
	EagerSeconds float64
	// StateSubstituted: no row of the asked state dtype covers the head
	// layout, so the other dtype's rows priced it (prefill only, where the
	// state is read and written once per sequence).
	StateSubstituted bool
}

// gdnModeOf is the engine kernel a GDNShape stands for: decode for one
// token, verify when intermediate states are kept, prefill for long
// chunks; false for short chunks without intermediate states (no engine
// kernel is measured for them).
func gdnModeOf(s GDNShape) (GDNMode, bool) {
	switch {
	case s.QLen == 1:
		return GDNDecode, true
	case s.KeepIntermediate:
		return GDNVerify, true
	case s.QLen >= gdnPrefillMinQLen:
		return GDNPrefill, true
	}
	return "", false
}

// GDN prices a Gated DeltaNet layer in a given mode from the engine-kernel
// tables of the GPU where they cover its head layout (SGLang's kernels on
// the H200), else by the reference model of GatedDeltaNet (the roofline
// calibrated on the reference recurrent kernel, which for prefill
// extrapolates a per-token recurrence to the whole chunk).
func (c *Coster) GDN(s GDNShape, mode GDNMode) (GDNCost, error) {
	if err := s.Validate(); err != nil {
		return GDNCost{}, err
	}
	switch mode {
	case GDNDecode:
		if s.QLen != 1 {
			return GDNCost{}, fmt.Errorf("gdn decode is one token per sequence, got q_len %d (use verify or prefill)", s.QLen)
		}
		s.KeepIntermediate = false
	case GDNVerify:
		s.KeepIntermediate = true
	case GDNPrefill:
		s.KeepIntermediate = false
	default:
		return GDNCost{}, fmt.Errorf("unknown GDN mode %q: want prefill, verify or decode", mode)
	}
	if g, ok := c.engineGDN(s, mode); ok {
		return g, nil
	}
	sd := s.StateDType
	if sd == "" {
		sd = FP32
	}
	return GDNCost{Cost: c.gdnReference(s), Mode: mode, StateDType: sd}, nil
}

func (c *Coster) engineGDN(s GDNShape, mode GDNMode) (GDNCost, bool) {
	if c.engine == nil || c.engine.gdn == nil || s.KDim != s.VDim || s.Batch <= 0 || s.QLen <= 0 {
		return GDNCost{}, false
	}
	sd := s.StateDType
	if sd == "" {
		sd = FP32
	}
	key := gdnKey{mode, sd, s.VHeads, max(s.KHeads, 1), s.KDim}
	fam, ok := c.engine.gdn.graph[key]
	substituted := false
	if !ok && mode == GDNPrefill {
		other := FP32
		if sd == FP32 {
			other = BF16
		}
		key.state = other
		fam, ok = c.engine.gdn.graph[key]
		substituted = ok
	}
	if !ok {
		return GDNCost{}, false
	}
	idx, x := float64(s.Batch), float64(s.Batch*s.QLen)
	if mode != GDNPrefill {
		idx, x = float64(s.QLen), float64(s.Batch)
	}
	us, inside := fam.at(idx, x)
	src := SourceMeasured
	if !inside {
		src = SourceExtrapolated
	}
	out := GDNCost{Mode: mode, Kernel: c.engine.gdn.kernel[key], StateDType: key.state, StateSubstituted: substituted,
		Cost: Cost{Seconds: us * 1e-6, Source: src, Bound: "measured"}}
	if e, ok := c.engine.gdn.eager[key]; ok {
		eu, _ := e.at(idx, x)
		out.EagerSeconds = eu * 1e-6
	}
	ref := c.gdnReference(s)
	out.Bytes, out.FLOPs = ref.Bytes, ref.FLOPs
	return out, true
}

// engineMoE prices a Triton fused MoE from the GPU's moe_triton tables, or
// a fused MoE from a user's measured engine table (--kernel-table), where
// one covers the layer (an EP rank only from lines of its EP size). With
// skewed routing the uniform measurement is scaled by the roofline's
// skewed-to-uniform ratio. Bytes and FLOPs are the roofline's of the shape
// (an EP rank's own routed rows and touched experts).
//
// An EP rank outside its table's token range is priced from the TP shard's
// line (tpEquivalent) where the GPU has one: moe_triton_ep8.csv holds
// 1-512 tokens, and its proportional extrapolation priced 4096 tokens at
// 2.4 ms where the TP shard's table, measured to 8192, says 0.90 ms; the
// roofline says 0.34 ms. The simulation does the same (simulate's
// measuredMoEShard takes the EP table only where it is measured).
func (c *Coster) engineMoE(s MoEShape) (Cost, bool) {
	cv, _, ok := c.engineMoELine(s)
	if !ok {
		return Cost{}, false
	}
	us, inside := cv.at(float64(s.Tokens))
	src := SourceMeasured
	if _, tcv, ok := c.tpEquivalentLine(s, cv); ok {
		us, _ = tcv.at(float64(s.Tokens))
		src = SourceTPEquivalent
	} else if !inside {
		src = SourceExtrapolated
	}
	plain := s
	plain.Kernel = MoEFused
	plain.Skew = 0
	c2 := *c
	c2.engine = nil
	base := c2.moe(plain)
	cost := Cost{Seconds: us * 1e-6, Bytes: base.Bytes, FLOPs: base.FLOPs, Source: src, Bound: "measured"}
	if s.Skew > 0 {
		skewed := plain
		skewed.Skew = s.Skew
		if sk := c2.moe(skewed); base.Seconds > 0 {
			cost.Seconds *= sk.Seconds / base.Seconds
			cost.Bytes = sk.Bytes
		}
	}
	return cost, true
}

// engineMoELine is the measured line that prices s and the table's note
// on it.
func (c *Coster) engineMoELine(s MoEShape) (curve, string, bool) {
	if c.engine == nil {
		return curve{}, "", false
	}
	m, notes := c.engine.moe, c.engine.moeNotes
	if s.Kernel != MoETriton {
		if s.Kernel != "" && s.Kernel != MoEFused {
			return curve{}, "", false
		}
		m, notes = c.engine.fused, c.engine.fusedNotes
	}
	k := s.key()
	cv, ok := m[k]
	return cv, notes[k], ok
}

// tpEquivalent is the TP shard with an EP rank's expert work: every
// expert of the layer (Experts x EP) at inter/EP, the same weight bytes
// and routed rows per rank (SGLang's TP MoE shards each expert's
// intermediate dimension over the ranks). false for a shape that is no EP
// rank or whose inter EP does not divide.
func (s MoEShape) tpEquivalent() (MoEShape, bool) {
	ep := s.ep()
	if ep <= 1 || s.Inter%ep != 0 {
		return MoEShape{}, false
	}
	tp := s
	tp.Experts, tp.Inter, tp.EP = s.Experts*ep, s.Inter/ep, 0
	return tp, true
}

// tpEquivalentLine is the TP shard and its measured line that price an
// EP rank outside its own line cv's token range; ok is false inside that
// range, or where the shard has no line.
func (c *Coster) tpEquivalentLine(s MoEShape, cv curve) (MoEShape, curve, bool) {
	if _, inside := cv.at(float64(s.Tokens)); inside {
		return MoEShape{}, curve{}, false
	}
	tp, ok := s.tpEquivalent()
	if !ok {
		return MoEShape{}, curve{}, false
	}
	tcv, _, ok := c.engineMoELine(tp)
	return tp, tcv, ok
}

// MoETableNote is what the measured table that prices s says its figure
// is (moe_triton_ep8.csv: the busiest of 8 EP ranks, derived from per-rank
// measurements); "" when no table prices s or its table says nothing.
func (c *Coster) MoETableNote(s MoEShape) string {
	cv, note, ok := c.engineMoELine(s)
	if !ok {
		return ""
	}
	if tp, tcv, ok := c.tpEquivalentLine(s, cv); ok {
		past := ""
		if _, in := tcv.at(float64(s.Tokens)); !in {
			past = ", proportional past them"
		}
		return fmt.Sprintf("outside the EP%d table's measured %g-%g tokens: priced from the TP shard of the same expert work per rank (%d experts at inter %d, measured %g-%g tokens%s), not the EP table's extrapolation",
			s.ep(), cv.x[0], cv.x[len(cv.x)-1], tp.Experts, tp.Inter, tcv.x[0], tcv.x[len(tcv.x)-1], past)
	}
	return note
}

// WithEngineTables returns a copy of c that prices engine kernels from t
// first: t's lines replace the embedded ones of the same shape, the others
// stay.
func (c *Coster) WithEngineTables(t *EngineTables) *Coster {
	out := *c
	if t.empty() {
		return &out
	}
	merged := &EngineTables{Source: t.Source, FusedMoE: t.FusedMoE}
	if own, err := EmbeddedEngineTables(c.gpu.Name); err == nil && own != nil {
		merged.Source = t.Source + " (then " + own.Source + ")"
		merged.FusedMoE = append(merged.FusedMoE, own.FusedMoE...)
		gdnKeys := map[gdnKey]bool{}
		for _, r := range t.GDN {
			gdnKeys[gdnKey{r.Mode, r.StateDType, r.Heads, r.KVHeads, r.HeadDim}] = true
		}
		merged.GDN = append(merged.GDN, t.GDN...)
		for _, r := range own.GDN {
			if !gdnKeys[gdnKey{r.Mode, r.StateDType, r.Heads, r.KVHeads, r.HeadDim}] {
				merged.GDN = append(merged.GDN, r)
			}
		}
		moeKeys := map[moeKey]bool{}
		for _, r := range t.MoE {
			moeKeys[r.key()] = true
		}
		merged.MoE = append(merged.MoE, t.MoE...)
		for _, r := range own.MoE {
			if !moeKeys[r.key()] {
				merged.MoE = append(merged.MoE, r)
			}
		}
	} else {
		merged.GDN, merged.MoE = t.GDN, t.MoE
	}
	out.engine = newEngineIndex(merged)
	return &out
}

// EngineSource says where the Coster's engine-kernel tables come from (""
// when it has none).
func (c *Coster) EngineSource() string {
	if c.engine == nil {
		return ""
	}
	return c.engine.source
}

// buildEngineIndex is the fitted index of a GPU's embedded engine tables;
// nil where there are none or they do not parse (the test of the embedded
// data reports that). Calibrations.engineIndex keeps one per GPU.
func buildEngineIndex(gpu string) *engineIndex {
	t, err := EmbeddedEngineTables(gpu)
	if err != nil || t == nil {
		return nil
	}
	return newEngineIndex(t)
}

// GatedDeltaNetReference prices s with the reference model alone (the
// recurrent kernel of ops.csv and its roofline), whatever engine tables the
// GPU has: the pricing GDN replaces, kept for comparison. A shape no
// kernel runs is a [ShapeError].
func (c *Coster) GatedDeltaNetReference(s GDNShape) (Cost, error) {
	if err := s.Validate(); err != nil {
		return Cost{}, err
	}
	return c.gdnReference(s), nil
}
