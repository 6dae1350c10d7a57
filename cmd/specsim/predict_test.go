package main

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/specsim/specsim/golden"
	"github.com/specsim/specsim/kernels"
	"github.com/specsim/specsim/simulate"
)

func TestPredictDefault(t *testing.T) {
	var out, errb bytes.Buffer
	if code := run([]string{"predict"}, &out, &errb); code != exitOK {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	for _, want := range []string{"Qwen3.5-397B-A17B FP4 on 2 x GB300, agg:tp2", "MTP k=6, AL 4.80", "total throughput per GPU", "draft (k forwards)"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("default output lacks %q:\n%s", want, out.String())
		}
	}
}

func TestPredictJSONKeys(t *testing.T) {
	var out, errb bytes.Buffer
	code := run([]string{"predict", "--gpu", "b200", "--topology", "agg:tp4", "--conc", "8", "--isl", "1024", "--osl", "1024", "--steps", "3", "--requests", "40", "--json"}, &out, &errb)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	var m map[string]any
	if err := json.Unmarshal(out.Bytes(), &m); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"tpot_ms", "ttft_ms", "interactivity", "tput_per_gpu", "output_tput_per_gpu", "e2el_s", "al", "step_ms", "memory_gib"} {
		if _, ok := m[k]; !ok {
			t.Errorf("JSON lacks %q", k)
		}
	}
	if m["al"].(float64) != 3.39 {
		t.Errorf("al = %v, want the golden 3.39 at k=3", m["al"])
	}
	e := m["e2el_s"].(map[string]any)
	if _, ok := e["p90"]; !ok {
		t.Errorf("e2el_s lacks p90: %v", e)
	}
	if errb.Len() != 0 {
		t.Errorf("--json wrote to stderr: %s", errb.String())
	}
}

func TestPredictErrors(t *testing.T) {
	for _, c := range []struct {
		args []string
		msg  string
	}{
		{[]string{"--model", "DeepSeek-V3", "--precision", "bf16", "--gpu", "h100", "--topology", "agg:tp8", "--spec", "none", "--isl", "1024", "--osl", "1024"}, "does not fit in memory"},
		{[]string{"--topology", "agg:tp3"}, "does not divide"},
		{[]string{"--model", "nope"}, "unknown model"},
		{[]string{"--steps", "12"}, "no golden AL at k=12"},
		{[]string{"--steps", "65"}, "draft lengths 0..64"},
		{[]string{"--isl", "1024"}, "both positive"},
		{[]string{"--model", "DeepSeek-V3"}, "pass --al"},
		// set and silently ignored before: --steps with --spec none and
		// --cached with agentx already were errors
		{[]string{"--spec", "none", "--al", "3", "--isl", "1024", "--osl", "128"}, "--al and --histogram set the draft's acceptance: they need --spec mtp"},
		{[]string{"--range-ratio", "0.5"}, "--range-ratio applies to --isl/--osl workloads"},
		{[]string{"--workload", "agentx-synthetic", "--range-ratio", "0.8"}, "--range-ratio applies to --isl/--osl workloads"},
	} {
		var out, errb bytes.Buffer
		code := run(append([]string{"predict"}, c.args...), &out, &errb)
		if code != exitBadInput || !strings.Contains(errb.String(), c.msg) {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", c.args, code, errb.String(), c.msg)
		}
	}
}

func TestSweepAndBestK(t *testing.T) {
	var out, errb bytes.Buffer
	code := run([]string{"sweep", "--gpu", "b200", "--gpus", "4", "--isl", "1024", "--osl", "1024", "--steps", "0-3", "--conc", "1,16,64", "--json"}, &out, &errb)
	if code != exitOK {
		t.Fatalf("sweep exit %d: %s", code, errb.String())
	}
	var s struct {
		Points   []map[string]any `json:"points"`
		Frontier []map[string]any `json:"frontier"`
	}
	if err := json.Unmarshal(out.Bytes(), &s); err != nil {
		t.Fatal(err)
	}
	if len(s.Points) == 0 || len(s.Frontier) == 0 {
		t.Fatalf("sweep gave %d points, %d on the frontier", len(s.Points), len(s.Frontier))
	}
	for _, k := range []string{"topology", "conc", "steps", "tput_per_gpu", "interactivity"} {
		if _, ok := s.Points[0][k]; !ok {
			t.Errorf("point lacks %q", k)
		}
	}
	out.Reset()
	if code := run([]string{"bestk", "--gpu", "b200", "--topology", "agg:tp4", "--isl", "1024", "--osl", "1024", "--conc", "1,64"}, &out, &errb); code != exitOK {
		t.Fatalf("bestk exit %d: %s", code, errb.String())
	}
	if !strings.Contains(out.String(), "best k") || !strings.Contains(out.String(), "AL") {
		t.Errorf("bestk output:\n%s", out.String())
	}
}

// An empirical histogram sets both the sampler's distribution and the AL:
// lengths 1..4 counted 10, 20, 30, 40 have mean (10+40+90+160)/100 = 3.
func TestPredictEmpiricalHistogram(t *testing.T) {
	h := filepath.Join(t.TempDir(), "h.csv")
	if err := os.WriteFile(h, []byte("length,count\n1,10\n2,20\n3,30\n4,40\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, stderr := runCLI("predict", "--method", "empirical", "--histogram", h, "--steps", "3", "--json")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var got struct {
		AL float64 `json:"al"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatal(err)
	}
	if math.Abs(got.AL-3) > 1e-12 {
		t.Errorf("al %v, want 3", got.AL)
	}
	if code, _, stderr := runCLI("predict", "--method", "empirical", "--histogram", h, "--steps", "2"); code != exitBadInput || !strings.Contains(stderr, "k+1 = 3") {
		t.Errorf("4 lengths at k=2: exit %d, %s", code, stderr)
	}
}

// TestPredictCatalogAndCurves: predict prices on a GPU from --gpu-catalog and
// takes its acceptance from --golden-file.
func TestPredictCatalogAndCurves(t *testing.T) {
	dir := t.TempDir()
	cat := filepath.Join(dir, "gpus.yaml")
	// A GPU the embedded catalog lacks.
	os.WriteFile(cat, []byte(`gpus:
  - name: myb200
    arch: blackwell
    hbm_gb: 180
    hbm_tb_per_s: 8
    tflops: {bf16: 2250, fp8: 4500, nvfp4: 9000}
    nvlink_gb_per_s: 900
    nvlink_domain: 8
    network_gb_per_s: 50
`), 0o644)
	curve := filepath.Join(dir, "mine_mtp.yaml")
	os.WriteFile(curve, []byte("qwen3.5-397b-a17b-nvfp4:\n  thinking_on:\n    1: 1.5\n    2: 1.9\n    3: 2.1\n"), 0o644)
	base := []string{"predict", "--topology", "agg:tp4", "--isl", "1024", "--osl", "1024", "--steps", "3", "--conc", "4", "--requests", "16", "--json"}
	var out, errb bytes.Buffer
	if code := run(append(base, "--gpu-catalog", cat, "--gpu", "myb200", "--golden-file", curve), &out, &errb); code != exitOK {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	var m map[string]any
	if err := json.Unmarshal(out.Bytes(), &m); err != nil {
		t.Fatal(err)
	}
	if m["al"].(float64) != 2.1 {
		t.Errorf("al = %v, want 2.1 from --golden-file", m["al"])
	}
	errb.Reset()
	if code := run(append(base, "--gpu", "myb200"), &out, &errb); code != exitBadInput || !strings.Contains(errb.String(), "unknown GPU") {
		t.Errorf("without --gpu-catalog: exit %d, %s", code, errb.String())
	}
	for _, cmd := range []string{"sweep", "bestk"} {
		errb.Reset()
		if code := run([]string{cmd, "--gpu-catalog", filepath.Join(dir, "missing.yaml")}, &out, &errb); code != exitBadInput || !strings.Contains(errb.String(), "missing.yaml") {
			t.Errorf("%s --gpu-catalog missing: exit %d, %s", cmd, code, errb.String())
		}
	}
}

// TestPredictJSONInputs: --json echoes what was predicted under "inputs",
// in sweep's vocabulary (specsim_version, steps, workload +
// workload_params, query, gpus_per_host, nvlink_domain_gpus), server
// settings included, and the echoed query predicts the same point again.
// k=3 on the Qwen3.5 golden curve (thinking on) is AL 3.39 (golden/data,
// TestPredictJSON); a B200 host holds 8 GPUs, cut to the 4-GPU NVLink
// domain asked for.
func TestPredictJSONInputs(t *testing.T) {
	var out, errb bytes.Buffer
	args := []string{"predict", "--gpu", "b200", "--isl", "1024", "--osl", "256", "--conc", "4", "--steps", "3", "--requests", "24", "--seed", "7",
		"--max-running", "2", "--mem-fraction", "0.85", "--kv-dtype", "bf16", "--nvlink-domain-gpus", "4", "--json"}
	code := run(args, &out, &errb)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	var m struct {
		Inputs     map[string]any `json:"inputs"`
		TputPerGPU float64        `json:"tput_per_gpu"`
	}
	if err := json.Unmarshal(out.Bytes(), &m); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"model": "Qwen3.5-397B-A17B", "gpu": "b200", "precision": "fp4", "engine": "sglang", "topology": "agg:tp2",
		"conc": 4.0, "spec": "mtp", "steps": 3.0, "al": 3.39, "method": "sglang-match-expected", "thinking": "on", "seed": 7.0,
		"workload": "fixed", "workload_params": map[string]any{"isl": 1024.0, "osl": 256.0, "range_ratio": 0.8},
		"gpus_per_host": 4.0, "nvlink_domain_gpus": 4.0}
	for k, v := range want {
		if !reflect.DeepEqual(m.Inputs[k], v) {
			t.Errorf("inputs.%s = %#v, want %#v", k, m.Inputs[k], v)
		}
	}
	if v, _ := m.Inputs["specsim_version"].(string); v == "" || m.Inputs["version"] != nil || m.Inputs["k"] != nil {
		t.Errorf("inputs.specsim_version %q, version %v, k %v", v, m.Inputs["version"], m.Inputs["k"])
	}
	q, _ := m.Inputs["query"].(map[string]any)
	for k, v := range map[string]any{"max_running": 2.0, "mem_fraction": 0.85, "kv_dtype": "bf16", "nvlink_domain_gpus": 4.0, "requests": 24.0, "topology": "agg:tp2"} {
		if q[k] != v {
			t.Errorf("inputs.query.%s = %v, want %v", k, q[k], v)
		}
	}
	// Rebuilt from the echo: the same figure.
	var typed struct {
		Inputs struct {
			Query simulate.QueryInputs `json:"query"`
		} `json:"inputs"`
	}
	json.Unmarshal(out.Bytes(), &typed)
	set, _ := golden.Load("", nil)
	cat := kernels.DefaultCatalog()
	r, err := typed.Inputs.Query.ToQuery().Resolve(set, cat)
	if err != nil {
		t.Fatal(err)
	}
	topo, _ := simulate.ParseTopology("agg:tp2")
	again, err := simulate.Predict(r, topo, 4, 3)
	if err != nil || again.TputPerGPU != m.TputPerGPU {
		t.Errorf("rebuilt from inputs.query: %v %v tok/s/GPU, predict said %v", err, again, m.TputPerGPU)
	}
}

// TestPredictMarkdownTablesEnd: GitHub reads a non-blank line right under a
// table as one more row, so every table ends with a blank line.
func TestPredictMarkdownTablesEnd(t *testing.T) {
	var out, errb bytes.Buffer
	if code := run([]string{"predict", "--gpu", "b200", "--isl", "1024", "--osl", "256", "--conc", "4", "--requests", "24", "--format", "markdown"}, &out, &errb); code != exitOK {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	lines := strings.Split(out.String(), "\n")
	for i := 1; i < len(lines); i++ {
		if strings.HasPrefix(lines[i-1], "|") && lines[i] != "" && !strings.HasPrefix(lines[i], "|") {
			t.Errorf("line %d %q follows a table row without a blank line", i+1, lines[i])
		}
	}
}

// TestPredictAllReduceFusionFlags: Qwen3.5 FP8 at TP8 on the H200 gets
// FlashInfer's all-reduce fusion from SGLang's own rule (server_args.py
// _handle_model_specific_adjustments: listed architecture, SM90, TP > 1,
// one node, no DP attention, no all-to-all backend), and the source line
// says so; --enforce-disable-flashinfer-allreduce-fusion turns it off, even
// with --enable-flashinfer-allreduce-fusion, and the two RMSNorms per layer
// it had fused come back into the norms row.
func TestPredictAllReduceFusionFlags(t *testing.T) {
	base := []string{"predict", "--gpu", "h200", "--precision", "fp8", "--topology", "agg:tp8", "--conc", "4",
		"--isl", "1024", "--osl", "256", "--steps", "3", "--requests", "20", "--json"}
	type stepMS struct {
		Verify  struct{ Norms float64 } `json:"verify"`
		Sources []string                `json:"sources"`
	}
	predict := func(extra ...string) stepMS {
		t.Helper()
		code, out, errs := runCLI(append(append([]string(nil), base...), extra...)...)
		if code != exitOK {
			t.Fatalf("%v: exit %d: %s", extra, code, errs)
		}
		var v struct {
			StepMS stepMS `json:"step_ms"`
		}
		if err := json.Unmarshal([]byte(out), &v); err != nil {
			t.Fatal(err)
		}
		return v.StepMS
	}
	note := func(s stepMS) string {
		for _, n := range s.Sources {
			if strings.HasPrefix(n, "norms: FlashInfer all-reduce fusion") {
				return n
			}
		}
		t.Fatalf("no fusion source line in %q", s.Sources)
		return ""
	}
	on := predict()
	if n := note(on); !strings.Contains(n, "on by SGLang's own rule") || !strings.Contains(n, "Qwen3_5MoeForConditionalGeneration") {
		t.Errorf("default: %q, want on by the engine's rule", n)
	}
	for _, extra := range [][]string{{"--enforce-disable-flashinfer-allreduce-fusion"}, {"--enable-flashinfer-allreduce-fusion", "--enforce-disable-flashinfer-allreduce-fusion"}} {
		off := predict(extra...)
		if n := note(off); !strings.Contains(n, "off by --enforce-disable-flashinfer-allreduce-fusion") {
			t.Errorf("%v: %q, want off by the flag", extra, n)
		}
		if !(off.Verify.Norms > on.Verify.Norms) {
			t.Errorf("%v: verify norms %.4f ms, want more than the fused %.4f ms", extra, off.Verify.Norms, on.Verify.Norms)
		}
	}
}

// predict --steps 0 is no speculation (the README's "--spec none (or
// --steps 0)"): the same JSON as --spec none.
func TestPredictStepsZero(t *testing.T) {
	args := []string{"predict", "--gpu", "b200", "--topology", "agg:tp4", "--conc", "8", "--isl", "1024", "--osl", "1024", "--requests", "40", "--json"}
	code, zero, errs := runCLI(append(args, "--steps", "0")...)
	if code != exitOK {
		t.Fatalf("--steps 0: exit %d %s", code, errs)
	}
	_, none, _ := runCLI(append(args, "--spec", "none")...)
	if zero != none {
		t.Errorf("--steps 0 and --spec none differ:\n%s\n%s", zero, none)
	}
}

// predict marks an instance larger than one host "multi-node", as sweep
// marks its points: agg:dep8 on GB300 (4 GPUs a host) spans 2 hosts,
// agg:tp4 one; on B200 (8 a host) agg:dep8 spans one.
func TestPredictMultiNodeNote(t *testing.T) {
	for _, tc := range []struct {
		gpu, topo string
		multi     bool
	}{
		{"gb300", "agg:dep8", true},
		{"gb300", "agg:tp4", false},
		{"b200", "agg:dep8", false},
	} {
		args := []string{"predict", "--gpu", tc.gpu, "--precision", "fp4", "--topology", tc.topo, "--isl", "1024", "--osl", "1024", "--conc", "16", "--requests", "32"}
		_, text, _ := runCLI(args...)
		code, js, errs := runCLI(append(args, "--json")...)
		if code != exitOK {
			t.Fatalf("%v: exit %d %s", args, code, errs)
		}
		var d struct{ Notes []string }
		if err := json.Unmarshal([]byte(js), &d); err != nil {
			t.Fatal(err)
		}
		gotJSON := len(d.Notes) > 0 && d.Notes[0] == "multi-node"
		gotText := strings.Contains(text, "(note: multi-node)")
		if gotJSON != tc.multi || gotText != tc.multi {
			t.Errorf("%s %s: notes %v, text note %v; want multi-node %v", tc.gpu, tc.topo, d.Notes, gotText, tc.multi)
		}
	}
}

// predict --format csv is for programs: snake_case headers and names, one
// number per cell in the number columns, and the same figures as --json.
func TestPredictCSV(t *testing.T) {
	args := []string{"predict", "--gpu", "b200", "--topology", "agg:tp4", "--conc", "8", "--isl", "1024", "--osl", "1024", "--requests", "40"}
	code, out, errs := runCLI(append(args, "--format", "csv")...)
	if code != exitOK {
		t.Fatalf("exit %d %s", code, errs)
	}
	_, js, _ := runCLI(append(args, "--json")...)
	var d struct {
		Tput float64 `json:"tput_per_gpu"`
		Step struct {
			Total float64 `json:"total"`
		} `json:"step_ms"`
	}
	if err := json.Unmarshal([]byte(js), &d); err != nil {
		t.Fatal(err)
	}
	snake := regexp.MustCompile(`^[a-z][a-z0-9_]*$`)
	tabs := csvTables(t, out)
	if len(tabs) != 4 {
		t.Fatalf("%d tables, want metrics, step, memory, limits:\n%s", len(tabs), out)
	}
	text := map[string]bool{"unit": true, "capped_by": true, "deployed_max_running_from": true, "role": true}
	for _, tab := range tabs {
		for _, h := range tab[0] {
			if !snake.MatchString(h) {
				t.Errorf("header %q is not snake_case", h)
			}
		}
		for _, row := range tab[1:] {
			for j, cell := range row {
				switch {
				case j == 0 && tab[0][0] != "role":
					if !snake.MatchString(cell) {
						t.Errorf("name %q is not snake_case", cell)
					}
				case j == 0 || text[tab[0][j]] || cell == "":
				default:
					if _, err := strconv.ParseFloat(cell, 64); err != nil {
						t.Errorf("%s %s: %q is not one number", row[0], tab[0][j], cell)
					}
				}
			}
		}
	}
	if got := tabs[0][1]; got[0] != "tput_per_gpu" || got[1] != strconv.FormatFloat(d.Tput, 'g', -1, 64) {
		t.Errorf("first metric %v, want tput_per_gpu %v", got, d.Tput)
	}
	if last := tabs[1][len(tabs[1])-1]; last[0] != "total" || last[1] != strconv.FormatFloat(d.Step.Total, 'g', -1, 64) || last[2] != "1" {
		t.Errorf("step total %v, want %v with share 1", last, d.Step.Total)
	}
}

// predict's header names both seeds as given: --seed (the simulation's)
// and the agentx replay's own (--agentx seed=, default 42), never one
// for the other.
func TestPredictHeaderSeeds(t *testing.T) {
	for _, tc := range []struct {
		args  []string
		wants []string
	}{
		{[]string{"--seed", "7", "--agentx", "duration=600"}, []string{"agentx seed 42\n", "(event, seed 7)"}},
		{[]string{"--seed", "7", "--agentx", "duration=600,seed=5"}, []string{"agentx seed 5\n", "(event, seed 7)"}},
		{[]string{"--agentx", "duration=600"}, []string{"agentx seed 42\n", "(event, seed 1)"}},
		{[]string{"--seed", "3", "--isl", "1024", "--osl", "128", "--conc", "4"}, []string{"(event, seed 3)"}},
	} {
		code, out, stderr := runCLI(append([]string{"predict"}, tc.args...)...)
		if code != exitOK {
			t.Fatalf("predict %v: exit %d, %s", tc.args, code, stderr)
		}
		head := strings.Join(strings.SplitN(out, "\n", 3)[:2], "\n")
		for _, w := range tc.wants {
			if !strings.Contains(head+"\n", w) {
				t.Errorf("predict %v header\n%s\nlacks %q", tc.args, head, w)
			}
		}
	}
}
