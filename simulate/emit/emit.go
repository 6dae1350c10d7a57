// Package emit writes srt-slurm recipes for deployments specsim
// simulates: one recipe for a topology, draft length and concurrency
// (specsim recipe emit), or one per interactivity frontier point of a
// sweep (specsim sweep --emit), in SGLang, vLLM or TensorRT-LLM argument
// spelling. Values that depend on the cluster are left as FillIn.
package emit

import (
	"cmp"
	"fmt"
	"strconv"
	"strings"

	"github.com/specsim/specsim/simulate"
	"github.com/specsim/specsim/simulate/acceptance"
	"github.com/specsim/specsim/simulate/agentx"
)

// FillIn marks a value the user must set for their cluster.
const FillIn = "FILL-IN"

// Recipe renders an srt-slurm schema-2 recipe for topology t at
// concurrency conc and draft length k, in the argument spelling of the
// query's engine (SGLang and vLLM CLI flags, TensorRT-LLM's LLM API
// config). A disaggregated prefill role gets the speculative arguments
// only with the query's Server.PrefillDraft, as the simulation loads the
// draft there (the AgentX base recipe's prefill role has none). version names the writer in the header comment, note goes
// into it. A layout the engine does not deploy (simulate.EngineRuns) is
// refused.
func Recipe(r *simulate.Resolved, t simulate.Topology, conc, k int, version, note string) (string, error) {
	engine := strings.ToLower(orDefaultStr(r.Q.Engine, "sglang"))
	switch engine {
	case "sglang", "vllm", "trtllm":
	default:
		return "", &simulate.Error{Field: "Engine", Value: r.Q.Engine, Reason: "recipe emit writes sglang, vllm and trtllm recipes"}
	}
	if err := simulate.EngineRuns(engine, t, k); err != nil {
		return "", err
	}
	// The acceptance the recipe is written for, and where it comes from:
	// a golden curve, the user's --al, or a histogram's mean.
	var acc acceptance.Point
	if k > 0 {
		var err error
		if acc, err = r.Target.At(k); err != nil {
			return "", err
		}
	}
	// The running caps the simulation deploys each role with (the
	// replay's or closed loop's rule where the query gives none), so that
	// predict --recipe reads back what was simulated.
	sc, err := r.Scenario(t, conc, k)
	if err != nil {
		return "", err
	}
	plan, err := simulate.NewPlan(sc, r.GPU)
	if err != nil {
		return "", err
	}
	firstRunning, decodeRunning := plan.DeployedMaxRunning()
	// GPUs per Slurm node: the catalog's host size (4 per Grace-Blackwell
	// compute tray, 8 per HGX board; the NVLink domain can be larger).
	perNode := r.GPU.Node()
	var b strings.Builder
	w := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	w("# srt-slurm recipe written by specsim %s for %s on %s (%s).\n", version, t, strings.ToUpper(r.GPU.GPU.Name), engine)
	if note != "" {
		w("# %s\n", note)
	}
	// AgentX's synthetic acceptance injects the golden AL of the served
	// model's curve; for a model without one there is nothing to inject,
	// so the speculative roles set the AL themselves (handSet: the
	// variables AgentX would inject, at acc.AL).
	// A fixed-length benchmark (sa-bench) is not AgentX: nothing injects
	// an AL, the engine measures real acceptance, and the golden AL is
	// only the expectation the prediction assumes (recipe check:
	// not-agentic).
	agentx := r.Workload.Name == "agentx"
	handSet := 0.0
	if k > 0 && r.GoldenKey == "" {
		handSet = acc.AL
		w("# Speculation: MTP, %d draft steps at the AL %.2f (%s). No golden curve exists for\n", k, acc.AL, acceptanceSource(r.Target, acc))
		if agentx {
			w("# %s, so AgentX's synthetic acceptance has no AL to inject: the speculative roles set it.\n", r.Model.Name)
		} else {
			w("# %s; the speculative roles force it (sa-bench injects none).\n", r.Model.Name)
		}
	} else if k > 0 && !agentx {
		w("# Speculation: MTP, %d draft steps. sa-bench is not AgentX: nothing injects an AL and the\n", k)
		w("# engine measures real acceptance; the prediction assumes the AL %.2f\n# (%s), an expectation, not injected.\n", acc.AL, acceptanceSource(r.Target, acc))
	} else if k > 0 && r.Target.Curve == nil {
		w("# Speculation: MTP, %d draft steps, sized at the AL %.2f (%s); AgentX synthetic\n", k, acc.AL, acceptanceSource(r.Target, acc))
		w("# acceptance injects the golden AL of %s at this draft length instead.\n", r.GoldenKey)
	} else if k > 0 {
		w("# Speculation: MTP, %d draft steps; AgentX synthetic acceptance injects the AL %.2f\n", k, acc.AL)
		w("# (%s) at this draft length.\n", acceptanceSource(r.Target, acc))
	}
	tier := simulatedHostTier(r)
	if limits := plan.Limits(); tier != nil && len(limits) > 0 && limits[0].HostTokens == 0 {
		tier = nil // the engine's role that prefills got none (vLLM: poolConfig)
	}
	switch {
	case tier != nil && !(engine == "sglang" || engine == "trtllm" && tier.ratio == 0):
		w("# The simulation gave the role that prefills a host KV tier (%s) this %s recipe does not\n# carry: predict --recipe on it runs without one.\n", tier, engine)
	case tier != nil && tier.ratio > 0 && agentx:
		w("# The simulation sized the host KV tier at hicache-ratio %s; InferenceX's AgentX launcher\n# passes hicache-size (%.0f%% of host DRAM per GPU), which wins, and predict --recipe simulates that.\n",
			strconv.FormatFloat(tier.ratio, 'f', -1, 64), 100*simulate.AgentXDRAMUtilization)
	}
	w("# Set every %s value for your cluster before submitting.\n", FillIn)
	w("schema: 2\n")
	w("name: specsim-%s-%s-%s-c%d-k%d\n", engine, r.GPU.GPU.Name, strings.NewReplacer(":", "-", "+", "-").Replace(t.String()), conc, k)
	w("model:\n  path: %s  # checkpoint location on the cluster\n  container: %s  # srt-slurm container alias or image\n  precision: %s\n", FillIn, FillIn, r.Precision)
	w("identity:\n  model:\n    repo: %s\n", r.Model.Name)
	w("slurm:\n  account: %s\n  partition: %s\n  time_limit: '4:00:00'\n", FillIn, FillIn)
	w("resources:\n  gpu_type: %s\n  gpus_per_node: %d  # check against your cluster's nodes\n", r.GPU.GPU.Name, perNode)
	w("engine: %s\nroles:\n", engine)
	mf := r.Q.MemFraction
	if mf == 0 {
		mf = simulate.DefaultMemFraction
	}
	chunk := r.Q.Chunk
	if chunk == 0 {
		chunk = simulate.DefaultChunk
	}
	role := func(name string, workers int, p simulate.Parallel, mode string) {
		nodes := max(1, (p.GPUs()+perNode-1)/perNode)
		w("  %s:\n    nodes: %d\n    workers: %d\n    gpus: %d\n    args:\n", name, nodes*workers, workers, min(p.GPUs(), perNode))
		running := firstRunning
		if mode == "decode" {
			running = decodeRunning
		}
		// vLLM's max-num-seqs is per DP engine (each DP rank is its own
		// engine core with its own scheduler: vLLM
		// docs/serving/data_parallel_deployment.md, vllm/v1/engine/core.py
		// DPEngineCoreProc) and TensorRT-LLM's max_batch_size is per
		// attention-DP rank (each rank's PyExecutor schedules its own
		// batch); SGLang's max-running-requests is instance-wide and
		// divided by dp_size. The CUDA graph size, per rank, is the one
		// the simulation replayed.
		if dp := p.AttentionDP(); dp > 1 && engine != "sglang" && running > 0 {
			running = (running + dp - 1) / dp
		}
		graphBS := cmp.Or(r.Q.CUDAGraphMaxBS, simulate.DefaultCUDAGraphMaxBS)
		// The batch a rank may run: the written cap, or where none is
		// written the one the simulation ran under (SGLang floors the
		// division over the ranks; vLLM's and TensorRT-LLM's caps are
		// written per rank).
		perRank := running
		if limits := plan.Limits(); running == 0 && len(limits) > 0 {
			perRank = limits[len(limits)-1].Running / p.AttentionDP()
		} else if engine == "sglang" {
			perRank = running / p.AttentionDP()
		}
		if mode != "prefill" && perRank > graphBS {
			warns := ""
			if running > 0 {
				warns = " (recipe check warns)"
			}
			w("      # decode batches above %d per rank run without CUDA graphs, as simulated%s;\n      # --cuda-graph-max-bs sets both the simulation's and this recipe's graph size\n", graphBS, warns)
		}
		spec := k > 0 && (mode != "prefill" || r.Q.Server.PrefillDraft)
		al := 0.0
		if spec {
			al = handSet
		}
		roleMF := mf
		if mode == "prefill" && r.Q.Server.PrefillMemFraction > 0 {
			roleMF = r.Q.Server.PrefillMemFraction
		}
		// The engine's automatic share, as the simulation computed it for
		// the role (SGLangAutoMemFraction): the recipe deploys that share.
		if limits := plan.Limits(); r.Q.Server.AutoMemFraction && len(limits) > 0 {
			l := limits[0]
			if mode == "decode" {
				l = limits[len(limits)-1]
			}
			roleMF = l.Fraction
		}
		switch engine {
		case "sglang":
			emitSGLangArgs(w, r, p, mode, k, running, graphBS, roleMF, chunk)
			if tier != nil && mode != "decode" {
				tier.emitSGLang(w)
			}
		case "vllm":
			emitVLLMArgs(w, r, p, mode, k, running, graphBS, roleMF, chunk, al)
		case "trtllm":
			hostBytes := int64(0)
			if tier != nil && mode != "decode" && tier.ratio == 0 {
				hostBytes = int64(cmp.Or(tier.gb, simulate.AgentXHostTierGB(r.GPU.GPU.Name)) * 1e9)
			}
			emitTRTLLMArgs(w, r, p, mode, k, running, graphBS, roleMF, chunk, hostBytes)
		}
		var env []string
		if engine == "sglang" && spec && r.Q.SpecV2 {
			env = append(env, "SGLANG_ENABLE_SPEC_V2: '1'")
		}
		if al > 0 {
			env = append(env, handSetEnv(engine, al)...)
		}
		if len(env) > 0 {
			w("    env:\n")
			for _, e := range env {
				w("      %s\n", e)
			}
		}
	}
	if t.Disagg {
		role("prefill", t.PrefillWorkers, t.Prefill, "prefill")
		role("decode", t.DecodeWorkers, t.Decode, "decode")
	} else {
		role("agg", 1, t.Agg, "")
	}
	w("benchmark:\n")
	if r.Workload.Name == "agentx" {
		w("  type: custom\n  command: bash /infmax-workspace/benchmarks/srt_agentic.sh\n  concurrencies: [%d]\n", conc)
		w("  env:\n    WEKA_LOADER_OVERRIDE: semianalysis_cc_traces_weka_062126_256k\n")
	} else {
		w("  type: sa-bench\n  isl: %d\n  osl: %d\n  concurrencies: [%d]\n", r.Workload.ISL, r.Workload.OSL, conc)
	}
	return b.String(), nil
}

// hostTier is the HiCache host KV tier the simulation gives the role that
// prefills (simulate's poolConfig): gb per rank (--hicache-size) or ratio
// of the device pool (--hicache-ratio); neither for an AgentX replay's
// default, 90% of host DRAM, which InferenceX's launcher passes as
// hicache-size and predict --recipe assumes for a replay with HiCache on
// and no size.
type hostTier struct{ ratio, gb float64 }

func (h *hostTier) String() string {
	switch {
	case h.gb > 0:
		return strconv.FormatFloat(h.gb, 'f', -1, 64) + " GB per GPU"
	case h.ratio > 0:
		return strconv.FormatFloat(h.ratio, 'f', -1, 64) + " x the device pool"
	}
	return fmt.Sprintf("%.0f%% of host DRAM per GPU", 100*simulate.AgentXDRAMUtilization)
}

// simulatedHostTier returns nil where the simulation runs none: the tier
// or the prefix cache turned off, or no prefix to share.
func simulatedHostTier(r *simulate.Resolved) *hostTier {
	s, wl := r.Q.Server, r.Workload
	radix := !s.NoPrefixCache && (wl.Trace != nil || wl.Name != "fixed" || wl.CachedFraction > 0)
	switch {
	case !radix || s.HiCacheRatio < 0:
		return nil
	case s.HiCacheGiB > 0:
		return &hostTier{gb: s.HiCacheGiB}
	case s.HiCacheRatio > 0:
		return &hostTier{ratio: s.HiCacheRatio}
	case wl.Trace != nil:
		return &hostTier{}
	}
	return nil
}

// emitSGLang writes the HiCache arguments of the role that prefills.
func (h *hostTier) emitSGLang(w func(string, ...any)) {
	w("      enable-hierarchical-cache: true\n")
	switch {
	case h.gb > 0:
		w("      hicache-size: %s\n", strconv.FormatFloat(h.gb, 'f', -1, 64))
	case h.ratio > 0:
		w("      hicache-ratio: %s\n", strconv.FormatFloat(h.ratio, 'f', -1, 64))
	default:
		w("      # hicache-size: InferenceX's AgentX launcher passes %.0f%% of host DRAM per GPU\n", 100*simulate.AgentXDRAMUtilization)
	}
}

// acceptanceSource says where an acceptance length came from, in words
// for the recipe's header comment.
func acceptanceSource(t acceptance.Target, p acceptance.Point) string {
	switch p.Source {
	case acceptance.SourceAL:
		return "given with --al, not a golden curve"
	case acceptance.SourceHistogramMean:
		return "the mean of the histogram " + t.Hist.Name
	}
	if t.Curve != nil {
		return "golden AL, " + t.Curve.Source
	}
	return p.Source
}

// handSetEnv is a speculative role's env that forces the mean acceptance
// to al, as AgentX's synthetic acceptance would inject it: SGLang's
// SGLANG_SIMULATE_ACC_LEN with the match-expected method and the
// real-draft-token mode, TensorRT-LLM's
// TLLM_SPEC_DECODE_FORCE_NUM_ACCEPTED_TOKENS (accepted drafts, al - 1).
// vLLM takes it in its speculative-config (emitVLLMArgs).
func handSetEnv(engine string, al float64) []string {
	switch engine {
	case "sglang":
		return []string{"SGLANG_SIMULATE_ACC_LEN: '" + alText(al) + "'", "SGLANG_SIMULATE_ACC_METHOD: match-expected", "SGLANG_SIMULATE_ACC_TOKEN_MODE: real-draft-token"}
	case "trtllm":
		return []string{"TLLM_SPEC_DECODE_FORCE_NUM_ACCEPTED_TOKENS: '" + alText(al-1) + "'"}
	}
	return nil
}

// alText is an AL as the recipes write it, to two places.
func alText(al float64) string { return strconv.FormatFloat(al, 'f', 2, 64) }

// emitSGLangArgs writes one role's SGLang server arguments
// (python/sglang/srt/server_args.py spelling).
func emitSGLangArgs(w func(string, ...any), r *simulate.Resolved, p simulate.Parallel, mode string, k, running, graphBS int, mf float64, chunk int) {
	w("      served-model-name: %s\n      model-path: /model/\n", r.Model.Name)
	w("      tensor-parallel-size: %d\n", p.TP)
	if p.PP > 1 {
		w("      pipeline-parallel-size: %d\n", p.PP)
	}
	if p.DPAttention {
		w("      data-parallel-size: %d\n      enable-dp-attention: true\n", p.TP)
	} else {
		w("      data-parallel-size: 1\n")
	}
	w("      expert-parallel-size: %d\n", p.EP)
	if r.Precision == "fp4" {
		w("      quantization: modelopt_fp4\n")
	}
	kv := "fp8_e4m3"
	if r.Q.KVDType == "bf16" {
		kv = "bfloat16"
	}
	w("      kv-cache-dtype: %s\n", kv)
	s := r.Q.Server
	if r.Model.FullAttentionLayers() < r.Model.Layers {
		w("      mamba-ssm-dtype: %s\n", orDefaultStr(r.Q.MambaSSMDType, "bfloat16"))
		mambaCache := s.MambaCache
		if mode == "prefill" && s.PrefillMambaCache > 0 {
			mambaCache = s.PrefillMambaCache
		}
		if mambaCache > 0 {
			w("      max-mamba-cache-size: %d\n", mambaCache)
		}
		if st := s.MambaStrategy; st != "" && st != "auto" && mode != "decode" {
			w("      mamba-scheduler-strategy: %s\n", st)
		}
	}
	if s.PageSize > 0 {
		w("      page-size: %d\n", s.PageSize)
	}
	if r.Q.MoEBackend != "" {
		w("      moe-runner-backend: %s\n", r.Q.MoEBackend)
	}
	if r.Q.AllReduceFusion {
		w("      enable-flashinfer-allreduce-fusion: true\n")
	}
	if r.Q.NoAllReduceFusion {
		w("      enforce-disable-flashinfer-allreduce-fusion: true\n")
	}
	if mode != "" {
		w("      disaggregation-mode: %s\n", mode)
	}
	if s.NoPrefixCache && mode != "decode" {
		w("      disable-radix-cache: true\n")
	}
	if k > 0 && (mode != "prefill" || s.PrefillDraft) {
		w("      speculative-algorithm: NEXTN\n      speculative-num-steps: %d\n      speculative-eagle-topk: 1\n      speculative-num-draft-tokens: %d\n", k, k+1)
		if r.Q.SpecMoEBackend != "" {
			w("      speculative-moe-runner-backend: %s\n", r.Q.SpecMoEBackend)
		}
	}
	if running > 0 {
		w("      max-running-requests: %d\n", running)
	}
	if mode != "prefill" {
		w("      cuda-graph-max-bs: %d\n", graphBS)
	}
	w("      mem-fraction-static: %s\n", strconv.FormatFloat(mf, 'f', -1, 64))
	w("      chunked-prefill-size: %d\n", chunk)
}

// emitVLLMArgs writes one role's vLLM serve arguments, spelled as srt-slurm's
// vLLM recipes spell them. Expert parallelism in vLLM spans the whole
// instance (FusedMoEParallelConfig.make: ep_size = dp x tp), so DEP is
// data-parallel-size N with tensor-parallel-size 1; disaggregated roles
// hand KV over with the NixlConnector, as those recipes do.
func emitVLLMArgs(w func(string, ...any), r *simulate.Resolved, p simulate.Parallel, mode string, k, running, graphBS int, mf float64, chunk int, handSet float64) {
	w("      served-model-name: %s\n", r.Model.Name)
	if p.DPAttention {
		w("      tensor-parallel-size: 1\n      data-parallel-size: %d\n      enable-expert-parallel: true\n", p.TP)
	} else {
		w("      tensor-parallel-size: %d\n      data-parallel-size: 1\n", p.TP)
		if p.EP > 1 {
			w("      enable-expert-parallel: true\n")
		}
	}
	w("      pipeline-parallel-size: %d\n", p.PP)
	kv := "fp8"
	if r.Q.KVDType == "bf16" {
		kv = "auto"
	}
	w("      kv-cache-dtype: %s\n", kv)
	if mode != "" {
		w("      kv-transfer-config: '{\"kv_connector\": \"NixlConnector\", \"kv_role\": \"kv_both\"}'\n")
	}
	if r.Q.Server.NoPrefixCache && mode != "decode" {
		w("      no-enable-prefix-caching: true\n")
	}
	if handSet > 0 {
		w("      speculative-config: '{\"method\": \"mtp\", \"num_speculative_tokens\": %d, \"rejection_sample_method\": \"synthetic\", \"synthetic_acceptance_length\": %s}'\n", k, alText(handSet))
	} else if k > 0 && (mode != "prefill" || r.Q.Server.PrefillDraft) {
		w("      speculative-config: '{\"method\": \"mtp\", \"num_speculative_tokens\": %d}'\n", k)
	}
	if running > 0 {
		w("      max-num-seqs: %d\n", running)
	}
	if mode != "prefill" {
		w("      max-cudagraph-capture-size: %d\n", graphBS)
	}
	w("      max-num-batched-tokens: %d\n", chunk)
	w("      gpu-memory-utilization: %s\n", strconv.FormatFloat(mf, 'f', -1, 64))
}

// emitTRTLLMArgs writes one role's TensorRT-LLM LLM API config
// (tensorrt_llm/llmapi/llm_args.py names, as srt-slurm's trtllm_config
// blocks write them): moe_expert_parallel_size may be smaller than
// tensor_parallel_size (Mapping: moe_tp x moe_ep = tp); the MTP draft
// length is max_draft_len.
func emitTRTLLMArgs(w func(string, ...any), r *simulate.Resolved, p simulate.Parallel, mode string, k, running, graphBS int, mf float64, chunk int, hostBytes int64) {
	w("      tensor_parallel_size: %d\n      moe_expert_parallel_size: %d\n", p.TP, p.EP)
	w("      enable_attention_dp: %v\n      pipeline_parallel_size: %d\n", p.DPAttention, p.PP)
	if running > 0 {
		w("      max_batch_size: %d\n", running)
	}
	w("      max_num_tokens: %d\n", chunk)
	if mode == "prefill" {
		w("      cuda_graph_config: null\n      disable_overlap_scheduler: true\n")
	} else {
		w("      cuda_graph_config:\n        enable_padding: true\n        max_batch_size: %d\n", graphBS)
	}
	dt := "fp8"
	if r.Q.KVDType == "bf16" {
		dt = "auto"
	}
	w("      kv_cache_config:\n        free_gpu_memory_fraction: %s\n        dtype: %s\n", strconv.FormatFloat(mf, 'f', -1, 64), dt)
	if r.Q.Server.NoPrefixCache && mode != "decode" {
		w("        enable_block_reuse: false  # the simulation ran without a prefix cache\n")
	}
	if hostBytes > 0 {
		w("        host_cache_size: %d  # bytes per rank: the simulated host KV tier\n", hostBytes)
	}
	if mode != "" {
		w("      cache_transceiver_config:\n        backend: UCX\n")
	}
	if k > 0 && (mode != "prefill" || r.Q.Server.PrefillDraft) {
		w("      speculative_config:\n        decoding_type: MTP\n        num_nextn_predict_layers: %d\n        max_draft_len: %d\n", k, k)
	}
}

func orDefaultStr(s, d string) string {
	if s == "" {
		return d
	}
	return s
}

// replayArgs is the --agentx argument with which predict --recipe replays
// the traces as the sweep did: the query's own keys, its duration replaced
// by the sweep's window where that differs from predict's default; "" for
// a sweep that replays no traces or asks for nothing predict would not do.
func replayArgs(r *simulate.Resolved) string {
	window, _ := simulate.SweepReplayWindow(r)
	if window == 0 {
		return ""
	}
	var keep []string
	for _, kv := range strings.Split(r.Q.AgentX, ",") {
		kv = strings.TrimSpace(kv)
		if k, _, _ := strings.Cut(kv, "="); strings.TrimSpace(k) != "" && strings.TrimSpace(k) != "duration" {
			keep = append(keep, kv)
		}
	}
	if window != agentx.DefaultConfig(1).Duration {
		keep = append(keep, fmt.Sprintf("duration=%g", window))
	}
	return strings.Join(keep, ",")
}

// File is one recipe written for a frontier point: Name is the file name
// (no directory), Text the recipe; Err says why the point has none (its
// layout is one the engine does not deploy).
type File struct {
	Name, Text string
	Err        error
}

// Frontier renders one recipe per interactivity frontier point of a sweep;
// r is the sweep's query resolved again.
func Frontier(so *simulate.SweepOutput, r *simulate.Resolved, version string) ([]File, error) {
	var out []File
	for i, p := range so.Frontier {
		t, err := simulate.ParseTopology(p.Topology)
		if err != nil {
			return nil, err
		}
		note := fmt.Sprintf("interactivity frontier point %d: predicted %s tok/s/GPU at %s tok/s/user (p90 TTFT %s ms), event-simulated", i+1, simulate.Sig3(p.TputPerGPU), simulate.Sig3(p.Interactivity), simulate.Sig3(p.TTFTp90ms))
		name := fmt.Sprintf("%02d-%s-c%d-k%d.yaml", i+1, strings.NewReplacer(":", "-", "+", "-").Replace(p.Topology), p.Conc, p.Steps)
		if args := replayArgs(r); args != "" {
			window, asked := simulate.SweepReplayWindow(r)
			note += fmt.Sprintf(" over a %g s AgentX window", window)
			if window != asked {
				note += fmt.Sprintf(" (the sweep asked for %g s)", asked)
			}
			note += fmt.Sprintf(";\n# `specsim predict --recipe %s --agentx %s` reproduces it", name, args)
		}
		if so.RefineStopped {
			note += ";\n# the sweep stopped at its --max-refine budget before its frontiers settled: a deployment it did\n# not simulate may beat this one (rerun with a larger --max-refine, or -1)"
		}
		text, err := Recipe(r, t, p.Conc, p.Steps, version, note)
		out = append(out, File{Name: name, Text: text, Err: err})
	}
	return out, nil
}
