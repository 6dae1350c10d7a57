package kernels

import (
	"fmt"
	"math"
	"sort"
)

// EngineError is the relative error |predicted - measured| / measured of
// one engine-kernel table and figure (fractions: 0.1 is 10%).
type EngineError struct {
	Table        string  `json:"table"`
	Metric       string  `json:"metric"` // graph_us, eager_us, kernels_us
	Kind         string  `json:"kind"`   // "odd-positions" (left out of each measured line) or "held-aside" (a file never fitted on)
	Points       int     `json:"points"`
	MedianAbsErr float64 `json:"median_abs_err"`
	P90AbsErr    float64 `json:"p90_abs_err"`
	MaxAbsErr    float64 `json:"max_abs_err"`
}

// ValidateEngineTables scores the engine-kernel model of a GPU: along every
// measured line of t (a GDN prefill batch over tokens, a verify q_len or
// decode over batch, a MoE layer over tokens) the inner points at odd
// positions are predicted from the others; and each held-aside file
// (heldGDN, heldMoE; either may be empty) is predicted from all of t.
func ValidateEngineTables(t *EngineTables, heldGDN []GDNRow, heldMoE []MoEKernelRow) []EngineError {
	var out []EngineError
	if t == nil {
		return nil
	}
	// odd positions of GDN lines
	lineOf := func(r GDNRow) (gdnKey, float64, float64) {
		k := gdnKey{r.Mode, r.StateDType, r.Heads, r.KVHeads, r.HeadDim}
		if r.Mode == GDNPrefill {
			return k, float64(r.Batch), float64(r.Batch * r.QLen)
		}
		return k, float64(r.QLen), float64(r.Batch)
	}
	type lid struct {
		k gdnKey
		i float64
	}
	byLine := map[lid][]int{}
	for i, r := range t.GDN {
		k, idx, _ := lineOf(r)
		byLine[lid{k, idx}] = append(byLine[lid{k, idx}], i)
	}
	held := map[int]bool{}
	for _, is := range byLine {
		sort.Slice(is, func(a, b int) bool {
			_, _, xa := lineOf(t.GDN[is[a]])
			_, _, xb := lineOf(t.GDN[is[b]])
			return xa < xb
		})
		for p := 1; p < len(is)-1; p += 2 {
			held[is[p]] = true
		}
	}
	var fit, test []GDNRow
	for i, r := range t.GDN {
		if held[i] {
			test = append(test, r)
		} else {
			fit = append(fit, r)
		}
	}
	out = append(out, gdnErrors(buildGDNIndex(fit), test, "odd-positions")...)
	if len(heldGDN) > 0 {
		out = append(out, gdnErrors(buildGDNIndex(t.GDN), heldGDN, "held-aside")...)
	}
	// MoE lines
	for _, set := range []struct {
		name string
		rows []MoEKernelRow
	}{{"moe_triton", t.MoE}, {"fused_moe", t.FusedMoE}} {
		if len(set.rows) == 0 {
			continue
		}
		byKey := map[moeKey][]int{}
		for i, r := range set.rows {
			k := r.key()
			byKey[k] = append(byKey[k], i)
		}
		heldM := map[int]bool{}
		for _, is := range byKey {
			sort.Slice(is, func(a, b int) bool { return set.rows[is[a]].Tokens < set.rows[is[b]].Tokens })
			for p := 1; p < len(is)-1; p += 2 {
				heldM[is[p]] = true
			}
		}
		var fitM, testM []MoEKernelRow
		for i, r := range set.rows {
			if heldM[i] {
				testM = append(testM, r)
			} else {
				fitM = append(fitM, r)
			}
		}
		fm, _ := buildMoEIndex(fitM)
		out = append(out, moeErrors(set.name, fm, testM, "odd-positions"))
		if set.name == "moe_triton" && len(heldMoE) > 0 {
			all, _ := buildMoEIndex(set.rows)
			out = append(out, moeErrors(set.name, all, heldMoE, "held-aside"))
		}
	}
	return out
}

func gdnErrors(ix *gdnIndex, rows []GDNRow, kind string) []EngineError {
	errs := map[[2]string][]float64{}
	for _, r := range rows {
		table := "gdn_chunk"
		if r.Mode != GDNPrefill {
			table = "gdn_" + string(r.Mode) // gdn_decode_packed.csv, gdn_verify_sigmoid.csv
		}
		k := gdnKey{r.Mode, r.StateDType, r.Heads, r.KVHeads, r.HeadDim}
		idx, x := float64(r.Batch), float64(r.Batch*r.QLen)
		if r.Mode != GDNPrefill {
			idx, x = float64(r.QLen), float64(r.Batch)
		}
		g, ok := ix.graph[k]
		e, eok := ix.eager[k]
		if !ok && r.Mode == GDNPrefill {
			k.state = otherState(k.state)
			g, ok = ix.graph[k]
			e, eok = ix.eager[k]
		}
		if !ok {
			continue
		}
		if p, _ := g.at(idx, x); p > 0 {
			errs[[2]string{table, "graph_us"}] = append(errs[[2]string{table, "graph_us"}], math.Abs(p-r.GraphUS)/r.GraphUS)
		}
		if eok && r.EagerUS > 0 {
			if p, _ := e.at(idx, x); p > 0 {
				errs[[2]string{table, "eager_us"}] = append(errs[[2]string{table, "eager_us"}], math.Abs(p-r.EagerUS)/r.EagerUS)
			}
		}
	}
	var keys [][2]string
	for k := range errs {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(a, b int) bool { return keys[a][0]+keys[a][1] < keys[b][0]+keys[b][1] })
	var out []EngineError
	for _, k := range keys {
		out = append(out, summarise(k[0], k[1], kind, errs[k]))
	}
	return out
}

func otherState(d DType) DType {
	if d == FP32 {
		return BF16
	}
	return FP32
}

func moeErrors(table string, m map[moeKey]curve, rows []MoEKernelRow, kind string) EngineError {
	var e []float64
	for _, r := range rows {
		cv, ok := m[r.key()]
		if !ok {
			continue
		}
		if p, _ := cv.at(float64(r.Tokens)); p > 0 {
			e = append(e, math.Abs(p-r.LatencyUS)/r.LatencyUS)
		}
	}
	return summarise(table, "kernels_us", kind, e)
}

func summarise(table, metric, kind string, e []float64) EngineError {
	out := EngineError{Table: table, Metric: metric, Kind: kind, Points: len(e)}
	if len(e) == 0 {
		return out
	}
	sort.Float64s(e)
	out.MedianAbsErr = quantileSorted(e, 0.5)
	out.P90AbsErr = quantileSorted(e, 0.9)
	out.MaxAbsErr = e[len(e)-1]
	return out
}

// quantileSorted is the q-quantile of sorted values, linear between ranks.
func quantileSorted(v []float64, q float64) float64 {
	if len(v) == 1 {
		return v[0]
	}
	p := q * float64(len(v)-1)
	i := int(math.Floor(p))
	if i >= len(v)-1 {
		return v[len(v)-1]
	}
	return v[i] + (p-float64(i))*(v[i+1]-v[i])
}

// EmbeddedEngineHeldout returns the held-aside engine-kernel files embedded
// for a GPU (gdnHeldoutFiles, moe_triton_heldout.csv); nil where absent.
func EmbeddedEngineHeldout(gpu string) ([]GDNRow, []MoEKernelRow, error) {
	var g []GDNRow
	var m []MoEKernelRow
	for _, f := range gdnHeldoutFiles {
		b, name, err := embeddedHeldout(gpu, f)
		if err != nil {
			return nil, nil, err
		}
		if b == nil {
			continue
		}
		rows, err := ParseGDNTable(name, b)
		if err != nil {
			return nil, nil, err
		}
		g = append(g, rows...)
	}
	if b, name, err := embeddedHeldout(gpu, "moe_triton_heldout.csv"); err != nil {
		return nil, nil, err
	} else if b != nil {
		if m, err = ParseMoEKernelTable(name, b); err != nil {
			return nil, nil, fmt.Errorf("%s: %w", name, err)
		}
	}
	return g, m, nil
}

// ValidateEmbeddedEngineTables scores the GPU's embedded engine-kernel
// tables on their held-out rows: every table, or only op's ("gdn" or
// "moe") when op is set. A GPU without tables scores nothing.
func ValidateEmbeddedEngineTables(gpu, op string) ([]EngineError, error) {
	t, err := EmbeddedEngineTables(gpu)
	if err != nil || t == nil {
		return nil, err
	}
	hg, hm, err := EmbeddedEngineHeldout(gpu)
	if err != nil {
		return nil, err
	}
	sub := *t
	switch op {
	case "gdn":
		sub.MoE, sub.FusedMoE, hm = nil, nil, nil
	case "moe":
		sub.GDN, hg = nil, nil
	}
	return ValidateEngineTables(&sub, hg, hm), nil
}
