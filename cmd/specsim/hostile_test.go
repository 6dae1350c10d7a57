//go:build unix

package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// hostileFiles writes inputs no command should choke on and returns their
// paths by name: an empty file, a directory, a FIFO without a writer (opening
// it for reading blocks forever), binary garbage, YAML nested deeper than any
// parser allows, and a YAML alias bomb.
func hostileFiles(t *testing.T) map[string]string {
	t.Helper()
	dir := t.TempDir()
	p := map[string]string{
		"empty":   filepath.Join(dir, "empty.yaml"),
		"dir":     filepath.Join(dir, "adir"),
		"fifo":    filepath.Join(dir, "fifo"),
		"garbage": filepath.Join(dir, "garbage.bin"),
		"deep":    filepath.Join(dir, "deep.yaml"),
		"bomb":    filepath.Join(dir, "bomb.yaml"),
		"zero":    "/dev/zero",
	}
	garbage := make([]byte, 4096)
	for i := range garbage {
		garbage[i] = byte(i*131 + 7)
	}
	bomb := "a: &a [x, x, x, x, x, x, x, x, x]\n"
	for i, prev := 1, "a"; i < 10; i++ {
		name := string(rune('a' + i))
		bomb += name + ": &" + name + " [" + strings.Repeat("*"+prev+", ", 8) + "*" + prev + "]\n"
		prev = name
	}
	for name, data := range map[string]string{
		"empty":   "",
		"garbage": string(garbage),
		"deep":    "a: " + strings.Repeat("[", 20000) + strings.Repeat("]", 20000) + "\n",
		"bomb":    bomb,
	} {
		if err := os.WriteFile(p[name], []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(p["dir"], 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(p["fifo"], 0o644); err != nil {
		t.Skipf("no FIFO: %v", err)
	}
	return p
}

// TestHostileInput feeds every command bad flag values and files that are
// not what they should be. Each must fail with exit 2 and a message naming
// the file or flag, within seconds: no panic (the dispatcher would report an
// internal error), no blocking read, no unbounded allocation.
func TestHostileInput(t *testing.T) {
	f := hostileFiles(t)
	tests := []struct {
		args []string
		code int
		want string // in stderr
	}{
		{[]string{"golden", "list", "--golden-file", f["empty"]}, exitBadInput, f["empty"]},
		{[]string{"golden", "list", "--golden-file", f["dir"]}, exitBadInput, "not a regular file"},
		{[]string{"golden", "list", "--golden-file", f["fifo"]}, exitBadInput, f["fifo"] + ": not a regular file"},
		{[]string{"golden", "list", "--golden-file", f["zero"]}, exitBadInput, "/dev/zero: not a regular file"},
		{[]string{"golden", "list", "--golden-file", f["garbage"]}, exitBadInput, f["garbage"]},
		{[]string{"golden", "list", "--golden-file", f["deep"]}, exitBadInput, f["deep"]},
		{[]string{"golden", "list", "--golden-file", f["bomb"]}, exitBadInput, f["bomb"]},
		{[]string{"golden", "list", "--golden-dir", f["fifo"]}, exitBadInput, f["fifo"]},
		{[]string{"golden", "show", "--model", "qwen3.5", "--steps", "-1"}, exitBadInput, "--steps"},
		{[]string{"golden", "show", "--model", "qwen3.5", "--steps", "99999999999"}, exitBadInput, "--steps"},

		{[]string{"logs", f["fifo"]}, exitBadInput, f["fifo"] + ": not a regular file"},
		{[]string{"logs", f["zero"]}, exitBadInput, "/dev/zero: not a regular file"},
		{[]string{"logs", f["dir"]}, exitBadInput, f["dir"]},
		{[]string{"logs", f["empty"]}, exitBadInput, f["empty"]},
		{[]string{"logs", f["garbage"]}, exitBadInput, f["garbage"]},
		{[]string{"logs", f["garbage"], "--buckets", "0"}, exitBadInput, "--buckets"},

		{[]string{"recipe", "check", f["fifo"]}, exitBadInput, f["fifo"] + ": not a regular file"},
		{[]string{"recipe", "check", f["zero"]}, exitBadInput, "/dev/zero"},
		{[]string{"recipe", "check", f["empty"]}, exitBadInput, f["empty"]},
		{[]string{"recipe", "check", f["garbage"]}, exitBadInput, f["garbage"]},
		{[]string{"recipe", "check", f["deep"]}, exitBadInput, f["deep"]},
		{[]string{"recipe", "check", f["bomb"]}, exitBadInput, f["bomb"]},

		{[]string{"sample", "--method", "empirical", "--steps", "3", "--histogram", f["fifo"]}, exitBadInput, f["fifo"] + ": not a regular file"},
		{[]string{"sample", "--method", "empirical", "--steps", "3", "--histogram", f["zero"]}, exitBadInput, "/dev/zero"},
		{[]string{"sample", "--method", "empirical", "--steps", "3", "--histogram", f["garbage"]}, exitBadInput, f["garbage"]},
		{[]string{"sample", "--steps", "3", "--al", "NaN"}, exitBadInput, "NaN"},
		{[]string{"sample", "--steps", "3", "--al", "2", "--batch", "0"}, exitBadInput, "--batch"},
		{[]string{"sample", "--steps", "3", "--al", "2", "--batch", "1000000", "--iterations", "100000"}, exitBadInput, "--iterations"},

		{[]string{"kernels", "gpus", "--gpu-catalog", f["fifo"]}, exitBadInput, f["fifo"] + ": not a regular file"},
		{[]string{"kernels", "gpus", "--gpu-catalog", f["deep"]}, exitBadInput, f["deep"]},
		{[]string{"kernels", "gpus", "--gpu-catalog", f["empty"]}, exitBadInput, f["empty"] + ": no gpus"},
		{[]string{"kernels", "predict", "--input", f["zero"]}, exitBadInput, "/dev/zero: not a regular file"},
		{[]string{"kernels", "validate", "--table", f["fifo"]}, exitBadInput, f["fifo"]},
		{[]string{"kernels", "predict", "--op", "moe", "--tokens", "8", "--experts", "8", "--topk", "10", "--hidden", "64", "--inter", "64"}, exitBadInput, "--topk"},
		{[]string{"kernels", "predict", "--op", "moe", "--tokens", "8", "--experts", "64", "--topk", "8", "--hidden", "64", "--inter", "64", "--skew", "NaN"}, exitBadInput, "--skew"},
		{[]string{"kernels", "predict", "--op", "collective", "--collective", "allreduce", "--gpus", "8", "--bytes", "Inf"}, exitBadInput, "--bytes"},
		// Skewed routing over a hundred billion experts once allocated a
		// table per expert; it is priced without one up to the flag bound
		// (2^27) and refused past it.
		{[]string{"kernels", "predict", "--op", "moe", "--tokens", "8", "--experts", "134217728", "--topk", "8", "--hidden", "64", "--inter", "64", "--skew", "1"}, exitOK, ""},
		{[]string{"kernels", "predict", "--op", "moe", "--tokens", "8", "--experts", "99999999999", "--topk", "8", "--hidden", "64", "--inter", "64", "--skew", "1"}, exitBadInput, "--experts 99999999999: want 0..134217728"},

		{[]string{"audit", f["fifo"]}, exitBadInput, f["fifo"]},
		{[]string{"audit", f["empty"]}, exitBadInput, f["empty"]},
		{[]string{"audit", f["dir"]}, exitBadInput, f["dir"]},
		{[]string{"audit", f["dir"], "--tp", "1,,2"}, exitBadInput, "--tp"},
		{[]string{"audit", f["dir"], "--tp", strings.Repeat("8,", 100) + "8"}, exitBadInput, "--tp"},

		{[]string{"help", "nope"}, exitBadInput, `unknown command "nope"`},
		{[]string{"nope"}, exitBadInput, `unknown command "nope"; run 'specsim help' for the commands`},
		{[]string{"calibrate", "--params", "host_overhead_ms", "-o", "-", "x.csv"}, exitBadInput, "-o -: give a file name"},

		{[]string{"predict", "--conc", "0"}, exitBadInput, "--conc"},
		{[]string{"predict", "--model", f["fifo"]}, exitBadInput, f["fifo"]},
		{[]string{"sweep", "--gpus", "0"}, exitBadInput, "--gpus"},
		{[]string{"bestk", "--conc", "1,,2"}, exitBadInput, "--conc"},
		{[]string{"bestk", "--conc", ""}, exitBadInput, "--conc: no concurrencies"},
		{[]string{"bestk", "--conc", "1", "--steps", "0-12"}, exitBadInput, "draft lengths 1..8"},
		{[]string{"predict", "--mem-fraction", "-1"}, exitBadInput, "--mem-fraction"},
		{[]string{"predict", "--sched-overhead-ms", "NaN"}, exitBadInput, "--sched-overhead-ms"},
		{[]string{"predict", "--spec-overhead-ms", "-5"}, exitBadInput, "--spec-overhead-ms"},
		{[]string{"predict", "--method", "empirical"}, exitBadInput, "--histogram"},
		{[]string{"predict", "--histogram", f["empty"]}, exitBadInput, "empirical only"},
		{[]string{"predict", "--method", "empirical", "--histogram", f["fifo"]}, exitBadInput, f["fifo"]},
		// Readers added with measured runs, sweeps and trace replays.
		{[]string{"compare", f["fifo"]}, exitBadInput, f["fifo"] + ": not a regular file"},
		{[]string{"merge", f["fifo"]}, exitBadInput, f["fifo"] + ": not a regular file"},
		{[]string{"predict", "--calibration", f["fifo"]}, exitBadInput, f["fifo"] + ": not a regular file"},
		{[]string{"predict", "--agentx-trace", f["fifo"]}, exitBadInput, f["fifo"]},
	}
	for _, tc := range tests {
		type result struct {
			code        int
			out, stderr string
		}
		done := make(chan result, 1)
		go func() {
			code, out, errs := runCLI(tc.args...)
			done <- result{code, out, errs}
		}()
		var r result
		select {
		case r = <-done:
		case <-time.After(20 * time.Second):
			t.Fatalf("%v: no answer after 20 s", tc.args)
		}
		if r.code != tc.code || !strings.Contains(r.stderr, tc.want) || strings.Contains(r.stderr, "internal error") {
			t.Errorf("%v: exit %d, stderr %q; want exit %d and %q", tc.args, r.code, r.stderr, tc.code, tc.want)
		}
	}
}

// TestAuditBudgetCheckedWithoutDeep: a bad --deep-budget is an error even
// when --deep is off, rather than being ignored until someone adds --deep.
func TestAuditBudgetCheckedWithoutDeep(t *testing.T) {
	dir := qwenFixture(t)
	for _, budget := range []string{"NaN", "0", "-1", "1PiB", "1e9999"} {
		code, _, errs := runCLI("audit", dir, "--tp", "4", "--deep-budget", budget)
		if code != exitBadInput || !strings.Contains(errs, "--deep-budget") {
			t.Errorf("--deep-budget %s: exit %d, stderr %q", budget, code, errs)
		}
	}
}
