package kernels

import (
	"math"
	"strings"
	"testing"
)

func TestParseOpTable(t *testing.T) {
	data := `# gpu: NVIDIA H200
# driver: 570.1
#
op,dtype,m,n,k,tokens,experts,topk,hidden,inter,batch,q_len,kv_len,heads,kv_heads,head_dim,latency_us,extra
gemm,bf16,1,4096,4096,,,,,,,,,,,,12.5,x
moe,fp8,,,,16,256,8,7168,256,,,,,,,40.25,
attention,,,,,,,,,,4,2,8192,32,4,128,30,

copy,bf16,,1048576,,,,,,,,,,,,,3.0,
`
	tab, err := ParseOpTable("ops.csv", []byte(data), true)
	if err != nil {
		t.Fatal(err)
	}
	if tab.Meta["gpu"] != "NVIDIA H200" || tab.Meta["driver"] != "570.1" {
		t.Errorf("meta = %v", tab.Meta)
	}
	if len(tab.Rows) != 4 {
		t.Fatalf("%d rows, want 4", len(tab.Rows))
	}
	want := []OpRow{
		{Op: "gemm", DType: BF16, M: 1, N: 4096, K: 4096, LatencyUS: 12.5, Line: 5},
		{Op: "moe", DType: FP8, Tokens: 16, Experts: 256, TopK: 8, Hidden: 7168, Inter: 256, LatencyUS: 40.25, Line: 6},
		{Op: "attention", DType: BF16, Batch: 4, QLen: 2, KVLen: 8192, Heads: 32, KVHeads: 4, HeadDim: 128, LatencyUS: 30, Line: 7},
		{Op: "copy", DType: BF16, N: 1048576, LatencyUS: 3, Line: 9},
	}
	for i, w := range want {
		if tab.Rows[i] != w {
			t.Errorf("row %d = %+v, want %+v", i, tab.Rows[i], w)
		}
	}
}

func TestParseOpTableErrors(t *testing.T) {
	header := "op,dtype,m,n,k,latency_us\n"
	tests := []struct{ name, data, want string }{
		{"no header", "# only comments\n", "no CSV header"},
		{"no op column", "dtype,m\nbf16,1\n", `no "op" column`},
		{"no latency", "op,m\ngemm,1\n", `no "latency_us"`},
		{"bad dtype", header + "gemm,fp7,1,2,3,4\n", "ops.csv:2: column dtype"},
		{"negative dim", header + "gemm,bf16,-1,2,3,4\n", "ops.csv:2: column m"},
		{"fractional dim", header + "gemm,bf16,1.5,2,3,4\n", "column m"},
		{"huge dim", header + "gemm,bf16,1e300,2,3,4\n", "out of range"},
		{"zero latency", header + "gemm,bf16,1,2,3,0\n", "latency_us"},
		{"nan latency", header + "gemm,bf16,1,2,3,NaN\n", "latency_us"},
		{"empty latency", header + "gemm,bf16,1,2,3,\n", "latency_us is empty"},
		{"empty op", header + ",bf16,1,2,3,4\n", "empty op"},
		{"bad quote", header + "gemm,\"bf16,1,2,3,4\n", "ops.csv:2"},
	}
	for _, tc := range tests {
		_, err := ParseOpTable("ops.csv", []byte(tc.data), true)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one containing %q", tc.name, err, tc.want)
		}
	}
}

func TestParseCollectiveTable(t *testing.T) {
	data := "# gpu: H200\nop,dtype,gpus,bytes,latency_us\nallreduce,bf16,8,4096,12.5\nall_gather,bf16,2,1073741824,3000\n"
	tab, err := ParseCollectiveTable("c.csv", []byte(data))
	if err != nil {
		t.Fatal(err)
	}
	if len(tab.Rows) != 2 || tab.Rows[1].Op != AllGather || tab.Rows[1].Bytes != 1<<30 || tab.Rows[0].GPUs != 8 {
		t.Errorf("rows = %+v", tab.Rows)
	}
	for _, bad := range []string{
		"op,dtype,gpus,bytes,latency_us\nallreduce,bf16,1,4096,1\n",
		"op,dtype,gpus,bytes,latency_us\nbroadcast,bf16,2,4096,1\n",
		"op,dtype,gpus,bytes,latency_us\nallreduce,bf16,2,0,1\n",
		"op,dtype,gpus,latency_us\nallreduce,bf16,2,1\n",
	} {
		if _, err := ParseCollectiveTable("c.csv", []byte(bad)); err == nil {
			t.Errorf("accepted %q", bad)
		}
	}
}

// FuzzParseOpTable: no input panics, and every accepted row is usable.
func FuzzParseOpTable(f *testing.F) {
	f.Add([]byte("# gpu: x\nop,dtype,m,n,k,latency_us\ngemm,bf16,1,2,3,4\n"), true)
	f.Add([]byte("op,tokens,experts,topk,hidden,inter\nmoe,1,8,2,16,32\n"), false)
	f.Add([]byte("op,batch,q_len,kv_len,heads,kv_heads,head_dim,latency_us\nattention,1,1,1,1,1,1,1\n"), true)
	f.Add([]byte("\n\n#\nop\n\"\n"), false)
	f.Fuzz(func(t *testing.T, data []byte, needLatency bool) {
		tab, err := ParseOpTable("fuzz.csv", data, needLatency)
		if err != nil {
			return
		}
		c := newCoster(mustGPU(t, "h200"), nil, SourceRoofline)
		for _, r := range tab.Rows {
			if needLatency && !(r.LatencyUS > 0) {
				t.Fatalf("accepted row without latency: %+v", r)
			}
			if cost, err := c.PredictRow(r); err == nil && (cost.Seconds < 0 || cost.Seconds != cost.Seconds) {
				t.Fatalf("row %+v priced at %v", r, cost.Seconds)
			}
		}
	})
}

func FuzzParseCollectiveTable(f *testing.F) {
	f.Add([]byte("op,dtype,gpus,bytes,latency_us\nallreduce,bf16,8,4096,12.5\n"))
	f.Add([]byte("# x\nop,gpus,bytes,latency_us\nalltoall,72,1,1\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		tab, err := ParseCollectiveTable("fuzz.csv", data)
		if err != nil {
			return
		}
		c := newCoster(mustGPU(t, "gb300"), nil, SourceRoofline)
		for _, r := range tab.Rows {
			if s := c.Collective(r.Op, r.Bytes, r.GPUs).Seconds; !(s > 0) {
				t.Fatalf("row %+v priced at %v", r, s)
			}
		}
	})
}

func TestIsotonic(t *testing.T) {
	got := isotonic([]float64{1, 3, 2, 2, 5, 4})
	want := []float64{1, 7.0 / 3, 7.0 / 3, 7.0 / 3, 4.5, 4.5}
	for i := range want {
		if !near(got[i], want[i], 1e-12) {
			t.Fatalf("isotonic = %v, want %v", got, want)
		}
	}
}

func TestResidualGrid(t *testing.T) {
	// r = log(x) + 2 log(y) is linear in the logs: recovered exactly inside.
	var pts []gridPoint
	for _, x := range []int{1, 4, 16} {
		for _, y := range []int{2, 8} {
			pts = append(pts, gridPoint{coords2(x, y), lg(x) + 2*lg(y)})
		}
	}
	g := newResidualGrid(pts)
	r, inside, ok := g.at(coords2(2, 4))
	if !ok || !inside || !near(r, lg(2)+2*lg(4), 1e-12) {
		t.Errorf("at (2,4) = %v %v %v, want %v inside", r, inside, ok, lg(2)+2*lg(4))
	}
	// Beyond the edge the residual is held at the edge value.
	r, inside, _ = g.at(coords2(64, 8))
	if inside || !near(r, lg(16)+2*lg(8), 1e-12) {
		t.Errorf("at (64,8) = %v inside=%v, want edge value outside", r, inside)
	}
	// A missing corner is skipped and the rest renormalised: halfway
	// between (4,8) and the missing (16,8) only (4,8) counts.
	g2 := newResidualGrid(pts[:5]) // drops (16, 8)
	r, inside, ok = g2.at(coords2(8, 8))
	if !ok || !inside || !near(r, lg(4)+2*lg(8), 1e-12) {
		t.Errorf("missing corner: %v %v %v", r, inside, ok)
	}
	if _, _, ok := g2.at(coords2(16, 8)); ok {
		t.Error("the missing cell itself has no data and must say so")
	}
}

func lg(i int) float64 { return logf(float64(i)) }

// A GEMM shape the table lacks borrows the residual of the nearest measured
// (N, K) within a factor of 16, and says "roofline"; a far one does not.
func TestNearestShapeResidual(t *testing.T) {
	g := mustGPU(t, "h200")
	probe := newCoster(g, nil, SourceRoofline)
	var rows []OpRow
	for _, nk := range [][2]int{{4096, 4096}, {8192, 4096}} {
		for _, m := range []int{1, 16, 256, 4096} {
			r := OpRow{Op: "gemm", DType: BF16, M: m, N: nk[0], K: nk[1]}
			c, _ := probe.PredictRow(r)
			r.LatencyUS = c.Seconds * 1e6 * 1.10 // 10% slower than the default roofline
			rows = append(rows, r)
		}
	}
	// Grids against the default efficiencies, so every residual is the 10%.
	grids := map[gridKey]*residualGrid{}
	pts := map[gridKey][]gridPoint{}
	for _, r := range rows {
		k, c, _ := rowGrid(r)
		p, _ := probe.PredictRow(r)
		pts[k] = append(pts[k], gridPoint{c, math.Log(r.LatencyUS * 1e-6 / p.Seconds)})
	}
	for k, p := range pts {
		grids[k] = newResidualGrid(p)
	}
	c := newCoster(g, &calibration{eff: defaultEfficiencies(), tables: newOpTables(grids)}, SourceRoofline)
	near6k := must(t)(c.GEMM(BF16, 64, 6144, 4096))
	want := must(t)(probe.GEMM(BF16, 64, 6144, 4096)).Seconds * 1.10
	if !near(near6k.Seconds, want, 1e-9) || near6k.Source != SourceRoofline {
		t.Errorf("unmeasured (6144, 4096): %v %s, want %v roofline", near6k.Seconds, near6k.Source, want)
	}
	far := must(t)(c.GEMM(BF16, 64, 128, 128))
	if !near(far.Seconds, must(t)(probe.GEMM(BF16, 64, 128, 128)).Seconds, 1e-12) {
		t.Errorf("a shape 32x away borrowed a residual: %v", far.Seconds)
	}
	if got := must(t)(c.GEMM(BF16, 16, 4096, 4096)); got.Source != SourceMeasured {
		t.Errorf("measured shape: %s", got.Source)
	}
	fit, held := SplitShapes(append(rows, OpRow{Op: "gemm", DType: BF16, M: 1, N: 128, K: 128, LatencyUS: 1}))
	if len(held) != 4 || len(fit) != 5 {
		t.Errorf("SplitShapes held out %d of %d rows, want the 4 of the second of three shapes", len(held), len(held)+len(fit))
	}
}

func TestOpTableOnly(t *testing.T) {
	tb := &OpTable{Name: "x.csv", Rows: []OpRow{{Op: "gemm", M: 1}, {Op: "moe"}, {Op: "gemm", M: 2}}}
	got := tb.Only("gemm")
	if got.Name != "x.csv" || len(got.Rows) != 2 || got.Rows[0].M != 1 || got.Rows[1].M != 2 {
		t.Errorf("Only(gemm) = %+v", got)
	}
	if (*OpTable)(nil).Only("gemm") != nil {
		t.Error("Only of a nil table is not nil")
	}
}

// kernels predict --input read a byte-order-marked file's first column as
// "\ufeffop" and refused the file for having no "op" column.
func TestParseOpTableSkipsByteOrderMark(t *testing.T) {
	for _, tc := range []struct {
		name, data string
	}{
		{"header first", "\ufeffop,dtype,m,n,k\ngemm,fp8,64,7168,2048\n"},
		{"comment first", "\ufeff# gpu: h200\nop,dtype,m,n,k\ngemm,fp8,64,7168,2048\n"},
	} {
		tb, err := ParseOpTable(tc.name, []byte(tc.data), false)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if len(tb.Rows) != 1 || tb.Rows[0].Op != "gemm" || tb.Rows[0].M != 64 || tb.Rows[0].N != 7168 || tb.Rows[0].K != 2048 || tb.Rows[0].Line != strings.Count(tc.data, "\n") {
			t.Errorf("%s: rows %+v, want gemm 64x7168x2048 on the last line", tc.name, tb.Rows)
		}
	}
}
