package main

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// goldenRun runs the CLI in-process.
func goldenRun(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var o, e bytes.Buffer
	code = run(args, &o, &e)
	return code, o.String(), e.String()
}

func TestGoldenShowJSON(t *testing.T) {
	code, out, errOut := goldenRun(t, "golden", "show", "--model", "qwen3.5-397b-a17b-nvfp4", "--thinking", "on", "--steps", "6", "--json")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var got map[string]json.RawMessage
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"model", "thinking", "curve", "al", "prefix_acceptance", "distribution", "warnings"} {
		if _, ok := got[k]; !ok {
			t.Errorf("key %q missing from %s", k, out)
		}
	}
	var v struct {
		Model        string             `json:"model"`
		Thinking     string             `json:"thinking"`
		Curve        map[string]float64 `json:"curve"`
		AL           float64            `json:"al"`
		Prefix       []float64          `json:"prefix_acceptance"`
		Distribution map[string]float64 `json:"distribution"`
		Warnings     []string           `json:"warnings"`
	}
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatal(err)
	}
	if v.Model != "qwen3.5-397b-a17b-nvfp4" || v.Thinking != "on" || v.AL != 4.80 || len(v.Curve) != 8 || v.Curve["8"] != 5.21 {
		t.Errorf("got %+v", v)
	}
	if len(v.Prefix) != 8 || v.Prefix[0] != 0.93 || len(v.Distribution) != 7 || v.Distribution["7"] != 0.39 {
		t.Errorf("prefix %v distribution %v", v.Prefix, v.Distribution)
	}
	if v.Warnings == nil || string(got["warnings"]) != "[]" {
		t.Errorf("warnings %s, want []", got["warnings"])
	}
	if i1, i8 := strings.Index(out, `"1": 1.93`), strings.Index(out, `"8": 5.21`); i1 < 0 || i8 < i1 {
		t.Errorf("curve keys out of order:\n%s", out)
	}
}

func TestGoldenShowWarnsThinkingOff(t *testing.T) {
	code, out, _ := goldenRun(t, "golden", "show", "--model", "qwen3.5", "--thinking", "off", "--json")
	if code != exitOK {
		t.Fatalf("exit %d", code)
	}
	var v struct{ Warnings []string }
	json.Unmarshal([]byte(out), &v)
	if len(v.Warnings) != 1 || !strings.Contains(v.Warnings[0], "k=8: AL drops from 4.73 at k=7 to 4.71 at k=8") {
		t.Errorf("warnings %q", v.Warnings)
	}
	code, out, _ = goldenRun(t, "golden", "show", "--model", "qwen3.5", "--thinking", "off", "--steps", "8")
	if code != exitOK || !strings.Contains(out, "warning: ") || !strings.Contains(out, "consistent curve") || !strings.Contains(out, "+0.020") {
		t.Errorf("text output (exit %d):\n%s", code, out)
	}
}

func TestGoldenShowBadInput(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"--model", "llama-9000", "--thinking", "on"}, "qwen3.5-397b-a17b-nvfp4"},
		{[]string{"--model", "glm5.2", "--thinking", "off"}, "thinking modes present: on"},
		{[]string{"--model", "qwen3.5", "--steps", "9"}, "1..8"},
		{[]string{"--model", "qwen3.5", "--thinking", "maybe"}, "want on or off"},
		{[]string{"--thinking", "on"}, "--model is required"},
		{[]string{"--model", "qwen3.5", "--plot", "x.pdf"}, ".png or .svg"},
		{[]string{"--model", "qwen3.5", "--golden-file", "/nonexistent.yaml"}, "nonexistent.yaml"},
		{[]string{"--model", "qwen3.5", "--json", "--format", "markdown"}, "conflicts"},
	}
	for _, tt := range tests {
		code, _, errOut := goldenRun(t, append([]string{"golden", "show"}, tt.args...)...)
		if code != exitBadInput || !strings.Contains(errOut, tt.want) {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", tt.args, code, errOut, tt.want)
		}
	}
	if code, _, _ := goldenRun(t, "golden", "frobnicate"); code != exitBadInput {
		t.Errorf("unknown subcommand: exit %d", code)
	}
	if code, _, _ := goldenRun(t, "golden", "show", "--help"); code != exitOK {
		t.Errorf("--help: exit %d", code)
	}
}

func TestGoldenShowExtrapolate(t *testing.T) {
	code, out, errOut := goldenRun(t, "golden", "show", "--model", "qwen3.5", "--steps", "10", "--extrapolate", "--json")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var v struct {
		Curve        map[string]float64
		Extrapolated struct {
			FromK  int `json:"from_k"`
			Method string
		}
		Warnings []string
	}
	json.Unmarshal([]byte(out), &v)
	if len(v.Curve) != 10 || v.Extrapolated.FromK != 9 || !strings.Contains(v.Extrapolated.Method, "geometric") || len(v.Warnings) != 1 {
		t.Errorf("got %+v", v)
	}
	if strings.Index(out, `"9":`) > strings.Index(out, `"10":`) {
		t.Error("key 10 printed before key 9")
	}
}

func TestGoldenFileOverride(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "mine_mtp.yaml")
	os.WriteFile(f, []byte("qwen3.5-397b-a17b-nvfp4:\n  thinking_on:\n    1: 1.5\n    2: 1.9\n"), 0o644)
	code, out, errOut := goldenRun(t, "golden", "show", "--model", "qwen3.5", "--golden-file", f, "--steps", "2", "--json")
	if code != exitOK || !strings.Contains(out, `"al": 1.9`) || !strings.Contains(out, "mine_mtp.yaml") {
		t.Errorf("exit %d %s\n%s", code, errOut, out)
	}
	code, out, _ = goldenRun(t, "golden", "list", "--golden-dir", dir, "--json")
	var v struct{ Models []goldenListModel }
	json.Unmarshal([]byte(out), &v)
	if code != exitOK || len(v.Models) != 13 {
		t.Errorf("list with override: exit %d, %d curves (want 13: qwen thinking off is gone)", code, len(v.Models))
	}
}

func TestGoldenList(t *testing.T) {
	code, out, _ := goldenRun(t, "golden", "list")
	if code != exitOK || !strings.Contains(out, "qwen3.5-397b-a17b-nvfp4") || !strings.Contains(out, "minimax-m3@minimaxm3_eagle3_gqa") {
		t.Errorf("exit %d\n%s", code, out)
	}
	code, out, _ = goldenRun(t, "golden", "show", "--model", "dsv4", "--steps", "8", "--format", "markdown")
	if code != exitOK || !strings.Contains(out, "| k | AL (tokens/step) |") || !strings.Contains(out, "| 7 | 2.540 | -0.010 | 2.570 | +0.030 |") {
		t.Errorf("show markdown: exit %d\n%s", code, out)
	}
	code, out, _ = goldenRun(t, "golden", "list", "--format", "markdown")
	if code != exitOK || !strings.HasPrefix(out, "| model |") {
		t.Errorf("markdown: exit %d\n%s", code, out)
	}
}

func TestGoldenPlot(t *testing.T) {
	dir := t.TempDir()
	for _, tt := range []struct {
		file  string
		args  []string
		magic string
	}{
		{"al.svg", nil, "<?xml"},
		{"dist.svg", []string{"--steps", "6"}, "<?xml"},
		{"off.png", []string{"--thinking", "off"}, "\x89PNG"},
	} {
		p := filepath.Join(dir, tt.file)
		args := append([]string{"golden", "show", "--model", "qwen3.5", "--plot", p}, tt.args...)
		if code, _, errOut := goldenRun(t, args...); code != exitOK {
			t.Fatalf("%s: exit %d: %s", tt.file, code, errOut)
		}
		b, err := os.ReadFile(p)
		if err != nil || !bytes.HasPrefix(b, []byte(tt.magic)) {
			t.Errorf("%s: %d bytes, err %v", tt.file, len(b), err)
		}
	}
}

// golden show and golden list under --format csv: snake_case headers (the
// JSON keys) and one number per cell, checked against values computed by
// hand from the Qwen3.5 thinking-on curve (AL 1.93, 2.73, ..., 4.80 at k=6).
func TestGoldenCSV(t *testing.T) {
	tests := []struct {
		args    []string
		headers [][]string // one per table
		cells   map[[3]int]string
	}{
		{[]string{"golden", "show", "--model", "qwen3.5", "--thinking", "on", "--steps", "6", "--format", "csv"},
			[][]string{{"k", "al", "extrapolated", "prefix_acceptance", "conditional_acceptance"}, {"length", "probability", "probability_at_least"}},
			map[[3]int]string{
				{0, 2, 1}: "2.73", {0, 2, 3}: "0.8", {0, 2, 4}: "0.860215054", // p_2 = 2.73-1.93, c_2 = 0.80/0.93
				{0, 6, 1}: "4.8", {0, 6, 2}: "false",
				{1, 1, 1}: "0.07", {1, 1, 2}: "1", // P(L=1) = 1 - p_1
				{1, 7, 1}: "0.39", {1, 7, 2}: "0.39", // P(L=7) = p_6 = 4.80-4.41
			}},
		{[]string{"golden", "show", "--model", "qwen3.5", "--thinking", "on", "--steps", "10", "--extrapolate", "--format", "csv"},
			[][]string{{"k", "al", "extrapolated", "prefix_acceptance", "conditional_acceptance"}, {"length", "probability", "probability_at_least"}},
			map[[3]int]string{{0, 8, 2}: "false", {0, 9, 2}: "true", {0, 9, 4}: "0.708333333"}}, // c_9 = c_8 = 0.17/0.24
		// Thinking off drops 4.73 -> 4.71 at k=8: the consistent curve holds 4.73, moved +0.02.
		{[]string{"golden", "show", "--model", "qwen3.5", "--thinking", "off", "--format", "csv"},
			[][]string{{"k", "al", "extrapolated", "prefix_acceptance", "consistent_al", "moved", "consistent_prefix_acceptance", "conditional_acceptance"}},
			map[[3]int]string{{0, 8, 1}: "4.71", {0, 8, 3}: "-0.02", {0, 8, 4}: "4.73", {0, 8, 5}: "0.02", {0, 8, 6}: "0"}},
	}
	for _, tc := range tests {
		code, out, errOut := runCLI(tc.args...)
		if code != exitOK {
			t.Fatalf("%v: exit %d: %s", tc.args, code, errOut)
		}
		blocks := strings.Split(strings.TrimSpace(out), "\n\n")
		if len(blocks) != len(tc.headers) {
			t.Fatalf("%v: %d tables, want %d:\n%s", tc.args, len(blocks), len(tc.headers), out)
		}
		for i, b := range blocks {
			recs, err := csv.NewReader(strings.NewReader(b)).ReadAll()
			if err != nil {
				t.Fatalf("%v table %d: %v", tc.args, i, err)
			}
			if !slices.Equal(recs[0], tc.headers[i]) {
				t.Errorf("%v table %d header %q, want %q", tc.args, i, recs[0], tc.headers[i])
			}
			for r, rec := range recs[1:] {
				for c, cell := range rec {
					if _, err := strconv.ParseFloat(cell, 64); err != nil && cell != "true" && cell != "false" {
						t.Errorf("%v table %d row %d col %s: %q is not one number", tc.args, i, r+1, recs[0][c], cell)
					}
				}
			}
			for at, want := range tc.cells {
				if at[0] == i && recs[at[1]][at[2]] != want {
					t.Errorf("%v table %d row %d %s = %q, want %q", tc.args, i, at[1], recs[0][at[2]], recs[at[1]][at[2]], want)
				}
			}
		}
	}
	code, out, _ := runCLI("golden", "list", "--format", "csv")
	recs, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	if code != exitOK || err != nil || len(recs) < 2 {
		t.Fatalf("golden list csv: exit %d, %v\n%s", code, err, out)
	}
	if want := []string{"model", "prefix", "thinking", "al_k1"}; !slices.Equal(recs[0][:4], want) || recs[0][len(recs[0])-1] != "warnings" {
		t.Errorf("golden list csv header %q", recs[0])
	}
}
