// Package audit checks a checkpoint directory from its metadata alone:
// config.json, hf_quant_config.json, model.safetensors.index.json and the
// safetensors headers. It never reads a weight and never writes into the
// directory.
//
// Reviewers of speculative-decoding benchmarks have to show that the MTP
// draft head ships in BF16, that the serving engine loads it as BF16 (the
// quant config's exclude list and the engine's own overrides decide that),
// and what it costs per GPU. Audit answers the three questions from the same
// facts the engines act on: tensor names, dtypes and shapes; exclude
// patterns matched the way vLLM (fnmatch) and SGLang (glob to regex, plus
// dotted components) match them; and the parallel layouts the engines
// allocate (TP, EP, DP attention, vocab-parallel embedding with padding,
// replicated KV heads).
package audit
