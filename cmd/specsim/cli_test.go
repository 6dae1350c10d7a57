package main

import (
	"bytes"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// runCLI runs specsim with args as a user would and returns the exit code
// and what it printed.
func runCLI(args ...string) (code int, stdout, stderr string) {
	var out, errb bytes.Buffer
	code = run(args, &out, &errb)
	return code, out.String(), errb.String()
}

// keysOf lists a decoded JSON object's keys, sorted.
func keysOf(m map[string]any) []string {
	k := make([]string, 0, len(m))
	for key := range m {
		k = append(k, key)
	}
	sort.Strings(k)
	return k
}

// TestLogsWarnsOfTimelineGap: the fixture's 2025 and 2026 stamps (365
// days and 1 s apart) are said on stderr, naming the file; the summary
// still prints and exits 0.
func TestLogsWarnsOfTimelineGap(t *testing.T) {
	path := filepath.Join("..", "..", "audit", "enginelog", "testdata", "sglang_layouts.log")
	code, out, errs := runCLI("logs", path)
	if code != exitOK || !strings.Contains(out, "over time (s;") ||
		!strings.Contains(errs, "specsim logs: warning: the stamps jump 8760h0m1s (31536001 s) from "+path+":3") {
		t.Errorf("exit %d, stderr %q", code, errs)
	}
}

// TestBestKHeader: bestk's first line names the precision, the GPU as
// predict spells it and the workload, as predict's does.
func TestBestKHeader(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"bestk", "--conc", "1"}, "Qwen3.5-397B-A17B FP4 on 2 x GB300, agg:tp2, AgentX trace replay: "},
		{[]string{"bestk", "--conc", "1", "--isl", "1024", "--osl", "512", "--gpu", "b200", "--precision", "fp8", "--topology", "agg:tp8"}, "Qwen3.5-397B-A17B FP8 on 8 x B200, agg:tp8, 1024/512 tokens: "},
	} {
		code, out, stderr := runCLI(c.args...)
		if code != exitOK || !strings.HasPrefix(out, c.want) {
			t.Errorf("%v: exit %d, first line %q (stderr %q), want it to start %q", c.args, code, strings.SplitN(out, "\n", 2)[0], stderr, c.want)
		}
	}
}
