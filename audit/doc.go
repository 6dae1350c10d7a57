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
// dotted components) match them; the model-specific overrides in the
// engines' MTP code (SGLang builds the Qwen3.5 and DeepSeek NextN drafts
// without the NVFP4 quant config, vLLM forces mtp.fc unquantized); and the
// parameters the engines allocate per rank (TP, EP, DP attention,
// vocab-parallel embedding padded to 64 rows, K/V heads replicated past
// their count, replicated routers, norms and fusion projections, the
// draft's own embedding and lm_head in SGLang).
//
// Memory is reported the way each engine logs it: SGLang's "mem usage"
// is the drop in free device memory, so the draft's figure includes the
// CUDA caching allocator's segment rounding (see allocatorFootprint);
// vLLM's "Model loading took" counts allocated bytes. The target model's
// size is the shipped tensor bytes laid out over ranks, without kernel
// repacking (swizzled NVFP4 block scales and the like).
package audit
