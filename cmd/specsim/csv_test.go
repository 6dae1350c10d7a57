package main

import (
	"encoding/json"
	"math"
	"reflect"
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

// TestAuditReviewFindingsCSV: audit and review --format csv end with one
// findings table whose rows are the JSON's findings, field for field
// (third review: the CSV had the memory table and no findings). The
// memory cells are the JSON's unrounded numbers; the draft floor is the
// draft bytes column in GiB (2^30 bytes), as the audit rounds it (4
// places). The disagg bundle's override_tp4_tp4_c8 has the three findings
// TestReviewJSONFindings names.
func TestAuditReviewFindingsCSV(t *testing.T) {
	ck := indexOnlyQwen(t)
	type finding struct{ Severity, Code, Location, Message string }
	rowsOf := func(tab [][]string, lead int) []finding {
		var out []finding
		for _, r := range tab[1:] {
			out = append(out, finding{r[lead], r[lead+1], r[lead+2], r[lead+3]})
		}
		return out
	}

	code, out, errs := runCLI("audit", ck, "--format", "csv")
	if code != exitOK {
		t.Fatalf("audit exit %d %s", code, errs)
	}
	tabs := csvTables(t, out)
	last := tabs[len(tabs)-1]
	if got := strings.Join(last[0], ","); got != "severity,code,location,message" {
		t.Fatalf("audit csv: last table header %q\n%s", got, out)
	}
	_, js, _ := runCLI("audit", ck, "--json")
	var doc struct {
		Findings []finding `json:"findings"`
		Memory   []struct {
			TP          int     `json:"tp"`
			MTPFloorGiB float64 `json:"mtp_floor_gib"`
			MTPBytes    int64   `json:"mtp_bytes"`
		} `json:"memory"`
	}
	if err := json.Unmarshal([]byte(js), &doc); err != nil {
		t.Fatal(err)
	}
	if got := rowsOf(last, 0); len(got) == 0 || !reflect.DeepEqual(got, doc.Findings) {
		t.Errorf("audit csv findings\n%v\nwant the JSON's\n%v", got, doc.Findings)
	}
	mem := tabs[0]
	if len(mem) != len(doc.Memory)+1 || mem[0][3] != "draft_floor_gib" || mem[0][5] != "draft_bytes" {
		t.Fatalf("audit csv memory table %v", mem)
	}
	for i, m := range doc.Memory {
		floor, err := strconv.ParseFloat(mem[i+1][3], 64)
		bytes, err2 := strconv.ParseInt(mem[i+1][5], 10, 64)
		if err != nil || err2 != nil || floor != m.MTPFloorGiB {
			t.Errorf("tp %d: draft_floor_gib %q, want the JSON's %v", m.TP, mem[i+1][3], m.MTPFloorGiB)
		}
		if want := math.Round(float64(bytes)/(1<<30)*1e4) / 1e4; floor != want {
			t.Errorf("tp %d: draft_floor_gib %v, want %d bytes / 2^30 = %v", m.TP, floor, bytes, want)
		}
	}

	r := "../../testdata/recipes/schema2_qwen3.5_sglang_gb300-fp4_agentx_disagg-variants.yaml"
	code, out, errs = runCLI("review", "--recipe", r, "--checkpoint", ck, "--format", "csv")
	if code != exitFindings {
		t.Fatalf("review exit %d %s", code, errs)
	}
	tabs = csvTables(t, out)
	last = tabs[len(tabs)-1]
	if got := strings.Join(last[0], ","); got != "variant,severity,code,location,message" {
		t.Fatalf("review csv: last table header %q\n%s", got, out)
	}
	_, js, _ = runCLI("review", "--recipe", r, "--checkpoint", ck, "--json")
	var rdoc struct {
		Variants []struct {
			Name     string    `json:"name"`
			Findings []finding `json:"findings"`
		} `json:"variants"`
	}
	if err := json.Unmarshal([]byte(js), &rdoc); err != nil {
		t.Fatal(err)
	}
	byVariant := map[string][]finding{}
	for _, row := range last[1:] {
		byVariant[row[0]] = append(byVariant[row[0]], rowsOf([][]string{nil, row}, 1)...)
	}
	if len(rdoc.Variants) != 7 {
		t.Fatalf("%d variants, want the bundle's 7", len(rdoc.Variants))
	}
	for _, v := range rdoc.Variants {
		if !reflect.DeepEqual(byVariant[v.Name], v.Findings) {
			t.Errorf("%s: csv findings\n%v\nwant the JSON's\n%v", v.Name, byVariant[v.Name], v.Findings)
		}
	}
	var c8 []string
	for _, f := range byVariant["override_tp4_tp4_c8"] {
		c8 = append(c8, f.Severity+" "+f.Code)
	}
	if want := []string{"error fp8-nextn-moe", "warning cuda-graph-below-running-cap", "warning mtp-exclude-gap-overridden"}; !reflect.DeepEqual(c8, want) {
		t.Errorf("override_tp4_tp4_c8 findings %v, want %v", c8, want)
	}
}

// TestFindingsCSVLocation: the location column holds where each finding
// is, from the finding itself: a module (audit), a log file line (review),
// a recipe key path or role (recipe check, whose CSV has the same columns
// and sorts each variant's findings most serious first). The expected
// locations are read off the inputs by hand: bad.out line 1 holds the wrong
// AL, good.out line 3 the 4.02 GB draft load line, planted_sglang.yaml's
// override_wrong_len sets roles.decode.env.SGLANG_SIMULATE_ACC_LEN.
func TestFindingsCSVLocation(t *testing.T) {
	ck := indexOnlyQwen(t)
	write := func(name, body string) string { return writeTemp(t, name, body) }
	bad := write("bad.out", "SGLANG_SIMULATE_ACC_LEN=4.8\nSGLANG_SIMULATE_ACC_METHOD=match-expected\nSGLANG_SIMULATE_ACC_TOKEN_MODE=real-draft-token\n")
	good := write("good.out", "+ export SGLANG_SIMULATE_ACC_LEN=3.39\n+ export SGLANG_SIMULATE_ACC_METHOD=match-expected\n"+
		"[2026-01-01 00:00:20 TP0] Load weight end. type=Qwen3_5ForCausalLMMTP, avail mem=195.98 GB, mem usage=4.02 GB.\n")
	recipe := "../../testdata/recipes/schema2_qwen3.5_sglang_gb300-fp4_agentx_agg-variants.yaml:override_c1"
	for _, tc := range []struct {
		args           []string
		lead           int // columns before severity
		variant        string
		code, location string
	}{
		{[]string{"audit", ck}, 0, "", "mtp-exclude-gap-overridden", "mtp.fc"},
		{[]string{"audit", ck, "--log", good}, 0, "", "log-draft-precision", good + " line 3"},
		{[]string{"review", "--recipe", recipe, "--checkpoint", ck, "--log", bad}, 1, "override_c1", "worker-env-mismatch", bad + " line 1"},
		{[]string{"recipe", "check", "../../audit/recipe/testdata/planted_sglang.yaml"}, 1, "override_wrong_len", "sim-acc-len-mismatch", "roles.decode.env.SGLANG_SIMULATE_ACC_LEN"},
		{[]string{"recipe", "check", "../../audit/recipe/testdata/planted_sglang.yaml"}, 1, "override_decode_without_spec", "generation-role-not-speculative", "roles.decode"},
	} {
		_, out, errs := runCLI(append(tc.args, "--format", "csv")...)
		tabs := csvTables(t, out)
		last := tabs[len(tabs)-1]
		if got := strings.Join(last[0][tc.lead:], ","); got != "severity,code,location,message" {
			t.Fatalf("%v: findings header %q\n%s%s", tc.args, got, out, errs)
		}
		found := false
		rank := map[string]int{}
		for _, r := range last[1:] {
			v := ""
			if tc.lead > 0 {
				v = r[0]
			}
			sev := map[string]int{"error": 0, "warning": 1, "info": 2}[r[tc.lead]]
			if sev < rank[v] {
				t.Errorf("%v: variant %q lists %s after a less serious finding", tc.args, v, r[tc.lead])
			}
			rank[v] = sev
			if v == tc.variant && r[tc.lead+1] == tc.code {
				found = true
				if r[tc.lead+2] != tc.location {
					t.Errorf("%v: %s location %q, want %q", tc.args, tc.code, r[tc.lead+2], tc.location)
				}
			}
		}
		if !found {
			t.Errorf("%v: no %s finding for variant %q\n%s", tc.args, tc.code, tc.variant, out)
		}
	}
}
