package audit_test

import (
	"testing"

	"github.com/specsim/specsim/audit"
	"github.com/specsim/specsim/audit/checkpointtest"
)

// BenchmarkAuditDeepSeekV31 audits a full-size DeepSeek-V3.1-NVFP4-shaped
// checkpoint: 100 shards, about 180k tensors (58 MoE layers x 256 experts x
// 3 matrices x 4 NVFP4 tensors), 385 GB of sparse data. Writing the
// fixture happens before the timer starts.
func BenchmarkAuditDeepSeekV31(b *testing.B) {
	dir := b.TempDir()
	main, mtp, err := checkpointtest.WriteFromConfigs(dir, checkpointtest.DeepSeekV3NVFP4,
		configs+"nvidia--DeepSeek-V3.1-NVFP4_config.json", configs+"nvidia--DeepSeek-V3.1-NVFP4_hf_quant_config.json",
		checkpointtest.Options{Shards: 100})
	if err != nil {
		b.Fatal(err)
	}
	benchAudit(b, dir, len(main)+len(mtp))
}

// BenchmarkAudit25GB audits a 25 GB BF16 dense checkpoint (a 12.6 B
// parameter Qwen2.5-14B-like shape) in 8 shards.
func BenchmarkAudit25GB(b *testing.B) {
	dir := b.TempDir()
	d := checkpointtest.Dense{Layers: 40, Hidden: 5120, Inter: 13824, Vocab: 152064, Heads: 40, KVHeads: 8}
	ts := d.Tensors()
	if err := checkpointtest.WriteCheckpoint(dir, ts, 8, d.Config(), nil); err != nil {
		b.Fatal(err)
	}
	if total := checkpointtest.TotalBytes(ts); total < 25e9 {
		b.Fatalf("fixture is only %d bytes", total)
	}
	benchAudit(b, dir, len(ts))
}

func benchAudit(b *testing.B, dir string, tensors int) {
	b.Helper()
	var read int64
	b.ResetTimer()
	for b.Loop() {
		r, err := audit.Run(dir, audit.Config{TP: []int{1, 2, 4, 8}})
		if err != nil {
			b.Fatal(err)
		}
		if r.Tensors != tensors {
			b.Fatalf("audited %d tensors, wrote %d", r.Tensors, tensors)
		}
		read = r.BytesRead
	}
	b.ReportMetric(float64(read), "bytes-read/op")
	b.ReportMetric(float64(tensors), "tensors")
}
