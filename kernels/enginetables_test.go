package kernels

import (
	"math"
	"strings"
	"testing"
)

// loglog interpolates y between (x0, y0) and (x1, y1) linearly in log-log,
// written out here independently of curve.at.
func loglog(x, x0, y0, x1, y1 float64) float64 {
	f := math.Log(x/x0) / math.Log(x1/x0)
	return math.Exp(math.Log(y0)*(1-f) + math.Log(y1)*f)
}

func h200Coster(t *testing.T) *Coster {
	t.Helper()
	return NewCoster(mustGPU(t, "h200"))
}

func TestEmbeddedEngineTablesLoad(t *testing.T) {
	tb, err := EmbeddedEngineTables("h200")
	if err != nil || tb == nil {
		t.Fatalf("h200 engine tables: %v", err)
	}
	var chunk, rec int
	for _, r := range tb.GDN {
		if r.Mode == GDNPrefill {
			chunk++
		} else {
			rec++
		}
	}
	// row counts of kernels/data/h200/gdn_chunk.csv, gdn_verify_sigmoid.csv (472) +
	// gdn_decode_packed.csv (56), moe_triton.csv (184) + moe_triton_ep8.csv (19)
	if chunk != 136 || rec != 528 || len(tb.MoE) != 203 {
		t.Errorf("rows: chunk %d, recurrent %d, moe %d; want 136, 528, 203", chunk, rec, len(tb.MoE))
	}
	// held aside: 24 prefill, 32 verify, 16 decode rows; 64 MoE
	hg, hm, err := EmbeddedEngineHeldout("h200")
	if err != nil || len(hg) != 72 || len(hm) != 64 {
		t.Errorf("held-aside rows %d, %d (%v); want 72, 64", len(hg), len(hm), err)
	}
	if tb, err := EmbeddedEngineTables("gb300"); err != nil || tb != nil {
		t.Errorf("gb300 has no engine tables, got %v, %v", tb, err)
	}
}

func TestGDNModesFromMeasurement(t *testing.T) {
	c := h200Coster(t)
	tp2 := GDNShape{Batch: 1, QLen: 4096, KHeads: 8, VHeads: 32, KDim: 128, VDim: 128}
	tp1 := GDNShape{Batch: 3, QLen: 1024, KHeads: 16, VHeads: 64, KDim: 128, VDim: 128}
	ln15 := math.Log(1.5) / math.Log(2)
	b2 := loglog(3072, 2048, 282.773, 4096, 526.613) // gdn_chunk.csv: B=2 at 2048 and 4096 tokens
	b4 := loglog(3072, 2048, 288.437, 4096, 540.139) // B=4 at 2048 and 4096 tokens
	cases := []struct {
		name    string
		s       GDNShape
		mode    GDNMode
		us      float64
		eagerUS float64 // 0: not checked
		source  string
		subst   bool
	}{
		// a measured point comes back as measured (gdn_chunk.csv TP2 batch 1)
		{"prefill point", tp2, GDNPrefill, 324.288, 632.213, SourceMeasured, false},
		{"prefill between q_lens", GDNShape{Batch: 1, QLen: 3000, KHeads: 8, VHeads: 32, KDim: 128, VDim: 128}, GDNPrefill,
			loglog(3000, 2048, 170.647, 4096, 324.288), 0, SourceMeasured, false},
		{"prefill between batches", tp1, GDNPrefill, math.Exp(math.Log(b2)*(1-ln15) + math.Log(b4)*ln15), 0, SourceMeasured, false},
		// beyond 32768 tokens the time grows in proportion
		{"prefill beyond", GDNShape{Batch: 1, QLen: 65536, KHeads: 8, VHeads: 32, KDim: 128, VDim: 128}, GDNPrefill, 2 * 2515.104, 0, SourceExtrapolated, false},
		// bf16 state at TP1 was not measured for prefill: the fp32 rows price it
		{"prefill bf16 substituted", GDNShape{Batch: 1, QLen: 4096, KHeads: 16, VHeads: 64, KDim: 128, VDim: 128, StateDType: BF16}, GDNPrefill, 521.344, 0, SourceMeasured, true},
		{"prefill bf16 measured", GDNShape{Batch: 1, QLen: 4096, KHeads: 8, VHeads: 32, KDim: 128, VDim: 128, StateDType: BF16}, GDNPrefill, 325.928, 593.416, SourceMeasured, false},
		// verify: SGLang v0.5.14's fused sigmoid-gating kernel (gdn_verify_sigmoid.csv, TP1 batch 64);
		// a measured q_len 5 row comes back as measured
		{"verify q_len 5", GDNShape{Batch: 64, QLen: 5, KHeads: 16, VHeads: 64, KDim: 128, VDim: 128}, GDNVerify, 434.539, 0, SourceMeasured, false},
		{"verify bf16 point", GDNShape{Batch: 64, QLen: 4, KHeads: 16, VHeads: 64, KDim: 128, VDim: 128, StateDType: BF16}, GDNVerify, 224.581, 226.656, SourceMeasured, false},
		// decode: v0.5.14's packed decode (gdn_decode_packed.csv TP1 batch 64 and 128)
		{"decode between batches", GDNShape{Batch: 96, QLen: 1, KHeads: 16, VHeads: 64, KDim: 128, VDim: 128}, GDNDecode,
			loglog(96, 64, 139.228, 128, 269.376), 0, SourceMeasured, false},
	}
	for _, tc := range cases {
		g, err := c.GDN(tc.s, tc.mode)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if got := g.Seconds * 1e6; math.Abs(got-tc.us) > 1e-6*tc.us {
			t.Errorf("%s: %.4f us, want %.4f", tc.name, got, tc.us)
		}
		if tc.eagerUS > 0 && math.Abs(g.EagerSeconds*1e6-tc.eagerUS) > 1e-6*tc.eagerUS {
			t.Errorf("%s: eager %.4f us, want %.4f", tc.name, g.EagerSeconds*1e6, tc.eagerUS)
		}
		if g.Source != tc.source || g.StateSubstituted != tc.subst || g.Kernel == "" {
			t.Errorf("%s: source %q substituted %v kernel %q; want %q %v", tc.name, g.Source, g.StateSubstituted, g.Kernel, tc.source, tc.subst)
		}
	}
	// decode is one token; a layout nobody measured goes to the reference model
	if _, err := c.GDN(GDNShape{Batch: 1, QLen: 2, KHeads: 16, VHeads: 64, KDim: 128, VDim: 128}, GDNDecode); err == nil {
		t.Error("decode with q_len 2 accepted")
	}
	g, err := c.GDN(GDNShape{Batch: 1, QLen: 4096, KHeads: 3, VHeads: 12, KDim: 128, VDim: 128}, GDNPrefill)
	if err != nil || g.Kernel != "" || g.Source == SourceMeasured {
		t.Errorf("unmeasured layout: kernel %q source %q err %v; want the reference model", g.Kernel, g.Source, err)
	}
	// GatedDeltaNet (what simulate calls) takes the measured kernel where one exists
	if got, want := must(t)(c.GatedDeltaNet(tp2)).Seconds, 324.288e-6; math.Abs(got-want) > 1e-12 {
		t.Errorf("GatedDeltaNet prefill %.3g s, want the chunk kernel's %.3g", got, want)
	}
	short := GDNShape{Batch: 4, QLen: 8, KHeads: 8, VHeads: 32, KDim: 128, VDim: 128}
	if must(t)(c.GatedDeltaNet(short)) != must(t)(c.GatedDeltaNetReference(short)) {
		t.Error("an 8-token chunk without intermediate states has no engine kernel: want the reference model")
	}
	// the chunked kernel is what makes prefill cheap: the reference recurrence is several times slower
	if ref := must(t)(c.GatedDeltaNetReference(tp2)).Seconds; ref < 3*324.288e-6 {
		t.Errorf("reference recurrence at 4096 tokens %.3g s: expected several times the chunk kernel", ref)
	}
}

func TestDefaultGDNMode(t *testing.T) {
	for q, want := range map[int]GDNMode{1: GDNDecode, 2: GDNVerify, 16: GDNVerify, 17: GDNPrefill, 4096: GDNPrefill} {
		if got := DefaultGDNMode(q); got != want {
			t.Errorf("q_len %d: %s, want %s", q, got, want)
		}
	}
	if _, err := ParseGDNMode("extend"); err == nil {
		t.Error("ParseGDNMode accepted extend")
	}
}

func TestTritonMoEFromMeasurement(t *testing.T) {
	c := h200Coster(t)
	s := MoEShape{Tokens: 40, Experts: 512, TopK: 10, Hidden: 4096, Inter: 256, DType: BF16, Kernel: MoETriton}
	got := must(t)(c.MoE(s))
	want := loglog(40, 32, 377.173, 48, 490.763) // moe_triton.csv, TP4 shard
	if math.Abs(got.Seconds*1e6-want) > 1e-6*want || got.Source != SourceMeasured {
		t.Errorf("triton MoE 40 tokens: %.3f us (%s), want %.3f", got.Seconds*1e6, got.Source, want)
	}
	// the held-aside measurement at 40 tokens is 449.611 us: within the
	// tables' run-to-run noise (median 2 %, p90 8 %; NOTES.md), 5 % here
	if e := math.Abs(got.Seconds*1e6-449.611) / 449.611; e > 0.05 {
		t.Errorf("held-aside 40 tokens: error %.1f %%", 100*e)
	}
	// skewed routing scales the measurement by the fused roofline's ratio
	sk := s
	sk.Skew = 1.2
	fused := MoEShape{Tokens: 40, Experts: 512, TopK: 10, Hidden: 4096, Inter: 256, DType: BF16, Kernel: MoEFused}
	fsk := fused
	fsk.Skew = 1.2
	ratio := must(t)(c.MoE(fsk)).Seconds / must(t)(c.MoE(fused)).Seconds
	if g := must(t)(c.MoE(sk)).Seconds; math.Abs(g-got.Seconds*ratio) > 1e-9*g || !(ratio < 1) {
		t.Errorf("skewed triton MoE %.4g s, want %.4g (ratio %.3f < 1)", g, got.Seconds*ratio, ratio)
	}
	// fused (no user table) and shapes off the table keep the model
	if must(t)(c.MoE(fused)).Source == SourceMeasured {
		t.Error("fused MoE priced from the Triton table")
	}
	off := s
	off.Hidden = 7168
	if must(t)(c.MoE(off)).Source == SourceMeasured {
		t.Error("an unmeasured MoE layer priced as measured")
	}
}

func TestWithEngineTablesReplacesLines(t *testing.T) {
	c := h200Coster(t)
	user := &EngineTables{Source: "user.csv",
		GDN: []GDNRow{{Mode: GDNPrefill, StateDType: FP32, Batch: 1, QLen: 1024, Heads: 32, KVHeads: 8, HeadDim: 128, GraphUS: 100, Kernel: "k"},
			{Mode: GDNPrefill, StateDType: FP32, Batch: 1, QLen: 4096, Heads: 32, KVHeads: 8, HeadDim: 128, GraphUS: 400, Kernel: "k"}},
		FusedMoE: []MoEKernelRow{{DType: BF16, Tokens: 1, Experts: 256, TopK: 8, Hidden: 7168, Inter: 256, LatencyUS: 50},
			{DType: BF16, Tokens: 64, Experts: 256, TopK: 8, Hidden: 7168, Inter: 256, LatencyUS: 200}}}
	u := c.WithEngineTables(user)
	g, _ := u.GDN(GDNShape{Batch: 1, QLen: 2048, KHeads: 8, VHeads: 32, KDim: 128, VDim: 128}, GDNPrefill)
	if want := loglog(2048, 1024, 100, 4096, 400); math.Abs(g.Seconds*1e6-want) > 1e-9 {
		t.Errorf("user line: %.3f us, want %.3f", g.Seconds*1e6, want)
	}
	// lines the user did not give stay embedded
	if g, _ := u.GDN(GDNShape{Batch: 1, QLen: 4096, KHeads: 4, VHeads: 16, KDim: 128, VDim: 128}, GDNPrefill); math.Abs(g.Seconds*1e6-212.274) > 1e-6 {
		t.Errorf("embedded TP4 line: %.3f us, want 212.274", g.Seconds*1e6)
	}
	m := must(t)(u.MoE(MoEShape{Tokens: 8, Experts: 256, TopK: 8, Hidden: 7168, Inter: 256, DType: BF16}))
	if want := loglog(8, 1, 50, 64, 200); math.Abs(m.Seconds*1e6-want) > 1e-9 || m.Source != SourceMeasured {
		t.Errorf("user fused MoE: %.3f us %s, want %.3f", m.Seconds*1e6, m.Source, want)
	}
	if c.EngineSource() == u.EngineSource() || !strings.HasPrefix(u.EngineSource(), "user.csv") {
		t.Errorf("engine source %q", u.EngineSource())
	}
}

func TestParseEngineTableErrors(t *testing.T) {
	head := "kernel,mode,state_dtype,batch,q_len,heads,kv_heads,head_dim,graph_us,eager_us,eager_sync_us\n"
	for _, tc := range []struct{ body, want string }{
		{"k,extend,fp32,1,64,8,2,128,10,,\n", "x.csv:2: column mode"},
		{"k,decode,fp32,1,2,8,2,128,10,,\n", "x.csv:2: decode row with q_len 2"},
		{"k,prefill,fp8,1,64,8,2,128,10,,\n", "x.csv:2: column state_dtype"},
		{"k,prefill,fp32,0,64,8,2,128,10,,\n", "x.csv:2: column batch"},
		{"k,prefill,fp32,1,64,8,2,128,-3,,\n", "x.csv:2: column graph_us"},
		{"k,prefill,fp32,1,64,8,2,128,NaN,,\n", "x.csv:2: column graph_us"},
	} {
		if _, err := ParseGDNTable("x.csv", []byte(head+tc.body)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: error %v, want %q", tc.body, err, tc.want)
		}
	}
	if _, err := ParseGDNTable("x.csv", []byte("mode,batch\nprefill,1\n")); err == nil || !strings.Contains(err.Error(), "x.csv:1: header has no") {
		t.Errorf("missing columns: %v", err)
	}
	mhead := "kernel,dtype,tokens,experts,topk,hidden,inter,config,kernels_us\n"
	if _, err := ParseMoEKernelTable("m.csv", []byte(mhead+"k,bf16,1,8,10,4096,128,c,3\n")); err == nil || !strings.Contains(err.Error(), "m.csv:2: topk 10 exceeds experts 8") {
		t.Errorf("topk > experts: %v", err)
	}
}

func TestCurveEdges(t *testing.T) {
	c := newCurve([]float64{4, 1, 16, 4}, []float64{20, 10, 80, 40})
	// the repeated x=4 averages to 30
	for _, tc := range []struct{ x, want float64 }{{0.5, 10}, {1, 10}, {2, loglog(2, 1, 10, 4, 30)}, {4, 30}, {32, 160}} {
		if got, _ := c.at(tc.x); math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("at %g: %g, want %g", tc.x, got, tc.want)
		}
	}
}

func TestValidateEngineTablesH200(t *testing.T) {
	tb, _ := EmbeddedEngineTables("h200")
	hg, hm, _ := EmbeddedEngineHeldout("h200")
	seen := map[string]bool{}
	for _, e := range ValidateEngineTables(tb, hg, hm) {
		seen[e.Table+" "+e.Metric+" "+e.Kind] = true
		if e.Points == 0 || !(e.MedianAbsErr >= 0) {
			t.Errorf("%+v: no points or bad error", e)
		}
	}
	for _, k := range []string{"gdn_chunk graph_us held-aside", "gdn_chunk eager_us held-aside", "gdn_verify graph_us odd-positions", "gdn_verify graph_us held-aside", "gdn_decode graph_us held-aside", "moe_triton kernels_us held-aside"} {
		if !seen[k] {
			t.Errorf("missing %s", k)
		}
	}
}
