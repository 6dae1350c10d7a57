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
			[]string{"gpu", "op", "dtype", "latency_us", "source", "bound", "bytes_mb", "gflop"}, 1},
		{[]string{"golden", "show", "--model", "qwen3.5", "--steps", "2"}, []string{"k", "al", "extrapolated", "prefix_acceptance", "conditional_acceptance"}, 2},
		{[]string{"sample", "--model", "qwen3.5", "--steps", "2", "--iterations", "100"}, []string{"length", "count", "share", "expected_share"}, 1},
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

// CSV headers are snake_case whatever the display header; "-" cells are
// empty.
func TestCSVName(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"draft floor GiB", "draft_floor_gib"}, {">golden AL", "golden_al"}, {"must run with", "must_run_with"},
		{"mean accept len", "mean_accept_len"}, {"L (tokens)", "l_tokens"}, {"expected share", "expected_share"},
		{"median |error|", "median_abs_error"}, {"median error", "median_error"}, {"tok/s/user", "tok_per_s_per_user"},
		{"outside %", "outside_pct"}, {"median_err_%", "median_err_pct"}, {"P(L >= l)", "p_l_ge_l"},
		{"in-sample", "in_sample"}, {"latency_us", "latency_us"}, {"HBM_TB/s", "hbm_tb_per_s"},
	} {
		if got := csvName(c.in); got != c.want {
			t.Errorf("csvName(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	var b strings.Builder
	tb := &table{header: []string{"a b", ">c"}}
	tb.add("x", "-")
	tb.write(&csvOut{w: &b}, formatCSV)
	if b.String() != "a_b,c\nx,\n" {
		t.Errorf("csv %q", b.String())
	}
}
