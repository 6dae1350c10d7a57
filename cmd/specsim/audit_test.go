package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/specsim/specsim/audit/checkpointtest"
)

func qwenFixture(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	const cfg = "../../testdata/configs/nvidia--Qwen3.5-397B-A17B-NVFP4"
	if _, _, err := checkpointtest.WriteFromConfigs(dir, checkpointtest.Qwen35MoE, cfg+"_config.json", cfg+"_hf_quant_config.json",
		checkpointtest.Options{MainLayers: 2, Shards: 2}); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestAuditIndexOnly: configs and index alone (what a reviewer
// downloads) audit without shard errors, the shipped precision marked
// inferred.
func TestAuditIndexOnly(t *testing.T) {
	dir := qwenFixture(t)
	if err := checkpointtest.RemoveShards(dir); err != nil {
		t.Fatal(err)
	}
	code, out, errs := runCLI("audit", dir, "--tp", "1,2,4")
	if code != exitOK && code != exitFindings {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, want := range []string{"tensors   1553 (0 scale tensors)", "shipped   BF16 (inferred", "mtp.fc", "info    index-only:"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "shard-missing") || strings.Contains(out, "tensor-missing") {
		t.Errorf("shard errors in an index-only audit:\n%s", out)
	}
}

func TestAuditJSONKeys(t *testing.T) {
	dir := qwenFixture(t)
	code, out, errs := runCLI("audit", dir, "--json", "--tp", "1,2,4")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var doc map[string]any
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	mtp, _ := doc["mtp"].(map[string]any)
	wantMTP := []string{"bytes", "effective_dtype", "param_count", "present", "scale_tensor_count", "shipped_dtype", "shipped_inferred", "tensor_count"}
	if !slices.Equal(keysOf(mtp), wantMTP) {
		t.Errorf("mtp keys %v, want %v", keysOf(mtp), wantMTP)
	}
	if mtp["tensor_count"] != 1553.0 || mtp["shipped_dtype"] != "BF16" || mtp["effective_dtype"] != "BF16" || mtp["scale_tensor_count"] != 0.0 {
		t.Errorf("mtp %v", mtp)
	}
	mem, _ := doc["memory"].([]any)
	if len(mem) != 3 {
		t.Fatalf("memory %v", doc["memory"])
	}
	row, _ := mem[0].(map[string]any)
	wantMem := []string{"dp", "engine", "ep", "model_gib", "mtp_bytes", "mtp_floor_gib", "mtp_gib", "tp"}
	if !slices.Equal(keysOf(row), wantMem) {
		t.Errorf("memory keys %v, want %v", keysOf(row), wantMem)
	}
	findings, _ := doc["findings"].([]any)
	var sawFC bool
	for _, f := range findings {
		fm := f.(map[string]any)
		// location only where the finding has one (a module, a log line).
		if !slices.Equal(keysOf(fm), []string{"code", "message", "severity"}) && !slices.Equal(keysOf(fm), []string{"code", "location", "message", "severity"}) {
			t.Errorf("finding keys %v", keysOf(fm))
		}
		if strings.Contains(fm["message"].(string), "mtp.fc ") {
			sawFC = true
			if fm["location"] != "mtp.fc" {
				t.Errorf("mtp.fc finding location %v", fm["location"])
			}
		}
	}
	if !sawFC {
		t.Error("no finding names mtp.fc")
	}
}

func TestAuditTextAndMarkdown(t *testing.T) {
	dir := qwenFixture(t)
	code, out, _ := runCLI("audit", dir, "--tp", "4")
	if code != exitOK || !strings.Contains(out, "shipped   BF16") || !strings.Contains(out, "draft floor GiB") || !strings.Contains(out, "draft footprint GiB") {
		t.Errorf("exit %d, text:\n%s", code, out)
	}
	code, out, _ = runCLI("audit", dir, "--format", "markdown", "--tp", "1,2", "--engine", "vllm")
	for _, want := range []string{"| shipped draft precision | BF16 |", "| effective draft precision (vllm) | BF16", "| MTP tensors | 1553 |", "| MTP scale tensors | 0 |", "Command: `specsim audit " + dir, "--engine=vllm", "--tp=1,2"} {
		if !strings.Contains(out, want) {
			t.Errorf("markdown lacks %q:\n%s", want, out)
		}
	}
	if code != exitOK {
		t.Errorf("exit %d", code)
	}
}

func TestAuditExitCodes(t *testing.T) {
	dir := qwenFixture(t)
	// A draft quantized below its shipped precision is an error finding.
	if code, _, _ := runCLI("audit", dir, "--draft-quantization", "nvfp4_online", "--tp", "4"); code != exitFindings {
		t.Errorf("lowered draft: exit %d, want %d", code, exitFindings)
	}
	shard := filepath.Join(dir, "model-00002-of-00002.safetensors")
	if err := os.Truncate(shard, 5); err != nil {
		t.Fatal(err)
	}
	code, _, errs := runCLI("audit", dir)
	if code != exitBadInput || !strings.Contains(errs, shard) {
		t.Errorf("corrupt shard: exit %d, stderr %q", code, errs)
	}
	for _, args := range [][]string{
		{"audit"}, {"audit", dir, "--engine", "trt"}, {"audit", dir, "--tp", "0"}, {"audit", dir, "--env", "X"},
		{"audit", filepath.Join(dir, "nope")}, {"audit", dir, "--json", "--format", "markdown"},
	} {
		if code, _, _ := runCLI(args...); code != exitBadInput {
			t.Errorf("%v: exit %d, want %d", args, code, exitBadInput)
		}
	}
	if code, _, _ := runCLI("audit", "--help"); code != exitOK {
		t.Errorf("--help: exit %d", code)
	}
}

func TestAuditLog(t *testing.T) {
	dir := qwenFixture(t)
	// A draft line at the modelled BF16 size for TP 4 (4.084 GiB) and one
	// near the NVFP4 counterfactual (1.93 GiB).
	log := "[2026-01-01 00:00:00 TP0] Load weight end. type=Qwen3_5MoeForConditionalGeneration, avail mem=100.00 GB, mem usage=60.00 GB.\n" +
		"[2026-01-01 00:00:10 TP0] Load weight end. type=Qwen3_5ForCausalLMMTP, avail mem=95.93 GB, mem usage=4.08 GB.\n" +
		"[2026-01-01 00:00:10 TP1] Load weight end. type=Qwen3_5MoeForConditionalGeneration, avail mem=100.00 GB, mem usage=60.00 GB.\n" +
		"[2026-01-01 00:00:10 TP1] Load weight end. type=Qwen3_5ForCausalLMMTP, avail mem=98.09 GB, mem usage=1.93 GB.\n"
	path := filepath.Join(t.TempDir(), "server.log")
	if err := os.WriteFile(path, []byte(log), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errs := runCLI("audit", dir, "--tp", "4", "--log", path, "--json")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var doc struct {
		Log []struct {
			Line      int     `json:"line"`
			What      string  `json:"what"`
			Precision string  `json:"precision"`
			RelError  float64 `json:"rel_error"`
		} `json:"log"`
		Findings []struct{ Code, Severity, Message string } `json:"findings"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	got := map[int]string{}
	for _, l := range doc.Log {
		if l.What == "draft" {
			got[l.Line] = l.Precision
			if l.RelError > 0.01 {
				t.Errorf("line %d off by %.3f", l.Line, l.RelError)
			}
		}
	}
	if got[2] != "BF16" || got[4] != "NVFP4" {
		t.Errorf("draft lines matched %v", got)
	}
	var warned bool
	for _, f := range doc.Findings {
		if f.Code == "log-draft-precision" && f.Severity == "warning" && strings.Contains(f.Message, "line 4") {
			warned = true
		}
	}
	if !warned {
		t.Errorf("want a warning that line 4 looks quantized: %+v", doc.Findings)
	}
}

// TestAuditShardOutsideDir: an index naming "../../etc/passwd" is a
// readable index with a wrong entry, so the audit goes on, reports
// shard-outside-dir (error) and exits 1, as a symlink leaving the directory
// does (SECURITY.md, promise 4); exit 2 is for input the audit cannot read.
func TestAuditShardOutsideDir(t *testing.T) {
	dir := qwenFixture(t)
	p := filepath.Join(dir, "model.safetensors.index.json")
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	var idx map[string]any
	if err := json.Unmarshal(b, &idx); err != nil {
		t.Fatal(err)
	}
	wm := idx["weight_map"].(map[string]any)
	wm["model.norm.weight"] = "../../etc/passwd"
	if b, err = json.Marshal(idx); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errs := runCLI("audit", dir)
	if code != exitFindings || !strings.Contains(out, "shard-outside-dir") || !strings.Contains(out, `"../../etc/passwd"`) {
		t.Errorf("exit %d, stdout %q, stderr %q; want exit 1 and a shard-outside-dir finding naming the path", code, out, errs)
	}
}

// TestAuditParallelBounds: --dp and --ep are bounded like --tp (1..4096),
// exit 2 naming the flag, before any memory row is skipped.
func TestAuditParallelBounds(t *testing.T) {
	dir := qwenFixture(t)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--dp", "99999999999"}, "--dp 99999999999: want 1 to 4096"},
		{[]string{"--dp", "0"}, "--dp 0: want 1 to 4096"},
		{[]string{"--ep", "4097"}, "--ep 4097: want 1 to 4096"},
		{[]string{"--tp", "4097"}, "--tp"},
	} {
		code, out, errs := runCLI(append([]string{"audit", dir}, tc.args...)...)
		if code != exitBadInput || !strings.Contains(errs, tc.want) {
			t.Errorf("%v: exit %d, stderr %q, want exit 2 with %q\n%s", tc.args, code, errs, tc.want, out)
		}
	}
}

// TestAuditTPHeads: audit --tp 3 on Qwen3.5-397B (32 attention heads,
// config.json text_config.num_attention_heads) is layout-invalid with no
// memory row, as predict refuses tp3 (review 2, #10); --tp 4 divides 32.
func TestAuditTPHeads(t *testing.T) {
	dir := qwenFixture(t)
	_, out, errs := runCLI("audit", dir, "--tp", "3,4", "--json")
	var d struct {
		Findings []struct{ Code, Message string } `json:"findings"`
		Memory   []struct {
			TP int `json:"tp"`
		} `json:"memory"`
	}
	if err := json.Unmarshal([]byte(out), &d); err != nil {
		t.Fatalf("%v\n%s%s", err, out, errs)
	}
	found := false
	for _, f := range d.Findings {
		found = found || f.Code == "layout-invalid" && strings.Contains(f.Message, "tp=3") && strings.Contains(f.Message, "32 attention heads")
	}
	if !found || len(d.Memory) != 1 || d.Memory[0].TP != 4 {
		t.Errorf("want tp=3 layout-invalid (32 heads) and only the tp=4 row: %+v %+v", d.Findings, d.Memory)
	}
}
