package audit

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/specsim/specsim/audit/safetensors"
)

// An index-only checkpoint is what a reviewer downloads: config.json,
// hf_quant_config.json and model.safetensors.index.json, kilobytes, and no
// shard. The weight map still names every tensor, so MTP presence, tensor
// counts and scale companions are facts; dtypes and shapes are inferred from
// the names, the companions and config.json, and every report built on them
// says so.

// inferredTensors builds the tensor list of an index-only checkpoint: each
// weight_map name with the dtype and shape the architecture implies. A name
// the architecture does not explain gets no shape (zero bytes) and is
// counted in unsized.
func inferredTensors(idx *safetensors.Index, cfg *ModelConfig) (ts []Tensor, unsized []string) {
	companions := map[string][]string{} // module -> scale suffixes present
	for _, e := range idx.Entries {
		mod, suf := splitName(e.Name)
		if isScale(suf) {
			companions[mod] = append(companions[mod], suf)
		}
	}
	unquant := cfg.DType
	if unquant == "" {
		unquant = "BF16"
	}
	ts = make([]Tensor, 0, len(idx.Entries))
	for _, e := range idx.Entries {
		mod, suf := splitName(e.Name)
		t := Tensor{Tensor: safetensors.Tensor{Name: e.Name, DType: unquant}, Shard: e.Shard}
		shape, dtype, ok := logicalShape(cfg, mod, suf)
		if dtype != "" {
			t.DType = dtype
		}
		scales := companions[mod]
		switch {
		case !ok:
			unsized = append(unsized, e.Name)
		case isScale(suf):
			t.DType, t.Shape = scaleLayout(cfg, suf, shape)
		case len(scales) > 0 && len(shape) >= 2:
			t.DType, t.Shape = quantizedLayout(cfg, scales, shape)
		default:
			t.Shape = shape
		}
		if ok {
			bits, _ := safetensors.DTypeBits(t.DType)
			n := int64(1)
			for _, d := range t.Shape {
				n *= d
			}
			t.End = n * int64(bits) / 8
		}
		ts = append(ts, t)
	}
	return ts, unsized
}

func hasSuffix(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// quantizedLayout is the stored dtype and shape of a weight with scale
// companions, for the formats the exporters write: ModelOpt NVFP4 (packed
// U8 [out, in/2] with weight_scale and weight_scale_2), block FP8
// (weight_scale_inv), per-tensor FP8 (weight_scale alone).
func quantizedLayout(cfg *ModelConfig, scales []string, shape []int64) (string, []int64) {
	last := len(shape) - 1
	packed := append([]int64(nil), shape...)
	algo := ""
	if cfg.Quant != nil {
		algo = cfg.Quant.Algo
	}
	switch {
	case hasSuffix(scales, "weight_scale_2") || strings.Contains(algo, "NVFP4"):
		packed[last] = shape[last] / 2
		return "U8", packed
	}
	return "F8_E4M3", packed
}

// scaleLayout is the dtype and shape of one scale companion of a weight of
// logical shape shape.
func scaleLayout(cfg *ModelConfig, suffix string, shape []int64) (string, []int64) {
	switch suffix {
	case "weight_scale":
		if cfg.Quant != nil && strings.Contains(cfg.Quant.Algo, "NVFP4") && len(shape) >= 2 {
			s := append([]int64(nil), shape...)
			g := int64(max(cfg.Quant.GroupSize, 16))
			s[len(s)-1] = (shape[len(s)-1] + g - 1) / g
			return "F8_E4M3", s
		}
		return "F32", nil
	case "weight_scale_inv":
		if len(shape) >= 2 {
			s := append([]int64(nil), shape...)
			for i := len(s) - 2; i < len(s); i++ {
				s[i] = (s[i] + 127) / 128
			}
			return "F32", s
		}
	}
	return "F32", nil
}

// logicalShape is the unquantized shape of tensor suffix of module mod
// under the architecture in cfg, with a dtype when the engines' exports fix
// one (F32 A_log, router biases). ok is false for a name it cannot explain.
func logicalShape(cfg *ModelConfig, mod, suffix string) (shape []int64, dtype string, ok bool) {
	if isScale(suffix) {
		s, _, ok := logicalShape(cfg, mod, "weight")
		return s, "", ok
	}
	h := int64(cfg.HiddenSize)
	if h == 0 {
		return nil, "", false
	}
	v := int64(cfg.VocabSize)
	heads, kv := int64(cfg.NumAttentionHeads), int64(cfg.NumKeyValueHeads)
	hd := int64(cfg.HeadDim)
	if hd == 0 && heads > 0 {
		hd = h / heads
	}
	experts := int64(cfg.NumExperts)
	moeI, sharedI := int64(cfg.MoEIntermediateSize), int64(cfg.SharedExpertIntermediateSize)
	if sharedI == 0 && cfg.NumSharedExperts > 0 {
		sharedI = moeI * int64(cfg.NumSharedExperts)
	}
	kd := int64(cfg.LinearNumKeyHeads * cfg.LinearKeyHeadDim)
	vd := int64(cfg.LinearNumValueHeads * cfg.LinearValueHeadDim)
	nv := int64(cfg.LinearNumValueHeads)
	last := mod[strings.LastIndexByte(mod, '.')+1:]
	parent := strings.TrimSuffix(mod, "."+last)
	parentLast := parent[strings.LastIndexByte(parent, '.')+1:]
	mat := func(out, in int64) ([]int64, string, bool) { return []int64{out, in}, "", out > 0 && in > 0 }
	vec := func(n int64) ([]int64, string, bool) { return []int64{n}, "", n > 0 }
	if suffix == "bias" {
		switch last {
		case "e_score_correction_bias":
			return []int64{experts}, "F32", experts > 0
		}
		return nil, "", false
	}
	if suffix == "e_score_correction_bias" {
		return []int64{experts}, "F32", experts > 0
	}
	switch suffix {
	case "A_log":
		return []int64{nv}, "F32", nv > 0
	case "dt_bias":
		return vec(nv)
	case "gate_up_proj", "down_proj": // fused 3-D experts: mlp.experts.gate_up_proj
		if last == "experts" {
			if suffix == "gate_up_proj" {
				return []int64{experts, 2 * moeI, h}, "", experts > 0 && moeI > 0
			}
			return []int64{experts, h, moeI}, "", experts > 0 && moeI > 0
		}
		return nil, "", false
	case "weight":
	default:
		return nil, "", false
	}
	// Expert MLPs: experts.N.{gate,up,down}_proj, shared_expert(s).*, dense mlp.*.
	inter := int64(0)
	switch {
	case parentLast == "experts" || isNumber(parentLast) && strings.HasSuffix(strings.TrimSuffix(parent, "."+parentLast), ".experts"):
		inter = moeI
	case parentLast == "shared_expert" || parentLast == "shared_experts":
		inter = sharedI
	case parentLast == "mlp" || parentLast == "feed_forward":
		inter = int64(cfg.IntermediateSize)
	}
	switch last {
	case "gate_proj", "up_proj", "w1", "w3":
		return mat(inter, h)
	case "down_proj", "w2":
		return mat(h, inter)
	case "gate":
		if parentLast == "mlp" {
			return mat(experts, h) // router
		}
	case "shared_expert_gate":
		return mat(1, h)
	case "embed_tokens", "lm_head", "head", "wte":
		return mat(v, h)
	case "fc", "eh_proj":
		return mat(h, 2*h)
	case "q_norm", "k_norm":
		return vec(hd)
	case "q_a_layernorm":
		return vec(int64(cfg.QLoRARank))
	case "kv_a_layernorm":
		return vec(int64(cfg.KVLoRARank))
	case "norm":
		if parentLast == "linear_attn" {
			return vec(int64(cfg.LinearValueHeadDim))
		}
		return vec(h)
	case "q_proj":
		if cfg.KVLoRARank > 0 {
			return mat(heads*int64(cfg.QKNopeHeadDim+cfg.QKRopeHeadDim), h)
		}
		g := int64(1)
		if cfg.AttnOutputGate {
			g = 2
		}
		return mat(g*heads*hd, h)
	case "k_proj", "v_proj":
		return mat(kv*hd, h)
	case "o_proj":
		if cfg.KVLoRARank > 0 {
			return mat(h, heads*int64(cfg.VHeadDim))
		}
		return mat(h, heads*hd)
	case "q_a_proj":
		return mat(int64(cfg.QLoRARank), h)
	case "q_b_proj":
		return mat(heads*int64(cfg.QKNopeHeadDim+cfg.QKRopeHeadDim), int64(cfg.QLoRARank))
	case "kv_a_proj_with_mqa":
		return mat(int64(cfg.KVLoRARank+cfg.QKRopeHeadDim), h)
	case "kv_b_proj":
		return mat(heads*int64(cfg.QKNopeHeadDim+cfg.VHeadDim), int64(cfg.KVLoRARank))
	case "in_proj_qkv":
		return mat(2*kd+vd, h)
	case "in_proj_qkvz":
		return mat(2*kd+2*vd, h)
	case "in_proj_z":
		return mat(vd, h)
	case "in_proj_b", "in_proj_a":
		return mat(nv, h)
	case "in_proj_ba":
		return mat(2*nv, h)
	case "out_proj":
		if parentLast == "linear_attn" {
			return mat(h, vd)
		}
	case "conv1d":
		return []int64{2*kd + vd, 1, int64(cfg.LinearConvKernelDim)}, "", kd > 0 && cfg.LinearConvKernelDim > 0
	}
	if strings.Contains(last, "norm") {
		return vec(h)
	}
	return nil, "", false
}

func isNumber(s string) bool {
	_, err := strconv.Atoi(s)
	return err == nil && s != ""
}

// indexOnlyFinding is the one line an index-only audit adds about the
// shards it did not read.
func indexOnlyFinding(idx *safetensors.Index, shards int, unsized []string) Finding {
	msg := fmt.Sprintf("none of the %d shard files %s names is present, so no shard header was read. Tensor names, counts, MTP presence and scale companions come from the weight map; dtypes, shapes and memory are inferred from the names and config.json (labelled inferred)",
		shards, safetensors.IndexFile)
	if len(unsized) > 0 {
		msg += fmt.Sprintf("; %d tensors have names the architecture does not explain and are left out of the sizes: %s", len(unsized), abbreviate(unsized, 3))
	}
	return Finding{Code: "index-only", Severity: SeverityInfo, Message: msg}
}
