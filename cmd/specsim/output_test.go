package main

import (
	"encoding/csv"
	"strings"
	"testing"
)

// Every command that prints tables prints them as CSV under --format csv:
// the tables alone (no prose), each parsed by encoding/csv with its
// header first, a blank line between two.
func TestFormatCSV(t *testing.T) {
	for _, tc := range []struct {
		args   []string
		header []string // of the first table
		tables int
	}{
		{[]string{"kernels", "predict", "--gpu", "h200", "--op", "gemm", "--m", "8", "--n", "4096", "--k", "4096"},
			[]string{"gpu", "op", "dtype", "latency_us", "source", "bound", "bytes_MB", "GFLOP"}, 1},
		{[]string{"golden", "show", "--model", "qwen3.5", "--steps", "2"}, []string{"k", "al", "extrapolated", "prefix_acceptance", "conditional_acceptance"}, 2},
		{[]string{"sample", "--model", "qwen3.5", "--steps", "2", "--iterations", "100"}, []string{"L (tokens)", "count", "share", "expected share"}, 1},
	} {
		code, out, errOut := runCLI(append(tc.args, "--format", "csv")...)
		if code != exitOK {
			t.Fatalf("%v: exit %d: %s", tc.args, code, errOut)
		}
		blocks := strings.Split(strings.TrimSpace(out), "\n\n")
		if len(blocks) != tc.tables {
			t.Errorf("%v: %d tables, want %d:\n%s", tc.args, len(blocks), tc.tables, out)
		}
		for _, b := range blocks {
			rows, err := csv.NewReader(strings.NewReader(b)).ReadAll()
			if err != nil || len(rows) < 2 {
				t.Errorf("%v: table %q: %d rows, %v", tc.args, b, len(rows), err)
			}
		}
		rows, _ := csv.NewReader(strings.NewReader(blocks[0])).ReadAll()
		if len(rows) == 0 || strings.Join(rows[0], "|") != strings.Join(tc.header, "|") {
			t.Errorf("%v: header %q, want %q", tc.args, rows, tc.header)
		}
	}
	if code, _, errOut := runCLI("kernels", "gpus", "--format", "tsv"); code != exitBadInput || !strings.Contains(errOut, "want text, json, markdown or csv") {
		t.Errorf("--format tsv: exit %d, %q", code, errOut)
	}
}
