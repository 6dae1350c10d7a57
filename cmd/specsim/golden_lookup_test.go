package main

import (
	"strings"
	"testing"
)

// TestGoldenLookup: the bare AL for scripts (InferenceX qwen3.5_mtp.yaml
// thinking_on[6] = 4.80, printed as %g like SGLANG_SIMULATE_ACC_LEN), and an
// error for a model with several curves unless --draft-model picks one.
func TestGoldenLookup(t *testing.T) {
	code, out, errs := runCLI("golden", "lookup", "--model", "qwen3.5", "--thinking", "on", "--steps", "6")
	if code != exitOK || out != "4.8\n" {
		t.Errorf("exit %d, stdout %q, stderr %s", code, out, errs)
	}
	code, out, errs = runCLI("golden", "lookup", "--model", "minimaxm3", "--steps", "3")
	if code != exitBadInput || out != "" || !strings.Contains(errs, "minimaxm3_eagle3_gqa") || !strings.Contains(errs, "--draft-model") {
		t.Errorf("ambiguous: exit %d, stdout %q, stderr %s", code, out, errs)
	}
	code, gqa, _ := runCLI("golden", "lookup", "--model", "minimaxm3", "--steps", "3", "--draft-model", "org/MiniMax-M3-EAGLE3-GQA")
	_, plain, _ := runCLI("golden", "lookup", "--model", "minimaxm3_eagle3", "--steps", "3")
	if code != exitOK || gqa == "" || gqa == plain {
		t.Errorf("--draft-model gqa: exit %d, %q vs plain %q", code, gqa, plain)
	}
	for _, bad := range [][]string{{"--model", "qwen3.5"}, {"--model", "qwen3.5", "--steps", "99"}, {"--steps", "3"}, {"--model", "nope", "--steps", "3"}} {
		if code, _, _ := runCLI(append([]string{"golden", "lookup"}, bad...)...); code != exitBadInput {
			t.Errorf("%v: exit %d", bad, code)
		}
	}
}
