//go:build unix

package golden

import (
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"
)

// TestLoadDirLinks: a golden dir of symlinks (as deployments keep shared
// files) loads the files they point at; a FIFO or a dangling link named
// *.yaml is passed over without blocking.
func TestLoadDirLinks(t *testing.T) {
	src, err := filepath.Abs(filepath.Join("testdata", "dup", "alpha_mtp.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.Symlink(src, filepath.Join(dir, "alpha_mtp.yaml")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(dir, "nowhere.yaml"), filepath.Join(dir, "dangling.yaml")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo.yaml"), 0o644); err != nil {
		t.Skipf("no FIFO: %v", err)
	}
	done := make(chan struct{})
	var s *Set
	go func() {
		defer close(done)
		s, err = LoadDir(dir)
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("LoadDir blocked")
	}
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"alpha-7b"}; !slices.Equal(s.Models(), want) {
		t.Errorf("models %v, want %v", s.Models(), want)
	}
}
