package audit

import (
	"slices"
	"strings"
)

// Precision names used in reports.
const (
	PrecBF16  = "BF16"
	PrecF16   = "F16"
	PrecF32   = "F32"
	PrecFP8   = "FP8"
	PrecNVFP4 = "NVFP4"
	PrecMXFP8 = "MXFP8"
	PrecMXFP4 = "MXFP4"
	PrecMixed = "MIXED"
	PrecNone  = "NONE"
)

// scaleSuffixes are the companion tensors of quantized weights. They carry
// no parameters of the model.
var scaleSuffixes = []string{
	"weight_scale_2", "weight_scale_inv", "weight_scale", "input_scale",
	"weight_global_scale", "input_global_scale", "k_scale", "v_scale", "q_scale",
	"weight_zero_point", "scales", "qzeros", "g_idx",
}

// weightSuffixes name the tensor that holds a module's parameters;
// "gate_up_proj" and "down_proj" are the fused 3-D expert tensors of
// Hugging Face MoE exports ("mlp.experts.gate_up_proj").
var weightSuffixes = []string{"weight", "weight_packed", "qweight", "gate_up_proj", "down_proj", "bias"}

// Module is a group of tensors with a common prefix: a linear layer with its
// weight and scales, a norm, an embedding.
type Module struct {
	Name    string
	Weight  *Tensor // main parameter tensor (".weight", ".weight_packed", ...); nil if none
	Tensors []Tensor
	Scales  int   // companion scale tensors
	Params  int64 // logical parameters, unpacking sub-byte storage
	Bytes   int64 // stored bytes, scales included
	// Precision is the shipped precision: NVFP4, FP8, MXFP8, BF16, F16, F32,
	// or the raw dtype of the weight.
	Precision string
}

// Linear reports whether the module is a matrix an engine could quantize:
// a weight of rank 2 or more that is not an embedding, a norm or a conv.
func (m *Module) Linear() bool {
	if m.Weight == nil || len(m.Weight.Shape) < 2 {
		return false
	}
	last := m.Name[strings.LastIndexByte(m.Name, '.')+1:]
	switch {
	case strings.Contains(last, "embed"), strings.Contains(last, "norm"), last == "conv1d", last == "wte", last == "wpe":
		return false
	}
	return true
}

// Quantized reports whether the module ships in a quantized format.
func (m *Module) Quantized() bool {
	switch m.Precision {
	case PrecNVFP4, PrecFP8, PrecMXFP8, PrecMXFP4:
		return true
	}
	return false
}

// splitName separates a tensor name into module and parameter suffix.
func splitName(name string) (module, suffix string) {
	i := strings.LastIndexByte(name, '.')
	if i < 0 {
		return name, ""
	}
	return name[:i], name[i+1:]
}

func isScale(suffix string) bool { return slices.Contains(scaleSuffixes, suffix) }

// GroupModules groups tensors into modules, in module-name order. ts is
// normally sorted by name, so a module's tensors are adjacent and its
// Tensors field is a sub-slice of ts; a module split by a child's tensors
// ("linear_attn.A_log", "linear_attn.conv1d.weight", "linear_attn.dt_bias")
// gets a copy.
func GroupModules(ts []Tensor) []*Module {
	byName := map[string]*Module{}
	var out []*Module
	for i := 0; i < len(ts); {
		name, _ := splitName(ts[i].Name)
		j := i + 1
		for j < len(ts) && strings.HasPrefix(ts[j].Name, name) && len(ts[j].Name) > len(name) &&
			ts[j].Name[len(name)] == '.' && strings.IndexByte(ts[j].Name[len(name)+1:], '.') < 0 {
			j++
		}
		if m := byName[name]; m != nil {
			m.Tensors = append(append([]Tensor(nil), m.Tensors...), ts[i:j]...)
		} else {
			m = &Module{Name: name, Tensors: ts[i:j:j]}
			byName[name] = m
			out = append(out, m)
		}
		i = j
	}
	slices.SortFunc(out, func(a, b *Module) int { return strings.Compare(a.Name, b.Name) })
	for _, m := range out {
		m.classify()
	}
	return out
}

// find returns the module's tensor with the given parameter suffix.
func (m *Module) find(suffix string) *Tensor {
	for i := range m.Tensors {
		t := &m.Tensors[i]
		if len(t.Name) > len(suffix) && strings.HasSuffix(t.Name, suffix) && t.Name[len(t.Name)-len(suffix)-1] == '.' && len(t.Name)-len(suffix)-1 == len(m.Name) {
			return t
		}
	}
	return nil
}

func (m *Module) classify() {
	for i := range m.Tensors {
		m.Bytes += m.Tensors[i].Bytes()
	}
	for _, s := range weightSuffixes {
		if t := m.find(s); t != nil {
			m.Weight = t
			break
		}
	}
	// A scale is a companion only when there is a quantized weight beside
	// it; "scale" alone is the MXFP8 block-scale name.
	scale := m.find("weight_scale")
	for i := range m.Tensors {
		t := &m.Tensors[i]
		_, s := splitName(t.Name)
		if isScale(s) || (s == "scale" && m.Weight != nil) {
			m.Scales++
			continue
		}
		m.Params += logicalParams(t, s, scale)
	}
	m.Precision = precisionOf(m)
}

// logicalParams counts the parameters a tensor stores. NVFP4 packs two
// 4-bit values per U8 byte (the "weight" beside an F8_E4M3 "weight_scale"),
// compressed-tensors packs eight int4 values per I32 "weight_packed"; F4 is
// already counted per element.
func logicalParams(t *Tensor, suffix string, scale *Tensor) int64 {
	n := t.Elements()
	switch {
	case suffix == "weight" && t.DType == "U8" && isFP8(scale):
		return 2 * n
	case suffix == "weight_packed" && t.DType == "U8":
		return 2 * n
	case suffix == "weight_packed" && t.DType == "I32":
		return 8 * n
	}
	return n
}

func isFP8(t *Tensor) bool {
	return t != nil && (t.DType == "F8_E4M3" || t.DType == "F8_E5M2")
}

func precisionOf(m *Module) string {
	w := m.Weight
	if w == nil {
		return PrecNone
	}
	switch w.DType {
	case "U8", "I32":
		if isFP8(m.find("weight_scale")) || m.find("weight_global_scale") != nil {
			return PrecNVFP4
		}
	case "F8_E4M3", "F8_E5M2":
		if sc := m.find("scale"); sc != nil && sc.DType == "F8_E8M0" {
			return PrecMXFP8
		}
		if sc := m.find("weight_scale"); sc != nil && sc.DType == "F8_E8M0" {
			return PrecMXFP8
		}
		return PrecFP8
	case "F4":
		return PrecMXFP4
	case "BF16":
		return PrecBF16
	case "F16":
		return PrecF16
	case "F32":
		return PrecF32
	}
	return w.DType
}

// Summary aggregates a set of modules.
type Summary struct {
	Tensors, Scales int
	Params, Bytes   int64
	// DType is the single precision shared by every linear module, MIXED
	// when they differ, or the common dtype of the rest when there is no
	// linear module.
	DType string
}

// Summarize totals modules and names their common precision.
func Summarize(ms []*Module) Summary {
	var s Summary
	precs := map[string]bool{}
	other := map[string]bool{}
	for _, m := range ms {
		s.Tensors += len(m.Tensors)
		s.Scales += m.Scales
		s.Params += m.Params
		s.Bytes += m.Bytes
		if m.Linear() {
			precs[m.Precision] = true
		} else if m.Weight != nil {
			other[m.Precision] = true
		}
	}
	pick := precs
	if len(pick) == 0 {
		pick = other
	}
	switch len(pick) {
	case 0:
		s.DType = PrecNone
	case 1:
		for p := range pick {
			s.DType = p
		}
	default:
		s.DType = PrecMixed
	}
	return s
}
