package simulate

import (
	"strings"
	"testing"
)

// TestSGLangFusionRule checks the FlashInfer all-reduce fusion each
// deployment gets against SGLang v0.5.14's rule read by hand
// (server_args.py ServerArgs._handle_model_specific_adjustments, the
// auto-enable block, and _handle_deprecated_args; utils/common.py
// is_sm90_supported = capability major 9, is_sm100_supported = major 10,
// so SM103 B300/GB300 counts). want is what that rule gives; why is a
// word of the reason the note must name.
func TestSGLangFusionRule(t *testing.T) {
	for _, tc := range []struct {
		name, model, gpu string
		domain           int // --nvlink-domain-gpus (0: the catalog's)
		par              Parallel
		engine           string
		on, off          bool // --enable-... / --enforce-disable-...
		want             bool
		why              string
	}{
		// Qwen3_5MoeForConditionalGeneration listed, SM90, tp 8, one
		// 8-GPU host, no DP attention, a2a none: auto-enabled.
		{"qwen3.5 h200 tp8", "Qwen3.5-397B-A17B", "h200", 0, Parallel{TP: 8, EP: 1, PP: 1}, "", false, false, true, "Qwen3_5MoeForConditionalGeneration on SM90 at TP8"},
		{"qwen3.5 h200 tp8ep8", "Qwen3.5-397B-A17B", "h200", 0, Parallel{TP: 8, EP: 8, PP: 1}, "", false, false, true, "on by SGLang's own rule"},
		// enable_dp_attention: off.
		{"qwen3.5 b200 dep8", "Qwen3.5-397B-A17B", "b200", 0, Parallel{TP: 8, EP: 8, PP: 1, DPAttention: true}, "", false, false, false, "DP attention"},
		// tp_size 1: off.
		{"qwen3.5 b200 tp1", "Qwen3.5-397B-A17B", "b200", 0, Parallel{TP: 1, EP: 1, PP: 1}, "", false, false, false, "tp_size 1"},
		// H100 TP8 PP2: 16 GPUs on two 8-GPU hosts, nnodes 2 on SM90: off.
		{"qwen3.5 h100 tp8pp2 two nodes", "Qwen3.5-397B-A17B", "h100", 0, Parallel{TP: 8, EP: 1, PP: 2}, "", false, false, false, "2 nodes"},
		// GB300 TP8 spans two 4-GPU trays: nnodes 2 is allowed on SM100
		// (SM103 counts): on.
		{"qwen3.5 gb300 tp8 two trays", "Qwen3.5-397B-A17B", "gb300", 0, Parallel{TP: 8, EP: 1, PP: 1}, "", false, false, true, "SM100/SM103 at TP8, no DP attention, 2 nodes"},
		// DeepSeek V3 TP16 EP16 beyond an 8-GPU NVLink domain runs DeepEP
		// (Engine.deepEP): moe_a2a_backend deepep, off.
		{"deepseek gb300 tp16ep16 deepep", "DeepSeek-V3", "gb300", 8, Parallel{TP: 16, EP: 16, PP: 1}, "", false, false, false, "DeepEP"},
		{"deepseek b200 tp8", "DeepSeek-V3", "b200", 0, Parallel{TP: 8, EP: 1, PP: 1}, "", false, false, true, "DeepseekV3ForCausalLM"},
		// MiniMaxM2ForCausalLM is not in the list: off unless forced.
		{"minimax h200 tp8", "MiniMax-M2.5", "h200", 0, Parallel{TP: 8, EP: 1, PP: 1}, "", false, false, false, "not in its list"},
		{"minimax h200 tp8 forced", "MiniMax-M2.5", "h200", 0, Parallel{TP: 8, EP: 1, PP: 1}, "", true, false, true, "--enable-flashinfer-allreduce-fusion"},
		// --enforce-disable wins over the rule and over the deprecated flag.
		{"qwen3.5 h200 tp8 disabled", "Qwen3.5-397B-A17B", "h200", 0, Parallel{TP: 8, EP: 1, PP: 1}, "", false, true, false, "--enforce-disable"},
		{"qwen3.5 h200 tp8 both flags", "Qwen3.5-397B-A17B", "h200", 0, Parallel{TP: 8, EP: 1, PP: 1}, "", true, true, false, "--enforce-disable"},
		// Other engines have no such fusion.
		{"qwen3.5 h200 tp8 vllm", "Qwen3.5-397B-A17B", "h200", 0, Parallel{TP: 8, EP: 1, PP: 1}, "vllm", true, false, false, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := LookupPreset(tc.model)
			if err != nil {
				t.Fatal(err)
			}
			g := GPUSpec{GPU: gpu(t, tc.gpu), GPUsPerNode: tc.domain}.withDomain()
			e, err := NewEngine(m, g, tc.par, EngineConfig{Precision: FP8, EngineName: tc.engine, AllReduceFusion: tc.on, NoAllReduceFusion: tc.off, SchedOverhead: -1, SpecOverhead: -1})
			if err != nil {
				t.Fatal(err)
			}
			if e.AllReduceFusion != tc.want {
				t.Errorf("fusion %v, want %v (%s)", e.AllReduceFusion, tc.want, e.FusionNote)
			}
			if !strings.Contains(e.FusionNote, tc.why) || (tc.why == "") != (e.FusionNote == "") {
				t.Errorf("note %q, want it to name %q", e.FusionNote, tc.why)
			}
			wantFused := 0
			if tc.want && !tc.par.DPAttention && tc.par.TP > 1 {
				wantFused = 2
			}
			if got := e.fusedNorms(8); got != wantFused {
				t.Errorf("decode layer: %d fused norms, want %d", got, wantFused)
			}
		})
	}
}

// TestSGLangFusionRuleGPU: SGLang's capability check alone (the rest of
// the deployment satisfying the rule): SM90 and the SM100 family on,
// anything else (an Ampere or SM120 entry of a user catalog) off.
func TestSGLangFusionRuleGPU(t *testing.T) {
	for _, tc := range []struct {
		arch string
		want bool
	}{{"hopper", true}, {"blackwell", true}, {"ampere", false}, {"", false}} {
		got, why := sglangAutoFusion(fusionDeployment{arch: "Qwen3_5MoeForConditionalGeneration", gpuArch: tc.arch, tp: 4, nodes: 1})
		if got != tc.want {
			t.Errorf("arch %q: fusion %v, want %v (%s)", tc.arch, got, tc.want, why)
		}
	}
	// moe_a2a_backend other than none turns it off on an otherwise
	// qualifying single-node deployment.
	if got, why := sglangAutoFusion(fusionDeployment{arch: "DeepseekV3ForCausalLM", gpuArch: "blackwell", tp: 8, nodes: 1, a2a: true}); got {
		t.Errorf("DeepEP: fusion on, want off (%s)", why)
	}
}
