// Package model reads a checkpoint's model description: config.json (with a
// nested text_config flattened in), hf_quant_config.json and the
// quantization_config block, as [Config] and [QuantConfig], and the
// architecture the cost model and the audit both need as [Architecture].
// It is the one reader of those files: package audit checks a checkpoint
// against it, package simulate builds its models (presets included) from it.
package model

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/specsim/specsim/internal/regular"
)

// MaxConfigSize bounds config.json and hf_quant_config.json. Real files are
// at most a few megabytes (MiniMax-M3 lists thousands of modules).
const MaxConfigSize = 16 << 20

// Config is config.json, with a nested text_config flattened in (its
// values win), plus the quantization settings from hf_quant_config.json and
// the quantization_config block. Every field is optional: zero means the
// file did not say.
type Config struct {
	Dir           string
	Architectures []string
	// DType is torch_dtype (or dtype) as a safetensors dtype name ("BF16",
	// "F16", "F32"; "" when absent or another value).
	DType         string
	ModelType     string // top-level model_type ("qwen3_5_moe", "deepseek_v3")
	TextModelType string // text_config.model_type when nested ("qwen3_5_moe_text")

	HiddenSize            int
	NumHiddenLayers       int
	NumAttentionHeads     int
	NumKeyValueHeads      int
	HeadDim               int
	IntermediateSize      int
	VocabSize             int
	MaxPositionEmbeddings int
	TieWordEmbeddings     bool
	AttnOutputGate        bool
	PartialRotaryFactor   float64

	// MoE.
	MoEIntermediateSize          int
	SharedExpertIntermediateSize int
	NumExperts                   int // n_routed_experts | num_experts | num_local_experts
	NumExpertsPerTok             int
	NumSharedExperts             int // n_shared_experts
	FirstKDenseReplace           int

	// Multi-head latent attention (DeepSeek, Kimi, GLM-5).
	KVLoRARank    int
	QLoRARank     int
	QKRopeHeadDim int
	QKNopeHeadDim int
	VHeadDim      int

	// DeepSeek sparse attention's lightning indexer (GLM-5, DeepSeek-V3.2).
	IndexTopK    int
	IndexNHeads  int
	IndexHeadDim int

	// Hybrid linear attention (Qwen3.5 / Qwen3-Next Gated DeltaNet).
	LayerTypes            []string
	FullAttentionInterval int
	LinearNumKeyHeads     int
	LinearNumValueHeads   int
	LinearKeyHeadDim      int
	LinearValueHeadDim    int
	LinearConvKernelDim   int

	// MTPLayers is mtp_num_hidden_layers (Qwen3.5), num_nextn_predict_layers
	// (DeepSeek, GLM, Qwen3-Next) or num_mtp_modules (MiniMax); MTPKey names
	// the key it came from ("" when the config says nothing).
	MTPLayers                 int
	MTPKey                    string
	MTPUseDedicatedEmbeddings bool

	// Quantization. Quant is what the engines act on: config.json's
	// quantization_config when present (SGLang prefers it), else
	// hf_quant_config.json. Both sources are kept for comparison.
	Quant       *QuantConfig
	HFQuant     *QuantConfig // hf_quant_config.json, nil if absent
	ConfigQuant *QuantConfig // config.json quantization_config, nil if absent

	// QuantAlgo and ExcludeModules repeat Quant's fields for consumers that
	// only need those ("NVFP4", "FP8", "MIXED_PRECISION", "" when unquantized).
	QuantAlgo      string
	ExcludeModules []string
}

// QuantConfig is one quantization description, normalised across the
// ModelOpt hf_quant_config.json form, the ModelOpt/compressed-tensors
// config.json form and the plain FP8-block form.
type QuantConfig struct {
	Source          string // file it came from
	Method          string // quant_method: "modelopt", "fp8", "compressed-tensors"; "modelopt" for hf_quant_config.json
	Algo            string // upper-cased: "NVFP4", "FP8", "MIXED_PRECISION", "W4A16_NVFP4", ... ("FP8" for fp8 block configs)
	KVCacheAlgo     string // "FP8", "NVFP4" or ""
	GroupSize       int
	WeightBlockSize []int    // [128, 128] for DeepSeek-style FP8
	Exclude         []string // exclude_modules | ignore | modules_to_not_convert | ignored_layers
	ExcludeKey      string   // which key Exclude came from
	// QuantizedLayers is the MIXED_PRECISION per-module algorithm.
	QuantizedLayers map[string]string
	Producer        string
	ProducerVersion string

	memo              sync.Map // Memo's results
	layerPrefixesOnce sync.Once
	layerPrefixes     map[string]bool
}

// Memo returns the result of f for key, computing it once per key and
// QuantConfig (the audit asks the same module question many times). It is
// safe for concurrent use.
func (q *QuantConfig) Memo(key any, f func() bool) bool {
	if v, ok := q.memo.Load(key); ok {
		return v.(bool)
	}
	v := f()
	q.memo.Store(key, v)
	return v
}

// LayerPrefixes are the quantized_layers keys and each dotted prefix of
// them (vLLM's lookup: a module directly, then any key under it), computed
// once.
func (q *QuantConfig) LayerPrefixes() map[string]bool {
	q.layerPrefixesOnce.Do(func() {
		q.layerPrefixes = map[string]bool{}
		for k := range q.QuantizedLayers {
			q.layerPrefixes[k] = true
			for i := range len(k) {
				if k[i] == '.' {
					q.layerPrefixes[k[:i]] = true
				}
			}
		}
	})
	return q.layerPrefixes
}

// Load reads config.json, hf_quant_config.json and the
// quantization_config block from a checkpoint directory. A missing
// config.json is an error; a missing hf_quant_config.json is not.
func Load(dir string) (*Config, error) { return load(dir, true) }

// LoadWithoutHFQuant is Load for a directory whose hf_quant_config.json
// must not be read (a link out of the checkpoint): the quantization comes
// from config.json alone.
func LoadWithoutHFQuant(dir string) (*Config, error) { return load(dir, false) }

func load(dir string, withHFQuant bool) (*Config, error) {
	path := filepath.Join(dir, "config.json")
	raw, err := readBounded(path)
	if err != nil {
		return nil, err
	}
	mc, err := Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	mc.Dir = dir
	if mc.ConfigQuant != nil {
		mc.ConfigQuant.Source = path
	}
	if !withHFQuant {
		mc.resolveQuant()
		return mc, nil
	}
	qpath := filepath.Join(dir, "hf_quant_config.json")
	qraw, err := readBounded(qpath)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return nil, err
	default:
		q, err := ParseQuant(qraw)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", qpath, err)
		}
		q.Source = qpath
		mc.HFQuant = q
	}
	mc.resolveQuant()
	return mc, nil
}

func readBounded(path string) ([]byte, error) {
	f, _, err := regular.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, MaxConfigSize+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(b) > MaxConfigSize {
		return nil, fmt.Errorf("%s: larger than %d bytes", path, MaxConfigSize)
	}
	return b, nil
}

func (mc *Config) resolveQuant() {
	mc.Quant = mc.ConfigQuant
	if mc.Quant == nil {
		mc.Quant = mc.HFQuant
	}
	if mc.Quant != nil {
		mc.QuantAlgo = mc.Quant.Algo
		mc.ExcludeModules = mc.Quant.Exclude
	}
}

// Parse parses the bytes of a config.json (without reading
// hf_quant_config.json).
func Parse(data []byte) (*Config, error) {
	if err := checkJSONShape(data); err != nil {
		return nil, err
	}
	var top map[string]any
	if err := json.Unmarshal(data, &top); err != nil {
		return nil, fmt.Errorf("not a JSON object: %w", err)
	}
	if top == nil {
		return nil, errors.New("not a JSON object")
	}
	mc := &Config{}
	fields := top
	if tc, ok := top["text_config"].(map[string]any); ok {
		fields = make(map[string]any, len(top)+len(tc))
		for k, v := range top {
			fields[k] = v
		}
		for k, v := range tc {
			fields[k] = v
		}
		mc.TextModelType, _ = tc["model_type"].(string)
	}
	c := cfg(fields)
	if err := c.checkBools(); err != nil {
		return nil, err
	}
	if err := c.checkCounts(); err != nil {
		return nil, err
	}
	if err := c.checkBounds(); err != nil {
		return nil, err
	}
	mc.Architectures = strs(top["architectures"])
	mc.ModelType, _ = top["model_type"].(string)
	for _, k := range []string{"torch_dtype", "dtype"} {
		if d, ok := fields[k].(string); ok {
			mc.DType = map[string]string{"bfloat16": "BF16", "float16": "F16", "float32": "F32"}[d]
			break
		}
	}
	mc.HiddenSize = c.int("hidden_size")
	mc.NumHiddenLayers = c.int("num_hidden_layers")
	mc.NumAttentionHeads = c.int("num_attention_heads")
	mc.NumKeyValueHeads = c.int("num_key_value_heads")
	mc.HeadDim = c.int("head_dim")
	mc.IntermediateSize = c.int("intermediate_size")
	mc.VocabSize = c.int("vocab_size")
	mc.MaxPositionEmbeddings = c.int("max_position_embeddings")
	mc.TieWordEmbeddings = c.bool("tie_word_embeddings")
	mc.AttnOutputGate = c.bool("attn_output_gate")
	mc.PartialRotaryFactor = c.float("partial_rotary_factor")
	mc.MoEIntermediateSize = c.int("moe_intermediate_size")
	mc.SharedExpertIntermediateSize = c.int("shared_expert_intermediate_size")
	mc.NumExperts = c.int("n_routed_experts", "num_experts", "num_local_experts")
	mc.NumExpertsPerTok = c.int("num_experts_per_tok")
	mc.NumSharedExperts = c.int("n_shared_experts")
	mc.FirstKDenseReplace = c.int("first_k_dense_replace")
	mc.KVLoRARank = c.int("kv_lora_rank")
	mc.QLoRARank = c.int("q_lora_rank")
	mc.QKRopeHeadDim = c.int("qk_rope_head_dim")
	mc.QKNopeHeadDim = c.int("qk_nope_head_dim")
	mc.VHeadDim = c.int("v_head_dim")
	mc.IndexTopK = c.int("index_topk")
	mc.IndexNHeads = c.int("index_n_heads")
	mc.IndexHeadDim = c.int("index_head_dim")
	mc.LayerTypes = strs(fields["layer_types"])
	mc.FullAttentionInterval = c.int("full_attention_interval")
	mc.LinearNumKeyHeads = c.int("linear_num_key_heads")
	mc.LinearNumValueHeads = c.int("linear_num_value_heads")
	mc.LinearKeyHeadDim = c.int("linear_key_head_dim")
	mc.LinearValueHeadDim = c.int("linear_value_head_dim")
	mc.LinearConvKernelDim = c.int("linear_conv_kernel_dim")
	mc.MTPUseDedicatedEmbeddings = c.bool("mtp_use_dedicated_embeddings")
	for _, k := range []string{"mtp_num_hidden_layers", "num_nextn_predict_layers", "num_mtp_modules"} {
		if v, ok := c.intOK(k); ok {
			mc.MTPLayers, mc.MTPKey = v, k
			break
		}
	}
	if q, ok := top["quantization_config"].(map[string]any); ok {
		mc.ConfigQuant = quantFromMap(q)
	}
	if err := mc.checkSize(); err != nil {
		return nil, err
	}
	return mc, nil
}

// ParseQuant parses hf_quant_config.json (the nested
// {"producer", "quantization": {...}} form) or, if there is no
// "quantization" object, a flat quantization_config block.
func ParseQuant(data []byte) (*QuantConfig, error) {
	if err := checkJSONShape(data); err != nil {
		return nil, err
	}
	var top map[string]any
	if err := json.Unmarshal(data, &top); err != nil {
		return nil, fmt.Errorf("not a JSON object: %w", err)
	}
	if top == nil {
		return nil, errors.New("not a JSON object")
	}
	q := quantFromMap(top)
	if q.Method == "" {
		q.Method = "modelopt"
	}
	return q, nil
}

func quantFromMap(m map[string]any) *QuantConfig {
	q := &QuantConfig{}
	if p, ok := m["producer"].(map[string]any); ok {
		q.Producer, _ = p["name"].(string)
		q.ProducerVersion, _ = p["version"].(string)
	}
	q.Method, _ = m["quant_method"].(string)
	body := m
	if inner, ok := m["quantization"].(map[string]any); ok {
		body = inner
		if q.Method == "" {
			q.Method = "modelopt"
		}
	}
	c := cfg(body)
	q.Algo = strings.ToUpper(c.str("quant_algo"))
	q.KVCacheAlgo = strings.ToUpper(c.str("kv_cache_quant_algo"))
	if kv, ok := body["kv_cache_scheme"].(map[string]any); ok && q.KVCacheAlgo == "" {
		kc := cfg(kv)
		if kc.str("type") == "float" && kc.int("num_bits") == 8 {
			q.KVCacheAlgo = "FP8"
		}
	}
	q.GroupSize = c.int("group_size")
	q.WeightBlockSize = ints(body["weight_block_size"])
	for _, k := range []string{"exclude_modules", "ignore", "modules_to_not_convert", "ignored_layers"} {
		if v, ok := body[k]; ok && v != nil {
			q.Exclude, q.ExcludeKey = strs(v), k
			break
		}
	}
	if ql, ok := body["quantized_layers"].(map[string]any); ok {
		q.QuantizedLayers = make(map[string]string, len(ql))
		for name, v := range ql {
			if lm, ok := v.(map[string]any); ok {
				algo, _ := lm["quant_algo"].(string)
				q.QuantizedLayers[name] = strings.ToUpper(algo)
			}
		}
	}
	// compressed-tensors and the ModelOpt config.json form describe the
	// scheme in config_groups; use it when quant_algo is absent.
	if groups, ok := body["config_groups"].(map[string]any); ok {
		names := make([]string, 0, len(groups))
		for k := range groups {
			names = append(names, k)
		}
		slices.Sort(names)
		for _, name := range names {
			g, _ := groups[name].(map[string]any)
			w, _ := g["weights"].(map[string]any)
			if w == nil {
				continue
			}
			wc := cfg(w)
			if q.GroupSize == 0 {
				q.GroupSize = wc.int("group_size")
			}
			if q.Algo == "" {
				switch {
				case wc.str("type") == "float" && wc.int("num_bits") == 4:
					q.Algo = "NVFP4"
				case wc.str("type") == "float" && wc.int("num_bits") == 8:
					q.Algo = "FP8"
				case wc.str("type") == "int":
					q.Algo = fmt.Sprintf("INT%d", wc.int("num_bits"))
				}
			}
			break
		}
	}
	if q.Algo == "" && q.Method == "fp8" {
		q.Algo = "FP8"
	}
	return q
}

// Disagreements lists where two quantization descriptions of the same
// checkpoint differ (algorithm, KV-cache algorithm, group size, exclude
// list), each as a sentence naming both files.
func Disagreements(a, b *QuantConfig) []string {
	if a == nil || b == nil {
		return nil
	}
	var out []string
	diff := func(what, x, y string) {
		if x != y {
			out = append(out, fmt.Sprintf("%s is %q in %s but %q in %s", what, x, filepath.Base(a.Source), y, filepath.Base(b.Source)))
		}
	}
	diff("quant_algo", a.Algo, b.Algo)
	if a.KVCacheAlgo != "" && b.KVCacheAlgo != "" {
		diff("KV-cache quantization", a.KVCacheAlgo, b.KVCacheAlgo)
	}
	if a.GroupSize != 0 && b.GroupSize != 0 && a.GroupSize != b.GroupSize {
		diff("group_size", fmt.Sprint(a.GroupSize), fmt.Sprint(b.GroupSize))
	}
	onlyA, onlyB := setDiff(a.Exclude, b.Exclude)
	if len(onlyA) > 0 {
		out = append(out, fmt.Sprintf("%d exclude patterns only in %s (%s): %s", len(onlyA), filepath.Base(a.Source), a.ExcludeKey, abbreviate(onlyA, 5)))
	}
	if len(onlyB) > 0 {
		out = append(out, fmt.Sprintf("%d exclude patterns only in %s (%s): %s", len(onlyB), filepath.Base(b.Source), b.ExcludeKey, abbreviate(onlyB, 5)))
	}
	if len(a.QuantizedLayers) > 0 && len(b.QuantizedLayers) > 0 {
		n := 0
		for k, v := range a.QuantizedLayers {
			if b.QuantizedLayers[k] != v {
				n++
			}
		}
		for k := range b.QuantizedLayers {
			if _, ok := a.QuantizedLayers[k]; !ok {
				n++
			}
		}
		if n > 0 {
			out = append(out, fmt.Sprintf("quantized_layers differ for %d modules between %s and %s", n, filepath.Base(a.Source), filepath.Base(b.Source)))
		}
	}
	return out
}

func setDiff(a, b []string) (onlyA, onlyB []string) {
	inA := map[string]bool{}
	for _, s := range a {
		inA[s] = true
	}
	inB := map[string]bool{}
	for _, s := range b {
		inB[s] = true
		if !inA[s] {
			onlyB = append(onlyB, s)
		}
	}
	for _, s := range a {
		if !inB[s] {
			onlyA = append(onlyA, s)
		}
	}
	return onlyA, onlyB
}

func abbreviate(items []string, n int) string {
	if len(items) <= n {
		return strings.Join(items, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(items[:n], ", "), len(items)-n)
}

// cfg reads loosely typed JSON fields: a wrong type reads as absent.
type cfg map[string]any

func (c cfg) intOK(keys ...string) (int, bool) {
	for _, k := range keys {
		if f, ok := c[k].(float64); ok && f == math.Trunc(f) && math.Abs(f) < 1<<53 {
			return int(f), true
		}
	}
	return 0, false
}

func (c cfg) int(keys ...string) int { v, _ := c.intOK(keys...); return v }

// countKeys are the sizes and counts a model config gives as whole numbers.
var countKeys = []string{"hidden_size", "num_hidden_layers", "num_attention_heads", "num_key_value_heads",
	"head_dim", "intermediate_size", "vocab_size", "max_position_embeddings", "moe_intermediate_size",
	"shared_expert_intermediate_size", "n_routed_experts", "num_experts", "num_local_experts",
	"num_experts_per_tok", "n_shared_experts", "first_k_dense_replace", "kv_lora_rank", "q_lora_rank",
	"qk_rope_head_dim", "qk_nope_head_dim", "v_head_dim", "index_topk", "index_n_heads", "index_head_dim", "full_attention_interval",
	"linear_num_key_heads", "linear_num_value_heads", "linear_key_head_dim", "linear_value_head_dim",
	"linear_conv_kernel_dim", "mtp_num_hidden_layers", "num_nextn_predict_layers", "num_mtp_modules"}

// checkCounts rejects a size or count that is present but not a
// non-negative whole number ("abc", 0.5, -5, 1e300), which would otherwise
// read as absent and model a different architecture without a word. null
// stays allowed (configs write it for unused fields).
func (c cfg) checkCounts() error {
	for _, k := range countKeys {
		v, ok := c[k]
		if !ok || v == nil {
			continue
		}
		if f, isNum := v.(float64); !isNum || f != math.Trunc(f) || f < 0 || f >= 1<<53 {
			return fmt.Errorf("%s: want a whole number >= 0, got %s", k, jsonValue(v))
		}
	}
	return nil
}

// boolKeys are the switches a model config gives as JSON booleans.
var boolKeys = []string{"tie_word_embeddings", "attn_output_gate", "mtp_use_dedicated_embeddings"}

// checkBools rejects a switch that is present but not a boolean ("yes",
// "true", 1), which would otherwise read as false without a word; null
// stays allowed.
func (c cfg) checkBools() error {
	for _, k := range boolKeys {
		v, ok := c[k]
		if !ok || v == nil {
			continue
		}
		if _, isBool := v.(bool); !isBool {
			return fmt.Errorf("%s: want true or false, got %s", k, jsonValue(v))
		}
	}
	return nil
}

// jsonValue names a decoded JSON value for a message: a string quoted as
// such ("48" is not 48), a list or object by its kind.
func jsonValue(v any) string {
	switch x := v.(type) {
	case string:
		return fmt.Sprintf("the string %q", x)
	case []any:
		return "a list"
	case map[string]any:
		return "an object"
	case bool:
		return fmt.Sprintf("the boolean %v", x)
	}
	return fmt.Sprint(v)
}

func (c cfg) float(key string) float64 { f, _ := c[key].(float64); return f }

func (c cfg) bool(key string) bool { b, _ := c[key].(bool); return b }

func (c cfg) str(key string) string { s, _ := c[key].(string); return s }

func strs(v any) []string {
	arr, _ := v.([]any)
	var out []string
	for _, x := range arr {
		if s, ok := x.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

func ints(v any) []int {
	arr, _ := v.([]any)
	var out []int
	for _, x := range arr {
		if f, ok := x.(float64); ok && f == math.Trunc(f) && math.Abs(f) < 1<<31 {
			out = append(out, int(f))
		}
	}
	return out
}
