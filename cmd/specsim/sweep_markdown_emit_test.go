package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSweepEmitMarkdownParagraphs: in Markdown the lines after the last
// table (the recipes written, the plot) are paragraphs of their own: a
// line right after a table row would render as one more row of it.
func TestSweepEmitMarkdownParagraphs(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name  string
		extra []string
	}{
		{"emit", nil},
		{"emit and plot", []string{"--plot", filepath.Join(dir, "f.svg")}},
	} {
		out := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "-"))
		args := append([]string{"sweep", "--gpu", "gb300", "--gpus", "2", "--isl", "100", "--osl", "100", "--conc", "1", "--requests", "8",
			"--emit", out, "--format", "markdown"}, tc.extra...)
		code, stdout, stderr := runCLI(args...)
		if code != exitOK {
			t.Fatalf("%s: exit %d: %s", tc.name, code, stderr)
		}
		files, err := os.ReadDir(out)
		if err != nil || len(files) == 0 {
			t.Fatalf("%s: no recipes in %s: %v", tc.name, out, err)
		}
		lines := strings.Split(stdout, "\n")
		written := 0
		for i, l := range lines {
			if i > 0 && strings.HasPrefix(lines[i-1], "|") && l != "" && !strings.HasPrefix(l, "|") {
				t.Errorf("%s: line %d %q follows a table row: Markdown reads it as one more row", tc.name, i+1, l)
			}
			if strings.HasPrefix(l, "recipe written to ") {
				written++
				if lines[i-1] != "" {
					t.Errorf("%s: line %d %q joins the paragraph above it", tc.name, i+1, l)
				}
			}
		}
		if written != len(files) {
			t.Errorf("%s: %d recipe lines for %d files", tc.name, written, len(files))
		}
	}
}
