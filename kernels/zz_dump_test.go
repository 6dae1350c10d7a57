package kernels

import (
	"fmt"
	"testing"
)

func TestZZDump(t *testing.T) {
	_, held, _, _ := MeasuredTables("h200")
	c := NewCoster(mustGPU(t, "h200"))
	for _, r := range held.Rows {
		if r.Op != "attention" && r.Op != "gemm" {
			continue
		}
		p, _ := c.PredictRow(r)
		e := p.Seconds*1e6/r.LatencyUS - 1
		if e > 0.1 || e < -0.1 {
			fmt.Printf("%+.0f%% %s %s m=%d n=%d k=%d b=%d q=%d kv=%d h=%d kvh=%d d=%d meas=%.1f pred=%.1f\n", 100*e, r.Op, p.Source, r.M, r.N, r.K, r.Batch, r.QLen, r.KVLen, r.Heads, r.KVHeads, r.HeadDim, r.LatencyUS, p.Seconds*1e6)
		}
	}
}
