package simulate

// What the engine modes do to the fixed costs of an
// iteration (the split is in Breakdown.Launch, Gap and Host):
//
//   - CUDA graphs (decode batches up to --cuda-graph-max-bs per rank):
//     one graph launch plus a per-node cost instead of a host launch per
//     kernel (kernels.Coster.Launch). Prefill runs eagerly, as SGLang runs
//     it, and pays every launch.
//   - Inter-kernel gaps (layerGap, 25 us per layer and forward): fitted on
//     the DeepSeek TensorRT-LLM B200 rows of testdata/published.yaml and
//     applied unchanged to every GPU and engine; no kernel trace of another
//     GPU family or engine was available to derive one per family, so it
//     is reported as its own line to show how much of a step rests on it.
//   - Host scheduling (SchedOverhead, 0.15 ms): what SGLang's overlap
//     scheduler leaves exposed for plain decode; it prepares batch N+1 on
//     the CPU while the GPU runs batch N (scheduler.py
//     event_loop_overlap). Speculative decoding without SGLANG_ENABLE_SPEC_V2
//     runs on the non-overlapped loop, which serialises the draft, verify
//     and draft-extend hand-offs: SpecOverhead 0.35 ms more. With
//     SGLANG_ENABLE_SPEC_V2=1 (EAGLE topk 1 on the overlap scheduler, "Speculative
//     Decoding V2 (Overlap Scheduler)" in SGLang's speculative decoding
//     docs) those hand-offs overlap like plain decode: SpecOverhead 0.
//
// Both host figures are assumptions, not measurements; --sched-overhead-ms
// and --spec-overhead-ms override them.

// addOverhead books fixed costs into Overhead and its split.
func (b *Breakdown) addOverhead(launch, gap, host float64) {
	b.Launch += launch
	b.Gap += gap
	b.Host += host
	b.Overhead += launch + gap + host
}
