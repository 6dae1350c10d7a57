package recipe

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// InvalidValue is a value a prediction reads from a recipe (Settings)
// that its engine would not accept: Key is its full path in the recipe,
// Want the range the engine accepts.
type InvalidValue struct {
	Key, Value, Want string
	Line             int
}

func (iv InvalidValue) String() string {
	return fmt.Sprintf("line %d: %s is %s; want %s", iv.Line, iv.Key, iv.Value, iv.Want)
}

// InvalidValuesError lists a variant's invalid values.
type InvalidValuesError struct {
	Variant string
	Values  []InvalidValue
}

func (e *InvalidValuesError) Error() string {
	parts := make([]string, len(e.Values))
	for i, iv := range e.Values {
		parts[i] = iv.String()
	}
	return "invalid value(s): " + strings.Join(parts, "; ")
}

// Allowed value sets, from the engines' argument parsers: SGLang
// python/sglang/srt/server_args.py (ServerArgs.add_cli_args choices),
// vLLM vllm/config/cache.py (CacheDType), TensorRT-LLM
// tensorrt_llm/llmapi/llm_args.py (KvCacheConfig.dtype).
var (
	sglangKVDTypes    = []string{"auto", "bf16", "bfloat16", "fp8_e4m3", "fp8_e5m2", "fp4_e2m1"}
	vllmKVDTypes      = []string{"auto", "bfloat16", "fp8", "fp8_e4m3", "fp8_e5m2", "fp8_inc", "fp8_ds_mla"}
	trtKVDTypes       = []string{"auto", "fp8", "nvfp4"}
	sglangSpecAlgos   = []string{"EAGLE", "EAGLE3", "NEXTN", "STANDALONE", "NGRAM", "DSPARK"}
	mambaStrategies   = []string{"auto", "no_buffer", "extra_buffer", "extra_buffer_lazy"}
	recipePrecisions  = []string{"fp4", "fp8", "bf16"}
	sglangParallelism = []string{"tensor-parallel-size", "tp-size", "tp", "data-parallel-size", "dp-size", "dp",
		"expert-parallel-size", "ep-size", "ep", "pipeline-parallel-size", "pp-size"}
)

// modelledKVDType reports whether a prediction models a valid KV cache
// dtype (BF16 or an FP8 variant); the others are listed, not applied.
func modelledKVDType(s string) bool {
	return s == "auto" || s == "bf16" || s == "bfloat16" || strings.HasPrefix(s, "fp8")
}

// InvalidValues lists every value of v that Settings reads and that is
// out of its engine's range. A prediction refuses such a recipe rather
// than fall back to its own default.
func (v *Variant) InvalidValues() []InvalidValue {
	var out []InvalidValue
	bad := func(key string, val *Value, want string) {
		text := val.Str
		if val.Kind != Scalar {
			text = "a " + val.Kind.String()
		} else {
			text = fmt.Sprintf("%q", text)
		}
		out = append(out, InvalidValue{Key: key, Value: text, Want: want, Line: val.Line})
	}
	set := func(val *Value) bool { return val != nil && val.Kind != Null }
	posInt := func(at string, val *Value) {
		if n, ok := val.Int(); set(val) && (!ok || n < 1) {
			bad(at, val, "a positive integer")
		}
	}
	fraction := func(at string, val *Value) {
		if f, ok := val.Float(); set(val) && (!ok || !(f > 0 && f <= 1)) {
			bad(at, val, "a number in (0, 1]")
		}
	}
	boolean := func(at string, val *Value) {
		if !set(val) {
			return
		}
		switch strings.ToLower(strings.TrimSpace(val.Str)) {
		case "1", "true", "yes", "y", "on", "0", "false", "no", "n", "off":
			if val.Kind == Scalar {
				return
			}
		}
		bad(at, val, "true or false")
	}
	oneOf := func(at string, val *Value, allowed []string, fold bool) {
		if !set(val) {
			return
		}
		for _, a := range allowed {
			if val.Kind == Scalar && (val.Str == a || fold && strings.EqualFold(val.Str, a)) {
				return
			}
		}
		bad(at, val, "one of "+strings.Join(allowed, ", "))
	}
	if p := v.tree.Get("model", "precision"); set(p) {
		oneOf("model.precision", p, recipePrecisions, true)
	}
	for _, k := range []string{"isl", "osl"} {
		posInt("benchmark."+k, v.tree.Get("benchmark", k))
	}
	for _, r := range v.Roles {
		a := r.Args
		at := func(k string) string { return r.ArgsAt + "." + k }
		arg := func(k string) *Value {
			if x := a.Get(k); x != nil {
				return x
			}
			return a.Get(strings.ReplaceAll(k, "-", "_"))
		}
		switch r.Engine {
		case EngineSGLang:
			for _, k := range append(sglangParallelism, "max-running-requests", "cuda-graph-max-bs", "cuda-graph-max-bs-decode",
				"speculative-eagle-topk", "speculative-num-draft-tokens", "max-mamba-cache-size", "page-size") {
				posInt(at(k), arg(k))
			}
			for _, k := range []string{"cuda-graph-bs", "cuda-graph-bs-decode"} {
				if l := arg(k); set(l) && l.Kind == List {
					for i, it := range l.Items {
						posInt(fmt.Sprintf("%s[%d]", at(k), i), it)
					}
				}
			}
			for _, k := range []string{"speculative-num-steps", "speculative-dspark-block-size"} {
				posInt(at(k), arg(k))
			}
			fraction(at("mem-fraction-static"), arg("mem-fraction-static"))
			// chunked-prefill-size -1 turns chunking off (server_args.py).
			if c := arg("chunked-prefill-size"); set(c) {
				if n, ok := c.Int(); !ok || n < 1 && n != -1 {
					bad(at("chunked-prefill-size"), c, "a positive integer, or -1 (chunking off)")
				}
			}
			oneOf(at("kv-cache-dtype"), arg("kv-cache-dtype"), sglangKVDTypes, false)
			oneOf(at("speculative-algorithm"), arg("speculative-algorithm"), sglangSpecAlgos, true)
			oneOf(at("speculative-algo"), arg("speculative-algo"), sglangSpecAlgos, true)
			oneOf(at("mamba-scheduler-strategy"), arg("mamba-scheduler-strategy"), mambaStrategies, false)
			// hicache-ratio is of the device pool (default 2.0);
			// hicache-size is GB per rank, 0 = unset (server_args.py).
			if h := arg("hicache-ratio"); set(h) {
				if f, ok := h.Float(); !ok || !(f > 0) || math.IsInf(f, 0) {
					bad(at("hicache-ratio"), h, "a finite number > 0")
				}
			}
			if h := arg("hicache-size"); set(h) {
				if f, ok := h.Float(); !ok || !(f >= 0) || math.IsInf(f, 0) {
					bad(at("hicache-size"), h, "a finite number of GB >= 0 (0: unset)")
				}
			}
			for _, k := range []string{"enable-dp-attention", "enable-hierarchical-cache", "disable-radix-cache", "disable-cuda-graph"} {
				boolean(at(k), arg(k))
			}
		case EngineVLLM:
			for _, k := range []string{"tensor-parallel-size", "tp", "data-parallel-size", "dp", "pipeline-parallel-size",
				"max-num-seqs", "max-cudagraph-capture-size", "max-num-batched-tokens"} {
				posInt(at(k), arg(k))
			}
			fraction(at("gpu-memory-utilization"), arg("gpu-memory-utilization"))
			oneOf(at("kv-cache-dtype"), arg("kv-cache-dtype"), vllmKVDTypes, false)
			boolean(at("enable-expert-parallel"), arg("enable-expert-parallel"))
			if r.Spec != nil && r.Spec.DraftLengthBad != "" {
				out = append(out, InvalidValue{Key: at(r.Spec.DraftLengthKey), Value: fmt.Sprintf("%q", r.Spec.DraftLengthBad), Want: "a positive integer"})
			}
		case EngineTRTLLM:
			for _, k := range []string{"tensor_parallel_size", "moe_expert_parallel_size", "pipeline_parallel_size", "max_batch_size", "max_num_tokens"} {
				posInt(at(k), a.Get(k))
			}
			posInt(at("cuda_graph_config.max_batch_size"), a.Get("cuda_graph_config", "max_batch_size"))
			if l := a.Get("cuda_graph_config", "batch_sizes"); set(l) && l.Kind == List {
				for i, it := range l.Items {
					posInt(fmt.Sprintf("%s[%d]", at("cuda_graph_config.batch_sizes"), i), it)
				}
			}
			posInt(at("speculative_config.max_draft_len"), a.Get("speculative_config", "max_draft_len"))
			fraction(at("kv_cache_config.free_gpu_memory_fraction"), a.Get("kv_cache_config", "free_gpu_memory_fraction"))
			oneOf(at("kv_cache_config.dtype"), a.Get("kv_cache_config", "dtype"), trtKVDTypes, false)
			// host_cache_size is bytes of host memory per rank (KvCacheConfig).
			if h := a.Get("kv_cache_config", "host_cache_size"); set(h) {
				if n, ok := h.Int(); !ok || n < 0 {
					bad(at("kv_cache_config.host_cache_size"), h, "a whole number of bytes >= 0")
				}
			}
			boolean(at("kv_cache_config.enable_block_reuse"), a.Get("kv_cache_config", "enable_block_reuse"))
			boolean(at("enable_attention_dp"), a.Get("enable_attention_dp"))
		}
	}
	out = append(out, v.invalidDeployment()...)
	return out
}

// invalidDeployment checks the resources srt-slurm allocates (Deployment):
// worker, node and GPU counts are positive integers, and a role's GPUs
// match its layout, per worker or, for a worker spanning nodes, per node.
func (v *Variant) invalidDeployment() []InvalidValue {
	var out []InvalidValue
	bad := func(key string, val *Value, want string) {
		text := fmt.Sprintf("%q", val.Str)
		if val.Kind != Scalar {
			text = "a " + val.Kind.String()
		}
		out = append(out, InvalidValue{Key: key, Value: text, Want: want, Line: val.Line})
	}
	count := func(at string, val *Value) (int, bool) {
		n, ok := val.Int()
		if val != nil && val.Kind != Null && (!ok || n < 1 || n > maxDeploymentCount) {
			bad(at, val, fmt.Sprintf("a whole number in 1..%d", maxDeploymentCount))
			return 0, false
		}
		return n, ok
	}
	res := v.tree.Get("resources")
	count("resources.gpus_per_node", res.Get("gpus_per_node"))
	for _, r := range v.Roles {
		keys := [3]string{"roles." + r.Name + ".workers", "roles." + r.Name + ".nodes", "roles." + r.Name + ".gpus"}
		vals := [3]*Value{}
		if role := v.tree.Get("roles", r.Name); role != nil {
			vals = [3]*Value{role.Get("workers"), role.Get("nodes"), role.Get("gpus")}
		} else {
			keys = [3]string{"resources." + r.Name + "_workers", "resources." + r.Name + "_nodes", "resources.gpus_per_" + r.Name}
			vals = [3]*Value{res.Get(r.Name + "_workers"), res.Get(r.Name + "_nodes"), res.Get("gpus_per_" + r.Name)}
		}
		count(keys[0], vals[0])
		count(keys[1], vals[1])
		gpus, ok := count(keys[2], vals[2])
		if w, what := gpusPerWorker(r); ok && (gpus > w || w%gpus != 0) {
			bad(keys[2], vals[2], fmt.Sprintf("%d, the GPUs of one worker (%s; or its GPUs per node where a worker spans nodes)", w, what))
		}
	}
	return out
}

// maxDeploymentCount bounds workers, nodes and GPUs: far above any
// cluster, low enough that their products cannot overflow.
const maxDeploymentCount = 1 << 20

// gpusPerWorker is the GPUs one instance of r runs on, and the arguments
// that say so: SGLang's DP attention and TensorRT-LLM's attention DP run
// inside the tensor-parallel ranks; SGLang's plain data parallelism and
// vLLM's data-parallel ranks are more GPUs.
func gpusPerWorker(r *Role) (int, string) {
	tp, dp, pp := max(r.TP, 1), max(r.DP, 1), 1
	for _, k := range []string{"pipeline-parallel-size", "pp-size", "pipeline_parallel_size"} {
		if n, err := strconv.Atoi(argValue(r.Args, k)); err == nil && n > 1 {
			pp = n
			break
		}
	}
	if r.Engine == EngineTRTLLM || r.Engine == EngineSGLang && r.DPAttention {
		dp = 1
	}
	return tp * dp * pp, fmt.Sprintf("%s: tensor parallel %d x data parallel %d x pipeline %d", r.ArgsAt, tp, dp, pp)
}
