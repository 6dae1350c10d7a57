package simulate

import (
	"fmt"
	"sort"
	"strings"

	"github.com/specsim/specsim/audit/model"
	"github.com/specsim/specsim/kernels"
)

// AttentionKind is how a model's full-attention layers read their context
// ([model.AttentionKind]).
type AttentionKind = model.AttentionKind

// Attention kinds the cost model distinguishes.
const (
	GQA = model.GQA
	MLA = model.MLA
	DSA = model.DSA
)

// Model is a model as the cost model sees it: its architecture as
// config.json gives it, the draft the engines run for it and what its
// low-precision releases keep in BF16. Presets carry the file they were
// read from in Source.
type Model struct {
	Name    string   // canonical preset name, e.g. "Qwen3.5-397B-A17B"
	Aliases []string // hub names and short names that resolve to it
	Source  string   // the config file(s) the numbers come from
	// GoldenKey names the golden AL curve (golden.Set.Resolve input).
	GoldenKey string
	// HFArch is config.json's architectures[0], the name the engines key
	// model-specific defaults on ("" when the config has none).
	HFArch string

	// Architecture is the shape read from config.json (package
	// audit/model), presets included.
	model.Architecture

	Draft DraftSpec
	// Quant says which parts the real low-precision releases keep in BF16.
	Quant QuantPolicy
}

// DraftSpec describes the speculative draft the engine runs for the model.
type DraftSpec struct {
	Kind   string // "mtp" (the checkpoint's own NEXTN/MTP layers) or "eagle3" (a separate head)
	Layers int    // decoder layers in one draft forward
	// MoE is true when the draft layer is a full MoE layer like the
	// target's (Qwen3.5, DeepSeek, GLM MTP); false for a dense draft MLP.
	MoE        bool
	DenseInter int // draft MLP size when !MoE
	Vocab      int // draft lm_head rows (EAGLE3 uses a reduced vocabulary); 0 = target vocab
	// OwnLMHead: the engine allocates a separate embedding and lm_head for
	// the draft (SGLang Qwen3.5 MTP) instead of sharing the target's.
	OwnLMHead bool
	// FP4Effective is the draft weight dtype when the target is served
	// NVFP4: what the engine really loads (SGLang builds the Qwen3.5 MTP
	// module unquantized; NVIDIA's DeepSeek and GLM releases exclude the MTP
	// layer from quantization).
	FP4Effective kernels.DType
	Note         string
}

// QuantPolicy lists what stays BF16 in a release whose experts are NVFP4,
// read from the exclude_modules of NVIDIA's hf_quant_config.json.
type QuantPolicy struct {
	FP4AttentionBF16 bool // self_attn / linear_attn excluded
	FP4SharedBF16    bool // shared experts excluded
	FP4DenseBF16     bool // leading dense MLP layers excluded
	Note             string
}

// Precision is the target's weight precision flag.
type Precision string

// Precisions accepted by --precision.
const (
	FP4  Precision = "fp4"
	FP8  Precision = "fp8"
	BF16 Precision = "bf16"
)

// ParsePrecision accepts fp4|nvfp4, fp8, bf16; anything else is an
// [*Error] on "Precision".
func ParsePrecision(s string) (Precision, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "fp4", "nvfp4":
		return FP4, nil
	case "fp8":
		return FP8, nil
	case "bf16":
		return BF16, nil
	}
	return "", &Error{Field: "Precision", Value: s, Reason: "want fp4, fp8 or bf16"}
}

// WeightDTypes is the dtype of each weight class of one network.
type WeightDTypes struct {
	Attention kernels.DType // q/k/v/o and linear-attention projections
	Dense     kernels.DType // leading dense MLP layers
	Shared    kernels.DType // shared experts
	Experts   kernels.DType // routed experts
	LMHead    kernels.DType // lm_head (kept BF16 by every release)
}

// TargetDTypes gives the target's weight dtypes at precision p, following
// what the public releases keep unquantized.
func (m *Model) TargetDTypes(p Precision) WeightDTypes {
	switch p {
	case FP4:
		w := WeightDTypes{Attention: "nvfp4", Dense: "nvfp4", Shared: "nvfp4", Experts: "nvfp4", LMHead: "bf16"}
		if m.Quant.FP4AttentionBF16 {
			w.Attention = "bf16"
		}
		if m.Quant.FP4SharedBF16 {
			w.Shared = "bf16"
		}
		if m.Quant.FP4DenseBF16 {
			w.Dense = "bf16"
		}
		return w
	case FP8:
		return WeightDTypes{Attention: "fp8", Dense: "fp8", Shared: "fp8", Experts: "fp8", LMHead: "bf16"}
	}
	return WeightDTypes{Attention: "bf16", Dense: "bf16", Shared: "bf16", Experts: "bf16", LMHead: "bf16"}
}

// DraftDTypes gives the draft's effective weight dtypes at target precision
// p. override, when not empty, replaces the shipped draft dtype (to ask
// "what if the draft were quantized").
func (m *Model) DraftDTypes(p Precision, override kernels.DType) WeightDTypes {
	w := m.TargetDTypes(p)
	d := w.Experts
	if p == FP4 {
		d = m.Draft.FP4Effective
		if d == "" {
			d = "bf16"
		}
	}
	if override != "" {
		d = override
	}
	att := w.Attention
	if d == "bf16" {
		att = "bf16"
	}
	return WeightDTypes{Attention: att, Dense: d, Shared: d, Experts: d, LMHead: "bf16"}
}

// layerKinds returns, for each decoder layer, whether it is a full-attention
// layer (true) or a linear-attention (Gated DeltaNet) layer.
func (m *Model) isFullAttention(layer int) bool {
	if m.FullAttnInterval <= 1 {
		return true
	}
	return (layer+1)%m.FullAttnInterval == 0
}

// FullAttentionLayers counts the layers that keep a KV cache.
func (m *Model) FullAttentionLayers() int {
	n := 0
	for l := range m.Layers {
		if m.isFullAttention(l) {
			n++
		}
	}
	return n
}

// KVBytesPerToken is the KV cache one token occupies in one full-attention
// layer for the whole model (before any TP split), at dtype kv.
func (m *Model) KVBytesPerToken(kv kernels.DType) float64 {
	switch m.Attention {
	case MLA, DSA:
		b := float64(m.KVLoRA+m.RopeDim) * kv.Bytes()
		if m.Attention == DSA {
			b += float64(m.IndexHeadDim) * 1 // FP8 indexer keys
		}
		return b
	}
	return float64(2*m.KVHeads*m.HeadDim) * kv.Bytes()
}

// LinearStateBytes is one sequence's recurrent state in one Gated DeltaNet
// layer (the SSM state in format ssm, "" = FP32, plus the BF16 convolution
// window), whole model.
func (m *Model) LinearStateBytes(ssmDType kernels.DType) float64 {
	if ssmDType == "" {
		ssmDType = kernels.FP32
	}
	ssm := float64(m.LinearVHeads*m.LinearKDim*m.LinearVDim) * ssmDType.Bytes()
	convCh := 2*m.LinearKHeads*m.LinearKDim + m.LinearVHeads*m.LinearVDim
	conv := float64(convCh*max(m.ConvKernel-1, 0)) * 2
	return ssm + conv
}

// Validate reports fields the cost model cannot work without.
func (m *Model) Validate() error {
	var missing []string
	check := func(name string, v int) {
		if v <= 0 {
			missing = append(missing, name)
		}
	}
	check("hidden_size", m.Hidden)
	check("num_hidden_layers", m.Layers)
	check("vocab_size", m.Vocab)
	check("num_attention_heads", m.Heads)
	switch m.Attention {
	case GQA:
		check("num_key_value_heads", m.KVHeads)
		check("head_dim", m.HeadDim)
	case MLA, DSA:
		check("kv_lora_rank", m.KVLoRA)
		check("qk_rope_head_dim", m.RopeDim)
		check("qk_nope_head_dim", m.NopeDim)
		check("v_head_dim", m.VHeadDim)
	default:
		missing = append(missing, "attention kind")
	}
	if m.FullAttnInterval > 1 {
		check("linear_num_key_heads", m.LinearKHeads)
		check("linear_num_value_heads", m.LinearVHeads)
		check("linear_key_head_dim", m.LinearKDim)
		check("linear_value_head_dim", m.LinearVDim)
	}
	if m.Experts > 0 {
		check("num_experts_per_tok", m.TopK)
		check("moe_intermediate_size", m.MoEInter)
		if m.TopK > m.Experts {
			return fmt.Errorf("model %s: num_experts_per_tok %d exceeds the %d experts", m.Name, m.TopK, m.Experts)
		}
	} else {
		check("intermediate_size", m.DenseInter)
	}
	if len(missing) > 0 {
		return fmt.Errorf("model %s: missing or zero %s", m.Name, strings.Join(missing, ", "))
	}
	const maxDim = 1 << 20
	for _, v := range []int{m.Hidden, m.Layers, m.Vocab, m.Heads, m.Experts, m.MoEInter, m.DenseInter, m.HeadDim} {
		if v > maxDim*4 {
			return fmt.Errorf("model %s: dimension %d is beyond any real model", m.Name, v)
		}
	}
	if m.Layers > 4096 {
		return fmt.Errorf("model %s: %d layers is beyond any real model", m.Name, m.Layers)
	}
	return nil
}

// Presets returns the built-in models, sorted by name.
func Presets() []*Model {
	out := make([]*Model, 0, len(presets))
	for _, p := range presets {
		c := *p
		out = append(out, &c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// LookupPreset finds a preset by name or alias, case-insensitively; a hub
// name such as "nvidia/Qwen3.5-397B-A17B-NVFP4" resolves to its base model.
func LookupPreset(name string) (*Model, error) {
	key := normalizeModelName(name)
	for _, p := range presets {
		if normalizeModelName(p.Name) == key {
			c := *p
			return &c, nil
		}
		for _, a := range p.Aliases {
			if normalizeModelName(a) == key {
				c := *p
				return &c, nil
			}
		}
	}
	names := make([]string, 0, len(presets))
	for _, p := range presets {
		names = append(names, p.Name)
	}
	sort.Strings(names)
	return nil, fmt.Errorf("unknown model %q: not a preset (%s) nor a checkpoint directory", name, strings.Join(names, ", "))
}

// normalizeModelName drops the hub owner and a precision suffix so that
// "nvidia/Qwen3.5-397B-A17B-NVFP4" and "qwen3.5-397b-a17b" compare equal.
func normalizeModelName(s string) string {
	s = strings.ToLower(strings.TrimSpace(s))
	if i := strings.LastIndexByte(s, '/'); i >= 0 {
		s = s[i+1:]
	}
	for _, suf := range []string{"-nvfp4", "-fp8", "-fp4", "-bf16", "-instruct"} {
		s = strings.TrimSuffix(s, suf)
	}
	return s
}
