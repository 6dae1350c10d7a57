package simulate

import (
	"fmt"

	"github.com/specsim/specsim/kernels"
)

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

// CostNotes says where the fixed costs and collectives of a deployment's
// decode step come from, for the prediction's output: figures taken from
// other parties' public measurements are labelled as such.
func (r *Resolved) CostNotes(t Topology) []string {
	p := t.Agg
	if t.Disagg {
		p = t.Decode
	}
	g := *r.GPU.GPU
	if r.GPU.GPUsPerNode > 0 {
		g.NVLinkDomain = r.GPU.GPUsPerNode
	}
	engine := r.Engine.EngineName
	if engine == "" {
		engine = "sglang"
	}
	var notes []string
	if engine == "sglang" && p.TP > 1 && !p.DPAttention {
		c := kernels.NewCoster(&g)
		if ar, ok := c.CustomAllReduce(float64(p.TP*r.Model.Hidden)*2, p.TP); ok && ar.Source == kernels.SourcePublished {
			notes = append(notes, fmt.Sprintf("communication: SGLang custom all-reduce at TP%d priced from public figures (8x H100, sgl-project/sglang#2904), scaled by NVLink bandwidth; not measured here", p.TP))
		}
		if r.Engine.AllReduceFusion {
			notes = append(notes, "norms: the RMSNorm after each all-reduce runs inside FlashInfer's fused all-reduce (forwards of up to 2048 tokens)")
		}
	}
	if e, err := NewEngine(r.Model, &g, p, r.Engine); err == nil && e.EngineName == "sglang" {
		where := "measured on the H200"
		if g.Name != "h200" {
			where = "measured on the H200, carried over by bandwidth/BF16 ratio"
		}
		for _, c := range []struct {
			who, backend string
			on           bool
		}{{"target", e.TargetBackend, true}, {"draft", e.DraftBackend, r.Q.Spec == "mtp"}} {
			if c.on && c.backend == "triton" {
				dt := e.Target.Experts
				if c.who == "draft" {
					dt = e.Draft.Experts
				}
				if _, ok := e.measuredMoE(1, dt, c.who == "draft"); ok {
					notes = append(notes, fmt.Sprintf("moe (%s): SGLang Triton fused MoE, %s", c.who, where))
				}
			}
		}
		if r.Model.LinearVHeads > 0 {
			notes = append(notes, "gdn: SGLang chunked prefill (eager) and decode kernels "+where+"; verify on the roofline")
		}
	}
	notes = append(notes, fmt.Sprintf("layer gaps: %.0f us per layer and forward, fitted on DeepSeek TensorRT-LLM B200 rows and carried over to %s/%s", layerGap*1e6, g.Name, engine))
	if r.Engine.SpecV2 && engine == "sglang" {
		notes = append(notes, "host: SGLANG_ENABLE_SPEC_V2=1, speculative iterations on the overlap scheduler (no extra host time by default)")
	}
	return notes
}
