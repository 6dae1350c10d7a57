package enginelog

import (
	"fmt"
	"strings"
	"testing"
)

// BenchmarkScan measures log reading speed (bytes/s) on a mixed log: one
// decode line in four, the rest other scheduler chatter.
func BenchmarkScan(b *testing.B) {
	var sb strings.Builder
	for i := 0; sb.Len() < 8<<20; i++ {
		if i%4 == 0 {
			fmt.Fprintf(&sb, "[2026-07-01 12:%02d:%02d DP%d TP%d EP%d] Decode batch, #running-req: %d, #full token: 60000, full token usage: 0.10, mamba num: 30, mamba usage: 0.08, accept len: 3.%02d, accept rate: 0.83, cuda graph: True, gen throughput (token/s): 1000.00, #queue-req: 0, \n",
				i/60%60, i%60, i%8, i%8, i%8, i%64, i%100)
		} else {
			fmt.Fprintf(&sb, "[2026-07-01 12:%02d:%02d DP%d TP%d EP%d] Prefill batch, #new-seq: 1, #new-token: 8192, #cached-token: 120000, token usage: 0.10, #running-req: 30, #queue-req: 0, \n", i/60%60, i%60, i%8, i%8, i%8)
		}
	}
	data := sb.String()
	b.SetBytes(int64(len(data)))
	b.ResetTimer()
	for range b.N {
		n := 0
		if _, err := Scan(strings.NewReader(data), func(Sample) error { n++; return nil }); err != nil || n == 0 {
			b.Fatal(err, n)
		}
	}
}
