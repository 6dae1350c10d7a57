//go:build unix

package regular

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// WriteFile replaces only regular files, never through a link, never an
// input; the temp directory holds every case (no system path is touched).
func TestWriteFile(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.csv")
	if err := os.WriteFile(in, []byte("measured"), 0o600); err != nil {
		t.Fatal(err)
	}
	hard := filepath.Join(dir, "hard.csv")
	if err := os.Link(in, hard); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.yaml")
	if err := os.Symlink(in, link); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	sub := filepath.Join(dir, "adir")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	old := filepath.Join(dir, "old.yaml")
	if err := os.WriteFile(old, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, path string
		want       string // error substring; "" for success
		mode       os.FileMode
	}{
		{"new file", filepath.Join(dir, "new.yaml"), "", 0o644},
		{"existing keeps mode", old, "", 0o600},
		{"the input", in, "it is the input " + in, 0},
		{"a hard link to the input", hard, "it is the input " + in, 0},
		{"symlink", link, "cannot write " + link + ": it is a symbolic link", 0},
		{"fifo", fifo, "cannot write " + fifo + ": it exists and is a FIFO, not a regular file", 0},
		{"directory", sub, "cannot write " + sub + ": it is a directory", 0},
		{"missing directory", filepath.Join(dir, "nope", "x.yaml"), "directory " + filepath.Join(dir, "nope") + " does not exist", 0},
		{"file as directory", filepath.Join(in, "x.yaml"), "not a directory", 0},
	} {
		err := WriteFile(c.path, []byte("new"), []string{in})
		if c.want != "" {
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("%s: err %v, want %q", c.name, err, c.want)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		st, err := os.Stat(c.path)
		if err != nil {
			t.Fatal(err)
		}
		if b, _ := os.ReadFile(c.path); string(b) != "new" || st.Mode().Perm() != c.mode {
			t.Errorf("%s: %q mode %v, want \"new\" %v", c.name, b, st.Mode().Perm(), c.mode)
		}
	}
	if b, _ := os.ReadFile(in); string(b) != "measured" {
		t.Errorf("the input was overwritten: %q", b)
	}
	if st, err := os.Lstat(link); err != nil || st.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the link was replaced: %v %v", st, err)
	}
	if st, err := os.Lstat(fifo); err != nil || st.Mode()&os.ModeNamedPipe == 0 {
		t.Errorf("the FIFO was replaced: %v %v", st, err)
	}
	if es, _ := filepath.Glob(filepath.Join(dir, ".specsim-out-*")); len(es) > 0 {
		t.Errorf("temporary files left: %v", es)
	}
}
