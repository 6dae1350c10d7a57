package simulate

import "fmt"

// engineLayouts is which instance layouts one serving engine deploys, as
// read at the engine's source. The sweep enumerates only these.
type engineLayouts struct {
	// partialEP: experts spread over fewer ranks than the TP group
	// (tpNepM, M < N; the rest of the group splits each expert).
	partialEP bool
	// wholeEP: expert parallelism can only span the whole instance (a
	// partial tpNepM does not deploy at all).
	wholeEP bool
	// ppSpecAgg: pipeline stages on an aggregated instance that also runs
	// speculative decoding; ppSpecPrefill: the same on a disaggregated
	// prefill worker (which runs the draft's first step).
	ppSpecAgg, ppSpecPrefill bool
	// ppDecode: pipeline stages on a disaggregated decode worker.
	ppDecode bool
	// why is the source of the rules, for the sweep's skipped list;
	// whyEP and whyPP are the expert-parallel and pipeline-parallel rule
	// alone, for a refusal that names the rule it breaks.
	why, whyEP, whyPP string
}

// layoutsOf returns the layout rules of engine ("" is SGLang).
//
// SGLang (python/sglang/srt/server_args.py): tensor parallel, expert
// parallel inside the TP group (--ep-size; distributed/parallel_state.py
// initialize_model_parallel: moe_tp_size = tp // moe_ep // moe_dp) and DP
// attention (--enable-dp-attention with dp = tp, "DEP"). ServerArgs.
// check_server_args refuses pp_size > 1 with a speculative algorithm;
// newer releases admit it only with --disaggregation-mode prefill. Partial
// EP (ep < tp) runs, but the sweep keeps SGLang's enumeration to ep = tp as
// its recipes deploy it.
//
// vLLM (vllm/model_executor/layers/fused_moe/config.py,
// FusedMoEParallelConfig.make): with --enable-expert-parallel the experts
// are spread over every rank of the instance (ep_size = dp x tp, MoE TP 1),
// so EP is never partial: tpNepN, or DEP with --data-parallel-size N. PP
// needs a model that implements SupportsPP; with speculative decoding it
// was not read at the source, so it is not enumerated.
//
// TensorRT-LLM (tensorrt_llm/mapping.py, Mapping; the LLM API derives
// moe_tp_size = tp_size // moe_ep_size when only one is given): moe_tp_size
// x moe_ep_size = tp_size, so EP may be partial; enable_attention_dp is DEP.
// PP with MTP was not read at the source, so it is not enumerated.
//
// All three deploy disaggregated prefill and decode pools (SGLang
// --disaggregation-mode; vLLM's kv-transfer-config NixlConnector and
// TensorRT-LLM's cache_transceiver_config, as srt-slurm's recipes for them
// configure). No engine's disaggregated recipes run PP on decode workers, and SGLang's
// decode worker with speculation cannot (check_server_args above).
func layoutsOf(engine string) engineLayouts {
	switch engine {
	case "vllm":
		ep := "vllm: expert parallelism spans the whole instance (fused_moe/config.py FusedMoEParallelConfig.make)"
		pp := "vllm: pipeline parallel with speculative decoding is not enumerated (not read at vLLM's source)"
		return engineLayouts{wholeEP: true, why: ep + "; " + pp[len("vllm: "):], whyEP: ep, whyPP: pp}
	case "trtllm":
		pp := "trtllm: pipeline parallel with MTP is not enumerated (not read at TensorRT-LLM's source)"
		return engineLayouts{partialEP: true, why: pp, whyPP: pp}
	}
	pp := "sglang: pipeline parallel with speculative decoding only on disaggregated prefill workers (server_args.py check_server_args)"
	return engineLayouts{ppSpecPrefill: true, why: pp, whyPP: pp}
}

// runs reports whether the engine deploys topology t with draft length k.
func (l engineLayouts) runs(t Topology, k int) bool { return l.broken(t, k) == "" }

// broken is the rule t with draft length k breaks ("" when it deploys).
func (l engineLayouts) broken(t Topology, k int) string {
	for _, p := range []Parallel{t.Agg, t.Prefill, t.Decode} {
		if l.wholeEP && p.EP > 1 && p.EP < p.TP {
			return l.whyEP
		}
	}
	if !t.Disagg {
		if t.Agg.PP == 1 || k == 0 || l.ppSpecAgg {
			return ""
		}
		return l.whyPP
	}
	if t.Decode.PP > 1 && !l.ppDecode {
		return "pipeline parallel on disaggregated decode workers is not deployed: no engine's disaggregated recipes run it, and SGLang's decode worker with speculation cannot (server_args.py check_server_args)"
	}
	if t.Prefill.PP == 1 || k == 0 || l.ppSpecPrefill {
		return ""
	}
	return l.whyPP
}

// instanceShapes lists the layouts of one instance of at most gpus GPUs
// that the engine deploys for model m. A layout the engine would run as
// another one is left out: expert parallelism on a model without experts is
// plain TP.
func (l engineLayouts) instanceShapes(gpus int, m *Model) []Parallel {
	moe := m == nil || m.Experts > 0
	var shapes []Parallel
	for tp := 1; tp <= gpus; tp *= 2 {
		shapes = append(shapes, Parallel{TP: tp, EP: 1, PP: 1})
		if tp > 1 && moe {
			if l.partialEP {
				for ep := 2; ep < tp; ep *= 2 {
					shapes = append(shapes, Parallel{TP: tp, EP: ep, PP: 1})
				}
			}
			shapes = append(shapes, Parallel{TP: tp, EP: tp, PP: 1})
		}
		if tp > 1 {
			shapes = append(shapes, Parallel{TP: tp, EP: tp, PP: 1, DPAttention: true})
		}
		for pp := 2; tp*pp <= gpus && pp <= 8; pp *= 2 {
			shapes = append(shapes, Parallel{TP: tp, EP: 1, PP: pp})
		}
	}
	return shapes
}

// nodeSpan is how many nodes of node GPUs each the largest instance of t
// spans (1 when every instance fits in one node).
func nodeSpan(t Topology, node int) int {
	g := t.Agg.GPUs()
	if t.Disagg {
		g = max(t.Prefill.GPUs(), t.Decode.GPUs())
	}
	node = max(node, 1)
	return (g + node - 1) / node
}

// EngineRuns returns nil when engine deploys topology t with draft length
// k, otherwise why not (see layoutsOf for the sources).
func EngineRuns(engine string, t Topology, k int) error {
	why := layoutsOf(engine).broken(t, k)
	if why == "" {
		return nil
	}
	return fmt.Errorf("%s at k %d: %s", t, k, why)
}

// InstanceNodes is how many hosts (GPUSpec.Node GPUs each) t's largest
// instance spans; more than one needs a multi-node launch, which sweep
// marks "multi-node".
func (r *Resolved) InstanceNodes(t Topology) int {
	return nodeSpan(t, r.GPU.Node())
}
