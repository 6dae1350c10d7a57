package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRecipeInvalidValues: a value Settings reads that its engine would
// not accept stops predict --recipe and recipe check with exit 2 and a
// message naming the key path, the value and the range (review 2, #2:
// these fell back to predict's defaults in silence). The ranges are the
// engines' own (SGLang server_args.py, TensorRT-LLM KvCacheConfig).
func TestRecipeInvalidValues(t *testing.T) {
	const (
		sgl = "../../testdata/recipes/schema2_qwen3.5_sglang_gb300-fp4_agentx_agg-variants.yaml"
		trt = "../../testdata/recipes/schema1_trtllm_qwen3.5_gb300-fp4_agentx_disagg-3p2d-dep4-dep4-c704-mtp.yaml"
	)
	for _, tc := range []struct {
		file, from, to string
		want           []string // key path, value, range
	}{
		{sgl, "mem-fraction-static: 0.75", "mem-fraction-static: 2.0", []string{"roles.agg.args.mem-fraction-static", `"2.0"`, "(0, 1]"}},
		{sgl, "mem-fraction-static: 0.75", "mem-fraction-static: .nan", []string{"roles.agg.args.mem-fraction-static", `".nan"`, "(0, 1]"}},
		{sgl, "max-running-requests: 72", "max-running-requests: -5", []string{"roles.agg.args.max-running-requests", `"-5"`, "a positive integer"}},
		{sgl, "kv-cache-dtype: fp8_e4m3", "kv-cache-dtype: int3", []string{"roles.agg.args.kv-cache-dtype", `"int3"`, "one of auto, bf16"}},
		{sgl, "page-size: 64", "page-size: 0", []string{"roles.agg.args.page-size", `"0"`, "a positive integer"}},
		{sgl, "max-mamba-cache-size: 360", "max-mamba-cache-size: -1", []string{"roles.agg.args.max-mamba-cache-size", `"-1"`, "a positive integer"}},
		{sgl, "hicache-ratio: 0.9", "hicache-ratio: .inf", []string{"roles.agg.args.hicache-ratio", `".inf"`, "finite number > 0"}},
		{sgl, "tensor-parallel-size: 2", "tensor-parallel-size: two", []string{"roles.agg.args.tensor-parallel-size", `"two"`, "a positive integer"}},
		{sgl, "tensor-parallel-size: 2", "tensor-parallel-size: -2", []string{"roles.agg.args.tensor-parallel-size", `"-2"`, "a positive integer"}},
		{sgl, "tensor-parallel-size: 2", "tensor-parallel-size: [1, 2]", []string{"roles.agg.args.tensor-parallel-size", "a list", "a positive integer"}},
		{sgl, "speculative-algorithm: NEXTN", "speculative-algorithm: EAGLE9", []string{"roles.agg.args.speculative-algorithm", `"EAGLE9"`, "one of EAGLE, EAGLE3, NEXTN"}},
		{sgl, "speculative-num-steps: 3", "speculative-num-steps: -1", []string{"roles.agg.args.speculative-num-steps", `"-1"`, "a positive integer"}},
		{trt, "free_gpu_memory_fraction: 0.8", "free_gpu_memory_fraction: 1.5", []string{"backend.trtllm_config.prefill.kv_cache_config.free_gpu_memory_fraction", `"1.5"`, "(0, 1]"}},
		{trt, "host_cache_size: 137438953472", "host_cache_size: -1", []string{"backend.trtllm_config.prefill.kv_cache_config.host_cache_size", `"-1"`, ">= 0"}},
	} {
		b, err := os.ReadFile(tc.file)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(b), tc.from) {
			t.Fatalf("%s has no %q", tc.file, tc.from)
		}
		f := filepath.Join(t.TempDir(), "r.yaml")
		if err := os.WriteFile(f, []byte(strings.Replace(string(b), tc.from, tc.to, 1)), 0o644); err != nil {
			t.Fatal(err)
		}
		for _, args := range [][]string{{"predict", "--recipe", f + ":override_c24"}, {"recipe", "check", f}} {
			if strings.Contains(tc.file, "trtllm") {
				args[len(args)-1] = f
			}
			code, _, errs := runCLI(args...)
			if code != exitBadInput {
				t.Errorf("%s %s -> %s: exit %d, want %d (%s)", args[0], tc.from, tc.to, code, exitBadInput, errs)
				continue
			}
			for _, w := range tc.want {
				if !strings.Contains(errs, w) {
					t.Errorf("%s %s: message lacks %q:\n%s", args[0], tc.to, w, errs)
				}
			}
		}
	}
}
