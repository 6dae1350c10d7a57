package model

import "strings"

// AttentionKind is how a model's full-attention layers read their context.
type AttentionKind string

// Attention kinds.
const (
	// GQA is grouped-query attention with separate K and V heads.
	GQA AttentionKind = "gqa"
	// MLA is DeepSeek's multi-head latent attention, served with the
	// absorbed (latent) KV cache: one compressed vector per token.
	MLA AttentionKind = "mla"
	// DSA is MLA behind a lightning indexer that keeps only IndexTopK
	// context tokens per query (GLM-5, DeepSeek-V3.2).
	DSA AttentionKind = "dsa"
)

// Architecture is the shape of a model that prices its forward pass and
// sizes its weights and caches, one field per config.json key it comes
// from, with the defaults the engines apply where a key is absent.
type Architecture struct {
	Hidden int // hidden_size
	Layers int // num_hidden_layers
	Vocab  int // vocab_size

	Attention        AttentionKind
	Heads            int  // num_attention_heads
	KVHeads          int  // num_key_value_heads (GQA)
	HeadDim          int  // head_dim (GQA)
	OutputGate       bool // attn_output_gate: q_proj also produces a sigmoid gate
	QLoRA            int  // q_lora_rank (MLA); 0 means a plain q_proj
	KVLoRA           int  // kv_lora_rank (MLA)
	RopeDim          int  // qk_rope_head_dim (MLA)
	NopeDim          int  // qk_nope_head_dim (MLA)
	VHeadDim         int  // v_head_dim (MLA)
	IndexTopK        int  // index_topk (DSA)
	IndexHeads       int  // index_n_heads (DSA)
	IndexHeadDim     int  // index_head_dim (DSA)
	FullAttnInterval int  // full_attention_interval: hybrid models put full attention every N layers; 0 = all full

	// Gated DeltaNet linear attention (hybrid models).
	LinearKHeads int // linear_num_key_heads
	LinearVHeads int // linear_num_value_heads
	LinearKDim   int // linear_key_head_dim
	LinearVDim   int // linear_value_head_dim
	ConvKernel   int // linear_conv_kernel_dim

	DenseLayers   int // first_k_dense_replace: leading layers with a dense MLP
	DenseInter    int // intermediate_size of those dense MLPs
	Experts       int // n_routed_experts | num_experts | num_local_experts
	TopK          int // num_experts_per_tok
	MoEInter      int // moe_intermediate_size (or intermediate_size for MiniMax)
	SharedExperts int // n_shared_experts (1 for Qwen3.5's single shared expert)
	SharedInter   int // per shared expert intermediate size

	MaxContext int // max_position_embeddings
}

// Architecture is the model's shape as the engines read it from the
// config: MLA when kv_lora_rank is set (DSA with an indexer's index_topk),
// GQA otherwise, whose head_dim defaults to hidden/heads and whose K/V
// heads default to the query heads (HuggingFace's defaults); one shared
// expert of shared_expert_intermediate_size (Qwen) or n_shared_experts of
// moe_intermediate_size (DeepSeek); the full-attention interval from
// layer_types when full_attention_interval is absent; the experts' size from
// intermediate_size when moe_intermediate_size is absent (MiniMax, Mixtral).
func (c *Config) Architecture() Architecture {
	a := Architecture{
		Hidden: c.HiddenSize, Layers: c.NumHiddenLayers, Vocab: c.VocabSize,
		Heads: c.NumAttentionHeads, OutputGate: c.AttnOutputGate,
		FullAttnInterval: c.FullAttentionInterval,
		LinearKHeads:     c.LinearNumKeyHeads, LinearVHeads: c.LinearNumValueHeads, LinearKDim: c.LinearKeyHeadDim,
		LinearVDim: c.LinearValueHeadDim, ConvKernel: c.LinearConvKernelDim,
		DenseLayers: c.FirstKDenseReplace, DenseInter: c.IntermediateSize,
		Experts: c.NumExperts, TopK: c.NumExpertsPerTok, MoEInter: c.MoEIntermediateSize,
		SharedExperts: c.NumSharedExperts, SharedInter: c.MoEIntermediateSize,
		MaxContext: c.MaxPositionEmbeddings,
	}
	switch {
	case c.KVLoRARank > 0:
		a.Attention = MLA
		a.QLoRA, a.KVLoRA, a.RopeDim, a.NopeDim, a.VHeadDim = c.QLoRARank, c.KVLoRARank, c.QKRopeHeadDim, c.QKNopeHeadDim, c.VHeadDim
		if c.IndexTopK > 0 {
			a.Attention = DSA
			a.IndexTopK, a.IndexHeads, a.IndexHeadDim = c.IndexTopK, c.IndexNHeads, c.IndexHeadDim
		}
	default:
		a.Attention = GQA
		a.KVHeads, a.HeadDim = c.NumKeyValueHeads, c.HeadDim
		if a.HeadDim == 0 && a.Heads > 0 {
			a.HeadDim = a.Hidden / a.Heads
		}
		if a.KVHeads == 0 {
			a.KVHeads = a.Heads
		}
	}
	if c.SharedExpertIntermediateSize > 0 {
		a.SharedExperts, a.SharedInter = max(a.SharedExperts, 1), c.SharedExpertIntermediateSize
	}
	if a.SharedExperts == 0 {
		a.SharedInter = 0
	}
	if a.FullAttnInterval == 0 && len(c.LayerTypes) > 0 {
		for i, t := range c.LayerTypes {
			if strings.Contains(t, "full") {
				a.FullAttnInterval = i + 1
				break
			}
		}
	}
	switch {
	case a.Experts == 0 && a.DenseInter == 0:
		a.DenseInter = c.MoEIntermediateSize
	case a.Experts > 0 && a.MoEInter == 0:
		a.MoEInter = c.IntermediateSize
	}
	if a.Experts > 0 && a.DenseLayers == 0 {
		a.DenseInter = 0 // every layer is MoE: intermediate_size sizes nothing
	}
	return a
}
