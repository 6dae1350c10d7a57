package simulate

import (
	"fmt"

	"github.com/specsim/specsim/kernels"
)

// What the engine modes do to the fixed costs of an
// iteration (the split is in Breakdown.Launch, Gap and Host):
//
//   - CUDA graphs (decode batches up to --cuda-graph-max-bs per rank):
//     one graph launch instead of a host launch per kernel. For SGLang
//     serving a Gated DeltaNet hybrid (countedFixed) that is the measured
//     H200 replay cost (h200GraphLaunch, 9.1 us), each kernel's node being
//     inside its own measured op time; elsewhere the assumed 10 us plus
//     0.05 us per node (kernels.Coster.Launch). Prefill runs eagerly, as
//     SGLang runs Qwen3.5's, and pays the assumed 6 us per launch.
//   - Inter-kernel gaps (layerGap, 25 us per layer and forward): fitted on
//     the DeepSeek TensorRT-LLM B200 rows of testdata/published.yaml and
//     applied to every GPU and engine. For the counted path the output
//     says how much of it the kernels counted at SGLang's source explain
//     (layerGapSplit: about 6-7 us per Qwen3.5 layer at the measured
//     1.06 us per graph node) and the measured cost of running a layer's
//     kernels dependent rather than alone (h200ChainGapMin/Max, 10-16 us
//     per layer). Pricing the gap from the count alone moved the Qwen3.5
//     held-out median from 12.1% to 33.7%, from the measured dependence
//     cost alone (the rule fixed before its run) to 25.1%
//     (published-log.md q12), so the fitted total stays.
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
// and --spec-overhead-ms override them. The measured host cost of one graph
// replay call is 3-12 us (launch_replay.csv), well under either.

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
				if _, s, ok := e.measuredMoEShard(1, dt, c.who == "draft"); ok {
					w := where
					hc := e.Coster
					if h, _ := e.h200Carry(); h != nil {
						hc = h
					}
					// what the table says its figure is (moe_triton_ep8.csv's
					// "# kernels_us:" line: the busiest rank, derived, not timed)
					if n := hc.MoETableNote(s); n != "" {
						w = "on the H200: " + n
						if g.Name != "h200" {
							w = "on the H200, carried over by bandwidth/BF16 ratio: " + n
						}
					}
					notes = append(notes, moeShardNote(c.who, s, e.Model, p, w))
				}
			}
		}
		if r.Model.LinearVHeads > 0 {
			notes = append(notes, "gdn: "+gdnSource(g.Name))
		}
	}
	if e, err := NewEngine(r.Model, &g, p, r.Engine); err == nil {
		if e.FusionNote != "" {
			n := "norms: FlashInfer all-reduce fusion " + e.FusionNote
			if e.AllReduceFusion && e.fusedNorms(1) > 0 {
				n += "; the RMSNorm after each TP all-reduce runs inside it (forwards of up to 2048 tokens)"
			}
			notes = append(notes, n)
		}
		notes = append(notes, lmHeadNote(e))
		if e.EngineName != "sglang" && r.Model.LinearVHeads > 0 {
			// No kernel of another engine was measured for Qwen3.5: its GDN
			// and MoE are priced with what the SGLang rows use.
			notes = append(notes, fmt.Sprintf("gdn: no %s kernel for this model was measured; priced with SGLang's: %s", e.EngineName, gdnSource(g.Name)),
				fmt.Sprintf("moe: no %s MoE kernel for this model was measured; its %s experts are priced as SGLang's non-Triton backends are: %s, at the backend's efficiency %.2f (kernels/data/backends.yaml)",
					e.EngineName, e.TargetBackend, moeSource(e), e.TargetMoEEff))
		}
	}
	notes = append(notes, fixedNotes(r, &g, p, engine)...)
	if r.Engine.SpecV2 && engine == "sglang" {
		notes = append(notes, "host: SGLANG_ENABLE_SPEC_V2=1, speculative iterations on the overlap scheduler (no extra host time by default; assumed, not measured)")
	}
	return notes
}

// moeShardNote says which measured Triton MoE shard prices a rank's
// experts: an EP rank's own shard (E/EP experts, the busiest of EP ranks
// under uniform routing) or the TP shard (every expert at inter/TP).
func moeShardNote(who string, s kernels.MoEShape, m *Model, p Parallel, where string) string {
	if p.EP > 1 && s.Experts < m.Experts {
		inter := fmt.Sprintf("the full inter %d", s.Inter)
		if s.Inter < m.MoEInter {
			inter = fmt.Sprintf("inter %d of %d (MoE TP%d)", s.Inter, m.MoEInter, p.MoETP())
		}
		src := "an EP-shard table"
		if p.EP == 8 {
			src = "kernels/data/h200/moe_triton_ep8.csv"
		}
		return fmt.Sprintf("moe (%s): SGLang Triton fused MoE of one EP%d rank: %d of %d experts at %s, uniform routing (%s), %s",
			who, p.EP, s.Experts, m.Experts, inter, src, where)
	}
	shard := fmt.Sprintf("the TP%d shard", p.TP)
	if p.EP > 1 {
		shard = fmt.Sprintf("the TP%d shard's table (none of the EP%d shard)", p.TP, p.EP)
	}
	return fmt.Sprintf("moe (%s): SGLang Triton fused MoE on %s: all %d experts at inter %d of %d (kernels/data/h200/moe_triton.csv), %s",
		who, shard, s.Experts, s.Inter, m.MoEInter, where)
}

// gdnSource says where SGLang's Gated DeltaNet kernels are priced from on
// GPU gpu.
func gdnSource(gpu string) string {
	if gpu == "h200" {
		return "measured on the H200: chunked prefill (eager), and SGLang v0.5.14's packed decode and fused sigmoid-gating verify (kernels/data/h200)"
	}
	return "chunked prefill measured on the H200, carried over to " + gpu + "; decode and verify on the reference roofline"
}

// moeSource says how the kernel package prices e's routed experts for one
// decode token (a table of this GPU, or the roofline).
func moeSource(e *Engine) string {
	m, p := e.Model, e.Par
	tokens, topk := localRouting(1, m.TopK, p.EP)
	c, err := e.Coster.MoE(kernels.MoEShape{Tokens: tokens, Experts: m.Experts / p.EP, TopK: topk,
		Hidden: m.Hidden, Inter: m.MoEInter / p.MoETP(), DType: e.Target.Experts, Skew: e.MoESkew})
	switch {
	case err != nil:
		return "the reference roofline"
	case c.Source == kernels.SourceCarryOver:
		return "the roofline with another GPU's fitted efficiencies carried over to " + e.GPU.Name + " by datasheet figures"
	case c.Source == kernels.SourceMeasured || c.Source == kernels.SourceExtrapolated:
		return "a kernel table measured on " + e.GPU.Name
	}
	return "the roofline of " + e.GPU.Name
}

// lmHeadNote says what a step's lm_head and sampling pay beyond the GEMM
// over the rank's vocabulary shard.
func lmHeadNote(e *Engine) string {
	at := e.Par.AttentionTP()
	switch {
	case at <= 1 && e.EngineName == "sglang" && e.Par.DPAttention && e.Par.TP > 1:
		return "lm_head + sampling: priced over the whole vocabulary on each attention-DP rank, no collective; SGLang without --enable-dp-lm-head gathers the DP ranks' hidden states, runs the lm_head vocabulary-parallel over all ranks and all-gathers the logits (layers/logits_processor.py _gather_dp_attn_hidden_states, _scatter_dp_attn_logits): not priced"
	case at <= 1:
		return "lm_head + sampling: the whole vocabulary on each attention rank (no gather)"
	case e.EngineName == "sglang":
		return fmt.Sprintf("lm_head + sampling: SGLang all-gathers every row's BF16 logits over the whole vocabulary on each of the %d attention-TP ranks (%d of %d columns from each; layers/logits_processor.py LogitsProcessor._get_logits -> tensor_model_parallel_all_gather), copies them to an FP32 buffer (_copy_logits_to_buffer: read 2, write 4 bytes per entry) and samples over all of them (4 bytes per entry read, the rank's own shard already priced with its GEMM)",
			at, ceilDiv(e.Model.Vocab, at), e.Model.Vocab)
	}
	return fmt.Sprintf("lm_head + sampling: each of the %d ranks samples its vocabulary shard and all-gathers 8 bytes per row (its best candidate); assumed, not read at %s's source", at, e.EngineName)
}

// fixedNotes says where a deployment's launches and layer gaps come from.
func fixedNotes(r *Resolved, g *kernels.GPU, p Parallel, engine string) []string {
	fitted := fmt.Sprintf("layer gaps: %.0f us per layer and forward, fitted on DeepSeek TensorRT-LLM B200 rows and carried over to %s/%s", layerGap*1e6, g.Name, engine)
	e, err := NewEngine(r.Model, g, p, r.Engine)
	if err != nil || !e.countedFixed() {
		return []string{fitted, "launches: assumed (graph replay 10 us + 0.05 us per node; eager 6 us per kernel)"}
	}
	counted, total, host, nodes := e.layerGapSplit()
	slots := e.criticalKernels()
	where := e.launchNote()
	return []string{
		fmt.Sprintf("launches: a CUDA-graph forward pays one replay, %.1f us (%s; kernels/data/h200/launch_replay.csv)", h200GraphLaunch*1e6, where),
		fmt.Sprintf("layer gaps: %.2f ms per forward, the fitted %.0f us per layer carried over from DeepSeek TensorRT-LLM rows; what measurements explain of it: %.2f ms for %d kernels per forward that SGLang v0.5.14 launches and no op prices (counted at the source, simulate/fixedcost.go hybridKernels; %.2f us per graph node, %s, launch.csv), and %.2f-%.2f ms for the %d kernels on the layers' critical paths running dependent rather than alone (%.2f-%.2f us per kernel at 1-64 tokens, a stand-in layer chain %s, chain.csv); %.2f-%.2f ms is unexplained",
			total*1e3, layerGap*1e6, counted*1e3, nodes, h200GraphNode*1e6, where, slots*h200ChainGapMin*1e3, slots*h200ChainGapMax*1e3, int(slots), h200ChainGapMin*1e6, h200ChainGapMax*1e6, where,
			(total-counted-slots*h200ChainGapMax)*1e3, (total-counted-slots*h200ChainGapMin)*1e3),
		fmt.Sprintf("prefill (eager): launches priced as assumed (14 per layer x 6 us); issuing the counted kernels at the measured bare launch prices (%.1f / %.1f / %.1f us for cuBLAS / Triton / torch) takes at least %.1f ms per forward (%s; SGLang's Python per-kernel work not measured)",
			h200EagerGEMM*1e6, h200EagerTriton*1e6, h200EagerTorch*1e6, host*1e3, where),
	}
}

// Launch costs measured on the H200 (kernels/collect/collect_launch.py,
// tables kernels/data/h200/launch.csv and launch_replay.csv; torch 2.11,
// triton 3.6; TestLaunchConstantsMatchTables reads them back). Other GPUs
// carry these over: no launch table of another GPU exists.
const (
	// h200GraphNode: GPU time per node of a replayed CUDA graph of one-block
	// Triton kernels (triton_1block, 1000 nodes): the whole cost of a small
	// kernel inside a graph, launch gap included.
	h200GraphNode = 1.059e-6
	// h200GraphLaunch: GPU time of a graph replay beyond its nodes, the
	// intercept of the line through the 1000- and 3000-node replays of
	// launch_replay.csv (triton_1block).
	h200GraphLaunch = 9.12e-6
	// Host time per eager launch, issued back to back (1000 launches):
	// a bf16 linear (cuBLAS), a one-block Triton kernel, a torch
	// elementwise op.
	h200EagerGEMM   = 20.02e-6
	h200EagerTriton = 14.01e-6
	h200EagerTorch  = 9.74e-6
)

// countedFixed reports whether a forward's fixed costs come from kernel
// counts read at the engine's source (hybridKernels) and the measured launch
// table, rather than the layer gap fitted on DeepSeek TensorRT-LLM rows:
// SGLang serving a Gated DeltaNet hybrid (Qwen3.5, Qwen3-Next), the only
// family whose kernels were counted.
func (e *Engine) countedFixed() bool {
	return e.EngineName == "sglang" && e.Model.LinearVHeads > 0 && e.Model.FullAttnInterval > 1
}

// hybridKernels counts the kernels of a Qwen3.5 layer as SGLang v0.5.14
// (the InferenceX Qwen3.5 image, lmsysorg/sglang:v0.5.14-cu130) launches them
// on CUDA. Sources, python/sglang/srt/:
//
//   - GDN layer, models/qwen3_5.py Qwen3_5GatedDeltaNet.forward: in_proj_qkvz
//     (activation quant + GEMM when quantized; in_proj_ba runs on the alt
//     stream during graph capture, _forward_input_proj),
//     fused_qkvzba_split_reshape_cat_contiguous, then
//     layers/attention/linear/gdn_backend.py GDNAttnBackend.forward_decode:
//     causal_conv1d_update and TritonGDNKernel.packed_decode (gating fused);
//     forward_extend for verify (causal_conv1d_update + target_verify) and
//     prefill (causal_conv1d_fn, fused_qkv_split_gdn_prefill,
//     fused_gdn_gating, chunk_gated_delta_rule); then the gated RMSNorm
//     (self.norm) and out_proj.
//   - Full-attention layer, Qwen3_5AttentionDecoderLayer.self_attention:
//     qkv_proj, the q reshape of the gated split (a copy), q_norm and k_norm
//     (k_norm on the alt stream during capture, _apply_qk_norm),
//     rotary_emb, the KV-cache write and the attention kernel
//     (RadixAttention), fused_sigmoid_mul of the output gate, o_proj.
//   - MoE, models/qwen2_moe.py Qwen2MoeSparseMoeBlock.forward: during
//     capture the shared expert runs beside the router and routed experts
//     (forward_normal_dual_stream), then fused_gate_sigmoid_mul_add; the
//     Triton path (layers/moe/fused_moe_triton/fused_moe.py
//     fused_experts_impl) adds moe_align_block_size and, for quantized
//     experts, the quantization of the intermediate activations.
//   - Every forward: embed_tokens and the final norm; the MTP draft
//     (models/qwen3_5_mtp.py forward) adds embed_tokens, pre_fc_norm_embedding,
//     pre_fc_norm_hidden, the concat and its final norm around one
//     full-attention MoE layer.
//
// unpriced are the kernels on a graph's critical path that no op of
// layerCost prices (each op's measured time already holds its own node):
// GDN split + gated norm (+ out_proj's quant), full-attention q copy + KV
// write + output gate (+ o_proj's quant; auxKernels prices one quant per
// layer and rope with the KV write as one), MoE gate-mul-add (+ Triton's
// align and intermediate quant). They cost one measured graph node each.
//
// The eager counts are every host launch of a layer, by launch path, for
// prefill (SGLang runs Qwen3.5 prefill eagerly: the architecture is in
// configs/model_config.py's multimodal list, which
// server_args.py _disable_tc_piecewise_cudagraph_if_incompatible takes off
// the piecewise prefill graph) except the chunked GDN kernel, whose measured
// eager time (gdnEagerFloor) holds its own launches.
type hybridKernels struct {
	unpriced                           float64
	eagerGEMM, eagerTriton, eagerTorch int
}

func (e *Engine) hybridLayer(full bool, w WeightDTypes, moeBackend string) hybridKernels {
	var k hybridKernels
	quant := 0
	if w.Attention != kernels.BF16 {
		quant = 1
	}
	if full {
		k.unpriced = float64(3 + quant)
		k.eagerGEMM = 2
		k.eagerTriton = 2 + 2*quant + 2 + 1 + 1 + 1 // input norm, 2 norms, rope, KV write, attention, gate
		k.eagerTorch = 1
	} else {
		k.unpriced = float64(2 + quant)
		k.eagerGEMM = 3
		k.eagerTriton = 1 + 3*quant + 1 + 1 + 1 + 1 + 1 // input norm, split, conv, qkv split, gating, gated norm
		k.eagerTorch = 1
	}
	if e.Model.Experts > 0 {
		k.unpriced++
		routed := 3 // quantize, fused kernel(s), finalize
		if moeBackend == "triton" {
			k.unpriced++
			routed = 5 // align, gate_up, act_and_mul, down, sum
			if w.Experts != kernels.BF16 {
				k.unpriced++
				routed += 2
			}
		}
		k.eagerGEMM += 3                                  // router, shared gate_up, shared down
		k.eagerTriton += 1 + 1 + 1 + 2*quant + routed + 1 // post norm, top-k, act, quants, experts, gate
	}
	if e.Par.TP > 1 {
		k.eagerTriton += 2 // the layer's two all-reduces
	}
	return k
}

// launchNote says where a GPU's launch prices come from.
func (e *Engine) launchNote() string {
	if e.GPU.Name == "h200" {
		return "measured on the H200"
	}
	return "measured on the H200, carried over to " + e.GPU.Name
}

// addForwardFixed books the fixed costs of one target forward of shape s.
// On the counted path a forward replayed as a CUDA graph pays the measured
// replay cost (h200GraphLaunch) for launches: every kernel's own node time
// is inside its measured op time. The layer gap stays the fitted layerGap
// (see layerGapSplit for how much of it the counted kernels explain), and
// eager forwards keep the assumed launch price (published-log.md q12 says
// why).
func (e *Engine) addForwardFixed(b *Breakdown, s shape) {
	m := e.Model
	gap := float64(m.Layers) * e.LayerGap
	if e.countedFixed() && e.graphed(s) {
		b.addOverhead(h200GraphLaunch, gap, 0)
		return
	}
	b.addOverhead(e.launch(m.Layers*14+6, s), gap, 0)
}

// draftFixed prices the fixed costs of one MTP draft forward.
func (e *Engine) draftFixed(s shape) float64 {
	gap := float64(max(e.Model.Draft.Layers, 1)) * e.LayerGap
	if e.countedFixed() && e.graphed(s) {
		return h200GraphLaunch + gap
	}
	return e.launch(20, s) + gap
}

// graphed reports whether a forward of shape s replays a CUDA graph.
func (e *Engine) graphed(s shape) bool {
	return !s.prefill && ceilDiv(s.seqs, e.Par.AttentionDP()) <= e.CUDAGraphMaxBS
}

// layerGapSplit says how much of a target forward's layer gaps the counted
// kernels explain: the kernels no op prices, one measured graph node each
// (counted), against the fitted total; and the host time of issuing the
// forward's kernels eagerly at the measured bare launch prices (a lower
// bound: SGLang's Python per-kernel work is not in it).
func (e *Engine) layerGapSplit() (counted, fitted, eagerHost float64, nodes int) {
	var n float64
	for _, k := range e.kinds().kinds {
		h := e.hybridLayer(e.Model.isFullAttention(k.first), e.Target, e.TargetBackend)
		n += float64(k.n) * h.unpriced
		eagerHost += float64(k.n) * (float64(h.eagerGEMM)*h200EagerGEMM + float64(h.eagerTriton)*h200EagerTriton + float64(h.eagerTorch)*h200EagerTorch)
	}
	n += 2                                                            // embed_tokens, final norm
	eagerHost += 2*h200EagerTorch + h200EagerGEMM + 2*h200EagerTriton // embed, final norm, lm_head, sampling
	return n * h200GraphNode, float64(e.Model.Layers) * e.LayerGap, eagerHost, int(n)
}

// The measured dependence cost of a decode layer's kernels: a CUDA graph of
// eight stand-in Qwen3.5 GDN+MoE layers (18 ops each) against the sum of
// those ops timed alone as the op tables are, per op, over 1-64 tokens
// (kernels/collect/collect_chain.py, kernels/data/h200/chain.csv:
// 0.623 / 0.745 / 0.538 us at 1 / 16 / 64 tokens). Reported, not priced:
// pricing the layer gap from it (kernels/collect/NOTES.md Round 4) moved the
// Qwen3.5 held-out median to 25.1% (published-log.md q12).
const (
	h200ChainGapMin = 0.538e-6
	h200ChainGapMax = 0.745e-6
)

// criticalKernels counts the kernels on the critical paths of a forward's
// layers as counted at SGLang's source: 18 per GDN+MoE layer, 21 per
// full-attention+MoE layer (hybridKernels).
func (e *Engine) criticalKernels() float64 {
	n := 0.0
	for _, k := range e.kinds().kinds {
		c := 18.0
		if e.Model.isFullAttention(k.first) {
			c = 21
		}
		n += float64(k.n) * c
	}
	return n
}
