package simulate

import (
	"math/rand/v2"
	"strings"
	"testing"
)

func TestParseTopology(t *testing.T) {
	for _, c := range []struct {
		in     string
		want   string
		gpus   int
		wantTP int
		wantEP int
		wantPP int
		dep    bool
	}{
		{"agg:tp2", "agg:tp2", 2, 2, 1, 1, false},
		{"tp8", "agg:tp8", 8, 8, 1, 1, false},
		{"agg:tp8ep8", "agg:tp8ep8", 8, 8, 8, 1, false},
		{"agg:tp8ep4", "agg:tp8ep4", 8, 8, 4, 1, false},
		{"agg:dep8", "agg:dep8", 8, 8, 8, 1, true},
		{"AGG:TP1PP4", "agg:tp1pp4", 4, 1, 1, 4, false},
		{"agg:pp4tp2", "agg:tp2pp4", 8, 2, 1, 4, false},
		{"agg:dep4pp2", "agg:dep4pp2", 8, 4, 4, 2, true},
	} {
		got, err := ParseTopology(c.in)
		if err != nil {
			t.Errorf("%q: %v", c.in, err)
			continue
		}
		p := got.Agg
		if got.String() != c.want || got.GPUs() != c.gpus || p.TP != c.wantTP || p.EP != c.wantEP || p.PP != c.wantPP || p.DPAttention != c.dep {
			t.Errorf("%q = %+v (%s, %d GPUs), want %s with %d GPUs", c.in, got, got, got.GPUs(), c.want, c.gpus)
		}
	}
}

func TestParseTopologyDisagg(t *testing.T) {
	got, err := ParseTopology("disagg:3xtp1pp4+1xdep8")
	if err != nil {
		t.Fatal(err)
	}
	if !got.Disagg || got.PrefillWorkers != 3 || got.Prefill.PP != 4 || got.Prefill.TP != 1 ||
		got.DecodeWorkers != 1 || !got.Decode.DPAttention || got.Decode.TP != 8 {
		t.Fatalf("parsed %+v", got)
	}
	// 3 prefill workers of 4 GPUs + 1 decode worker of 8 GPUs.
	if got.GPUs() != 3*4+8 {
		t.Errorf("GPUs = %d, want 20", got.GPUs())
	}
	if got.String() != "disagg:3xtp1pp4+1xdep8" {
		t.Errorf("String = %s", got)
	}
}

func TestParseTopologyErrors(t *testing.T) {
	for _, c := range []struct{ in, msg string }{
		{"", "empty"},
		{"agg:", "empty"},
		{"agg:tp", "needs a size"},
		{"agg:tp0", "size must be"},
		{"agg:tp3ep2", "must divide"},
		{"agg:ep4", "needs a tp"},
		{"agg:dep4tp4", "already sets"},
		{"agg:tp2tp2", "twice"},
		{"agg:tp2x", "unexpected"},
		{"agg:tp99999999", "too large"},
		{"disagg:tp4+tp4", "workers"},
		{"disagg:1xtp4", "one prefill and one decode"},
		{"disagg:0xtp4+1xtp4", "worker count"},
		{"disagg:1xtp1024pp1024+1xtp4", "GPUs"},
		{"mesh:tp4", "unexpected"},
	} {
		_, err := ParseTopology(c.in)
		if err == nil || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%q: error %v, want one mentioning %q", c.in, err, c.msg)
		}
	}
}

func TestParallelFits(t *testing.T) {
	q, _ := LookupPreset("Qwen3.5-397B-A17B")
	for _, c := range []struct {
		p  Parallel
		ok bool
	}{
		{Parallel{TP: 2, EP: 1, PP: 1}, true},
		{Parallel{TP: 8, EP: 8, PP: 1}, true},
		{Parallel{TP: 64, EP: 1, PP: 1}, false}, // 32 heads
		{Parallel{TP: 1, EP: 1, PP: 61}, false}, // 60 layers
		{Parallel{TP: 3, EP: 3, PP: 1}, false},  // 512 experts
	} {
		if err := c.p.fits(q); (err == nil) != c.ok {
			t.Errorf("%s fits: %v, want ok=%v", c.p, err, c.ok)
		}
	}
}

func FuzzParseTopology(f *testing.F) {
	for _, s := range []string{"agg:tp2", "agg:tp8ep8", "agg:dep8", "agg:tp1pp4", "disagg:3xtp1pp4+1xdep8", "disagg:1xtp2+2xtp4ep4", "x", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		top, err := ParseTopology(s)
		if err != nil {
			return
		}
		if top.GPUs() < 1 || top.GPUs() > maxGPUs {
			t.Fatalf("%q: %d GPUs", s, top.GPUs())
		}
		again, err := ParseTopology(top.String())
		if err != nil || again != top {
			t.Fatalf("%q -> %s does not round-trip: %+v, %v", s, top, again, err)
		}
	})
}

func TestAgentXOverrides(t *testing.T) {
	a := DefaultAgentX()
	if err := ParseAgentXOverrides(&a, "isl-median=32000, osl-median=1000,cache-hit=0.5,isl-max=131072"); err != nil {
		t.Fatal(err)
	}
	if a.ISLMedian != 32000 || a.OSLMedian != 1000 || a.CacheHit != 0.5 || a.ISLMax != 131072 {
		t.Errorf("overrides not applied: %+v", a)
	}
	for _, bad := range []string{"isl-median", "foo=1", "isl-median=x", "cache-hit=1.5", "isl-max=1.5", "isl-min=300000", "isl-sigma=NaN", "isl-median=1,isl-median=2"} {
		b := DefaultAgentX()
		if err := ParseAgentXOverrides(&b, bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

func FuzzParseAgentXOverrides(f *testing.F) {
	for _, s := range []string{"isl-median=32000", "cache-hit=0.9,osl-max=100", "", "=", "a=b,c"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		a := DefaultAgentX()
		if err := ParseAgentXOverrides(&a, s); err != nil {
			return
		}
		w := Workload{Name: "agentx", AgentX: a}
		r := rand.New(rand.NewPCG(1, 2))
		for range 5 {
			q := w.Sample(r)
			if q.ISL < a.ISLMin || q.ISL > a.ISLMax || q.OSL < 1 || q.OSL > a.OSLMax || q.Cached < 0 || q.Cached >= q.ISL {
				t.Fatalf("%q: sample %+v outside the distribution's bounds", s, q)
			}
		}
	})
}

func TestAgentXSampleMoments(t *testing.T) {
	w := Workload{Name: "agentx", AgentX: DefaultAgentX()}
	r := rand.New(rand.NewPCG(7, 7))
	const n = 20000
	var isls []float64
	var hit float64
	for range n {
		q := w.Sample(r)
		isls = append(isls, float64(q.ISL))
		hit += float64(q.Cached) / float64(q.ISL)
	}
	// The median of a clipped log-normal is its median when clipping is
	// below half the mass: 64k.
	if m := quantile(isls, 0.5); m < 60000 || m > 68000 {
		t.Errorf("ISL median %.0f, want about 64000", m)
	}
	// Beta(0.93*20, 0.07*20) has mean 0.93 (less the one-token floor).
	if h := hit / n; h < 0.92 || h > 0.94 {
		t.Errorf("mean cached fraction %.3f, want 0.93", h)
	}
}

func TestFixedRangeRatio(t *testing.T) {
	w := Workload{Name: "fixed", ISL: 1000, OSL: 500, RangeRatio: 0.8}
	r := rand.New(rand.NewPCG(1, 1))
	for range 1000 {
		q := w.Sample(r)
		if q.ISL < 800 || q.ISL > 1000 || q.OSL < 400 || q.OSL > 500 {
			t.Fatalf("sample %+v outside [0.8L, L]", q)
		}
	}
	if got := w.MeanContext(); got != 0.9*(1000+250) {
		t.Errorf("MeanContext = %g, want %g", got, 0.9*1250)
	}
}
