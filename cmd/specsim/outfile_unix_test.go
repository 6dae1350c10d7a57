//go:build unix

package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// calibrate -o refuses, before fitting, an output that is one of its
// inputs, a symbolic link, a FIFO (a device such as /dev/null is refused the
// same way; the test never touches a system path), a directory, or a file
// in a missing directory; each leaves the path as it was.
func TestCalibrateRefusesOutput(t *testing.T) {
	dir := t.TempDir()
	path := writeTemp(t, "m.csv", smallCSV)
	link := filepath.Join(dir, "link.yaml")
	if err := os.Symlink(filepath.Join(dir, "target.yaml"), link); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ out, want string }{
		{path, "cannot write " + path + ": it is the input " + path},
		{link, "cannot write " + link + ": it is a symbolic link"},
		{fifo, "cannot write " + fifo + ": it exists and is a FIFO, not a regular file"},
		{dir, "cannot write " + dir + ": it is a directory"},
		{filepath.Join(dir, "missing", "x.yaml"), "directory " + filepath.Join(dir, "missing") + " does not exist"},
	} {
		var out, errb bytes.Buffer
		code := run([]string{"calibrate", "--params", "host_overhead_ms", "-o", c.out, path}, &out, &errb)
		if code != exitBadInput || !strings.Contains(errb.String(), c.want) {
			t.Errorf("-o %s: exit %d, stderr %q, want %q", c.out, code, errb.String(), c.want)
		}
		if strings.Contains(out.String(), "leave-one-out") {
			t.Errorf("-o %s: fitted before refusing", c.out)
		}
	}
	if b, _ := os.ReadFile(path); string(b) != smallCSV {
		t.Errorf("the measured input was overwritten")
	}
	if _, err := os.Lstat(filepath.Join(dir, "target.yaml")); err == nil {
		t.Errorf("written through the link")
	}
	if st, err := os.Lstat(fifo); err != nil || st.Mode()&os.ModeNamedPipe == 0 {
		t.Errorf("the FIFO was replaced")
	}
}
