package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSweepPredictFlagErrors: a refusal names the flag the user gave and
// what to change, never a flag the user did not give (no --al among
// them) or one the user did give as missing (--histogram).
func TestSweepPredictFlagErrors(t *testing.T) {
	hist := filepath.Join(t.TempDir(), "h.csv")
	if err := os.WriteFile(hist, []byte("length,count\n1,2\n2,3\n3,5\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args    []string
		want    string
		notWant string
	}{
		{[]string{"sweep", "--spec", "none", "--steps", "0-8", "--gpus", "2"}, "--spec none sweeps k = 0 only; drop --steps", "--al"},
		{[]string{"sweep", "--spec", "none", "--steps", "2-4", "--gpus", "2"}, "--spec none sweeps k = 0 only; drop --steps", "--al"},
		{[]string{"predict", "--histogram", hist}, "--histogram " + hist + ": a histogram applies to method empirical only: add --method empirical", "pass --histogram"},
		{[]string{"sweep", "--histogram", hist, "--gpus", "2"}, "--histogram " + hist + ": a histogram applies to method empirical only", "pass --histogram"},
		{[]string{"bestk", "--histogram", hist, "--steps", "3"}, "--histogram " + hist + ": a histogram applies to method empirical only", "pass --histogram"},
	} {
		code, _, stderr := runCLI(tc.args...)
		if code != exitBadInput || !strings.Contains(stderr, tc.want) || strings.Contains(stderr, tc.notWant) {
			t.Errorf("specsim %s: exit %d, %q; want exit %d saying %q and not %q", strings.Join(tc.args, " "), code, stderr, exitBadInput, tc.want, tc.notWant)
		}
	}
}
