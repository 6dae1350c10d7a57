package main

import (
	"bytes"
	"encoding/json"
	"os"
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

// A rank that logs no accept length (speculation off) printed "mean accept
// len 0.00", a value no run can have; it is "-" (empty in CSV), as in the
// timeline.
func TestLogsRankWithoutAcceptLen(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "decode.log")
	log := "[2026-07-01 12:00:20 DP0 TP0 EP0] Decode batch, #running-req: 30, accept len: 3.30, gen throughput (token/s): 1000.00, #queue-req: 0,\n" +
		"[2026-07-01 12:00:20 DP1 TP1 EP1] Decode batch, #running-req: 10, gen throughput (token/s): 400.00, #queue-req: 0,\n" +
		"[2026-07-01 12:00:40 DP1 TP1 EP1] Decode batch, #running-req: 20, gen throughput (token/s): 800.00, #queue-req: 0,\n"
	if err := os.WriteFile(path, []byte(log), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		format string
		dp0    string // DP0's row up to its throughput
		dp1    string
	}{
		{"csv", path + ",DP0,sglang,1,3.30,1000.00,", path + ",DP1,sglang,2,,600.00,"},
		{"markdown", "| " + path + " | DP0 | sglang | 1 | 3.30 | 1000.00 |", "| " + path + " | DP1 | sglang | 2 | - | 600.00 |"},
	} {
		code, out, errs := runCLI("logs", "--format", tc.format, path)
		if code != exitOK || !strings.Contains(out, tc.dp0) || !strings.Contains(out, tc.dp1) {
			t.Errorf("%s: exit %d, want rows starting %q and %q in\n%s%s", tc.format, code, tc.dp0, tc.dp1, out, errs)
		}
	}
}

// A log whose only decode line is over the line bound said "no decode
// statistics (1 lines read)", as if the line held none.
func TestLogsNoStatisticsSaysLongLinesSkipped(t *testing.T) {
	dir := t.TempDir()
	line := "[2026-07-01 12:00:20 DP0 TP0 EP0] Decode batch, #running-req: 30, accept len: 3.30, gen throughput (token/s): 1000.00, #queue-req: 0,"
	for _, tc := range []struct {
		name, log, want string
	}{
		{"noise", "nothing here\n", "(1 lines read)\n"},
		{"long", line + strings.Repeat(" ", 70<<10) + "\n", "(1 lines read; 1 over 64 KiB skipped unread)\n"},
	} {
		path := filepath.Join(dir, tc.name+".log")
		if err := os.WriteFile(path, []byte(tc.log), 0o644); err != nil {
			t.Fatal(err)
		}
		code, _, errs := runCLI("logs", path)
		if want := "specsim logs: no decode statistics in " + path + " " + tc.want; code != exitBadInput || errs != want {
			t.Errorf("%s: exit %d, stderr %q, want %q", tc.name, code, errs, want)
		}
	}
}

// TestPredictRetracted: a KV-bound SGLang pool (8 x H200 FP8 TP8,
// 1024/8192 tokens, 512 sessions: 375 whole reservations) retracts, and
// predict says so in its table and its JSON; a pool that is not KV-bound
// shows neither.
func TestPredictRetracted(t *testing.T) {
	args := []string{"predict", "--precision", "fp8", "--gpu", "h200", "--topology", "agg:tp8", "--isl", "1024", "--osl", "8192", "--conc", "512"}
	code, out, errs := runCLI(args...)
	if code != exitOK || !strings.Contains(out, "retracted (KV pool short)") {
		t.Fatalf("exit %d, want the retracted row\n%s%s", code, out, errs)
	}
	code, out, errs = runCLI(append(args, "--json")...)
	var res struct {
		Retracted int `json:"retracted"`
	}
	if code != exitOK || json.Unmarshal([]byte(out), &res) != nil || res.Retracted == 0 {
		t.Errorf("exit %d, JSON retracted %d, want some\n%s", code, res.Retracted, errs)
	}
	if code, out, _ = runCLI(append(args, "--format", "csv")...); code != exitOK || !strings.Contains(out, "\nretracted,") {
		t.Errorf("CSV: exit %d, no retracted metric row", code)
	}
	code, out, _ = runCLI("predict", "--precision", "fp8", "--gpu", "h200", "--topology", "agg:tp8", "--isl", "1024", "--osl", "1024", "--conc", "64", "--json")
	if code != exitOK || strings.Contains(out, `"retracted"`) {
		t.Errorf("1024/1024 x 64: exit %d, retracted key present", code)
	}
}
