package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
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
