package checkpointtest

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
)

// textConfig holds the architecture fields the builders need, read from a
// real config.json (text_config values override the top level).
type textConfig struct {
	HiddenSize            int64    `json:"hidden_size"`
	NumHiddenLayers       int      `json:"num_hidden_layers"`
	NumAttentionHeads     int64    `json:"num_attention_heads"`
	NumKeyValueHeads      int64    `json:"num_key_value_heads"`
	HeadDim               int64    `json:"head_dim"`
	IntermediateSize      int64    `json:"intermediate_size"`
	MoEIntermediateSize   int64    `json:"moe_intermediate_size"`
	SharedExpertInter     int64    `json:"shared_expert_intermediate_size"`
	NumExperts            int      `json:"num_experts"`
	NRoutedExperts        int      `json:"n_routed_experts"`
	NSharedExperts        int64    `json:"n_shared_experts"`
	FirstKDenseReplace    int      `json:"first_k_dense_replace"`
	VocabSize             int64    `json:"vocab_size"`
	LayerTypes            []string `json:"layer_types"`
	LinearNumKeyHeads     int64    `json:"linear_num_key_heads"`
	LinearNumValueHeads   int64    `json:"linear_num_value_heads"`
	LinearKeyHeadDim      int64    `json:"linear_key_head_dim"`
	LinearValueHeadDim    int64    `json:"linear_value_head_dim"`
	LinearConvKernelDim   int64    `json:"linear_conv_kernel_dim"`
	AttnOutputGate        bool     `json:"attn_output_gate"`
	MTPNumHiddenLayers    int      `json:"mtp_num_hidden_layers"`
	NumNextNPredictLayers int      `json:"num_nextn_predict_layers"`
	KVLoRARank            int64    `json:"kv_lora_rank"`
	QLoRARank             int64    `json:"q_lora_rank"`
	QKNopeHeadDim         int64    `json:"qk_nope_head_dim"`
	QKRopeHeadDim         int64    `json:"qk_rope_head_dim"`
	VHeadDim              int64    `json:"v_head_dim"`
}

func readTextConfig(path string) (*textConfig, []byte, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, err
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(raw, &top); err != nil {
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	var c textConfig
	if err := json.Unmarshal(raw, &c); err != nil {
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	if tc, ok := top["text_config"]; ok {
		if err := json.Unmarshal(tc, &c); err != nil {
			return nil, nil, fmt.Errorf("%s text_config: %w", path, err)
		}
	}
	return &c, raw, nil
}

// nvfp4 returns the four tensors ModelOpt writes for one NVFP4 linear of
// shape [out, in]: packed U8 weight [out, in/2], F8_E4M3 block scales
// [out, in/16], and F32 scalars weight_scale_2 and input_scale.
func nvfp4(name string, out, in int64) []Tensor {
	return []Tensor{
		{name + ".input_scale", "F32", []int64{}},
		{name + ".weight", "U8", []int64{out, in / 2}},
		{name + ".weight_scale", "F8_E4M3", []int64{out, in / 16}},
		{name + ".weight_scale_2", "F32", []int64{}},
	}
}

func bf16(name string, shape ...int64) Tensor { return Tensor{name, "BF16", shape} }

// Options shape a generated checkpoint.
type Options struct {
	// MainLayers limits the target's decoder layers written (0 = all, as
	// the config says). Tests use a few to stay fast; the MTP head and the
	// config are always complete.
	MainLayers int
	// Shards is the number of shard files (0 = 1 per main layer, at least 2).
	Shards int
	// SkipMTP leaves the MTP tensors out (for flag-without-weights tests).
	SkipMTP bool
}

// Qwen35MoE builds the tensor list of a Qwen3.5 MoE NVFP4 checkpoint from
// its config.json the way nvidia/Qwen3.5-397B-A17B-NVFP4 ships it: routed
// experts of the main layers in NVFP4 (per expert), everything the
// hf_quant_config exclude list names (linear attention, full attention,
// shared experts, lm_head) plus the routers in BF16, and the whole MTP head
// in BF16 with per-expert names.
func Qwen35MoE(configPath string, o Options) ([]Tensor, []Tensor, error) {
	c, _, err := readTextConfig(configPath)
	if err != nil {
		return nil, nil, err
	}
	h := c.HiddenSize
	var main []Tensor
	layers := c.NumHiddenLayers
	if o.MainLayers > 0 {
		layers = min(layers, o.MainLayers)
	}
	main = append(main, bf16("model.language_model.embed_tokens.weight", c.VocabSize, h))
	for i := range layers {
		p := fmt.Sprintf("model.language_model.layers.%d.", i)
		main = append(main, bf16(p+"input_layernorm.weight", h), bf16(p+"post_attention_layernorm.weight", h))
		if i < len(c.LayerTypes) && c.LayerTypes[i] == "linear_attention" {
			keyDim := c.LinearNumKeyHeads * c.LinearKeyHeadDim
			valueDim := c.LinearNumValueHeads * c.LinearValueHeadDim
			a := p + "linear_attn."
			main = append(main,
				bf16(a+"in_proj_qkv.weight", 2*keyDim+valueDim, h),
				bf16(a+"in_proj_z.weight", valueDim, h),
				bf16(a+"in_proj_b.weight", c.LinearNumValueHeads, h),
				bf16(a+"in_proj_a.weight", c.LinearNumValueHeads, h),
				bf16(a+"conv1d.weight", 2*keyDim+valueDim, 1, c.LinearConvKernelDim),
				Tensor{a + "A_log", "F32", []int64{c.LinearNumValueHeads}},
				bf16(a+"dt_bias", c.LinearNumValueHeads),
				bf16(a+"norm.weight", c.LinearValueHeadDim),
				bf16(a+"out_proj.weight", h, valueDim))
		} else {
			main = append(main, attention(p, c)...)
		}
		main = append(main, qwenMoE(p, c, true)...)
	}
	main = append(main, bf16("model.language_model.norm.weight", h), bf16("lm_head.weight", c.VocabSize, h))
	if o.SkipMTP {
		return main, nil, nil
	}
	mtp := []Tensor{
		bf16("mtp.fc.weight", h, 2*h),
		bf16("mtp.norm.weight", h),
		bf16("mtp.pre_fc_norm_embedding.weight", h),
		bf16("mtp.pre_fc_norm_hidden.weight", h),
	}
	for i := range max(c.MTPNumHiddenLayers, c.NumNextNPredictLayers, 1) {
		p := fmt.Sprintf("mtp.layers.%d.", i)
		mtp = append(mtp, bf16(p+"input_layernorm.weight", h), bf16(p+"post_attention_layernorm.weight", h))
		mtp = append(mtp, attention(p, c)...)
		mtp = append(mtp, qwenMoE(p, c, false)...)
	}
	return main, mtp, nil
}

// attention is a Qwen3.5 full-attention block: q_proj carries the output
// gate (2 x heads x head_dim rows) when attn_output_gate is set.
func attention(p string, c *textConfig) []Tensor {
	h := c.HiddenSize
	q := c.NumAttentionHeads * c.HeadDim
	qRows := q
	if c.AttnOutputGate {
		qRows = 2 * q
	}
	kv := c.NumKeyValueHeads * c.HeadDim
	return []Tensor{
		bf16(p+"self_attn.q_proj.weight", qRows, h),
		bf16(p+"self_attn.k_proj.weight", kv, h),
		bf16(p+"self_attn.v_proj.weight", kv, h),
		bf16(p+"self_attn.o_proj.weight", h, q),
		bf16(p+"self_attn.q_norm.weight", c.HeadDim),
		bf16(p+"self_attn.k_norm.weight", c.HeadDim),
	}
}

func qwenMoE(p string, c *textConfig, quantized bool) []Tensor {
	h, inter, shared := c.HiddenSize, c.MoEIntermediateSize, c.SharedExpertInter
	ts := []Tensor{
		bf16(p+"mlp.gate.weight", int64(c.NumExperts), h),
		bf16(p+"mlp.shared_expert.gate_proj.weight", shared, h),
		bf16(p+"mlp.shared_expert.up_proj.weight", shared, h),
		bf16(p+"mlp.shared_expert.down_proj.weight", h, shared),
		bf16(p+"mlp.shared_expert_gate.weight", 1, h),
	}
	for e := range c.NumExperts {
		x := fmt.Sprintf("%smlp.experts.%d.", p, e)
		if quantized {
			ts = append(ts, nvfp4(x+"gate_proj", inter, h)...)
			ts = append(ts, nvfp4(x+"up_proj", inter, h)...)
			ts = append(ts, nvfp4(x+"down_proj", h, inter)...)
		} else {
			ts = append(ts, bf16(x+"gate_proj.weight", inter, h), bf16(x+"up_proj.weight", inter, h), bf16(x+"down_proj.weight", h, inter))
		}
	}
	return ts
}

// DeepSeekV3NVFP4 builds a DeepSeek-V3.1-NVFP4-shaped checkpoint: MLA
// projections q_a/q_b/kv_a/kv_b and lm_head BF16 (the exclude list), o_proj,
// dense MLPs, shared and routed experts NVFP4, and the inline MTP layer
// model.layers.{num_hidden_layers} entirely in BF16 with its own
// embed_tokens, enorm, hnorm, eh_proj and shared_head.
func DeepSeekV3NVFP4(configPath string, o Options) ([]Tensor, []Tensor, error) {
	c, _, err := readTextConfig(configPath)
	if err != nil {
		return nil, nil, err
	}
	h := c.HiddenSize
	layers := c.NumHiddenLayers
	if o.MainLayers > 0 {
		layers = min(layers, o.MainLayers)
	}
	main := []Tensor{bf16("model.embed_tokens.weight", c.VocabSize, h)}
	for i := range layers {
		p := fmt.Sprintf("model.layers.%d.", i)
		main = append(main, deepseekLayer(p, c, i, true)...)
	}
	main = append(main, bf16("model.norm.weight", h), bf16("lm_head.weight", c.VocabSize, h))
	if o.SkipMTP {
		return main, nil, nil
	}
	var mtp []Tensor
	for i := range max(c.NumNextNPredictLayers, 1) {
		p := fmt.Sprintf("model.layers.%d.", c.NumHiddenLayers+i)
		mtp = append(mtp,
			bf16(p+"embed_tokens.weight", c.VocabSize, h),
			bf16(p+"enorm.weight", h),
			bf16(p+"hnorm.weight", h),
			bf16(p+"eh_proj.weight", h, 2*h),
			bf16(p+"shared_head.norm.weight", h),
			bf16(p+"shared_head.head.weight", c.VocabSize, h))
		mtp = append(mtp, deepseekLayer(p, c, c.NumHiddenLayers+i, false)...)
	}
	return main, mtp, nil
}

func deepseekLayer(p string, c *textConfig, idx int, quantized bool) []Tensor {
	h := c.HiddenSize
	heads := c.NumAttentionHeads
	lin := func(name string, out, in int64) []Tensor {
		if quantized {
			return nvfp4(name, out, in)
		}
		return []Tensor{bf16(name+".weight", out, in)}
	}
	ts := []Tensor{
		bf16(p+"input_layernorm.weight", h),
		bf16(p+"post_attention_layernorm.weight", h),
		bf16(p+"self_attn.q_a_proj.weight", c.QLoRARank, h),
		bf16(p+"self_attn.q_a_layernorm.weight", c.QLoRARank),
		bf16(p+"self_attn.q_b_proj.weight", heads*(c.QKNopeHeadDim+c.QKRopeHeadDim), c.QLoRARank),
		bf16(p+"self_attn.kv_a_proj_with_mqa.weight", c.KVLoRARank+c.QKRopeHeadDim, h),
		bf16(p+"self_attn.kv_a_layernorm.weight", c.KVLoRARank),
		bf16(p+"self_attn.kv_b_proj.weight", heads*(c.QKNopeHeadDim+c.VHeadDim), c.KVLoRARank),
	}
	ts = append(ts, lin(p+"self_attn.o_proj", h, heads*c.VHeadDim)...)
	if idx < c.FirstKDenseReplace {
		ts = append(ts, lin(p+"mlp.gate_proj", c.IntermediateSize, h)...)
		ts = append(ts, lin(p+"mlp.up_proj", c.IntermediateSize, h)...)
		ts = append(ts, lin(p+"mlp.down_proj", h, c.IntermediateSize)...)
		return ts
	}
	inter := c.MoEIntermediateSize
	shared := inter * max(c.NSharedExperts, 1)
	ts = append(ts, bf16(p+"mlp.gate.weight", int64(c.NRoutedExperts), h),
		Tensor{p + "mlp.gate.e_score_correction_bias", "F32", []int64{int64(c.NRoutedExperts)}})
	ts = append(ts, lin(p+"mlp.shared_experts.gate_proj", shared, h)...)
	ts = append(ts, lin(p+"mlp.shared_experts.up_proj", shared, h)...)
	ts = append(ts, lin(p+"mlp.shared_experts.down_proj", h, shared)...)
	for e := range c.NRoutedExperts {
		x := fmt.Sprintf("%smlp.experts.%d.", p, e)
		ts = append(ts, lin(x+"gate_proj", inter, h)...)
		ts = append(ts, lin(x+"up_proj", inter, h)...)
		ts = append(ts, lin(x+"down_proj", h, inter)...)
	}
	return ts
}

// Dense describes a small Llama-style BF16 model.
type Dense struct {
	Layers, Hidden, Inter, Vocab, Heads, KVHeads int64
}

// Tensors lists the model's tensors (no MTP).
func (d Dense) Tensors() []Tensor {
	head := d.Hidden / d.Heads
	ts := []Tensor{bf16("model.embed_tokens.weight", d.Vocab, d.Hidden)}
	for i := range d.Layers {
		p := fmt.Sprintf("model.layers.%d.", i)
		ts = append(ts,
			bf16(p+"input_layernorm.weight", d.Hidden),
			bf16(p+"self_attn.q_proj.weight", d.Heads*head, d.Hidden),
			bf16(p+"self_attn.k_proj.weight", d.KVHeads*head, d.Hidden),
			bf16(p+"self_attn.v_proj.weight", d.KVHeads*head, d.Hidden),
			bf16(p+"self_attn.o_proj.weight", d.Hidden, d.Heads*head),
			bf16(p+"post_attention_layernorm.weight", d.Hidden),
			bf16(p+"mlp.gate_proj.weight", d.Inter, d.Hidden),
			bf16(p+"mlp.up_proj.weight", d.Inter, d.Hidden),
			bf16(p+"mlp.down_proj.weight", d.Hidden, d.Inter))
	}
	return append(ts, bf16("model.norm.weight", d.Hidden), bf16("lm_head.weight", d.Vocab, d.Hidden))
}

// Config is the model's config.json.
func (d Dense) Config() []byte {
	b, _ := json.Marshal(map[string]any{
		"architectures": []string{"LlamaForCausalLM"}, "model_type": "llama",
		"hidden_size": d.Hidden, "intermediate_size": d.Inter, "num_hidden_layers": d.Layers,
		"num_attention_heads": d.Heads, "num_key_value_heads": d.KVHeads, "vocab_size": d.Vocab,
		"tie_word_embeddings": false, "torch_dtype": "bfloat16",
	})
	return b
}

// WriteCheckpoint writes tensors (target first, then MTP) as a sharded
// checkpoint with the given config files copied in (nil to skip one).
func WriteCheckpoint(dir string, tensors []Tensor, shards int, config, quantConfig []byte) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if config != nil {
		if err := os.WriteFile(filepath.Join(dir, "config.json"), config, 0o644); err != nil {
			return err
		}
	}
	if quantConfig != nil {
		if err := os.WriteFile(filepath.Join(dir, "hf_quant_config.json"), quantConfig, 0o644); err != nil {
			return err
		}
	}
	if shards <= 1 {
		_, err := WriteFile(filepath.Join(dir, "model.safetensors"), tensors, map[string]string{"format": "pt"})
		return err
	}
	_, err := Sharded(dir, Split(tensors, shards))
	return err
}

// WriteFromConfigs builds a checkpoint with builder from the given real
// config files and writes it to dir. It returns the target and MTP tensors.
func WriteFromConfigs(dir string, builder func(string, Options) ([]Tensor, []Tensor, error), configPath, quantPath string, o Options) ([]Tensor, []Tensor, error) {
	main, mtp, err := builder(configPath, o)
	if err != nil {
		return nil, nil, err
	}
	cfg, err := os.ReadFile(configPath)
	if err != nil {
		return nil, nil, err
	}
	var q []byte
	if quantPath != "" {
		if q, err = os.ReadFile(quantPath); err != nil {
			return nil, nil, err
		}
	}
	shards := o.Shards
	if shards == 0 {
		shards = max(2, min(o.MainLayers, 100))
	}
	all := append(append([]Tensor{}, main...), mtp...)
	return main, mtp, WriteCheckpoint(dir, all, shards, cfg, q)
}
