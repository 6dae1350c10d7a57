package kernels

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"sort"
	"strconv"
	"strings"
)

// Engine kernel tables time a serving engine's own kernels (rather than the
// reference ops of ops.csv): SGLang's Gated DeltaNet kernels (chunked
// prefill, MTP verify, decode; engineTableFiles) and its
// Triton fused MoE (moe_triton.csv), measured on the H200 by
// kernels/collect/collect_gdn.py and collect_moe_triton.py (method in
// kernels/collect/NOTES.md). AIConfigurator's databases (ReadAICTable) fill
// the same tables for the GPUs their users measured.

// GDNMode is the kernel a Gated DeltaNet layer runs.
type GDNMode string

const (
	// GDNPrefill: SGLang's chunked kernel (fla chunk_gated_delta_rule), run
	// eagerly by SGLang for prefill/extend.
	GDNPrefill GDNMode = "prefill"
	// GDNVerify: the recurrent kernel over the draft tokens, keeping every
	// intermediate state for rollback (SGLang v0.5.14:
	// fused_sigmoid_gating_delta_rule_update with intermediate_states_buffer).
	GDNVerify GDNMode = "verify"
	// GDNDecode: one token per sequence (SGLang v0.5.14:
	// fused_recurrent_gated_delta_rule_packed_decode).
	GDNDecode GDNMode = "decode"
)

// gdnPrefillMinQLen is the q_len from which DefaultGDNMode picks the
// chunked kernel: the H200 tables measure verify up to 4 draft tokens and
// the reference recurrent kernel to 8; above 16 a request is a prefill
// chunk, never a draft.
const gdnPrefillMinQLen = 17

// DefaultGDNMode is the mode a q_len implies: 1 decode, up to 16 verify,
// longer prefill.
func DefaultGDNMode(qLen int) GDNMode {
	switch {
	case qLen <= 1:
		return GDNDecode
	case qLen < gdnPrefillMinQLen:
		return GDNVerify
	}
	return GDNPrefill
}

// ParseGDNMode accepts prefill, verify, decode.
func ParseGDNMode(s string) (GDNMode, error) {
	switch m := GDNMode(strings.ToLower(strings.TrimSpace(s))); m {
	case GDNPrefill, GDNVerify, GDNDecode:
		return m, nil
	}
	return "", fmt.Errorf("unknown GDN mode %q: want prefill, verify or decode", s)
}

// GDNRow is one measured Gated DeltaNet kernel time.
type GDNRow struct {
	Kernel                        string
	Mode                          GDNMode
	StateDType                    DType
	Batch, QLen                   int
	Heads, KVHeads, HeadDim       int     // value heads, key heads, head dim (key = value)
	GraphUS, EagerUS, EagerSyncUS float64 // EagerUS, EagerSyncUS 0 when not measured
	Line                          int
}

// MoEKernelRow is one measured fused-MoE layer time (experts and inter as
// held by the GPU). With EP > 1 it is one expert-parallel rank's time, the
// shape read as MoEShape reads it (Experts local of Experts*EP, TopK the
// layer's, Tokens the whole batch).
type MoEKernelRow struct {
	Kernel                               string
	DType                                DType
	Tokens, Experts, TopK, Hidden, Inter int
	EP                                   int // expert-parallel size, 1 when the table has no ep column
	Config                               string
	LatencyUS                            float64
	// What the table's kernels_us is, where its "# kernels_us:" comment
	// says (moe_triton_ep8.csv: the busiest rank, derived); "" otherwise.
	Note string
	Line int
}

// key is the lookup key of r's line.
func (r MoEKernelRow) key() moeKey {
	return MoEShape{DType: r.DType, Experts: r.Experts, TopK: r.TopK, Hidden: r.Hidden, Inter: r.Inter, EP: r.EP}.key()
}

// EngineTables are the engine-kernel measurements of one GPU.
type EngineTables struct {
	Source   string // where they came from, for output
	GDN      []GDNRow
	MoE      []MoEKernelRow // SGLang's Triton fused MoE (MoETriton)
	FusedMoE []MoEKernelRow // an engine's fused MoE as a user measured it (MoEFused)
}

func (t *EngineTables) empty() bool {
	return t == nil || (len(t.GDN) == 0 && len(t.MoE) == 0 && len(t.FusedMoE) == 0)
}

// ParseGDNTable reads gdn_chunk.csv / gdn_recurrent.csv: "# key: value"
// lines, then kernel,mode,state_dtype,batch,q_len,heads,kv_heads,head_dim,
// graph_us[,eager_us,eager_sync_us].
func ParseGDNTable(name string, data []byte) ([]GDNRow, error) {
	_, rows, err := readCSV(name, data)
	if err != nil {
		return nil, err
	}
	if err := rows.require(name, " (want kernel,mode,state_dtype,batch,q_len,heads,kv_heads,head_dim,graph_us,eager_us,eager_sync_us)",
		"mode", "batch", "q_len", "heads", "kv_heads", "head_dim", "graph_us"); err != nil {
		return nil, err
	}
	var out []GDNRow
	for {
		ok, err := rows.next()
		if err != nil {
			return nil, err
		}
		if !ok {
			return out, nil
		}
		line, cell := rows.line, rows.cell
		r := GDNRow{Kernel: cell("kernel"), Line: line}
		if r.Mode, err = ParseGDNMode(cell("mode")); err != nil {
			return nil, fmt.Errorf("%s:%d: column mode: %v", name, line, err)
		}
		sd := cell("state_dtype")
		if sd == "" {
			sd = "fp32"
		}
		if r.StateDType, err = ParseDType(sd); err != nil || (r.StateDType != FP32 && r.StateDType != BF16) {
			return nil, fmt.Errorf("%s:%d: column state_dtype: want fp32 or bf16, got %q", name, line, sd)
		}
		for _, d := range []struct {
			col string
			p   *int
		}{{"batch", &r.Batch}, {"q_len", &r.QLen}, {"heads", &r.Heads}, {"kv_heads", &r.KVHeads}, {"head_dim", &r.HeadDim}} {
			v, err := parseDim(cell(d.col))
			if err != nil || v <= 0 {
				return nil, fmt.Errorf("%s:%d: column %s: want a positive whole number, got %q", name, line, d.col, cell(d.col))
			}
			*d.p = v
		}
		if r.Mode == GDNDecode && r.QLen != 1 {
			return nil, fmt.Errorf("%s:%d: decode row with q_len %d (decode is one token per sequence)", name, line, r.QLen)
		}
		if r.GraphUS, err = positiveCell(cell("graph_us"), true); err != nil {
			return nil, fmt.Errorf("%s:%d: column graph_us: %v", name, line, err)
		}
		if r.EagerUS, err = positiveCell(cell("eager_us"), false); err != nil {
			return nil, fmt.Errorf("%s:%d: column eager_us: %v", name, line, err)
		}
		if r.EagerSyncUS, err = positiveCell(cell("eager_sync_us"), false); err != nil {
			return nil, fmt.Errorf("%s:%d: column eager_sync_us: %v", name, line, err)
		}
		out = append(out, r)
	}
}

// ParseMoEKernelTable reads moe_triton.csv: kernel,dtype,tokens,experts,
// topk,hidden,inter,config,kernels_us[,align_us,block_m,ep] ("# key:
// value" lines first; ep, the expert-parallel size, 1 when absent or
// empty: then experts are one rank's and topk the layer's over
// experts x ep). A "# kernels_us: TEXT" line says what kernels_us is.
func ParseMoEKernelTable(name string, data []byte) ([]MoEKernelRow, error) {
	meta, rows, err := readCSV(name, data)
	if err != nil {
		return nil, err
	}
	if err := rows.require(name, " (want kernel,dtype,tokens,experts,topk,hidden,inter,config,kernels_us)",
		"tokens", "experts", "topk", "hidden", "inter", "kernels_us"); err != nil {
		return nil, err
	}
	var out []MoEKernelRow
	for {
		ok, err := rows.next()
		if err != nil {
			return nil, err
		}
		if !ok {
			return out, nil
		}
		line, cell := rows.line, rows.cell
		r := MoEKernelRow{Kernel: cell("kernel"), Config: cell("config"), EP: 1, Note: meta["kernels_us"], Line: line}
		if r.DType, err = parseCellDType(cell("dtype")); err != nil {
			return nil, fmt.Errorf("%s:%d: column dtype: %v", name, line, err)
		}
		for _, d := range []struct {
			col string
			p   *int
		}{{"tokens", &r.Tokens}, {"experts", &r.Experts}, {"topk", &r.TopK}, {"hidden", &r.Hidden}, {"inter", &r.Inter}} {
			v, err := parseDim(cell(d.col))
			if err != nil || v <= 0 {
				return nil, fmt.Errorf("%s:%d: column %s: want a positive whole number, got %q", name, line, d.col, cell(d.col))
			}
			*d.p = v
		}
		if c := cell("ep"); c != "" {
			v, err := parseDim(c)
			if err != nil || v <= 0 || v > maxMoEEP {
				return nil, fmt.Errorf("%s:%d: column ep: want a whole number 1..%d, got %q", name, line, maxMoEEP, c)
			}
			r.EP = v
		}
		var se *ShapeError
		if err := (MoEShape{Tokens: r.Tokens, Experts: r.Experts, TopK: r.TopK, Hidden: r.Hidden, Inter: r.Inter, EP: r.EP}).Validate(); errors.As(err, &se) {
			return nil, fmt.Errorf("%s:%d: %s", name, line, se.Reason)
		}
		if r.LatencyUS, err = positiveCell(cell("kernels_us"), true); err != nil {
			return nil, fmt.Errorf("%s:%d: column kernels_us: %v", name, line, err)
		}
		out = append(out, r)
	}
}

func positiveCell(s string, required bool) (float64, error) {
	if s == "" {
		if required {
			return 0, errors.New("empty")
		}
		return 0, nil
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || !positiveFinite(v) {
		return 0, fmt.Errorf("want a positive number, got %q", s)
	}
	return v, nil
}

// EmbeddedEngineTables reads the engine-kernel tables embedded for a GPU
// (canonical catalog name); nil where the project measured none.
func EmbeddedEngineTables(gpu string) (*EngineTables, error) {
	return loadEngineTables(gpu)
}

// engineTableFiles are the engine kernel tables a GPU's data folder may
// hold. GDN decode and verify are the kernels of SGLang v0.5.14, the release
// the InferenceX Qwen3.5 images run (lmsysorg/sglang:v0.5.14-cu130): on SM90
// the default triton linear-attention backend
// (linear/gdn_backend.py: GDNKernelDispatcher -> linear/kernels/gdn_triton.py:
// TritonGDNKernel) decodes with fla/fused_recurrent.py:
// fused_recurrent_gated_delta_rule_packed_decode and verifies with
// fla/fused_sigmoid_gating_recurrent.py: fused_sigmoid_gating_delta_rule_update
// keeping every step's state. gdn_recurrent.csv (the 2026-01-01 kernels:
// fused_recurrent_gated_delta_rule_update for verify) stays in the folder as
// a record and is not read.
//
// moe_triton_ep8.csv is the same Triton MoE on the shard the InferenceX
// H200 recipes run (--tp 8 --expert-parallel-size 8): 64 local experts of
// 512 at the full intermediate size, keyed as AIConfigurator keys an EP
// shard (local experts, the layer's top-k, tokens of the whole batch) and
// by its ep column, so that only an EP8 rank reads it (MoEShape.EP), never
// a plain layer of 64 experts; SGLang v0.5.14's kernel file, and the
// busiest of the 8 ranks derived from per-rank timings
// (kernels/collect/merge_ep.py; its "# kernels_us:" line says so).
var engineTableFiles = []string{"gdn_chunk.csv", "gdn_decode_packed.csv", "gdn_verify_sigmoid.csv", "moe_triton.csv", "moe_triton_ep8.csv"}

// gdnHeldoutFiles are the GDN rows held aside before their runs
// (kernels/collect/NOTES.md): prefill points off the grid, verify q_len 3
// and 6 at batch 2 and 32, packed decode at batch 2 and 32.
var gdnHeldoutFiles = []string{"gdn_chunk_heldout.csv", "gdn_verify_sigmoid_heldout.csv", "gdn_decode_packed_heldout.csv"}

func loadEngineTables(gpu string) (*EngineTables, error) {
	t := &EngineTables{Source: "kernels/data/" + gpu}
	for _, f := range engineTableFiles {
		b, err := dataFS.ReadFile("data/" + gpu + "/" + f)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		name := "kernels/data/" + gpu + "/" + f
		if strings.HasPrefix(f, "gdn") {
			rows, err := ParseGDNTable(name, b)
			if err != nil {
				return nil, err
			}
			t.GDN = append(t.GDN, rows...)
		} else {
			rows, err := ParseMoEKernelTable(name, b)
			if err != nil {
				return nil, err
			}
			t.MoE = append(t.MoE, rows...)
		}
	}
	if t.empty() {
		return nil, nil
	}
	return t, nil
}

// embeddedHeldout reads one embedded held-aside engine table ("" when absent).
func embeddedHeldout(gpu, file string) ([]byte, string, error) {
	b, err := dataFS.ReadFile("data/" + gpu + "/" + file)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, "", nil
	}
	return b, "kernels/data/" + gpu + "/" + file, err
}

// ----------------------------------------------------------------- lines

// curve is one measured line: latency (or any positive figure) over a
// positive coordinate, interpolated linearly in log-log between points;
// below the first point it holds the first value (the launch-bound floor),
// beyond the last it scales in proportion to the coordinate (the
// bandwidth- or compute-bound regime the largest sizes are in).
type curve struct {
	x, y []float64
}

func newCurve(x, y []float64) curve {
	idx := make([]int, len(x))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return x[idx[a]] < x[idx[b]] })
	var c curve
	for _, i := range idx {
		if n := len(c.x); n > 0 && c.x[n-1] == x[i] {
			c.y[n-1] = (c.y[n-1] + y[i]) / 2 // a repeated point: the mean
			continue
		}
		c.x, c.y = append(c.x, x[i]), append(c.y, y[i])
	}
	return c
}

// at returns the value at x and whether x lies within the measured range.
func (c curve) at(x float64) (float64, bool) {
	n := len(c.x)
	switch {
	case n == 0:
		return math.NaN(), false
	case x < c.x[0]:
		return c.y[0], false
	case x > c.x[n-1]:
		return c.y[n-1] * x / c.x[n-1], false
	}
	i := sort.SearchFloat64s(c.x, x)
	if c.x[i] == x {
		return c.y[i], true
	}
	x0, x1 := math.Log(c.x[i-1]), math.Log(c.x[i])
	f := (math.Log(x) - x0) / (x1 - x0)
	return math.Exp(math.Log(c.y[i-1])*(1-f) + math.Log(c.y[i])*f), true
}

// family is a set of curves indexed by a second coordinate (GDN prefill:
// one curve over tokens per batch; verify: one curve over batch per q_len).
// Between two indices it interpolates in log (logIdx) or linearly; beyond
// them it takes the nearest curve (log) or extrapolates the last two
// linearly (linear, floored at half the nearest value).
type family struct {
	idx    []float64
	curves []curve
	logIdx bool
}

func (f family) at(i, x float64) (float64, bool) {
	n := len(f.idx)
	if n == 0 {
		return math.NaN(), false
	}
	k := sort.SearchFloat64s(f.idx, i)
	if k < n && f.idx[k] == i {
		return f.curves[k].at(x)
	}
	if n == 1 || (f.logIdx && (k == 0 || k == n)) {
		j := min(k, n-1)
		v, _ := f.curves[j].at(x)
		return v, false
	}
	inside := k > 0 && k < n
	lo, hi := k-1, k
	if k == 0 {
		lo, hi = 0, 1
	} else if k == n {
		lo, hi = n-2, n-1
	}
	a, ina := f.curves[lo].at(x)
	b, inb := f.curves[hi].at(x)
	var w float64
	if f.logIdx {
		w = (math.Log(i) - math.Log(f.idx[lo])) / (math.Log(f.idx[hi]) - math.Log(f.idx[lo]))
		return math.Exp(math.Log(a)*(1-w) + math.Log(b)*w), inside && ina && inb
	}
	w = (i - f.idx[lo]) / (f.idx[hi] - f.idx[lo])
	v := a*(1-w) + b*w
	if near := math.Min(a, b); v < near/2 {
		v = near / 2
	}
	return v, inside && ina && inb
}

type gdnKey struct {
	mode                 GDNMode
	state                DType
	heads, kvHeads, hdim int
}

// gdnIndex holds the fitted families of the GDN rows: prefill graph and
// eager time over tokens (batch x q_len) per batch; verify over batch per
// q_len; decode over batch.
type gdnIndex struct {
	graph, eager map[gdnKey]family
	kernel       map[gdnKey]string
}

func buildGDNIndex(rows []GDNRow) *gdnIndex {
	type acc struct {
		byIdx map[float64][][3]float64 // idx -> (x, graph, eager)
		kern  string
	}
	groups := map[gdnKey]*acc{}
	for _, r := range rows {
		k := gdnKey{r.Mode, r.StateDType, r.Heads, r.KVHeads, r.HeadDim}
		a := groups[k]
		if a == nil {
			a = &acc{byIdx: map[float64][][3]float64{}, kern: r.Kernel}
			groups[k] = a
		}
		idx, x := float64(r.Batch), float64(r.Batch*r.QLen)
		if r.Mode != GDNPrefill {
			idx, x = float64(r.QLen), float64(r.Batch)
		}
		a.byIdx[idx] = append(a.byIdx[idx], [3]float64{x, r.GraphUS, r.EagerUS})
	}
	ix := &gdnIndex{graph: map[gdnKey]family{}, eager: map[gdnKey]family{}, kernel: map[gdnKey]string{}}
	for k, a := range groups {
		var idxs []float64
		for i := range a.byIdx {
			idxs = append(idxs, i)
		}
		sort.Float64s(idxs)
		g := family{logIdx: k.mode == GDNPrefill}
		e := family{logIdx: k.mode == GDNPrefill}
		for _, i := range idxs {
			var xs, gs, exs, es []float64
			for _, p := range a.byIdx[i] {
				xs, gs = append(xs, p[0]), append(gs, p[1])
				if p[2] > 0 {
					exs, es = append(exs, p[0]), append(es, p[2])
				}
			}
			g.idx, g.curves = append(g.idx, i), append(g.curves, newCurve(xs, gs))
			if len(es) > 0 {
				e.idx, e.curves = append(e.idx, i), append(e.curves, newCurve(exs, es))
			}
		}
		ix.graph[k], ix.kernel[k] = g, a.kern
		if len(e.idx) > 0 {
			ix.eager[k] = e
		}
	}
	return ix
}

// moeKey is a measured MoE line: the layer's shape but its tokens, with
// the expert-parallel size (an EP rank's line is not a plain layer's of
// as many experts).
type moeKey struct {
	dt                               DType
	experts, topk, hidden, inter, ep int
}

// key is the measured line s lies on: dtype defaulted to BF16, EP to 1,
// top-k capped at the layer's experts.
func (s MoEShape) key() moeKey {
	dt := s.DType
	if dt == "" {
		dt = BF16
	}
	ep := s.ep()
	return moeKey{dt, s.Experts, min(s.TopK, s.Experts*ep), s.Hidden, s.Inter, ep}
}

// buildMoEIndex fits one curve over tokens per line, and keeps the first
// non-empty note of each line.
func buildMoEIndex(rows []MoEKernelRow) (map[moeKey]curve, map[moeKey]string) {
	xs := map[moeKey][]float64{}
	ys := map[moeKey][]float64{}
	note := map[moeKey]string{}
	for _, r := range rows {
		k := r.key()
		xs[k], ys[k] = append(xs[k], float64(r.Tokens)), append(ys[k], r.LatencyUS)
		if note[k] == "" && r.Note != "" {
			note[k] = r.Note
		}
	}
	out := map[moeKey]curve{}
	for k := range xs {
		out[k] = newCurve(xs[k], ys[k])
	}
	return out, note
}

// engineIndex is what a Coster prices engine kernels from.
type engineIndex struct {
	source               string
	gdn                  *gdnIndex
	moe, fused           map[moeKey]curve
	moeNotes, fusedNotes map[moeKey]string
}

func newEngineIndex(t *EngineTables) *engineIndex {
	if t.empty() {
		return nil
	}
	m, mn := buildMoEIndex(t.MoE)
	fu, fn := buildMoEIndex(t.FusedMoE)
	return &engineIndex{source: t.Source, gdn: buildGDNIndex(t.GDN), moe: m, fused: fu, moeNotes: mn, fusedNotes: fn}
}
