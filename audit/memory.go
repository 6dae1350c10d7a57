package audit

import (
	"fmt"
	"strings"
)

// GiB is the unit both engines print: SGLang's "GB" in "mem usage=X GB" is
// bytes / 2^30 (get_available_gpu_memory divides by 1 << 30), vLLM prints
// GiB explicitly.
const GiB = 1 << 30

// VocabPadding is DEFAULT_VOCAB_PADDING_SIZE in both engines'
// vocab_parallel_embedding.py: the vocabulary is padded to a multiple of 64
// before it is split over ranks.
const VocabPadding = 64

// Layout is one parallel configuration.
type Layout struct {
	Engine string
	TP     int // tensor-parallel ranks
	EP     int // expert-parallel ranks (1 = experts TP-sharded)
	DP     int // data-parallel attention groups (attention TP = TP/DP)
	// DPLMHead is SGLang's --enable-dp-lm-head: lm_head split over the
	// attention TP group instead of all TP ranks.
	DPLMHead bool
}

func (l Layout) attnTP() int { return max(1, l.TP/max(1, l.DP)) }

// moeTP is how many ways each expert's matrices are split. SGLang splits
// experts over TP/EP ranks inside an EP group; vLLM with expert parallelism
// keeps experts whole.
func (l Layout) moeTP() int {
	if l.EP > 1 && l.Engine == EngineVLLM {
		return 1
	}
	return max(1, l.TP/max(1, l.EP))
}

// Check reports layouts the engines refuse.
func (l Layout) Check(cfg *ModelConfig) error {
	switch {
	case l.TP < 1:
		return fmt.Errorf("tp %d: want at least 1", l.TP)
	case l.EP < 1 || l.DP < 1:
		return fmt.Errorf("ep %d, dp %d: want at least 1", l.EP, l.DP)
	case l.TP%l.DP != 0:
		return fmt.Errorf("tp %d is not a multiple of dp %d (attention TP = tp/dp)", l.TP, l.DP)
	case l.Engine == EngineSGLang && l.TP%l.EP != 0:
		return fmt.Errorf("tp %d is not a multiple of ep %d (SGLang runs EP inside the TP group)", l.TP, l.EP)
	case cfg.NumExperts > 0 && l.EP > cfg.NumExperts:
		return fmt.Errorf("ep %d exceeds the %d experts", l.EP, cfg.NumExperts)
	// The engines split attention heads evenly over the attention TP
	// ranks (SGLang's and vLLM's QKVParallelLinear assert divisibility);
	// simulate refuses the same layouts (Parallel.fits).
	case cfg.NumAttentionHeads > 0 && cfg.NumAttentionHeads%(l.TP/l.DP) != 0:
		return fmt.Errorf("attention tp %d does not divide the %d attention heads", l.TP/l.DP, cfg.NumAttentionHeads)
	case cfg.FullAttentionInterval > 1 && cfg.LinearNumValueHeads > 0 && cfg.LinearNumValueHeads%(l.TP/l.DP) != 0:
		return fmt.Errorf("attention tp %d does not divide the %d linear-attention value heads", l.TP/l.DP, cfg.LinearNumValueHeads)
	}
	return nil
}

// Role is how a tensor is laid out over ranks.
type Role string

// Roles.
const (
	RoleEmbed      Role = "embed"      // vocab-parallel rows, padded
	RoleLMHead     Role = "lm_head"    // vocab-parallel rows, padded
	RoleExpert     Role = "expert"     // split over EP, each expert over TP/EP
	RoleKV         Role = "kv"         // K/V projections: split by KV head, replicated past the head count
	RoleAttention  Role = "attention"  // split over attention TP
	RoleDense      Role = "dense"      // split over TP (shared experts, dense MLP, vision)
	RoleReplicated Role = "replicated" // whole on every rank
)

// roleOf classifies a tensor for an engine. inDraft marks MTP modules,
// whose fusion projection SGLang builds as a plain nn.Linear.
func roleOf(engine string, t *Tensor, inDraft bool) Role {
	mod, _ := splitName(t.Name)
	last := mod[strings.LastIndexByte(mod, '.')+1:]
	switch {
	case strings.Contains(mod, ".experts.") || strings.HasSuffix(mod, ".experts"):
		return RoleExpert
	case len(t.Shape) < 2:
		return RoleReplicated
	case strings.Contains(last, "embed_tokens") || last == "wte" || last == "tok_embeddings" || last == "word_embeddings" || (last == "embeddings" && !strings.Contains(mod, "visual")):
		return RoleEmbed
	case mod == "lm_head" || strings.HasSuffix(mod, ".lm_head") || strings.HasSuffix(mod, "shared_head.head") || mod == "output":
		return RoleLMHead
	case isRouter(mod) || last == "shared_expert_gate" || last == "eh_proj" || last == "q_a_proj" || last == "kv_a_proj_with_mqa":
		return RoleReplicated
	case inDraft && last == "fc":
		if engine == EngineSGLang {
			return RoleReplicated
		}
		return RoleDense
	case last == "k_proj" || last == "v_proj":
		return RoleKV
	case strings.Contains(mod, "self_attn.") || strings.Contains(mod, "linear_attn.") || strings.Contains(mod, ".attention."):
		return RoleAttention
	}
	return RoleDense
}

// Placement holds the model facts per-rank sizing needs.
type Placement struct {
	Experts int // routed experts per MoE layer
	KVHeads int
	// EmbedOverAttnTP: under DP attention SGLang splits this family's
	// embedding over the attention TP group (deepseek_nextn.py,
	// use_attn_tp_group) instead of replicating it (qwen3_5.py,
	// enable_tp=not dp_attention).
	EmbedOverAttnTP bool
}

func (p Placement) padded(rows int64) int64 {
	return (rows + VocabPadding - 1) / VocabPadding * VocabPadding
}

// RankBytes is the bytes of one tensor held by the most loaded rank.
func (p Placement) RankBytes(l Layout, r Role, shape []int64, bytes int64) float64 {
	b := float64(bytes)
	switch r {
	case RoleEmbed, RoleLMHead:
		parts := l.TP
		if r == RoleEmbed && l.Engine == EngineSGLang && l.DP > 1 {
			parts = 1 // VocabParallelEmbedding(enable_tp=not dp_attention)
			if p.EmbedOverAttnTP {
				parts = l.attnTP()
			}
		}
		if r == RoleLMHead && l.Engine == EngineSGLang && l.DPLMHead {
			parts = l.attnTP()
		}
		rows := shape[0]
		if rows <= 0 {
			return 0
		}
		perRank := (p.padded(rows) + int64(parts) - 1) / int64(parts)
		return b * float64(perRank) / float64(rows)
	case RoleExpert:
		share := 1.0
		if p.Experts > 0 && l.EP > 1 {
			local := (p.Experts + l.EP - 1) / l.EP
			share = float64(local) / float64(p.Experts)
		}
		if len(shape) >= 2 {
			share /= float64(l.moeTP())
		}
		return b * share
	case RoleKV:
		tp := l.attnTP()
		if p.KVHeads <= 0 || p.KVHeads >= tp {
			return b / float64(tp)
		}
		return b / float64(p.KVHeads)
	case RoleAttention:
		return b / float64(l.attnTP())
	case RoleDense:
		return b / float64(l.TP)
	}
	return b
}

// storedBytesAs is what a module would occupy stored in another precision:
// NVFP4 keeps a U8 byte per two values, an F8_E4M3 scale per 16 and two F32
// scalars; FP8 (DeepSeek block style) a byte per value and an F32 scale
// per 128x128 block; BF16 two bytes per value.
func storedBytesAs(m *Module, prec string) int64 {
	if m.Weight == nil || !m.Linear() {
		return m.Bytes
	}
	rows, cols := matrixDims(m)
	batch := int64(1)
	if rows*cols > 0 {
		batch = m.Params / (rows * cols)
		if batch < 1 {
			batch = 1
		}
	}
	switch prec {
	case PrecNVFP4:
		return batch * (rows*cols/2 + rows*((cols+15)/16) + 8)
	case PrecFP8:
		return batch * (rows*cols + 4*((rows+127)/128)*((cols+127)/128))
	case PrecBF16, PrecF16:
		return 2 * m.Params
	case PrecF32:
		return 4 * m.Params
	}
	return m.Bytes
}

// matrixDims are the logical (unpacked) output and input sizes of a linear
// module's weight.
func matrixDims(m *Module) (rows, cols int64) {
	s := m.Weight.Shape
	if len(s) < 2 {
		return 0, 0
	}
	rows, cols = s[len(s)-2], s[len(s)-1]
	if m.Precision == PrecNVFP4 {
		cols *= 2
	}
	return rows, cols
}

// moduleRankBytes sizes a module on the most loaded rank when stored in
// precision prec (its shipped tensors when prec is the shipped one).
func (p Placement) moduleRankBytes(l Layout, m *Module, prec string, inDraft bool) float64 {
	if prec == "" || prec == m.Precision || !m.Linear() {
		var sum float64
		for i := range m.Tensors {
			t := &m.Tensors[i]
			sum += p.RankBytes(l, roleOf(l.Engine, t, inDraft), t.Shape, t.Bytes())
		}
		return sum
	}
	w := m.Weight
	rows, cols := matrixDims(m)
	shape := append(append([]int64{}, w.Shape[:len(w.Shape)-2]...), rows, cols)
	return p.RankBytes(l, roleOf(l.Engine, w, inDraft), shape, storedBytesAs(m, prec))
}
