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
		// The EP fallback's source label and the default workload as they run.
		{[]string{"kernels", "predict", "--help"}, []string{`("measured-tp-equivalent")`, "past that table's token range", "measured-extrapolated"}, nil},
		{[]string{"predict", "--help"}, []string{"the AgentX trace replay\nwith 7 session trees", "fixed: a closed loop of --isl/--osl requests", "(--workload fixed, which needs them)"},
			[]string{"Closed loop: --conc\nsessions", "7 agentic sessions"}},
		// What --recipe FILE[:selector]'s selector is, with an example.
		{[]string{"predict", "--help"}, []string{"The selector\npicks variants", "override_<name>", "specsim predict --recipe agg.yaml:override_c24"}, nil},
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

// --help and "help CMD" write the help to stdout and exit 0; a bad flag
// writes its error and one line pointing to --help to stderr, exit 2.
func TestHelpToStdout(t *testing.T) {
	for _, args := range [][]string{{"predict", "--help"}, {"help", "predict"}, {"sweep", "-h"}, {"recipe", "emit", "--help"}, {"help", "bestk"}, {"help", "recipe", "emit"}} {
		code, out, errs := runCLI(args...)
		if code != exitOK || !strings.Contains(out, "\nFlags:\n") || errs != "" {
			t.Errorf("%v: exit %d, %d bytes of stdout, stderr %q", args, code, len(out), errs)
		}
	}
	// 'help CMD SUB' is SUB's help, not CMD's.
	if _, out, _ := runCLI("help", "golden", "show"); !strings.HasPrefix(out, "specsim golden show:") {
		t.Errorf("help golden show printed %.60q", out)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"predict", "--seed", "-1"}, `invalid value "-1" for flag -seed`},
		{[]string{"sweep", "--bogus"}, "flag provided but not defined: -bogus"},
	} {
		code, out, errs := runCLI(tc.args...)
		lines := strings.Split(strings.TrimSpace(errs), "\n")
		if code != exitBadInput || out != "" || len(lines) != 2 || !strings.Contains(lines[0], tc.want) ||
			lines[1] != "Run 'specsim "+tc.args[0]+" --help' for its flags." {
			t.Errorf("%v: exit %d, stdout %q, stderr %q", tc.args, code, out, errs)
		}
	}
}

// --workload fixed is the --isl/--osl workload predict echoes in its JSON:
// accepted with them and the same query, refused without them; the other
// workloads still exclude --isl/--osl.
func TestWorkloadFixedFlag(t *testing.T) {
	base := []string{"predict", "--isl", "1024", "--osl", "128", "--conc", "4", "--json"}
	_, plain, _ := runCLI(base...)
	code, named, stderr := runCLI(append(base, "--workload", "fixed")...)
	if code != exitOK || named != plain || !strings.Contains(named, `"workload": "fixed"`) {
		t.Errorf("--workload fixed --isl/--osl: exit %d, %s; want the output of --isl/--osl alone", code, stderr)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"predict", "--workload", "fixed"}, "--workload fixed takes its lengths from --isl and --osl"},
		{[]string{"predict", "--workload", "agentx", "--isl", "1024", "--osl", "128"}, "--workload agentx and --isl/--osl exclude each other"},
		{[]string{"predict", "--workload", "steady"}, "want agentx, agentx-synthetic or fixed"},
	} {
		if code, _, stderr := runCLI(tc.args...); code != exitBadInput || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, %s; want exit 2 with %q", tc.args, code, stderr, tc.want)
		}
	}
}
