package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestRecipeEmitCarriesServerSettings: every server setting predict
// --recipe reads back (SGLang's spec v2 env, all-reduce fusion flags,
// speculative MoE backend, page size, mamba cache size and strategy, the
// prefill role's memory share and mamba cache) is written by recipe emit,
// so that predict --recipe on the recipe gives what predict gives with
// the flags.
func TestRecipeEmitCarriesServerSettings(t *testing.T) {
	disagg := []string{"--topology", "disagg:1xtp2+1xdep4", "--conc", "16"}
	for _, tc := range []struct {
		flags []string
		line  string // what the recipe must say
	}{
		{[]string{"--spec-v2"}, "SGLANG_ENABLE_SPEC_V2: '1'"},
		{[]string{"--enforce-disable-flashinfer-allreduce-fusion"}, "enforce-disable-flashinfer-allreduce-fusion: true"},
		{[]string{"--enable-flashinfer-allreduce-fusion", "--topology", "agg:dep4"}, "enable-flashinfer-allreduce-fusion: true"},
		{[]string{"--speculative-moe-runner-backend", "triton"}, "speculative-moe-runner-backend: triton"},
		{[]string{"--page-size", "16"}, "page-size: 16"},
		{[]string{"--max-mamba-cache-size", "60", "--conc", "32"}, "max-mamba-cache-size: 60"},
		{[]string{"--mamba-scheduler-strategy", "no_buffer"}, "mamba-scheduler-strategy: no_buffer"},
		{append([]string{"--prefill-mem-fraction", "0.7"}, disagg...), "mem-fraction-static: 0.7"},
		{append([]string{"--prefill-max-mamba-cache-size", "50"}, disagg...), "max-mamba-cache-size: 50"},
		{append([]string{"--engine", "vllm", "--prefill-mem-fraction", "0.7"}, disagg...), "gpu-memory-utilization: 0.7"},
		// SGLang's automatic share on a GB300 (288e9 B = 274658 MiB) at
		// TP2, chunk 16384, graphs to 256, MTP: reserved 512 + 1.5 x 16384
		// + 2 x 256 + 2/8 x 1024 + 2048 = 27904 MiB, (274658 - 27904) /
		// 274658 = 0.898.
		{[]string{"--mem-fraction-auto"}, "mem-fraction-static: 0.898"},
	} {
		name := strings.Join(tc.flags, " ")
		t.Run(name, func(t *testing.T) {
			flags := append([]string{"--agentx", "duration=60"}, tc.flags...)
			code, text, stderr := runCLI(append([]string{"recipe", "emit"}, flags...)...)
			if code != exitOK {
				t.Fatalf("recipe emit: exit %d: %s", code, stderr)
			}
			if !strings.Contains(text, tc.line) {
				t.Errorf("recipe lacks %q:\n%s", tc.line, text)
			}
			file := filepath.Join(t.TempDir(), "r.yaml")
			if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
			code, out, stderr := runCLI(append([]string{"predict", "--json"}, flags...)...)
			if code != exitOK {
				t.Fatalf("predict: exit %d: %s", code, stderr)
			}
			var want map[string]any
			if err := json.Unmarshal([]byte(out), &want); err != nil {
				t.Fatal(err)
			}
			code, out, stderr = runCLI("predict", "--recipe", file, "--agentx", "duration=60", "--json")
			if code != exitOK {
				t.Fatalf("predict --recipe: exit %d: %s", code, stderr)
			}
			var got struct {
				Variants []struct {
					Result map[string]any `json:"result"`
				} `json:"variants"`
			}
			if err := json.Unmarshal([]byte(out), &got); err != nil || len(got.Variants) != 1 {
				t.Fatalf("predict --recipe JSON: %v, %d variants", err, len(got.Variants))
			}
			for _, k := range []string{"tput_per_gpu", "tpot_ms", "ttft_ms_p90", "e2el_s", "memory_gib", "step_ms"} {
				if g, w := got.Variants[0].Result[k], want[k]; !reflect.DeepEqual(g, w) {
					t.Errorf("%s: predict --recipe gives %v, predict %v", k, g, w)
				}
			}
		})
	}
}

// TestPredictRecipeJSONStepSources: predict --recipe --json's result
// carries the decode step's cost sources (step_ms.sources) and each
// variant the uncertainty band, as predict --json does for the same
// deployment. The recipe runs first, so that no earlier predict in this
// process shares its result.
func TestPredictRecipeJSONStepSources(t *testing.T) {
	for _, flags := range [][]string{
		{"--agentx", "duration=61", "--conc", "3"},
		{"--agentx", "duration=61", "--conc", "3", "--engine", "vllm", "--topology", "agg:tp4"},
	} {
		code, text, stderr := runCLI(append([]string{"recipe", "emit"}, flags...)...)
		if code != exitOK {
			t.Fatalf("recipe emit %v: exit %d: %s", flags, code, stderr)
		}
		file := filepath.Join(t.TempDir(), "r.yaml")
		if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		type step struct {
			Sources []string `json:"sources"`
		}
		code, out, stderr := runCLI("predict", "--recipe", file, "--agentx", "duration=61", "--json")
		if code != exitOK {
			t.Fatalf("predict --recipe %v: exit %d: %s", flags, code, stderr)
		}
		var got struct {
			Variants []struct {
				Result struct {
					StepMS step `json:"step_ms"`
				} `json:"result"`
				Band map[string]any `json:"band"`
			} `json:"variants"`
		}
		if err := json.Unmarshal([]byte(out), &got); err != nil || len(got.Variants) != 1 {
			t.Fatalf("predict --recipe JSON: %v", err)
		}
		code, out, stderr = runCLI(append([]string{"predict", "--json"}, flags...)...)
		if code != exitOK {
			t.Fatalf("predict %v: exit %d: %s", flags, code, stderr)
		}
		var want struct {
			StepMS step           `json:"step_ms"`
			Band   map[string]any `json:"band"`
		}
		if err := json.Unmarshal([]byte(out), &want); err != nil {
			t.Fatal(err)
		}
		if len(want.StepMS.Sources) == 0 || !reflect.DeepEqual(got.Variants[0].Result.StepMS.Sources, want.StepMS.Sources) {
			t.Errorf("%v: predict --recipe step_ms.sources %q, predict's %q", flags, got.Variants[0].Result.StepMS.Sources, want.StepMS.Sources)
		}
		if len(want.Band) == 0 || !reflect.DeepEqual(got.Variants[0].Band, want.Band) {
			t.Errorf("%v: predict --recipe band %v, predict's %v", flags, got.Variants[0].Band, want.Band)
		}
	}
}
