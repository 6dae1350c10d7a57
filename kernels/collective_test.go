package kernels

import (
	"math"
	"testing"
)

func TestCollectiveByHand(t *testing.T) {
	c := newCoster(mustGPU(t, "h200"), nil, SourceRoofline)
	p := collectiveParams{Base: 6e-6, PerStep: 0.8e-6, BusEff: 0.8}
	const bw = 450e9 * 0.8
	tests := []struct {
		op    CollectiveOp
		bytes float64
		gpus  int
		want  float64
	}{
		// Ring all-reduce of 64 MiB over 8: 2*7 steps, 2*7/8 of the message on the wire.
		{AllReduce, 64 << 20, 8, p.Base + 14*p.PerStep + 2*7.0/8*(64<<20)/bw},
		// All-gather of a 1 MiB shard over 4: 3 steps, 3 shards received.
		{AllGather, 1 << 20, 4, p.Base + 3*p.PerStep + 3*(1<<20)/bw},
		{ReduceScatter, 8 << 20, 2, p.Base + p.PerStep + 0.5*(8<<20)/bw},
		{AllToAll, 8 << 20, 8, p.Base + 7*p.PerStep + 7.0/8*(8<<20)/bw},
	}
	for _, tc := range tests {
		if got := c.Collective(tc.op, tc.bytes, tc.gpus).Seconds; !near(got, tc.want, 1e-12) {
			t.Errorf("%s %v B over %d: %v s, want %v", tc.op, tc.bytes, tc.gpus, got, tc.want)
		}
	}
	// Beyond the NVLink domain (16 H200s = 2 nodes): NVLink all-reduce
	// among 8, then a ring over the 2 nodes' NICs on 1/8 of the message.
	b := 64.0 * (1 << 20)
	net := collectiveParams{Base: 10e-6, PerStep: 5e-6, BusEff: 0.85}
	want := p.Base + 14*p.PerStep + 2*7.0/8*b/bw + net.Base + 2*net.PerStep + 2*0.5*(b/8)/(50e9*0.85)
	if got := c.Collective(AllReduce, b, 16).Seconds; !near(got, want, 1e-12) {
		t.Errorf("16-GPU all-reduce %v, want %v", got, want)
	}
	if c.Collective(AllReduce, b, 16).Seconds < 1.5*c.Collective(AllReduce, b, 8).Seconds {
		t.Error("crossing nodes over 50 GB/s NICs should cost well over the NVLink all-reduce")
	}
}

// NVL72 and Blackwell NVLink carry the fitted H200 shape over by link
// bandwidth: large all-reduces run about twice as fast on 900 GB/s links,
// small ones keep the fitted latency, and 72 GPUs stay on NVLink.
func TestCollectiveCarryOver(t *testing.T) {
	h := mustGPU(t, "h200")
	cal := calibrate(h, nil, syntheticCollectives(t))
	hc := newCoster(h, cal, SourceRoofline)
	coll := *cal.coll
	coll.table = nil
	gc := newCoster(mustGPU(t, "gb300"), &calibration{eff: cal.eff, coll: &coll}, SourceCarryOver)
	plain := *hc
	plain.coll = &coll
	big := float64(1 << 30)
	ratio := plain.Collective(AllReduce, big, 8).Seconds / gc.Collective(AllReduce, big, 8).Seconds
	if ratio < 1.9 || ratio > 2.0 {
		t.Errorf("1 GiB all-reduce h200/gb300 = %.3f, want just under the link ratio 2", ratio)
	}
	small := 4096.0
	if r := plain.Collective(AllReduce, small, 8).Seconds / gc.Collective(AllReduce, small, 8).Seconds; math.Abs(r-1) > 0.05 {
		t.Errorf("4 KiB all-reduce ratio %.3f, want about 1 (latency-bound)", r)
	}
	// 72 GPUs of an NVL72 stay on NVLink: far cheaper than 16 H200s
	// crossing their 50 GB/s NICs.
	if c72, c16 := gc.Collective(AllToAll, 1<<28, 72), plain.Collective(AllToAll, 1<<28, 16); c72.Source != SourceCarryOver || c72.Seconds*3 > c16.Seconds {
		t.Errorf("72-GPU all-to-all on NVL72 %+v vs 16 H200s %+v", c72, c16)
	}
	// Without the wiggle the fit finds the truth the table was made from.
	clean := calibrate(h, nil, syntheticCollectivesW(t, false))
	got := clean.coll.nvlink[collectiveIndex(AllReduce)]
	if !near(got.BusEff, collectiveTruth.BusEff, 0.02) || !near(got.Base+14*got.PerStep, collectiveTruth.Base+14*collectiveTruth.PerStep, 0.05) {
		t.Errorf("fitted all-reduce %+v, truth %+v", got, collectiveTruth)
	}
}
