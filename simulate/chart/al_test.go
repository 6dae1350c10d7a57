package chart

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/specsim/specsim/golden"
)

// AL draws the curve (and the consistent repair when there is one) or, at
// a draft length, the distribution of L; other extensions are refused
// before anything is written.
func TestAL(t *testing.T) {
	set, err := golden.Parse("bad.yaml", []byte("bad-1b:\n  thinking_on: {1: 1.5, 2: 2.2}\n"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, tc := range []struct {
		steps int
		want  []string
	}{
		{0, []string{"bad-1b, thinking on: golden AL", "measured", "consistent"}},
		{2, []string{"bad-1b, thinking on, k=2: distribution of L"}},
	} {
		r, err := set.ReportCurve("bad-1b", golden.ThinkingOn, tc.steps, false)
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, "al.svg")
		if err := AL(path, r); err != nil {
			t.Fatal(err)
		}
		data, _ := os.ReadFile(path)
		for _, s := range tc.want {
			if !strings.Contains(string(data), s) {
				t.Errorf("steps %d: SVG lacks %q", tc.steps, s)
			}
		}
	}
	r, _ := set.ReportCurve("bad-1b", golden.ThinkingOn, 0, false)
	if err := AL(filepath.Join(dir, "al.pdf"), r); err == nil || !strings.Contains(err.Error(), ".png or .svg") {
		t.Errorf("AL(.pdf) = %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "al.pdf")); err == nil {
		t.Error("AL(.pdf) wrote a file")
	}
}
