package simulate

import (
	"bytes"
	"flag"
	"math"
	"os"
	"sort"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

var updateBands = flag.Bool("update", false, "rewrite simulate/validation_bands.yaml from the validation rows")

func TestBandFromResiduals(t *testing.T) {
	// |log(1+e)| of +10%, -20%, +5%, -1%, +30%: 0.0953, 0.2231, 0.0488,
	// 0.0101, 0.2624; sorted, the 0.8 quantile (type 7) sits at position 3.2:
	// 0.2231 + 0.2*(0.2624-0.2231) = 0.2310, so the width is e^0.2310-1.
	got := BandFromResiduals([]float64{0.10, -0.20, 0.05, -0.01, 0.30})
	want := math.Expm1(math.Log(1/0.8) + 0.2*(math.Log(1.3)-math.Log(1/0.8)))
	if math.Abs(got-want) > 1e-12 {
		t.Fatalf("BandFromResiduals = %.6f, want %.6f", got, want)
	}
	if !math.IsNaN(BandFromResiduals(nil)) {
		t.Fatal("no residuals must give NaN")
	}
	r := within(100, 0.25)
	if r.Lo != 80 || r.Hi != 125 {
		t.Fatalf("within(100, 0.25) = %+v, want 80..125", r)
	}
}

// bandGroups recomputes validation_bands.yaml: each validation row's
// relative errors grouped by the GPU's architecture and workload, plus the
// pool of all rows of each workload. Fixed-workload rows are those of
// testdata/published.yaml: rows whose metric is a throughput
// (output_tput_per_gpu, decode_tput_per_gpu, output_tput_per_user) enter
// the throughput width; rows whose metric is a per-user or per-step speed
// (output_tput_per_user, decode_tput_per_gpu, interactivity_at_tput: the
// inverse of a latency) enter the latency width, as the error of that
// latency. AgentX rows are the points of TestAgentXPublished
// (predictAgentXPoint): tok/s/GPU enters the throughput width, mean TTFT
// and mean TPOT the latency width. A group with fewer than minBandRows
// residuals of a kind takes the pooled width of that kind.
func bandGroups(t *testing.T) []BandGroup {
	type acc struct {
		source    string
		tput, lat []float64 // errors of throughputs and of latencies
		rows      int
	}
	groups := map[string]*acc{}
	add := func(key, source string, tput, lat []float64) {
		a := groups[key]
		if a == nil {
			a = &acc{source: source}
			groups[key] = a
		}
		a.tput = append(a.tput, tput...)
		a.lat = append(a.lat, lat...)
		a.rows++
	}
	const published = "testdata/published.yaml"
	for _, r := range loadPublished(t) {
		got, err := predictPublished(r)
		if err != nil {
			t.Fatalf("%s: %v", r.ID, err)
		}
		g, err := testCatalog.Lookup(r.GPU)
		if err != nil {
			t.Fatal(err)
		}
		e := got/r.Measured - 1
		var thr, lat []float64
		if r.Metric != "interactivity_at_tput" {
			thr = []float64{e}
		}
		if r.Metric == "output_tput_per_user" || r.Metric == "decode_tput_per_gpu" || r.Metric == "interactivity_at_tput" {
			lat = []float64{1/(1+e) - 1}
		}
		add(g.Arch+"/fixed", published, thr, lat)
		add("all/fixed", published, thr, lat)
	}
	const agentxSource = "12 InferenceX AgentX points, PR #3200 in-sample and PR #3198 held out: Qwen3.5-397B-A17B FP8 on 8 x H200, SGLang MTP"
	for _, pt := range agentxPoints {
		_, errs := predictAgentXPoint(t, pt)
		g, err := testCatalog.Lookup(agentxQuery(pt).GPU)
		if err != nil {
			t.Fatal(err)
		}
		thr, lat := errs[:1], errs[1:]
		add(g.Arch+"/agentx", agentxSource, thr, lat)
		add("all/agentx", agentxSource, thr, lat)
	}
	if n := len(groups["all/agentx"].tput); n != 12 {
		t.Fatalf("%d AgentX points, the agentx source says 12", n)
	}
	keys := make([]string, 0, len(groups))
	for k := range groups {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var out []BandGroup
	for _, k := range keys {
		a := groups[k]
		fam, wl, _ := strings.Cut(k, "/")
		pool := groups["all/"+wl]
		tput, lat := a.tput, a.lat
		if len(lat) < minBandRows {
			lat = pool.lat
		}
		if len(tput) < minBandRows {
			tput = pool.tput
		}
		low := func(es []float64) int {
			n := 0
			for _, e := range es {
				if e < 0 {
					n++
				}
			}
			return n
		}
		round := func(v float64) float64 { return math.Round(v*1e4) / 1e4 }
		out = append(out, BandGroup{Family: fam, Workload: wl, Source: a.source, Rows: a.rows,
			Widths:    BandWidths{Throughput: round(BandFromResiduals(tput)), Latency: round(BandFromResiduals(lat))},
			Residuals: BandCounts{Throughput: len(tput), Latency: len(lat)},
			Low:       BandCounts{Throughput: low(tput), Latency: low(lat)}})
	}
	return out
}

// TestValidationBands recomputes the embedded band widths from the
// published rows. A recomputed width more than 1.5x the embedded one fails
// (the bands would understate the uncertainty); smaller drift is logged.
// go test ./simulate -run TestValidationBands -update rewrites the file.
func TestValidationBands(t *testing.T) {
	got := bandGroups(t)
	if *updateBands {
		var b bytes.Buffer
		b.WriteString("# Uncertainty band widths from the validation residuals (relative half-widths: p80 of\n")
		b.WriteString("# |log(predicted/measured)|, as e^q - 1), by GPU architecture and workload: fixed-workload rows\n")
		b.WriteString("# from testdata/published.yaml, agentx rows from the points of TestAgentXPublished.\n")
		b.WriteString("# Regenerate: go test ./simulate -run TestValidationBands -update\n")
		enc := yaml.NewEncoder(&b)
		enc.SetIndent(2)
		if err := enc.Encode(bandFile{Groups: got}); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile("validation_bands.yaml", b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote validation_bands.yaml: %+v", got)
		return
	}
	have, err := validationBands()
	if err != nil {
		t.Fatal(err)
	}
	idx := map[string]BandGroup{}
	for _, g := range have {
		idx[g.Family+"/"+g.Workload] = g
	}
	for _, g := range got {
		h, ok := idx[g.Family+"/"+g.Workload]
		if !ok {
			t.Logf("%s/%s: not in validation_bands.yaml (run with -update)", g.Family, g.Workload)
			continue
		}
		for _, c := range []struct {
			name      string
			now, file float64
		}{{"throughput", g.Widths.Throughput, h.Widths.Throughput}, {"latency", g.Widths.Latency, h.Widths.Latency}} {
			if c.now > 1.5*c.file+0.01 {
				t.Errorf("%s/%s %s band: residuals now give %.1f%%, the embedded file says %.1f%%: rerun with -update", g.Family, g.Workload, c.name, 100*c.now, 100*c.file)
			} else if math.Abs(c.now-c.file) > 0.005 {
				t.Logf("%s/%s %s band drifted: %.1f%% now, %.1f%% embedded", g.Family, g.Workload, c.name, 100*c.now, 100*c.file)
			}
		}
	}
}

// TestAgentXBand: an agentx prediction carries the width of the agentx
// rows, on H200 (their own family) and on GB300 (pooled, no Blackwell
// AgentX rows), computed here from the residuals with a hand-written type-7
// quantile; its source says where the rows come from and that every one
// was predicted low. Fixed-workload predictions keep their fixed groups.
func TestAgentXBand(t *testing.T) {
	var thr, lat []float64
	for _, pt := range agentxPoints {
		_, errs := predictAgentXPoint(t, pt)
		thr = append(thr, math.Abs(math.Log(1+errs[0])))
		lat = append(lat, math.Abs(math.Log(1+errs[1])), math.Abs(math.Log(1+errs[2])))
	}
	p80 := func(a []float64) float64 {
		sort.Float64s(a)
		h := 0.8 * float64(len(a)-1)
		lo := int(h)
		return math.Exp(a[lo]+(h-float64(lo))*(a[lo+1]-a[lo])) - 1
	}
	want := BandWidths{Throughput: p80(thr), Latency: p80(lat)}
	file, err := validationBands()
	if err != nil {
		t.Fatal(err)
	}
	fixed := map[string]BandWidths{}
	for _, g := range file {
		if g.Workload == "fixed" {
			fixed[g.Family] = g.Widths
		}
	}
	for _, tt := range []struct {
		gpu, workload string
		want          BandWidths
		source        []string
	}{
		{"h200", "agentx", want, []string{"8 x H200", "hopper GPUs, agentx workload", "over 12 rows", "all 12 rows predicted LOW", "bias, not symmetric noise"}},
		{"gb300", "agentx", want, []string{"8 x H200", "all GPUs, agentx workload", "all 12 rows predicted LOW", "pooled from hopper rows only"}},
		{"h200", "fixed", fixed["hopper"], []string{"testdata/published.yaml", "hopper GPUs, fixed workload"}},
		{"b200", "fixed", fixed["blackwell"], []string{"testdata/published.yaml", "blackwell GPUs, fixed workload"}},
	} {
		q := Query{GPU: tt.gpu, Workload: tt.workload}
		if tt.workload == "fixed" {
			q.ISL, q.OSL = 1024, 1024
		}
		w, src, _, err := BandWidthsFor(resolved(t, q))
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(w.Throughput-tt.want.Throughput) > 6e-5 || math.Abs(w.Latency-tt.want.Latency) > 6e-5 {
			t.Errorf("%s/%s: band %+v, want %+v", tt.gpu, tt.workload, w, tt.want)
		}
		for _, s := range tt.source {
			if !strings.Contains(src, s) {
				t.Errorf("%s/%s: source %q lacks %q", tt.gpu, tt.workload, src, s)
			}
		}
		if tt.workload == "fixed" && strings.Contains(src, "agentx") {
			t.Errorf("%s/%s: source %q", tt.gpu, tt.workload, src)
		}
	}
}
