package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestStepsRangeRefusedWhereOneK: predict, predict --recipe and recipe
// emit run one draft length; a range exits 2 naming --steps and pointing
// at sweep and bestk instead of quietly running its lower end.
func TestStepsRangeRefusedWhereOneK(t *testing.T) {
	agg := filepath.Join("..", "..", "testdata", "recipes", "schema1_sglang_qwen3.5_gb300-fp4_agentic_agg-tp2-c1-mtp-hicache.yaml")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"predict", "--steps", "3-4"}, `specsim predict: --steps "3-4": predict takes one draft length k`},
		{[]string{"predict", "--steps", "0-8"}, `specsim predict: --steps "0-8": predict takes one draft length k`},
		{[]string{"predict", "--steps", "3-3"}, `specsim predict: --steps "3-3": predict takes one draft length k`},
		{[]string{"predict", "--recipe", agg, "--steps", "2-5"}, `--steps "2-5": predict takes one draft length k`},
		{[]string{"recipe", "emit", "--steps", "3-5"}, `specsim recipe emit: --steps "3-5": recipe emit takes one draft length k`},
	} {
		code, out, stderr := runCLI(c.args...)
		if code != exitBadInput || out != "" || !strings.Contains(stderr, c.want) || !strings.Contains(stderr, "sweep") {
			t.Errorf("%v: exit %d, stdout %q, stderr %q, want exit 2 and %q", c.args, code, out, stderr, c.want)
		}
	}
	for _, cmd := range [][]string{{"predict"}, {"recipe", "emit"}} {
		code, out, stderr := runCLI(append(cmd, "--help")...)
		if code != exitOK || !strings.Contains(out+stderr, "one value; 0 = no speculation (default 6") || strings.Contains(out+stderr, "sweep and bestk take a range such as 0-8\n") {
			t.Errorf("%v --help: exit %d, --steps line lacks its default 6 or implies ranges:\n%s", cmd, code, out+stderr)
		}
	}
}
