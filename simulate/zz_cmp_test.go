package simulate

import (
	"fmt"
	"testing"
)

func TestCompareTmp(t *testing.T) {
	for _, c := range []struct {
		topo, gpu, prec string
		conc, k         int
		agentx          bool
	}{{"agg:tp2", "gb300", "fp4", 7, 6, true}, {"agg:tp8", "h200", "fp8", 64, 0, false}, {"agg:tp8", "h200", "fp8", 64, 3, false}, {"agg:tp4", "b200", "fp4", 256, 3, false}, {"agg:dep8", "b200", "fp4", 512, 3, false}, {"disagg:1xtp4+1xtp4", "gb300", "fp4", 32, 3, true}, {"agg:tp1pp4", "gb300", "fp4", 16, 3, false}, {"agg:tp4", "b200", "fp4", 4, 3, false}} {
		q := Query{Model: "qwen3.5", Precision: c.prec, GPU: c.gpu, Workload: "fixed", ISL: 1024, OSL: 1024, RangeRatio: 0.8, Spec: "mtp", Seed: 1, SchedOverhead: -1, SpecOverhead: -1}
		if c.agentx {
			q.Workload = "agentx"
		}
		r, err := q.Resolve()
		if err != nil {
			t.Fatal(err)
		}
		tp, _ := ParseTopology(c.topo)
		a, err := Predict(r, tp, c.conc, c.k)
		if err != nil {
			t.Fatal(err)
		}
		b, err := EstimatePoint(r, tp, c.conc, c.k)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Printf("%-22s %-6s c=%-4d k=%d  sim tput %8.1f tpot %6.2f ttft %7.1f e2el50 %6.2f p90 %6.2f B %5.1f | mf tput %8.1f tpot %6.2f ttft %7.1f e2el50 %6.2f p90 %6.2f B %5.1f\n", c.topo, c.gpu, c.conc, c.k,
			a.TputPerGPU, a.TPOTms, a.TTFTms, a.E2EL.P50, a.E2EL.P90, a.DecodeBatch, b.TputPerGPU, b.TPOTms, b.TTFTms, b.E2EL.P50, b.E2EL.P90, b.DecodeBatch)
	}
}
