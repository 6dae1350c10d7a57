// Package acceptance draws accepted lengths per verify step the way serving
// engines do when they simulate speculative acceptance.
//
// Benchmarks such as InferenceX AgentX run the real draft and verify
// kernels but override how many draft tokens each verify step accepts, so
// that the mean accepted length L (bonus token included) matches a golden
// value. The engines differ in who shares a draw and in how they round:
// SGLang draws one length per verify step for the whole batch, vLLM and
// TensorRT-LLM per request; SGLang's "multinomial" method is biased. Those
// differences change how the batch's work is spread, so a throughput model
// has to sample the way the engine it models samples. Each sampler's doc
// comment names the engine source its semantics come from.
//
// Every sampler is seeded (math/rand/v2 PCG) and reproducible, draws in
// constant time per length, and does not allocate in Step.
package acceptance
