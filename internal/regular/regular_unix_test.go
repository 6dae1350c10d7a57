//go:build unix

package regular

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A FIFO without a writer blocks a plain open for ever; Open must refuse it
// at once, whether it was there before or swapped in for a regular file.
func TestOpenRefusesFIFO(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "config.json")
	if err := os.WriteFile(p, []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	f, _, err := Open(p)
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	// the swap that a stat-then-open check lets through
	if err := os.Remove(p); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(p, 0o644); err != nil {
		t.Skip("mkfifo:", err)
	}
	done := make(chan error, 1)
	go func() { _, _, err := Open(p); done <- err }()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), p) || !strings.Contains(err.Error(), "FIFO") {
			t.Errorf("Open(FIFO) = %v, want an error naming %s and the FIFO", err, p)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Open blocked on a FIFO")
	}
	if _, err := ReadFile(p, 10); err == nil {
		t.Error("ReadFile read a FIFO")
	}
}

func TestReadFileLimit(t *testing.T) {
	p := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(p, []byte("12345"), 0o644); err != nil {
		t.Fatal(err)
	}
	if b, err := ReadFile(p, 5); err != nil || string(b) != "12345" {
		t.Errorf("ReadFile at the limit = %q, %v", b, err)
	}
	if _, err := ReadFile(p, 4); err == nil || !strings.Contains(err.Error(), "5 bytes") {
		t.Errorf("ReadFile over the limit = %v, want the size named", err)
	}
	if _, _, err := Open("/dev/null"); err == nil || !strings.Contains(err.Error(), "device") {
		t.Errorf("Open(/dev/null) = %v, want refused as a device", err)
	}
	if _, _, err := Open(filepath.Dir(p)); err == nil {
		t.Error("Open of a directory succeeded")
	}
}
