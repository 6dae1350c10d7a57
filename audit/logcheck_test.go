package audit_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/specsim/specsim/audit"
	"github.com/specsim/specsim/audit/checkpointtest"
)

// TestLogBandAsymmetric: a logged draft size may sit below the bytes floor
// (the allocator reuses free blocks of the target's segments) but not far
// above the allocator footprint. The PR's SGLang load logs (16.04 / 8.07 /
// 4.02 GB at TP 1 / 2 / 4) sit below the BF16 footprint (16.084 / 8.076 /
// 4.084 GiB, measured on an H200 by audit/testdata/sglang_draft_alloc.py)
// and two of them below the floor; they must read as a BF16 draft.
func TestLogBandAsymmetric(t *testing.T) {
	dir := writeQwen35(t, "nvidia--Qwen3.5-397B-A17B-NVFP4", checkpointtest.Options{MainLayers: 2, Shards: 2})
	for _, tc := range []struct {
		tp         int
		logged     float64
		prec       string
		consistent bool
	}{
		{1, 16.04, "BF16", true},
		{2, 8.07, "BF16", true},
		{4, 4.02, "BF16", true},
		{4, 3.95, "BF16", true},  // 3% below the floor: reuse of free blocks
		{4, 3.80, "BF16", false}, // 6.6% below the floor
		{4, 4.20, "BF16", false}, // 2.8% above the footprint: more than the allocator rounds
		{4, 1.93, "NVFP4", true},
	} {
		log := fmt.Sprintf("[2026-01-01 00:00:10 TP0] Load weight end. type=Qwen3_5ForCausalLMMTP, avail mem=90.00 GB, mem usage=%.2f GB.\n", tc.logged)
		path := filepath.Join(t.TempDir(), "server.log")
		if err := os.WriteFile(path, []byte(log), 0o644); err != nil {
			t.Fatal(err)
		}
		r, err := audit.Run(dir, audit.Config{Options: audit.Options{Engine: "sglang"}, TP: []int{tc.tp}, LogPath: path})
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Log) != 1 {
			t.Fatalf("log matches %+v", r.Log)
		}
		m := r.Log[0]
		if m.Precision != tc.prec || m.Consistent != tc.consistent {
			t.Errorf("tp %d, %.2f GiB: %s consistent=%v (floor %.3f, footprint %.3f, outside %.4f); want %s %v",
				tc.tp, tc.logged, m.Precision, m.Consistent, m.FloorGiB, m.ModeledGiB, m.RelError, tc.prec, tc.consistent)
		}
		if m.FloorGiB >= m.ModeledGiB {
			t.Errorf("floor %.4f not below footprint %.4f", m.FloorGiB, m.ModeledGiB)
		}
	}
}
