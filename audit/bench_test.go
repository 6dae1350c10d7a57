package audit_test

import (
	"os"
	"testing"

	"github.com/specsim/specsim/audit"
)

func BenchmarkAuditFixtureDir(b *testing.B) {
	dir := os.Getenv("SPECSIM_BENCH_DIR")
	if dir == "" {
		b.Skip("SPECSIM_BENCH_DIR not set")
	}
	for b.Loop() {
		if _, err := audit.Run(dir, audit.Config{TP: []int{1, 2, 4, 8}}); err != nil {
			b.Fatal(err)
		}
	}
}
