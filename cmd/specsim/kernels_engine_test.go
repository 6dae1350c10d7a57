package main

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
)

// TestKernelsPredictGDNModes: the command prices SGLang's chunked
// kernel from kernels/data/h200/gdn_chunk.csv (TP4 row, batch 1, 4096
// tokens: 212.274 us under a graph, 867.837 us eager), and the mode follows
// --q-len unless --mode says otherwise.
func TestKernelsPredictGDNModes(t *testing.T) {
	code, out, stderr := runCLI("kernels", "predict", "--gpu", "h200", "--op", "gdn", "--mode", "prefill", "--batch", "1",
		"--q-len", "4096", "--heads", "16", "--kv-heads", "4", "--head-dim", "128", "--json")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var p struct {
		LatencyUS  float64 `json:"latency_us"`
		EagerUS    float64 `json:"eager_us"`
		Mode       string  `json:"mode"`
		Kernel     string  `json:"kernel"`
		Source     string  `json:"source"`
		StateDType string  `json:"state_dtype"`
	}
	if err := json.Unmarshal([]byte(out), &p); err != nil {
		t.Fatal(err)
	}
	if math.Abs(p.LatencyUS-212.274) > 1e-3 || math.Abs(p.EagerUS-867.837) > 1e-3 || p.Mode != "prefill" || p.Kernel != "sglang_chunk" || p.Source != "measured-interpolated" || p.StateDType != "fp32" {
		t.Errorf("prediction %+v", p)
	}
	code, out, _ = runCLI("kernels", "predict", "--gpu", "h200", "--op", "gdn", "--batch", "1", "--q-len", "4096", "--heads", "16", "--kv-heads", "4", "--head-dim", "128")
	if code != exitOK || !strings.Contains(out, "prefill") || !strings.Contains(out, "eager_us") || !strings.Contains(out, "867.84") {
		t.Errorf("default mode at q_len 4096: exit %d\n%s", code, out)
	}
	code, out, _ = runCLI("kernels", "predict", "--gpu", "h200", "--op", "gdn", "--batch", "16", "--q-len", "4", "--heads", "8", "--kv-heads", "2", "--head-dim", "128", "--json")
	if code != exitOK || !strings.Contains(out, `"mode": "verify"`) {
		t.Errorf("q_len 4: exit %d %s", code, out)
	}
	for _, bad := range [][]string{
		{"--mode", "decode", "--q-len", "4"},
		{"--mode", "extend", "--q-len", "4"},
		{"--state-dtype", "fp8", "--q-len", "4"},
		{"--mode", "prefill", "--no-intermediate", "--q-len", "4096"},
	} {
		args := append([]string{"kernels", "predict", "--gpu", "h200", "--op", "gdn", "--batch", "1", "--heads", "8", "--kv-heads", "2", "--head-dim", "128"}, bad...)
		if code, _, stderr := runCLI(args...); code != exitBadInput || stderr == "" {
			t.Errorf("%v: exit %d", bad, code)
		}
	}
}

func TestKernelsPredictKernelTable(t *testing.T) {
	d := "../../kernels/testdata/aic/"
	code, out, stderr := runCLI("kernels", "predict", "--gpu", "b200", "--kernel-table", d+"moe_perf.txt", "--kernel-table", d+"gdn_perf.txt",
		"--op", "moe", "--moe-kernel", "fused", "--tokens", "16", "--experts", "512", "--topk", "10", "--hidden", "4096", "--inter", "256", "--json")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var p struct {
		LatencyUS float64 `json:"latency_us"`
		Source    string  `json:"source"`
	}
	if err := json.Unmarshal([]byte(out), &p); err != nil {
		t.Fatal(err)
	}
	// the fixture's uniform row at 16 tokens: 0.09 ms
	if math.Abs(p.LatencyUS-90) > 1e-6 || p.Source != "measured-interpolated" || !strings.Contains(stderr, "skipped: 1 gdn causal_conv1d_fn") {
		t.Errorf("prediction %+v stderr %s", p, stderr)
	}
	if code, _, stderr := runCLI("kernels", "predict", "--gpu", "h200", "--kernel-table", d+"moe_perf.txt", "--op", "copy", "--n", "100"); code != exitBadInput || !strings.Contains(stderr, "NVIDIA B200") {
		t.Errorf("device mismatch: exit %d %s", code, stderr)
	}
	if code, _, stderr := runCLI("kernels", "predict", "--gpu", "b200", "--kernel-table", d+"README.md", "--op", "copy", "--n", "100"); code != exitBadInput || !strings.Contains(stderr, "README.md") {
		t.Errorf("not a database: exit %d %s", code, stderr)
	}
}

func TestKernelsValidateEngineTables(t *testing.T) {
	code, out, stderr := runCLI("kernels", "validate", "--gpu", "h200", "--op", "gdn", "--json")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var v struct {
		Engine []struct {
			Table, Metric, Kind string
			Points              int
			MedianAbsErr        float64 `json:"median_abs_err"`
		} `json:"engine_kernels"`
	}
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, e := range v.Engine {
		if e.Table == "gdn_chunk" && e.Metric == "graph_us" && e.Kind == "held-aside" {
			found = e.Points == 24
		}
		if e.Table == "moe_triton" {
			t.Errorf("--op gdn listed %s", e.Table)
		}
	}
	if !found {
		t.Errorf("no held-aside gdn_chunk graph row of 24 points: %s", out)
	}
}

// TestKernelsPredictEP: --ep prices one expert-parallel rank. The EP8 rank
// of Qwen3.5-397B-A17B (64 of 512 experts, top-10, block FP8) comes from
// moe_triton_ep8.csv (190.551 us at 64 tokens) labelled as the derived
// busiest rank; the same flags without --ep are a plain 64-expert layer and
// not that measurement.
func TestKernelsPredictEP(t *testing.T) {
	shape := []string{"kernels", "predict", "--gpu", "h200", "--op", "moe", "--moe-kernel", "triton", "--dtype", "fp8",
		"--tokens", "64", "--experts", "64", "--topk", "10", "--hidden", "4096", "--inter", "1024"}
	type pred struct {
		LatencyUS float64 `json:"latency_us"`
		Source    string  `json:"source"`
		Note      string  `json:"note"`
	}
	run := func(extra ...string) pred {
		t.Helper()
		code, out, stderr := runCLI(append(append(append([]string{}, shape...), extra...), "--json")...)
		if code != exitOK {
			t.Fatalf("%v: exit %d: %s", extra, code, stderr)
		}
		var p pred
		if err := json.Unmarshal([]byte(out), &p); err != nil {
			t.Fatal(err)
		}
		return p
	}
	if p := run("--ep", "8"); math.Abs(p.LatencyUS-190.551) > 1e-3 || p.Source != "measured-interpolated" ||
		!strings.Contains(p.Note, "busiest of 8 ranks, derived from per-rank measurements (kernels/collect/merge_ep.py)") {
		t.Errorf("--ep 8: %+v", p)
	}
	if p := run(); p.Source == "measured-interpolated" || p.Source == "measured-extrapolated" {
		t.Errorf("plain 64 experts: %+v", p)
	}
	for _, bad := range [][]string{{"--ep", "0"}, {"--ep", "8", "--skew", "0.5"}, {"--ep", "8", "--topk", "600"}} {
		if code, _, stderr := runCLI(append(append([]string{}, shape...), bad...)...); code != exitBadInput || !strings.Contains(stderr, "--ep") {
			t.Errorf("%v: exit %d %s", bad, code, stderr)
		}
	}
	if code, _, stderr := runCLI("kernels", "predict", "--gpu", "h200", "--op", "gemm", "--m", "8", "--n", "64", "--k", "64", "--ep", "2"); code != exitBadInput || !strings.Contains(stderr, "--ep 2") {
		t.Errorf("--ep on gemm: exit %d %s", code, stderr)
	}
}
