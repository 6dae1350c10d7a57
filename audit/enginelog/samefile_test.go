package enginelog

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A log named twice (or once more through a link) was read twice: its
// throughput summed twice over "ranks" and its accept-length intervals
// counted twice, shrinking the stderr the agreement test uses.
func TestReadFilesRefusesOneFileTwice(t *testing.T) {
	dir := t.TempDir()
	line := "[2026-07-01 12:00:%02d DP0 TP0] Decode batch, #running-req: 8, accept len: 3.00, gen throughput (token/s): 500.00,\n"
	write := func(name string, n int) string {
		var b strings.Builder
		for i := range n {
			fmt.Fprintf(&b, line, i)
		}
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	a, b := write("a.log", 3), write("b.log", 2)
	link := filepath.Join(dir, "link.log")
	if err := os.Symlink(a, link); err != nil {
		t.Skip("no symlinks:", err)
	}
	for _, tc := range []struct {
		name    string
		paths   []string
		samples int
		err     string
	}{
		{"two files", []string{a, b}, 5, ""},
		{"one file twice", []string{a, b, a}, 0, a + ": the same file as " + a + ", given twice"},
		{"through a link", []string{a, link}, 0, link + ": the same file as " + a + ", given twice"},
	} {
		c, err := ReadFiles(tc.paths, 3)
		switch {
		case tc.err == "" && (err != nil || c.Stats.Samples != tc.samples):
			t.Errorf("%s: %v samples, error %v; want %d", tc.name, c, err, tc.samples)
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("%s: error %v, want %q", tc.name, err, tc.err)
		}
	}
}
