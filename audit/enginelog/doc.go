// Package enginelog reads serving-engine logs for the numbers a
// speculative-decoding benchmark is judged by.
//
// Decode statistics (decode.go): SGLang "Decode batch" lines, vLLM
// "SpecDecoding metrics" and "Avg generation throughput" lines, and
// TensorRT-LLM iteration lines and iteration-stats JSON. The engines change
// their layouts between versions, so lines are split into "key: value"
// pairs instead of being matched against one fixed pattern. Summaries
// (summary.go) turn the samples into a measured accept-length
// distribution, generation throughput summed over data-parallel ranks,
// running requests over time, and a verdict on whether the measured mean
// agrees with a simulated (golden) target.
//
// Weight loading (load.go): the memory the engine reports after loading
// weights, for checkpoint audits.
//
// Reading is bounded: lines longer than MaxLineBytes are skipped, files are
// streamed, and nothing grows with the size of a log except the samples
// kept.
package enginelog
