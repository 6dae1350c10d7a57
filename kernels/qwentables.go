package kernels

import (
	"bufio"
	"bytes"
	"math"
	"sort"
	"strconv"
	"strings"
	"sync"
)

// The H200 tables of the kernels SGLang runs for Qwen3.5-397B-A17B
// (kernels/collect/NOTES.md, "Qwen3.5 kernels SGLang runs"): the chunked
// Gated DeltaNet prefill (gdn_chunk.csv) and the Triton fused MoE
// (moe_triton.csv). Each is read once from the embedded data.

// gdnChunkLine is one (state dtype, v-heads, k-heads) line of batch-1
// chunked prefill points, sorted by q_len.
type gdnChunkLine struct {
	qlen, graph, eager []float64
}

// moeTritonLine is one (dtype, experts, top-k, hidden, inter) line, sorted
// by tokens.
type moeTritonLine struct {
	tokens, us []float64
}

var qwenTables struct {
	once sync.Once
	gdn  map[[3]string]*gdnChunkLine
	moe  map[[5]string]*moeTritonLine
	rec  map[[3]string]*moeTritonLine // (state dtype, q_len, v-heads): graph_us by batch
}

// readCSV yields each data row of an embedded CSV as a column->value map.
func readQwenCSV(path string, row func(map[string]string)) {
	data, err := dataFS.ReadFile(path)
	if err != nil {
		return
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	var header []string
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		cols := strings.Split(line, ",")
		if header == nil {
			header = cols
			continue
		}
		if len(cols) != len(header) {
			continue
		}
		m := make(map[string]string, len(cols))
		for i, h := range header {
			m[h] = cols[i]
		}
		row(m)
	}
}

func loadQwenTables() {
	qwenTables.gdn = map[[3]string]*gdnChunkLine{}
	qwenTables.moe = map[[5]string]*moeTritonLine{}
	qwenTables.rec = map[[3]string]*moeTritonLine{}
	num := func(s string) float64 {
		v, err := strconv.ParseFloat(s, 64)
		if err != nil || !(v > 0) {
			return math.NaN()
		}
		return v
	}
	readQwenCSV("data/h200/gdn_chunk.csv", func(m map[string]string) {
		if m["mode"] != "prefill" || m["batch"] != "1" {
			return
		}
		q, g, e := num(m["q_len"]), num(m["graph_us"]), num(m["eager_us"])
		if math.IsNaN(q + g + e) {
			return
		}
		k := [3]string{m["state_dtype"], m["heads"], m["kv_heads"]}
		l := qwenTables.gdn[k]
		if l == nil {
			l = &gdnChunkLine{}
			qwenTables.gdn[k] = l
		}
		l.qlen, l.graph, l.eager = append(l.qlen, q), append(l.graph, g), append(l.eager, e)
	})
	readQwenCSV("data/h200/moe_triton.csv", func(m map[string]string) {
		t, us := num(m["tokens"]), num(m["kernels_us"])
		if math.IsNaN(t + us) {
			return
		}
		k := [5]string{m["dtype"], m["experts"], m["topk"], m["hidden"], m["inter"]}
		l := qwenTables.moe[k]
		if l == nil {
			l = &moeTritonLine{}
			qwenTables.moe[k] = l
		}
		l.tokens, l.us = append(l.tokens, t), append(l.us, us)
	})
	readQwenCSV("data/h200/gdn_recurrent.csv", func(m map[string]string) {
		b, us := num(m["batch"]), num(m["graph_us"])
		if math.IsNaN(b+us) || m["head_dim"] != "128" {
			return
		}
		k := [3]string{m["state_dtype"], m["q_len"], m["heads"]}
		l := qwenTables.rec[k]
		if l == nil {
			l = &moeTritonLine{}
			qwenTables.rec[k] = l
		}
		l.tokens, l.us = append(l.tokens, b), append(l.us, us)
	})
	for _, l := range qwenTables.rec {
		sortBy(l.tokens, l.us)
	}
	for _, l := range qwenTables.gdn {
		sortBy(l.qlen, l.graph, l.eager)
	}
	for _, l := range qwenTables.moe {
		sortBy(l.tokens, l.us)
	}
}

// sortBy sorts xs ascending and permutes every ys alongside.
func sortBy(xs []float64, ys ...[]float64) {
	idx := make([]int, len(xs))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return xs[idx[a]] < xs[idx[b]] })
	perm := func(v []float64) {
		c := append([]float64(nil), v...)
		for i, j := range idx {
			v[i] = c[j]
		}
	}
	perm(xs)
	for _, y := range ys {
		perm(y)
	}
}

// logLogAt interpolates y(x) log-log on sorted points; below the first
// point it keeps the first value (a kernel's fixed time), above the last it
// extends the last segment linearly in x (the throughput regime).
func logLogAt(xs, ys []float64, x float64) float64 {
	n := len(xs)
	switch {
	case n == 0:
		return math.NaN()
	case n == 1 || x <= xs[0]:
		return ys[0]
	case x >= xs[n-1]:
		slope := (ys[n-1] - ys[n-2]) / (xs[n-1] - xs[n-2])
		return ys[n-1] + max(slope, 0)*(x-xs[n-1])
	}
	i := sort.SearchFloat64s(xs, x)
	u := (math.Log(x) - math.Log(xs[i-1])) / (math.Log(xs[i]) - math.Log(xs[i-1]))
	return math.Exp(math.Log(ys[i-1]) + u*(math.Log(ys[i])-math.Log(ys[i-1])))
}

// h200Scale is how much faster than the H200 a kernel limited by both
// memory and tensor cores runs on g: the smaller of the bandwidth and
// dense BF16 ratios (1 on the H200 itself), and the Source to report.
func (c *Coster) h200Scale() (float64, string) {
	g := c.gpu
	if strings.EqualFold(g.Name, "h200") {
		return 1, SourceMeasured
	}
	ref, err := LookupGPU("h200")
	if err != nil || ref.HBMBandwidth <= 0 || ref.Peak[BF16] <= 0 || g.HBMBandwidth <= 0 || g.Peak[BF16] <= 0 {
		return 1, SourceCarryOver
	}
	return math.Min(g.HBMBandwidth/ref.HBMBandwidth, g.Peak[BF16]/ref.Peak[BF16]), SourceCarryOver
}

// GDNChunkPrefill prices SGLang's chunked Gated DeltaNet prefill
// (chunk_gated_delta_rule) over tokens packed tokens on one GPU with
// vHeads/kHeads heads of dimension 128 and the given state dtype, from the
// H200 measurement: gpu is the kernel time under a CUDA graph, eager the
// time per call when the host launches it eagerly, as SGLang runs prefill
// (the host floor of that call: 0.45-0.9 ms on the measuring machine's
// CPU). Interpolated log-log in tokens along the batch-1 line (packed
// sequences measured no slower than one sequence of the same total); on
// other GPUs the GPU time is scaled by h200Scale and the host floor kept.
// ok is false when no line matches the heads.
func (c *Coster) GDNChunkPrefill(tokens, vHeads, kHeads, headDim int, state DType) (gpu, eager Cost, ok bool) {
	if tokens <= 0 || headDim != 128 {
		return Cost{}, Cost{}, false
	}
	qwenTables.once.Do(loadQwenTables)
	sd := "fp32"
	if state == BF16 || state == FP16 {
		sd = "bf16"
	}
	k := [3]string{sd, strconv.Itoa(vHeads), strconv.Itoa(kHeads)}
	l := qwenTables.gdn[k]
	if l == nil && sd == "bf16" { // bf16 was measured at TP 2 and 4; it moves prefill < 1%
		l = qwenTables.gdn[[3]string{"fp32", k[1], k[2]}]
	}
	if l == nil || len(l.qlen) < 2 {
		return Cost{}, Cost{}, false
	}
	x := float64(tokens)
	speed, src := c.h200Scale()
	g := logLogAt(l.qlen, l.graph, x) * 1e-6 / speed
	e := logLogAt(l.qlen, l.eager, x) * 1e-6
	if src != SourceMeasured {
		// The eager figure is host floor or GPU time, whichever was longer.
		e = math.Max(e-logLogAt(l.qlen, l.graph, x)*1e-6, 0) + g
	}
	if x < l.qlen[0] || x > l.qlen[len(l.qlen)-1] {
		src = SourceRoofline
	}
	return Cost{Seconds: g, Source: src, Bound: "memory"}, Cost{Seconds: math.Max(e, g), Source: src, Bound: "latency"}, true
}

// TritonMoE prices SGLang's Triton fused MoE (gate_up GEMM, activation,
// down GEMM, top-k sum; moe_align not included) over tokens tokens routed
// top-k of experts with hidden and inter (the TP shard's intermediate
// size), from the H200 measurement, interpolated log-log in tokens; on
// other GPUs scaled by h200Scale. ok is false for shapes the table lacks.
func (c *Coster) TritonMoE(tokens, experts, topk, hidden, inter int, dt DType) (Cost, bool) {
	if tokens <= 0 {
		return Cost{}, false
	}
	qwenTables.once.Do(loadQwenTables)
	d := "bf16"
	switch dt {
	case FP8:
		d = "fp8"
	case BF16, FP16:
	default:
		return Cost{}, false
	}
	l := qwenTables.moe[[5]string{d, strconv.Itoa(experts), strconv.Itoa(topk), strconv.Itoa(hidden), strconv.Itoa(inter)}]
	if l == nil || len(l.tokens) < 2 {
		return Cost{}, false
	}
	speed, src := c.h200Scale()
	x := float64(tokens)
	if x > l.tokens[len(l.tokens)-1] {
		src = SourceRoofline
	}
	return Cost{Seconds: logLogAt(l.tokens, l.us, x) * 1e-6 / speed, Source: src, Bound: "memory"}, true
}

// GDNRecurrent prices SGLang's Gated DeltaNet decode (q = 1,
// fused_sigmoid_gating_delta_rule_update) and target-verify (q > 1,
// fused_recurrent_gated_delta_rule_update writing every intermediate
// state) kernels for batch sequences of q tokens with vHeads value heads of
// dimension 128 under a CUDA graph, from the H200 measurement
// (gdn_recurrent.csv: batch 1-256, q 1, 2 and 4): log-log in batch, linear
// in q between the measured lengths and beyond 4 along the 2 -> 4 slope;
// other GPUs scaled by h200Scale. ok is false for heads the table lacks.
func (c *Coster) GDNRecurrent(batch, q, vHeads, headDim int, state DType) (Cost, bool) {
	if batch <= 0 || q <= 0 || headDim != 128 {
		return Cost{}, false
	}
	qwenTables.once.Do(loadQwenTables)
	sd := "fp32"
	if state == BF16 || state == FP16 {
		sd = "bf16"
	}
	at := func(ql int) (float64, bool) {
		l := qwenTables.rec[[3]string{sd, strconv.Itoa(ql), strconv.Itoa(vHeads)}]
		if l == nil || len(l.tokens) < 2 {
			return 0, false
		}
		return logLogAt(l.tokens, l.us, float64(batch)), true
	}
	var us float64
	switch {
	case q == 1:
		v, ok := at(1)
		if !ok {
			return Cost{}, false
		}
		us = v
	default:
		v2, ok2 := at(2)
		v4, ok4 := at(4)
		if !ok2 || !ok4 {
			return Cost{}, false
		}
		us = v2 + (v4-v2)*float64(q-2)/2
	}
	speed, src := c.h200Scale()
	if batch > 256 || q > 4 {
		src = SourceRoofline
	}
	return Cost{Seconds: us * 1e-6 / speed, Source: src, Bound: "memory"}, true
}
