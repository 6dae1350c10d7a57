package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/specsim/specsim/audit/checkpointtest"
)

// indexOnlyQwen is what a reviewer downloads of
// nvidia/Qwen3.5-397B-A17B-NVFP4: configs and index, no shards.
func indexOnlyQwen(t *testing.T) string {
	t.Helper()
	dir := qwenFixture(t)
	if err := checkpointtest.RemoveShards(dir); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestReviewSharedRecipes: on every shared GB300 recipe and an index-only
// Qwen3.5-397B-A17B-NVFP4 checkpoint, review prints both sections as
// Markdown; the disagg bundle inherits SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE=1, so
// it exits 1.
func TestReviewSharedRecipes(t *testing.T) {
	ck := indexOnlyQwen(t)
	for _, tc := range []struct {
		recipe string
		code   int
		want   []string
	}{
		{"schema2_qwen3.5_sglang_gb300-fp4_agentx_disagg-variants.yaml:override_tp4_tp4_c8", exitFindings,
			[]string{"| MTP head | mtp-prefix", "**BF16** (inferred", "1553 MTP tensors, 0 scale tensors", "`mtp-exclude-gap-overridden`: mtp.fc",
				"| draft MoE backend | flashinfer_trtllm, no fallback", "error `fp8-nextn-moe`", "| 4 | 1 | 1 | 4.070 | 4.084 |",
				"| decode | sglang | 3 | 3.39 | SGLANG_SIMULATE_ACC_LEN=3.39"}},
		{"schema2_qwen3.5_sglang_gb300-fp4_agentx_agg-variants.yaml:override_c1", exitOK,
			[]string{"| 2 | 1 | 1 | 8.070 | 8.076 |", "| agg | sglang | 3 | 3.39 |", "yes (synthetic acceptance)"}},
		{"schema1_sglang_qwen3.5_gb300-fp4_agentic_agg-tp2-c1-mtp-hicache.yaml", exitOK,
			[]string{"no (schema 1: the recipe sets it)"}},
		{"schema1_trtllm_qwen3.5_gb300-fp4_agentx_disagg-3p2d-dep4-dep4-c704-mtp.yaml", exitOK,
			[]string{"not modelled for trtllm", "TLLM_SPEC_DECODE_FORCE_NUM_ACCEPTED_TOKENS=3.8"}},
	} {
		code, out, errs := runCLI("review", "--recipe", "../../testdata/recipes/"+tc.recipe, "--checkpoint", ck, "--format", "markdown")
		if code != tc.code {
			t.Errorf("%s: exit %d, want %d\n%s%s", tc.recipe, code, tc.code, out, errs)
		}
		for _, w := range append(tc.want, "### Draft precision (shipped / effective)", "### Golden AL", "Command: `specsim review") {
			if !strings.Contains(out, w) {
				t.Errorf("%s: output lacks %q\n%s", tc.recipe, w, out)
			}
		}
		// Pasteable: every table row has the header's number of cells.
		checkMarkdownTables(t, tc.recipe, out)
	}
}

func checkMarkdownTables(t *testing.T, name, out string) {
	t.Helper()
	cells := -1
	for _, l := range strings.Split(out, "\n") {
		if !strings.HasPrefix(l, "|") {
			cells = -1
			continue
		}
		n := strings.Count(strings.ReplaceAll(l, `\|`, ""), "|")
		if cells == -1 {
			cells = n
		} else if n != cells {
			t.Errorf("%s: table row has %d separators, header %d: %s", name, n, cells, l)
		}
	}
}

// TestReviewLogs: the workers' env dump and the draft's load line. The
// PR's decode log shows SGLANG_SIMULATE_ACC_LEN=3.39 and a 4.02 GB draft at
// TP 4 (inside the BF16 band [4.070 - 5%, 4.084 + 1%]); a dump with the
// wrong AL fails.
func TestReviewLogs(t *testing.T) {
	ck := indexOnlyQwen(t)
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := write("good.out", "+ export SGLANG_SIMULATE_ACC_LEN=3.39\n+ export SGLANG_SIMULATE_ACC_METHOD=match-expected\n+ export SGLANG_SIMULATE_ACC_TOKEN_MODE=real-draft-token\n"+
		"[2026-01-01 00:00:10 TP0] Load weight end. type=Qwen3_5MoeForConditionalGeneration, avail mem=200.00 GB, mem usage=59.00 GB.\n"+
		"[2026-01-01 00:00:20 TP0] Load weight end. type=Qwen3_5ForCausalLMMTP, avail mem=195.98 GB, mem usage=4.02 GB.\n")
	bad := write("bad.out", "SGLANG_SIMULATE_ACC_LEN=4.8\nSGLANG_SIMULATE_ACC_METHOD=match-expected\nSGLANG_SIMULATE_ACC_TOKEN_MODE=real-draft-token\n")
	recipe := "../../testdata/recipes/schema2_qwen3.5_sglang_gb300-fp4_agentx_agg-variants.yaml:override_c1"
	// agg at TP 2 in the recipe; the 4.02 GB line is a TP 4 figure, so it
	// matches nothing at TP 2 (outside every band).
	code, out, errs := runCLI("review", "--recipe", recipe, "--checkpoint", ck, "--log", good, "--json")
	if code != exitOK {
		t.Fatalf("good log: exit %d\n%s%s", code, out, errs)
	}
	var doc struct {
		Variants []struct {
			Roles []struct {
				Role  string
				Shown map[string][]struct{ Value string } `json:"shown"`
			} `json:"roles"`
			Audit struct {
				Log []struct {
					LoggedGiB  float64 `json:"logged_gib"`
					Consistent bool    `json:"consistent"`
				} `json:"log"`
			} `json:"audit"`
		} `json:"variants"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	v := doc.Variants[0]
	if got := v.Roles[0].Shown["SGLANG_SIMULATE_ACC_LEN"]; len(got) != 1 || got[0].Value != "3.39" {
		t.Errorf("shown %v", v.Roles[0].Shown)
	}
	if len(v.Audit.Log) != 2 {
		t.Errorf("log matches %+v", v.Audit.Log)
	}
	code, out, _ = runCLI("review", "--recipe", recipe, "--checkpoint", ck, "--log", bad, "--format", "markdown")
	if code != exitFindings || !strings.Contains(out, "worker-env-mismatch") || !strings.Contains(out, "SGLANG_SIMULATE_ACC_LEN=4.8") {
		t.Errorf("bad log: exit %d\n%s", code, out)
	}
	for _, args := range [][]string{{"--recipe", recipe}, {"--checkpoint", ck}, {"--recipe", "missing.yaml", "--checkpoint", ck}, {"--recipe", recipe, "--checkpoint", ck, "--log", filepath.Join(dir, "none.out")}} {
		if code, _, _ := runCLI(append([]string{"review"}, args...)...); code != exitBadInput {
			t.Errorf("%v: exit %d", args, code)
		}
	}
}

// TestAuditHub: specsim audit hf://... against a local Hub-like server
// (ranges served by net/http) gives the local audit's MTP facts.
func TestAuditHub(t *testing.T) {
	dir := qwenFixture(t)
	prefix := "/nvidia/Qwen3.5-397B-A17B-NVFP4/resolve/main/"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		name, ok := strings.CutPrefix(r.URL.Path, prefix)
		if !ok || strings.Contains(name, "/") {
			http.NotFound(w, r)
			return
		}
		http.ServeFile(w, r, filepath.Join(dir, name))
	}))
	defer srv.Close()
	t.Setenv("HF_ENDPOINT", srv.URL)
	code, out, errs := runCLI("audit", "hf://nvidia/Qwen3.5-397B-A17B-NVFP4", "--tp", "4")
	if code != exitOK || !strings.Contains(out, "tensors   1553 (0 scale tensors)") || !strings.Contains(out, "shipped   BF16\n") || !strings.Contains(out, "hf://nvidia/Qwen3.5-397B-A17B-NVFP4@main") {
		t.Errorf("exit %d\n%s%s", code, out, errs)
	}
	code, out, _ = runCLI("review", "--recipe", "../../testdata/recipes/schema2_qwen3.5_sglang_gb300-fp4_agentx_agg-variants.yaml:override_c1", "--checkpoint", "hf://nvidia/Qwen3.5-397B-A17B-NVFP4", "--format", "markdown")
	if code != exitOK || !strings.Contains(out, "**BF16** (shard headers)") {
		t.Errorf("review over hf: exit %d\n%s", code, out)
	}
	if code, _, _ := runCLI("audit", "hf://nvidia/Qwen3.5-397B-A17B-NVFP4", "--deep"); code != exitBadInput {
		t.Errorf("--deep over hf: exit %d", code)
	}
	if code, _, _ := runCLI("audit", "hf://nvidia/missing"); code != exitBadInput {
		t.Errorf("missing repo: exit %d", code)
	}
}

// TestReviewModelMismatch: a Qwen3.5 recipe reviewed against a DeepSeek
// checkpoint (config architectures DeepseekV3ForCausalLM) is an error.
func TestReviewModelMismatch(t *testing.T) {
	dir := t.TempDir()
	const cfg = "../../testdata/configs/nvidia--DeepSeek-V3.1-NVFP4"
	if _, _, err := checkpointtest.WriteFromConfigs(dir, checkpointtest.DeepSeekV3NVFP4, cfg+"_config.json", cfg+"_hf_quant_config.json",
		checkpointtest.Options{MainLayers: 2, Shards: 2}); err != nil {
		t.Fatal(err)
	}
	if err := checkpointtest.RemoveShards(dir); err != nil {
		t.Fatal(err)
	}
	const r = "../../testdata/recipes/schema2_qwen3.5_sglang_gb300-fp4_agentx_agg-variants.yaml:override_c1"
	code, out, errs := runCLI("review", "--recipe", r, "--checkpoint", dir)
	if code != exitFindings || !strings.Contains(out, "model-mismatch") || !strings.Contains(out, "qwen3.5 family") || !strings.Contains(out, "deepseek model") {
		t.Errorf("exit %d, want 1 with a model-mismatch error\n%s%s", code, out, errs)
	}
	// The same recipe on its own model's checkpoint has no such finding.
	if code, out, _ := runCLI("review", "--recipe", r, "--checkpoint", indexOnlyQwen(t)); code != exitOK || strings.Contains(out, "model-mismatch") {
		t.Errorf("Qwen3.5 checkpoint: exit %d\n%s", code, out)
	}
}

// TestReviewModelSizeMismatch: a checkpoint of the recipe's family but
// another size is a model-mismatch error (review 2, #6). The disagg
// bundle serves nvidia/Qwen3.5-397B-A17B-NVFP4 (60 layers, hidden 4096,
// 512 experts: simulate/presets/Qwen--Qwen3.5-397B-A17B_config.json); the
// 122B-A10B checkpoint's config has 48, 3072 and 256
// (testdata/configs/nvidia--Qwen3.5-122B-A10B-NVFP4_config.json).
func TestReviewModelSizeMismatch(t *testing.T) {
	dir := t.TempDir()
	const cfg = "../../testdata/configs/nvidia--Qwen3.5-122B-A10B-NVFP4"
	if _, _, err := checkpointtest.WriteFromConfigs(dir, checkpointtest.Qwen35MoE, cfg+"_config.json", cfg+"_hf_quant_config.json",
		checkpointtest.Options{MainLayers: 2, Shards: 2}); err != nil {
		t.Fatal(err)
	}
	if err := checkpointtest.RemoveShards(dir); err != nil {
		t.Fatal(err)
	}
	const r = "../../testdata/recipes/schema2_qwen3.5_sglang_gb300-fp4_agentx_disagg-variants.yaml:override_tp4_tp4_c8"
	code, out, errs := runCLI("review", "--recipe", r, "--checkpoint", dir)
	want := "layers 48, not 60, hidden size 3072, not 4096, routed experts 256, not 512"
	if code != exitFindings || !strings.Contains(out, "model-mismatch") || !strings.Contains(out, want) {
		t.Errorf("exit %d, want 1 with model-mismatch %q\n%s%s", code, want, out, errs)
	}
	if _, out, _ := runCLI("review", "--recipe", r, "--checkpoint", indexOnlyQwen(t)); strings.Contains(out, "model-mismatch") {
		t.Errorf("the 397B checkpoint is the model served:\n%s", out)
	}
}

// TestReviewJSONFindings: the JSON review carries every finding the text
// shows. The disagg bundle's override_tp4_tp4_c8 inherits
// SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE=1 (error), runs decode with
// max-running-requests 512 above cuda-graph-max-bs 64 at TP 4 without DP
// attention (warning), and the Qwen3.5 checkpoint's mtp.fc is not excluded
// (audit warning). The audit's "fp8-nextn-moe-ignored" info is not a second,
// contradicting verdict.
func TestReviewJSONFindings(t *testing.T) {
	ck := indexOnlyQwen(t)
	r := "../../testdata/recipes/schema2_qwen3.5_sglang_gb300-fp4_agentx_disagg-variants.yaml:override_tp4_tp4_c8"
	code, out, errs := runCLI("review", "--recipe", r, "--checkpoint", ck, "--json")
	if code != exitFindings {
		t.Fatalf("exit %d\n%s%s", code, out, errs)
	}
	type f struct{ Code, Severity, Message string }
	var doc struct {
		Variants []struct {
			Findings []f `json:"findings"`
			Audit    struct {
				Findings []f `json:"findings"`
			} `json:"audit"`
		} `json:"variants"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	got := map[string]f{}
	for _, x := range doc.Variants[0].Findings {
		got[x.Code] = x
	}
	for code, sev := range map[string]string{"fp8-nextn-moe": "error", "cuda-graph-below-running-cap": "warning", "mtp-exclude-gap-overridden": "warning"} {
		if got[code].Severity != sev {
			t.Errorf("findings %s: severity %q, want %q (%+v)", code, got[code].Severity, sev, doc.Variants[0].Findings)
		}
	}
	if !strings.Contains(got["cuda-graph-below-running-cap"].Message, "64") || !strings.Contains(got["cuda-graph-below-running-cap"].Message, "512") {
		t.Errorf("cuda graph finding %q", got["cuda-graph-below-running-cap"].Message)
	}
	for _, x := range doc.Variants[0].Audit.Findings {
		if x.Code == "fp8-nextn-moe-ignored" {
			t.Errorf("audit still reports %s (%s) beside the recipe's error", x.Code, x.Severity)
		}
	}
	// Text shows the same codes.
	_, txt, _ := runCLI("review", "--recipe", r, "--checkpoint", ck)
	for code := range got {
		if !strings.Contains(txt, code+":") {
			t.Errorf("text lacks %s", code)
		}
	}
}

// TestReviewPrecisionMismatch: the agg bundle serves modelopt_fp4
// (model.precision fp4); the same Qwen3.5 checkpoint with its quantization
// configs removed is an unquantized BF16 release, which modelopt_fp4 does
// not load, so review fails with precision-mismatch. The NVFP4 original
// passes (TestReviewSharedRecipes).
func TestReviewPrecisionMismatch(t *testing.T) {
	ck := indexOnlyQwen(t)
	if err := os.Remove(filepath.Join(ck, "hf_quant_config.json")); err != nil {
		t.Fatal(err)
	}
	cfgPath := filepath.Join(ck, "config.json")
	raw, err := os.ReadFile(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	var cfg map[string]any
	if err := json.Unmarshal(raw, &cfg); err != nil {
		t.Fatal(err)
	}
	delete(cfg, "quantization_config")
	if tc, ok := cfg["text_config"].(map[string]any); ok {
		delete(tc, "quantization_config")
	}
	raw, _ = json.Marshal(cfg)
	if err := os.WriteFile(cfgPath, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	r := "../../testdata/recipes/schema2_qwen3.5_sglang_gb300-fp4_agentx_agg-variants.yaml:override_c1"
	code, out, errs := runCLI("review", "--recipe", r, "--checkpoint", ck)
	if code != exitFindings || !strings.Contains(out, "error   precision-mismatch") || !strings.Contains(out, "unquantized BF16") {
		t.Errorf("exit %d\n%s%s", code, out, errs)
	}
}

// TestReviewLogsCSV: CSV headers are snake_case and the cells a program
// reads are numbers or booleans (review 2 #13: "golden AL", "must run
// with", "yes (synthetic acceptance)", "-" and a bar chart of '#').
func TestReviewLogsCSV(t *testing.T) {
	ck := indexOnlyQwen(t)
	_, out, errs := runCLI("review", "--recipe", "../../testdata/recipes/schema2_qwen3.5_sglang_gb300-fp4_agentx_agg-variants.yaml:override_c1", "--checkpoint", ck, "--format", "csv")
	if !strings.Contains(out, "variant,role,engine,k,golden_al,must_run_with,injected,injected_by\noverride_c1,agg,sglang,3,3.39,") ||
		!strings.Contains(out, ",true,synthetic_acceptance\n") || strings.Contains(out, "draft floor GiB") {
		t.Errorf("review csv:\n%s%s", out, errs)
	}
	_, out, errs = runCLI("audit", ck, "--format", "csv")
	if !strings.Contains(out, "tp,ep,dp,draft_floor_gib,draft_footprint_gib,draft_bytes,model_gib,draft_if_bf16_gib,if_fp8_gib,if_nvfp4_gib\n") {
		t.Errorf("audit csv:\n%s%s", out, errs)
	}
	_, out, errs = runCLI("logs", "../../audit/enginelog/testdata/sglang_dp.log", "--format", "csv")
	tabs := strings.Split(strings.TrimSpace(out), "\n\n")
	if len(tabs) != 3 || !strings.HasPrefix(tabs[0], "file,rank,engine,samples,mean_accept_len,mean_gen_tok_per_s,mean_running,max_running\n") ||
		tabs[1] != "accept_len_lo,accept_len_hi,intervals,share\n3.3,3.4,1,0.2500\n3.4,3.5,2,0.5000\n3.5,3.6,1,0.2500" ||
		!strings.Contains(tabs[2], "\n2.0,4.0,,,,0\n") {
		t.Errorf("logs csv:\n%s%s", out, errs)
	}
}

// The logged accept length against the golden AL was shown but did not
// fail the review when it disagreed (exit 0), and a log "specsim logs"
// refuses dropped the comparison without a word.
func TestReviewLoggedAcceptLength(t *testing.T) {
	ck := indexOnlyQwen(t)
	dir := t.TempDir()
	recipe := "../../testdata/recipes/schema2_qwen3.5_sglang_gb300-fp4_agentx_agg-variants.yaml:override_c1" // k=3: golden AL 3.39
	decode := func(al string, n int) string {
		var b strings.Builder
		for i := range n {
			fmt.Fprintf(&b, "[2026-07-01 12:00:%02d TP0] Decode batch, #running-req: 8, accept len: %s, gen throughput (token/s): 900.00, #queue-req: 0,\n", i, al)
		}
		return b.String()
	}
	for _, tc := range []struct {
		name, log string
		code      int
		want      string // in stdout, or stderr for exit 2
	}{
		{"agrees", decode("3.39", 10), exitOK, "logged accept length: agrees: |3.390 - 3.390| = 0.000 <= 0.020"},
		{"disagrees", decode("2.50", 10), exitFindings, "error   accept-len-mismatch: the logs' accept length is not the golden AL roles.agg must run at: disagrees: |2.500 - 3.390| = 0.890 > 0.020"},
		{"too few to judge", decode("2.50", 3), exitOK, "logged accept length: too few samples (3 < 5) to judge"},
		{"refused line", decode("3.39", 10) + "[2026-07-01 12:01:00 TP0] Decode batch, #running-req: -3, accept len: 3.39,\n", exitBadInput, ".out: line 11: #running-req -3 is not a count"},
	} {
		path := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "_")+".out")
		if err := os.WriteFile(path, []byte(tc.log), 0o644); err != nil {
			t.Fatal(err)
		}
		code, out, errs := runCLI("review", "--recipe", recipe, "--checkpoint", ck, "--log", path)
		got := out
		if tc.code == exitBadInput {
			got = errs
		}
		if code != tc.code || !strings.Contains(got, tc.want) {
			t.Errorf("%s: exit %d, want %d and %q in\n%s%s", tc.name, code, tc.code, tc.want, out, errs)
		}
		if tc.code == exitOK && strings.Contains(out, "accept-len-mismatch") {
			t.Errorf("%s: accept-len-mismatch reported", tc.name)
		}
	}
}
