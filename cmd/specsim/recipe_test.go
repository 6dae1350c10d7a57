package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

func TestRecipeCheckJSONKeys(t *testing.T) {
	code, out, errs := runCLI("recipe", "check", "../../testdata/recipes/schema2_qwen3.5_sglang_gb300-fp4_agentx_disagg-variants.yaml:override_tp2_tp2_c72", "--json")
	if code != exitFindings {
		t.Fatalf("exit %d, want 1 (the base's SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE); stderr %s", code, errs)
	}
	var doc map[string]any
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("JSON: %v\n%s", err, out)
	}
	if got := keysOf(doc); !reflect.DeepEqual(got, []string{"file", "findings", "variants"}) {
		t.Errorf("top-level keys %v", got)
	}
	variants := doc["variants"].([]any)
	v := variants[0].(map[string]any)
	if got := keysOf(v); !reflect.DeepEqual(got, []string{"findings", "name", "roles"}) {
		t.Errorf("variant keys %v", got)
	}
	if v["name"] != "override_tp2_tp2_c72" {
		t.Errorf("name %v", v["name"])
	}
	role := v["roles"].([]any)[1].(map[string]any)
	if got := keysOf(role); !reflect.DeepEqual(got, []string{"draft_length", "engine", "env", "expected_al", "injected", "role", "spec"}) {
		t.Errorf("role keys %v", got)
	}
	// The recipe's decode role: speculative-algorithm NEXTN, eagle-topk 1,
	// num-draft-tokens 4, no draft quantization of its own, the target's
	// moe-runner-backend flashinfer_trtllm (as the text table shows).
	spec := role["spec"].(map[string]any)
	if got := keysOf(spec); !reflect.DeepEqual(got, []string{"algorithm", "draft_moe_runner", "num_draft_tokens", "topk"}) ||
		spec["algorithm"] != "NEXTN" || spec["topk"] != 1.0 || spec["num_draft_tokens"] != 4.0 || spec["draft_moe_runner"] != "flashinfer_trtllm" {
		t.Errorf("decode spec %v", spec)
	}
	if role["role"] != "decode" || role["engine"] != "sglang" || role["draft_length"] != 3.0 || role["expected_al"] != 3.39 {
		t.Errorf("decode role %v", role)
	}
	env := role["env"].(map[string]any)
	if env["SGLANG_SIMULATE_ACC_LEN"] != "3.39" || env["SGLANG_SIMULATE_ACC_METHOD"] != "match-expected" || env["SGLANG_SIMULATE_ACC_TOKEN_MODE"] != "real-draft-token" {
		t.Errorf("env %v", env)
	}
	f := v["findings"].([]any)[0].(map[string]any)
	// location: the key path the finding is about (base.yaml's decode env).
	if got := keysOf(f); !reflect.DeepEqual(got, []string{"code", "location", "message", "severity"}) {
		t.Errorf("finding keys %v", got)
	}
	if f["code"] != "fp8-nextn-moe" || f["severity"] != "error" || f["location"] != "roles.decode.env.SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE" {
		t.Errorf("finding %v", f)
	}
}

func TestRecipeCheckExitCodes(t *testing.T) {
	dir := t.TempDir()
	huge := filepath.Join(dir, "huge.yaml")
	if fh, err := os.Create(huge); err == nil {
		fh.Truncate(5 << 20)
		fh.Close()
	}
	tests := []struct {
		args   []string
		code   int
		stdout string // substring
		stderr string // substring
	}{
		{[]string{"recipe", "check", "../../testdata/recipes/schema2_qwen3.5_sglang_gb300-fp4_agentx_agg-variants.yaml"}, exitOK, "override_c64", ""},
		{[]string{"recipe", "check", "../../testdata/recipes/schema1_sglang_qwen3.5_gb300-fp4_agentic_agg-tp2-c1-mtp-hicache.yaml", "--format", "markdown"}, exitOK, "| agg | sglang | NEXTN |", ""},
		{[]string{"recipe", "check", "../../audit/recipe/testdata/planted_sglang.yaml:override_wrong_len"}, exitFindings, "sim-acc-len-mismatch", ""},
		{[]string{"recipe", "check", "../../audit/recipe/testdata/planted_sglang.yaml:override_prefill_k5"}, exitOK, "draft-length-differs", ""},
		// thinking off: Qwen3.5 thinking_off[3] = 3.33
		{[]string{"recipe", "check", "../../testdata/recipes/schema2_qwen3.5_sglang_gb300-fp4_agentx_agg-variants.yaml:override_c1", "--thinking", "off"}, exitOK, "SGLANG_SIMULATE_ACC_LEN=3.33", ""},
		{[]string{"recipe", "check", "../../audit/recipe/testdata/unknown_model.yaml"}, exitFindings, "model-unknown", ""},
		// --model finds the curve; the schema-1 recipe sets no simulation env
		// and gets no injection, so it would run real acceptance.
		{[]string{"recipe", "check", "../../audit/recipe/testdata/unknown_model.yaml", "--model", "Qwen/Qwen3.5-397B-A17B"}, exitFindings, "set SGLANG_SIMULATE_ACC_LEN=3.39", ""},
		{[]string{"recipe", "check", "../../audit/recipe/testdata/invalid.yaml"}, exitBadInput, "", "invalid.yaml:3: invalid YAML"},
		{[]string{"recipe", "check", "../../audit/recipe/testdata/unknown_schema.yaml"}, exitBadInput, "", "unknown_schema.yaml:1: unknown recipe schema"},
		{[]string{"recipe", "check", "../../testdata/recipes/master-config_excerpt_qwen3.5-fp4-gb300-dynamo-sglang-agentic.yaml"}, exitBadInput, "", "master-config entry"},
		{[]string{"recipe", "check", "../../audit/recipe/testdata/zip_steps.yaml:zip_override_steps[7]"}, exitBadInput, "", "out of range"},
		{[]string{"recipe", "check", huge}, exitBadInput, "", "larger than"},
		{[]string{"recipe", "check", filepath.Join(dir, "missing.yaml")}, exitBadInput, "", "missing.yaml"},
		{[]string{"recipe", "check", "a.yaml", "--thinking", "maybe"}, exitBadInput, "", "--thinking"},
		{[]string{"recipe", "check"}, exitBadInput, "", "exactly one"},
		{[]string{"recipe", "lint", "a.yaml"}, exitBadInput, "", "recipe check"},
		{[]string{"recipe", "check", "--help"}, exitOK, "FILE[:selector]", ""},
	}
	for _, tt := range tests {
		code, out, errs := runCLI(tt.args...)
		if code != tt.code || !strings.Contains(out, tt.stdout) || !strings.Contains(errs, tt.stderr) {
			t.Errorf("%v: exit %d (want %d)\nstdout: %.600s\nstderr: %s", tt.args, code, tt.code, out, errs)
		}
	}
}

func TestRecipeCheckGoldenOverride(t *testing.T) {
	// A golden file that moves Qwen3.5 thinking-on AL(3) to 3.50: the
	// schema-1 recipe's hard-coded 3.39 becomes an error.
	g := filepath.Join(t.TempDir(), "qwen3.5_mtp.yaml")
	os.WriteFile(g, []byte("qwen3.5-397b-a17b-nvfp4:\n  thinking_on:\n    1: 1.93\n    2: 2.73\n    3: 3.50\n    4: 3.97\n"), 0o644)
	code, out, errs := runCLI("recipe", "check", "../../testdata/recipes/schema1_sglang_qwen3.5_gb300-fp4_agentic_agg-tp2-c1-mtp-hicache.yaml", "--golden-file", g)
	if code != exitFindings || !strings.Contains(out, "SGLANG_SIMULATE_ACC_LEN is 3.39 but the golden AL") || !strings.Contains(out, "is 3.5") {
		t.Errorf("exit %d\n%s%s", code, out, errs)
	}
}

func TestRecipeCheckCurveByMethod(t *testing.T) {
	// The same served model reads a different golden file per method:
	// DeepSeek-V4-Pro with EAGLE uses dsv4_mtp (AL(3) = 2.49); with DSpark
	// and block size 5 it uses dsv4-pro-0813-dspark (AL(5) = 3.61).
	dir := t.TempDir()
	write := func(name, algo, key string, k int) string {
		p := filepath.Join(dir, name)
		body := "name: " + name + "\nbackend:\n  type: sglang\n  sglang_config:\n    decode:\n      served-model-name: deepseek-ai/DeepSeek-V4-Pro\n" +
			"      speculative-algorithm: " + algo + "\n      " + key + ": " + strconv.Itoa(k) + "\n      speculative-eagle-topk: 1\n" +
			"benchmark: {command: agentic_srt.sh}\n"
		os.WriteFile(p, []byte(body), 0o644)
		return p
	}
	for _, tt := range []struct {
		file, want string
	}{
		{write("eagle.yaml", "EAGLE", "speculative-num-steps", 3), "SGLANG_SIMULATE_ACC_LEN=2.49"},
		{write("dspark.yaml", "DSPARK", "speculative-dspark-block-size", 5), "SGLANG_SIMULATE_ACC_LEN=3.61"},
	} {
		// Schema 1 without simulation env: the finding names the values to set.
		code, out, errs := runCLI("recipe", "check", tt.file)
		if code != exitFindings || !strings.Contains(out, tt.want) {
			t.Errorf("%s: exit %d, want %s\n%s%s", tt.file, code, tt.want, out, errs)
		}
	}
}

func TestLogsCommand(t *testing.T) {
	const dp = "../../audit/enginelog/testdata/sglang_dp.log"
	code, out, errs := runCLI("logs", dp, "--json")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var doc map[string]any
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	want := []string{"accept_len", "engines", "files", "gen_throughput_tok_s", "lines", "long_lines_skipped", "ranks", "running_req", "samples", "time_axis", "timeline"}
	if got := keysOf(doc); !reflect.DeepEqual(got, want) {
		t.Errorf("keys %v, want %v", got, want)
	}
	if doc["gen_throughput_tok_s"] != 1700.0 {
		t.Errorf("throughput %v, want 1700 (1100 + 600 over two DP ranks)", doc["gen_throughput_tok_s"])
	}

	// a simulated-acceptance log judged against golden targets
	var b strings.Builder
	for i := range 50 {
		al := "3.38"
		if i%2 == 1 {
			al = "3.40"
		}
		b.WriteString("[2026-07-01 12:00:" + []string{"00", "10", "20", "30", "40"}[i%5] + " TP0] Decode batch, #running-req: 8, accept len: " + al + ", gen throughput (token/s): 100.00, #queue-req: 0\n")
	}
	sim := filepath.Join(t.TempDir(), "sim.log")
	os.WriteFile(sim, []byte(b.String()), 0o644)
	tests := []struct {
		args []string
		code int
		text string
	}{
		{[]string{"logs", sim, "--al", "3.39"}, exitOK, "agrees"},
		{[]string{"logs", sim, "--model", "qwen3.5", "--steps", "3"}, exitOK, "target AL 3.390: agrees"},
		// k = 4: golden 3.97; measured 3.39 disagrees
		{[]string{"logs", sim, "--model", "qwen3.5", "--steps", "4"}, exitFindings, "disagrees"},
		{[]string{"logs", sim, "--al", "3.39", "--steps", "3"}, exitBadInput, "not both"},
		{[]string{"logs", sim, "--model", "qwen3.5"}, exitBadInput, "--steps"},
		{[]string{"logs", sim, "--model", "qwen3.5", "--steps", "12"}, exitBadInput, "k=12"},
		{[]string{"logs", sim, "--al", "0.5"}, exitBadInput, ">= 1"},
		{[]string{"logs", "../../testdata/recipes/schema2_qwen3.5_sglang_gb300-fp4_agentx_agg-variants.yaml"}, exitBadInput, "no decode statistics"},
		{[]string{"logs", filepath.Join(t.TempDir(), "nope.log")}, exitBadInput, "nope.log"},
		{[]string{"logs"}, exitBadInput, "at least one FILE"},
	}
	for _, tt := range tests {
		code, out, errs := runCLI(tt.args...)
		if code != tt.code || !strings.Contains(out+errs, tt.text) {
			t.Errorf("%v: exit %d (want %d)\n%s%s", tt.args, code, tt.code, out, errs)
		}
	}
}
