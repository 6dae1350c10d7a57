package deep

import (
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkAuditSmall is one FuzzAudit input: a tiny BF16 tensor. Its cost
// per call bounds the fuzzer's rate (the grid histograms were cleared
// whole, 32 KB each, on every tensor).
func BenchmarkAuditSmall(b *testing.B) {
	path := filepath.Join(b.TempDir(), "x.safetensors")
	if err := os.WriteFile(path, make([]byte, 1030), 0o644); err != nil {
		b.Fatal(err)
	}
	ts := []Tensor{{Path: path, Name: "mtp.x.weight", DType: "BF16", Shape: []int64{1, 514}, Begin: 2, End: 2 + 1028}}
	for b.Loop() {
		if _, err := Audit(ts, Options{Budget: 100 << 10}); err != nil {
			b.Fatal(err)
		}
	}
}
