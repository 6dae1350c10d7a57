package main

import (
	"strings"
	"testing"
)

// Help texts name what the commands do (review items 9, 10, 30, 32).
func TestHelpTexts(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want []string
		not  []string
	}{
		{[]string{"recipe", "--help"}, []string{"specsim recipe emit", "Finding codes", "cuda-graph-below-running-cap", "engine-unknown"}, nil},
		{[]string{"kernels", "--help"}, []string{"Examples:", "specsim kernels predict --gpu h200"}, nil},
		{[]string{"kernels", "predict", "--help"}, []string{"embeds no measured collective table"}, []string{"collectives CSV FILE to calibrate on instead of the embedded table"}},
		{[]string{"sweep", "--help"}, []string{"text|json|markdown|csv"}, nil},
		{[]string{"merge", "--help"}, []string{"text|json|markdown|csv", "runs the\nunsharded sweep's refinement rounds"}, nil},
	} {
		_, out, errs := runCLI(tc.args...)
		text := out + errs
		for _, w := range tc.want {
			if !strings.Contains(text, w) {
				t.Errorf("%v: no %q in\n%s", tc.args, w, text)
			}
		}
		for _, n := range tc.not {
			if strings.Contains(text, n) {
				t.Errorf("%v: still says %q", tc.args, n)
			}
		}
	}
}
