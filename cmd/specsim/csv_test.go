package main

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"
)

// bestk --format csv writes the JSON's figures, one number per cell: the
// vs-none ratio without its "x".
func TestBestKCSV(t *testing.T) {
	args := []string{"bestk", "--topology", "agg:tp2", "--conc", "1"}
	code, out, stderr := runCLI(append(args, "--format", "csv")...)
	if code != exitOK {
		t.Fatalf("exit %d %s", code, stderr)
	}
	tabs := csvTables(t, out)
	if len(tabs) == 0 || len(tabs[0]) < 2 || tabs[0][0][6] != "vs_none" {
		t.Fatalf("tables %v", tabs)
	}
	_, js, _ := runCLI(append(args, "--json")...)
	var d struct {
		Rows []struct {
			Speedup float64 `json:"speedup_vs_none"`
		} `json:"rows"`
	}
	if err := json.Unmarshal([]byte(js), &d); err != nil || len(d.Rows) != 1 {
		t.Fatalf("json %v %s", err, js)
	}
	if got, want := tabs[0][1][6], strconv.FormatFloat(d.Rows[0].Speedup, 'g', -1, 64); got != want {
		t.Errorf("vs_none %q, want %q (the JSON's speedup_vs_none)", got, want)
	}
}

// calibrate --format csv: each median |error| row names its GPU and
// engine and holds a fraction, not a percentage.
func TestCalibrateCSV(t *testing.T) {
	out := t.TempDir() + "/c.yaml"
	code, stdout, stderr := runCLI("calibrate", "--params", "host_overhead_ms", "-o", out, "--format", "csv", "../../audit/measured/testdata/measured.csv")
	if code != exitOK {
		t.Fatalf("exit %d %s", code, stderr)
	}
	tabs := csvTables(t, stdout)
	if len(tabs) != 1 || len(tabs[0]) < 2 || strings.Join(tabs[0][0], ",") != "gpu,engine,metric,before,in_sample,leave_one_out" {
		t.Fatalf("tables %v", tabs)
	}
	for _, row := range tabs[0][1:] {
		for _, cell := range row[3:] {
			if v, err := strconv.ParseFloat(cell, 64); err != nil || v < 0 {
				t.Errorf("row %v: cell %q is not a fraction", row, cell)
			}
		}
	}
}
