package recipe

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// trtRecipe is a schema-1 TensorRT-LLM decode role with speculative_config
// spec and the forced count forced ("" = not set).
func trtRecipe(t *testing.T, spec, forced string) string {
	t.Helper()
	env := ""
	if forced != "" {
		env = "    TLLM_SPEC_DECODE_FORCE_NUM_ACCEPTED_TOKENS: '" + forced + "'\n"
	}
	y := `name: trt
model: {path: qwen3.5-fp4, container: trtllm, precision: fp4}
backend:
  type: trtllm
  decode_environment:
` + env + `    DYN_TRTLLM_SERVED_MODEL_NAME: nvidia/Qwen3.5-397B-A17B-NVFP4
  trtllm_config:
    decode:
      tensor_parallel_size: 4
      cuda_graph_config: {max_batch_size: 64}
      max_batch_size: 32
      speculative_config:
` + spec + `
benchmark:
  type: custom
  command: bash /infmax-workspace/benchmarks/multi_node/agentic_srt.sh
`
	path := filepath.Join(t.TempDir(), "trt.yaml")
	if err := os.WriteFile(path, []byte(y), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestTRTLLMRules follows NVIDIA/TensorRT-LLM: the one-model path
// (tensorrt_llm/_torch/speculative/interface.py
// SpecWorkerBase._apply_force_accepted_tokens) takes a fractional
// TLLM_SPEC_DECODE_FORCE_NUM_ACCEPTED_TOKENS, the two-model path parses it as
// an integer; MTPDecodingConfig.mtp_eagle_one_model and
// Eagle3DecodingConfig.eagle3_one_model default to true
// (tensorrt_llm/llmapi/llm_args.py); the draft length is max_draft_len.
func TestTRTLLMRules(t *testing.T) {
	for _, tc := range []struct {
		name, spec, forced string
		want               []string
	}{
		{"one-model MTP, fractional", "        decoding_type: MTP\n        max_draft_len: 6", "3.80", nil},
		{"two-model MTP, fractional", "        decoding_type: MTP\n        max_draft_len: 6\n        mtp_eagle_one_model: false", "3.80",
			[]string{"warning " + CodeTRTFractionalForced}},
		{"vanilla MTP stays one-model", "        decoding_type: MTP\n        max_draft_len: 6\n        mtp_eagle_one_model: false\n        use_mtp_vanilla: true", "3.80", nil},
		{"two-model Eagle3, fractional", "        decoding_type: Eagle3\n        max_draft_len: 6\n        eagle3_one_model: false\n        speculative_model: some/eagle3", "3.80",
			[]string{"warning " + CodeTRTFractionalForced}},
		{"num_nextn_predict_layers only", "        decoding_type: MTP\n        num_nextn_predict_layers: 6", "3.80",
			[]string{"error " + CodeDraftLengthMissing}},
		{"schema 1 without the forced count", "        decoding_type: MTP\n        max_draft_len: 6", "",
			[]string{"error " + CodeSimAccMissing}},
	} {
		rep := checkFile(t, trtRecipe(t, tc.spec, tc.forced), Options{})
		v := rep.Variants[0]
		if got := findingKeys(v.Findings); !reflect.DeepEqual(got, tc.want) && !(len(got) == 0 && len(tc.want) == 0) {
			t.Errorf("%s: findings %v, want %v\n%+v", tc.name, got, tc.want, v.Findings)
		}
		for _, f := range v.Findings {
			if f.Code == CodeDraftLengthMissing && !strings.Contains(f.Message, "max_draft_len") {
				t.Errorf("%s: message should name max_draft_len: %s", tc.name, f.Message)
			}
		}
		d := v.Roles[len(v.Roles)-1]
		if d.Injected {
			t.Errorf("%s: a schema-1 role reports an injection", tc.name)
		}
		if tc.forced != "" && d.ExpectedAL != nil && d.Env[trtForced] != tc.forced {
			t.Errorf("%s: env %v, want the hand-set %s", tc.name, d.Env, tc.forced)
		}
	}
}

// TestSchema1NonSpecMessage: in a schema-1 recipe nothing unsets a
// simulation variable on a non-speculative role, so the message must not
// say synthetic acceptance does.
func TestSchema1NonSpecMessage(t *testing.T) {
	rep := checkFile(t, "../../testdata/recipes/schema1_trtllm_qwen3.5_gb300-fp4_agentx_disagg-3p2d-dep4-dep4-c704-mtp.yaml", Options{})
	for _, f := range rep.Variants[0].Findings {
		if f.Code == CodeSimAccNonSpecRole && (strings.Contains(f.Message, "synthetic acceptance unsets") || !strings.Contains(f.Message, "no effect")) {
			t.Errorf("schema-1 message: %s", f.Message)
		}
	}
}
