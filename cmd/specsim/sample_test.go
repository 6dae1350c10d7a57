package main

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestSampleJSON(t *testing.T) {
	args := []string{"sample", "--model", "qwen3.5", "--thinking", "on", "--steps", "6", "--method", "sglang-match-expected",
		"--batch", "64", "--iterations", "2000", "--seed", "7", "--json"}
	code, out, errOut := goldenRun(t, args...)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var raw map[string]json.RawMessage
	json.Unmarshal([]byte(out), &raw)
	for _, k := range []string{"method", "target_al", "mean_al", "std", "bias", "histogram", "per_request", "expected_mean"} {
		if _, ok := raw[k]; !ok {
			t.Errorf("key %q missing", k)
		}
	}
	var v struct {
		Method     string                          `json:"method"`
		TargetAL   float64                         `json:"target_al"`
		MeanAL     float64                         `json:"mean_al"`
		Bias       float64                         `json:"bias"`
		Expected   float64                         `json:"expected_mean"`
		Histogram  map[string]int64                `json:"histogram"`
		PerRequest struct{ Min, P50, Max float64 } `json:"per_request"`
	}
	json.Unmarshal([]byte(out), &v)
	if v.Method != "sglang-match-expected" || v.TargetAL != 4.8 || v.Expected != 4.8 || math.Abs(v.Bias-(v.MeanAL-4.8)) > 1e-9 {
		t.Errorf("got %+v", v)
	}
	if v.Histogram["4"]+v.Histogram["5"] != 64*2000 || len(v.Histogram) != 7 {
		t.Errorf("histogram %v", v.Histogram)
	}
	// One shared draw per step: every request has the same mean.
	if v.PerRequest.Min != v.PerRequest.Max || v.PerRequest.P50 != v.MeanAL {
		t.Errorf("per_request %+v, mean %v", v.PerRequest, v.MeanAL)
	}
	_, again, _ := goldenRun(t, args...)
	if again != out {
		t.Error("same flags and seed gave different output")
	}
}

func TestSampleMethods(t *testing.T) {
	hist := filepath.Join(t.TempDir(), "h.csv")
	os.WriteFile(hist, []byte("length,count\n1,1\n3,3\n"), 0o644)
	tests := []struct {
		args     []string
		expected float64
		tol      float64
	}{
		{[]string{"--method", "sglang-multinomial", "--steps", "3", "--al", "3.24", "--iterations", "20000"}, 3.127, 0.001},
		{[]string{"--method", "vllm-synthetic", "--model", "qwen3.5", "--steps", "6"}, 4.8, 1e-6},
		{[]string{"--method", "trtllm", "--model", "qwen3.5", "--steps", "6"}, 4.8, 0.01},
		{[]string{"--method", "chain", "--model", "qwen3.5", "--steps", "6"}, 4.8, 1e-9},
		{[]string{"--method", "empirical", "--histogram", hist}, 2.5, 1e-9},
	}
	for _, tt := range tests {
		code, out, errOut := goldenRun(t, append([]string{"sample", "--json", "--iterations", "500"}, tt.args...)...)
		if code != exitOK {
			t.Errorf("%v: exit %d: %s", tt.args, code, errOut)
			continue
		}
		var v struct {
			Expected float64 `json:"expected_mean"`
		}
		json.Unmarshal([]byte(out), &v)
		if math.Abs(v.Expected-tt.expected) > tt.tol {
			t.Errorf("%v: expected_mean %v, want %v", tt.args, v.Expected, tt.expected)
		}
	}
	code, out, _ := goldenRun(t, "sample", "--model", "qwen3.5", "--steps", "9", "--extrapolate", "--method", "chain", "--iterations", "100", "--json")
	if code != exitOK || !strings.Contains(out, "extrapolated") || !strings.Contains(out, `"10": `) {
		t.Errorf("extrapolated chain: exit %d\n%s", code, out)
	}
	code, out, _ = goldenRun(t, "sample", "--model", "qwen3.5", "--steps", "6", "--method", "chain", "--iterations", "100")
	if code != exitOK || !strings.Contains(out, "expected mean") || !strings.Contains(out, "each request draws its own length") {
		t.Errorf("text: exit %d\n%s", code, out)
	}
}

func TestSampleBadInput(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"--model", "qwen3.5", "--steps", "6", "--batch", "100000", "--iterations", "100000"}, "cap"},
		{[]string{"--model", "qwen3.5", "--steps", "6", "--batch", "0"}, "--batch 0"},
		{[]string{"--model", "qwen3.5", "--steps", "6", "--method", "eagle"}, "unknown --method"},
		{[]string{"--model", "nope", "--steps", "6"}, "unknown model"},
		{[]string{"--model", "qwen3.5", "--steps", "9"}, "--extrapolate"},
		{[]string{"--model", "qwen3.5"}, "--steps 0"},
		{[]string{"--steps", "6"}, "needs --model"},
		{[]string{"--steps", "3", "--al", "5"}, "outside [1, 4]"},
		{[]string{"--model", "qwen3.5", "--steps", "6", "--method", "chain", "--al", "4"}, "does not apply"},
		{[]string{"--method", "empirical"}, "--histogram"},
		{[]string{"--method", "empirical", "--histogram", "/nonexistent.csv"}, "nonexistent.csv"},
		{[]string{"--steps", "3", "--al", "2", "--histogram", "x.csv"}, "empirical only"},
	}
	for _, tt := range tests {
		code, _, errOut := goldenRun(t, append([]string{"sample"}, tt.args...)...)
		if code != exitBadInput || !strings.Contains(errOut, tt.want) {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", tt.args, code, errOut, tt.want)
		}
	}
}

// TestREADMEFigures: figures the README quotes are what the tool and the
// repository give (the sample means drifted to 4.8020, the corpus to
// "519 KB").
func TestREADMEFigures(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	code, out, errs := runCLI("sample", "--model", "qwen3.5", "--steps", "6", "--method", "sglang-match-expected", "--batch", "64", "--iterations", "20000", "--seed", "1", "--json")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var s struct {
		MeanAL float64 `json:"mean_al"`
	}
	if err := json.Unmarshal([]byte(out), &s); err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprintf("match-expected %.4f", s.MeanAL); !strings.Contains(string(readme), want) {
		t.Errorf("README lacks %q", want)
	}
	st, err := os.Stat("../../simulate/agentx/data/kv-cache-tester.agx.gz")
	if err != nil {
		t.Fatal(err)
	}
	n := st.Size()
	if want := fmt.Sprintf("kv-cache-tester.agx.gz` (%d,%03d bytes)", n/1000, n%1000); !strings.Contains(string(readme), want) {
		t.Errorf("README lacks %q", want)
	}
}
