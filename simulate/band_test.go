package simulate

import (
	"bytes"
	"flag"
	"math"
	"os"
	"sort"
	"testing"

	"gopkg.in/yaml.v3"
)

var updateBands = flag.Bool("update", false, "rewrite simulate/validation_bands.yaml from the published rows")

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

// bandGroups recomputes validation_bands.yaml: each published row's
// relative error grouped by the GPU's architecture and workload, plus the
// pool of all rows. Rows whose metric is a throughput (output_tput_per_gpu,
// decode_tput_per_gpu, output_tput_per_user) enter the throughput width;
// rows whose metric is a per-user or per-step speed (output_tput_per_user,
// decode_tput_per_gpu, interactivity_at_tput: the inverse of a latency)
// enter the latency width. A group with fewer than minBandRows rows of a
// kind takes the pooled width of that kind.
func bandGroups(t *testing.T) []BandGroup {
	rows := loadPublished(t)
	type acc struct {
		tput, lat []float64
		rows      int
	}
	groups := map[string]*acc{}
	add := func(key string, e float64, throughput, latency bool) {
		a := groups[key]
		if a == nil {
			a = &acc{}
			groups[key] = a
		}
		if throughput {
			a.tput = append(a.tput, e)
		}
		a.rows++
		if latency {
			a.lat = append(a.lat, e)
		}
	}
	for _, r := range rows {
		got, err := predictPublished(r)
		if err != nil {
			t.Fatalf("%s: %v", r.ID, err)
		}
		g, err := testCatalog.Lookup(r.GPU)
		if err != nil {
			t.Fatal(err)
		}
		e := got/r.Measured - 1
		thr := r.Metric != "interactivity_at_tput"
		lat := r.Metric == "output_tput_per_user" || r.Metric == "decode_tput_per_gpu" || r.Metric == "interactivity_at_tput"
		add(g.Arch+"/fixed", e, thr, lat)
		add("all/fixed", e, thr, lat)
	}
	keys := make([]string, 0, len(groups))
	for k := range groups {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	pooledLat := BandFromResiduals(groups["all/fixed"].lat)
	pooledThr := BandFromResiduals(groups["all/fixed"].tput)
	var out []BandGroup
	for _, k := range keys {
		a := groups[k]
		var fam, wl string
		for i := range k {
			if k[i] == '/' {
				fam, wl = k[:i], k[i+1:]
			}
		}
		w := BandWidths{Throughput: BandFromResiduals(a.tput), Latency: BandFromResiduals(a.lat)}
		if len(a.lat) < minBandRows {
			w.Latency = pooledLat
		}
		if len(a.tput) < minBandRows {
			w.Throughput = pooledThr
		}
		round := func(v float64) float64 { return math.Round(v*1e4) / 1e4 }
		w.Throughput, w.Latency = round(w.Throughput), round(w.Latency)
		out = append(out, BandGroup{Family: fam, Workload: wl, Rows: a.rows, Widths: w})
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
		b.WriteString("# Uncertainty band widths from the residuals of testdata/published.yaml (relative half-widths:\n")
		b.WriteString("# p80 of |log(predicted/measured)|, as e^q - 1), by GPU architecture and workload.\n")
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
