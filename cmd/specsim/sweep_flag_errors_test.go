package main

import (
	"strings"
	"testing"
)

// TestSweepPredictFlagErrors: a refusal names the flag the user gave and
// what to change, never a flag the user did not give (no --al among
// them).
func TestSweepPredictFlagErrors(t *testing.T) {
	for _, tc := range []struct {
		args    []string
		want    string
		notWant string
	}{
		{[]string{"sweep", "--spec", "none", "--steps", "0-8", "--gpus", "2"}, "--spec none sweeps k = 0 only; drop --steps", "--al"},
		{[]string{"sweep", "--spec", "none", "--steps", "2-4", "--gpus", "2"}, "--spec none sweeps k = 0 only; drop --steps", "--al"},
	} {
		code, _, stderr := runCLI(tc.args...)
		if code != exitBadInput || !strings.Contains(stderr, tc.want) || strings.Contains(stderr, tc.notWant) {
			t.Errorf("specsim %s: exit %d, %q; want exit %d saying %q and not %q", strings.Join(tc.args, " "), code, stderr, exitBadInput, tc.want, tc.notWant)
		}
	}
}
