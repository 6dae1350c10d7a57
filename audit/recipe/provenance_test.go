package recipe

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// sglangRecipe is a schema-2 agg recipe with extra top-level YAML and
// extra decode args (indented for roles.agg.args).
func sglangRecipe(t *testing.T, top, args string) string {
	t.Helper()
	y := `schema: 2
name: prov
` + top + `
model: {path: qwen3.5-fp4, container: dynamo-sglang, precision: fp4}
roles:
  agg:
    env:
      SGLANG_SIMULATE_ACC_LEN: '3.39'
      SGLANG_SIMULATE_ACC_METHOD: match-expected
      SGLANG_SIMULATE_ACC_TOKEN_MODE: real-draft-token
    args:
      served-model-name: nvidia/Qwen3.5-397B-A17B-NVFP4
      speculative-algorithm: NEXTN
      speculative-num-steps: 3
      speculative-eagle-topk: 1
      speculative-num-draft-tokens: 4
` + args + `
benchmark: {type: custom, command: bash agentic_srt.sh}
`
	path := filepath.Join(t.TempDir(), "r.yaml")
	if err := os.WriteFile(path, []byte(y), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestProvenanceChecks(t *testing.T) {
	for _, tc := range []struct {
		name, top, args string
		want            string // "severity code"; "" = none of the provenance codes
	}{
		{"clean", "", "", ""},
		{"draft from another checkpoint", "", "      speculative-draft-model-path: someone/Qwen3.5-MTP-FP8", "warning " + CodeDraftNotServed},
		{"draft from the mounted model", "", "      speculative-draft-model-path: /model", ""},
		{"dummy draft weights", "", "      speculative-draft-load-format: dummy", "error " + CodeDraftDummyWeights},
		{"architecture override", "", `      json-model-override-args: '{"architectures": ["Qwen3NextForCausalLM"]}'`, "error " + CodeArchOverride},
		{"config override", "", `      json-model-override-args: '{"mtp_num_hidden_layers": 2}'`, "warning " + CodeConfigOverride},
		{"harmless override", "", `      json-model-override-args: '{"rope_scaling": {"factor": 2}}'`, ""},
		{"private image", "container: {image: ghcr.io/someone/sglang:patched}", "", "warning " + CodeImageNotUpstream},
		{"upstream image", "container: {image: lmsysorg/sglang:v0.5.9-cu130}", "", ""},
		{"setup script", "setup_script: install_patched_sglang.sh", "", "warning " + CodeEngineModified},
		{"mount over the engine", "extra_mount: ['/home/me/sglang/python/sglang:/sgl-workspace/sglang/python/sglang']", "", "error " + CodeEngineMountOverride},
		{"data mount", "extra_mount: ['/data/traces:/traces']", "", ""},
	} {
		rep := checkFile(t, sglangRecipe(t, tc.top, tc.args), Options{})
		var got []string
		for _, f := range rep.Variants[0].Findings {
			switch f.Code {
			case CodeDraftNotServed, CodeDraftDummyWeights, CodeDraftDTypeOverride, CodeArchOverride, CodeConfigOverride,
				CodeImageNotUpstream, CodeEngineModified, CodeEngineMountOverride, CodeEngineUnknown:
				got = append(got, string(f.Severity)+" "+f.Code)
			}
		}
		if tc.want == "" && len(got) > 0 || tc.want != "" && !slices.Equal(got, []string{tc.want}) {
			t.Errorf("%s: %v, want %q\n%+v", tc.name, got, tc.want, rep.Variants[0].Findings)
		}
	}
}

// TestUnknownEngine: "engine: sglng" used to skip every check and exit 0.
// It is now refused when the recipe is read (bad input, exit 2 in the CLI),
// naming the file's line, before any check could be skipped.
func TestUnknownEngine(t *testing.T) {
	y := "schema: 2\nname: typo\nengine: sglng\nmodel: {path: qwen3.5-fp4}\nroles:\n  agg:\n    args:\n      speculative-algorithm: NEXTN\n      speculative-num-steps: 3\n"
	path := filepath.Join(t.TempDir(), "typo.yaml")
	if err := os.WriteFile(path, []byte(y), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Load(path)
	if err == nil || !strings.Contains(err.Error(), `line 3: engine "sglng"`) {
		t.Errorf("unknown engine: err %v, want a line-3 error naming \"sglng\"", err)
	}
}
