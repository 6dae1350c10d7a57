package model

import (
	"fmt"
	"math"
)

// countBounds caps every architectural dimension the reader takes. Each
// is far above any released model (largest seen in parentheses) yet keeps
// every product the sizing code forms within an int64, and a loop over
// layers or draft layers short: 4503599627370496 MTP layers once made
// predict loop for ever.
var countBounds = map[string]int64{
	"hidden_size":                     1 << 17, // 16384
	"num_hidden_layers":               1 << 12, // 128
	"num_attention_heads":             1 << 12, // 128
	"num_key_value_heads":             1 << 12, // 128
	"head_dim":                        1 << 12, // 576 (MLA)
	"intermediate_size":               1 << 20, // 53248
	"vocab_size":                      1 << 24, // 262144
	"max_position_embeddings":         1 << 27, // 10485760
	"moe_intermediate_size":           1 << 20, // 4096
	"shared_expert_intermediate_size": 1 << 20, // 8192
	"n_routed_experts":                1 << 16, // 512
	"num_experts":                     1 << 16,
	"num_local_experts":               1 << 16,
	"num_experts_per_tok":             1 << 16, // 22
	"n_shared_experts":                1 << 10, // 2
	"first_k_dense_replace":           1 << 12, // 3
	"kv_lora_rank":                    1 << 16, // 512
	"q_lora_rank":                     1 << 16, // 1536
	"qk_rope_head_dim":                1 << 12, // 64
	"qk_nope_head_dim":                1 << 12, // 128
	"v_head_dim":                      1 << 12, // 128
	"full_attention_interval":         1 << 12, // 4
	"linear_num_key_heads":            1 << 12, // 16
	"linear_num_value_heads":          1 << 12, // 64
	"linear_key_head_dim":             1 << 12, // 128
	"linear_value_head_dim":           1 << 12, // 128
	"linear_conv_kernel_dim":          1 << 10, // 4
	"mtp_num_hidden_layers":           1 << 6,  // 1
	"num_nextn_predict_layers":        1 << 6,  // 1
	"num_mtp_modules":                 1 << 6,
}

// maxParams bounds the parameters the architecture implies, counted in
// float64 from the dimensions: about a hundred times the largest released
// model (Kimi K2, 1.04e12). Below it every product of dimensions the audit
// and the simulator form in int or int64 stays exact.
const maxParams = 1e14

// checkBounds refuses a dimension over its bound, naming key and bound.
func (c cfg) checkBounds() error {
	for _, k := range countKeys {
		f, ok := c[k].(float64)
		if !ok {
			continue
		}
		if b, has := countBounds[k]; has && f > float64(b) {
			return fmt.Errorf("%s: %.0f is beyond any real model (at most %d)", k, f, b)
		}
	}
	return nil
}

// paramEstimate counts the parameters the dimensions imply in float64,
// generously (every attention form at once), so that it never overflows and
// never undercounts the products the sizing code takes.
func (mc *Config) paramEstimate() float64 {
	f := func(v int) float64 { return float64(max(v, 0)) }
	h := f(mc.HiddenSize)
	heads, kv := f(mc.NumAttentionHeads), f(mc.NumKeyValueHeads)
	hd := math.Max(f(mc.HeadDim), f(mc.QKNopeHeadDim)+f(mc.QKRopeHeadDim)+f(mc.VHeadDim))
	attn := h*(2*heads*hd+2*kv*hd) +
		h*(f(mc.QLoRARank)+f(mc.KVLoRARank)+f(mc.QKRopeHeadDim)) +
		(f(mc.QLoRARank)+f(mc.KVLoRARank)+h)*heads*hd +
		h*(2*f(mc.LinearNumKeyHeads)*f(mc.LinearKeyHeadDim)+3*f(mc.LinearNumValueHeads)*f(mc.LinearValueHeadDim))
	mlp := 3*h*f(mc.IntermediateSize) + 3*h*f(mc.NumExperts)*f(mc.MoEIntermediateSize) +
		3*h*math.Max(f(mc.NumSharedExperts), 1)*f(mc.SharedExpertIntermediateSize) + h*f(mc.NumExperts)
	layers := f(mc.NumHiddenLayers) + f(mc.MTPLayers)
	return layers*(attn+mlp+2*h*h) + 2*f(mc.VocabSize)*h
}

// checkSize refuses an architecture whose parameter count no hardware
// holds, with the count.
func (mc *Config) checkSize() error {
	if p := mc.paramEstimate(); p > maxParams {
		return fmt.Errorf("the dimensions imply about %.3g parameters, more than the %.0e specsim sizes (hidden_size %d, %d layers + %d MTP, %d experts of %d, %d shared of %d, vocab %d)",
			p, maxParams, mc.HiddenSize, mc.NumHiddenLayers, mc.MTPLayers, mc.NumExperts, mc.MoEIntermediateSize,
			mc.NumSharedExperts, mc.SharedExpertIntermediateSize, mc.VocabSize)
	}
	return nil
}
