//go:build unix

package deep

import (
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// A FIFO named as a shard must be refused, not opened (which would block).
func TestFIFORefused(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "model.safetensors")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skip("mkfifo:", err)
	}
	_, err := Audit([]Tensor{{Path: fifo, Name: "mtp.fc.weight", DType: "BF16", Shape: []int64{1, 128}, Begin: 8, End: 264}}, Options{})
	if err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Fatalf("err = %v", err)
	}
}
