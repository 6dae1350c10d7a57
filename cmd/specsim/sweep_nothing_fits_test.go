package main

import (
	"strings"
	"testing"
)

// TestSweepNothingFits: a sweep none of whose configurations fits in
// memory is an error (exit 2) that shows the arithmetic of the largest
// configuration tried and what to change, not empty tables with exit 0.
// Qwen3.5-397B-A17B at FP8 is about 397e9 bytes of weights (370 GiB) plus
// its draft; an H100's 80 GB = 74.5 GiB at mem-fraction 0.9 leaves 67.1
// GiB, so the weights need ceil(381/67.1) = 6 GPUs, a topology of 8.
// Second method: the same sweep at --gpus 8 finds feasible points.
func TestSweepNothingFits(t *testing.T) {
	for _, tc := range []struct {
		gpus string
		code int
		want []string
	}{
		{"1", exitBadInput, []string{"none of the 11 configurations fits in memory", "agg instance (tp1 on h100", "the weights alone do not fit", "6 GPUs' worth", "give --gpus 8 or more"}},
		{"4", exitBadInput, []string{"(tp4 on h100", "give --gpus 8 or more"}},
		{"8", exitOK, nil},
	} {
		code, out, errs := runCLI("sweep", "--gpus", tc.gpus, "--gpu", "h100", "--precision", "fp8", "--json")
		if code != tc.code {
			t.Errorf("--gpus %s: exit %d, want %d (%s)", tc.gpus, code, tc.code, errs)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(errs, w) {
				t.Errorf("--gpus %s: stderr lacks %q:\n%s", tc.gpus, w, errs)
			}
		}
		if tc.code == exitOK && !strings.Contains(out, `"points": [`) {
			t.Errorf("--gpus %s: no points in %.300s", tc.gpus, out)
		}
	}
}
