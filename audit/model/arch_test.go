package model

import "testing"

// TestArchitecture: the engines' defaults, each case worked out by hand
// from the JSON it parses.
func TestArchitecture(t *testing.T) {
	for _, tt := range []struct {
		name, json string
		want       Architecture
	}{
		{"GQA defaults: head_dim = hidden/heads, K/V heads = heads, dense MLP",
			`{"hidden_size": 1024, "num_hidden_layers": 2, "num_attention_heads": 8, "intermediate_size": 4096, "vocab_size": 100}`,
			Architecture{Hidden: 1024, Layers: 2, Vocab: 100, Attention: GQA, Heads: 8, KVHeads: 8, HeadDim: 128, DenseInter: 4096}},
		{"Qwen-style hybrid: one shared expert, interval from layer_types, text_config wins",
			`{"model_type": "x", "hidden_size": 1, "text_config": {"hidden_size": 64, "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 32,
			  "num_experts": 16, "num_experts_per_tok": 2, "moe_intermediate_size": 48, "shared_expert_intermediate_size": 96, "intermediate_size": 999,
			  "layer_types": ["linear_attention", "linear_attention", "full_attention"]}}`,
			Architecture{Hidden: 64, Attention: GQA, Heads: 4, KVHeads: 2, HeadDim: 32, FullAttnInterval: 3,
				Experts: 16, TopK: 2, MoEInter: 48, SharedExperts: 1, SharedInter: 96}},
		{"MLA: no GQA heads; n_shared_experts of moe_intermediate_size; dense leading layers",
			`{"hidden_size": 7168, "num_attention_heads": 128, "num_key_value_heads": 128, "kv_lora_rank": 512, "q_lora_rank": 1536,
			  "qk_rope_head_dim": 64, "qk_nope_head_dim": 128, "v_head_dim": 128, "n_routed_experts": 256, "n_shared_experts": 1,
			  "moe_intermediate_size": 2048, "first_k_dense_replace": 3, "intermediate_size": 18432}`,
			Architecture{Hidden: 7168, Attention: MLA, Heads: 128, QLoRA: 1536, KVLoRA: 512, RopeDim: 64, NopeDim: 128, VHeadDim: 128,
				Experts: 256, MoEInter: 2048, SharedExperts: 1, SharedInter: 2048, DenseLayers: 3, DenseInter: 18432}},
		{"DSA: MLA with an indexer",
			`{"kv_lora_rank": 512, "index_topk": 2048, "index_n_heads": 32, "index_head_dim": 128}`,
			Architecture{Attention: DSA, KVLoRA: 512, IndexTopK: 2048, IndexHeads: 32, IndexHeadDim: 128}},
		{"MiniMax-style: experts sized by intermediate_size, no shared expert",
			`{"hidden_size": 3072, "num_attention_heads": 48, "num_key_value_heads": 8, "head_dim": 128, "num_local_experts": 256, "intermediate_size": 1536}`,
			Architecture{Hidden: 3072, Attention: GQA, Heads: 48, KVHeads: 8, HeadDim: 128, Experts: 256, MoEInter: 1536}},
	} {
		c, err := Parse([]byte(tt.json))
		if err != nil {
			t.Errorf("%s: %v", tt.name, err)
			continue
		}
		if got := c.Architecture(); got != tt.want {
			t.Errorf("%s:\n got %+v\nwant %+v", tt.name, got, tt.want)
		}
	}
	if _, err := Parse([]byte(`{"index_topk": "many"}`)); err == nil {
		t.Error("a non-numeric index_topk accepted")
	}
}
