package simulate

import (
	"fmt"
	"math"
	"os"
	"strings"
	"testing"
)

// TestPublishedFrontierMTPGain prints, for every MTP frontier row, the
// throughput MTP adds at the same interactivity, published and predicted:
// the part of the frontier the acceptance length and the draft's cost set,
// free of the base step's error.
func TestPublishedFrontierMTPGain(t *testing.T) {
	g, err := frontierGains(loadPublished(t))
	if err != nil {
		t.Fatal(err)
	}
	if len(g) < 6 {
		t.Fatalf("only %d MTP frontier rows have a no-speculation sibling", len(g))
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\n%-32s %-4s %10s %10s %8s\n", "row", "set", "measured", "predicted", "error")
	for _, r := range g {
		fmt.Fprintf(&b, "%-32s %-4s %9.2fx %9.2fx %+7.1f%%\n", r.id, r.set, r.want, r.got, 100*(r.got/r.want-1))
	}
	t.Log(b.String())
}

// TestEstimateFrontierAL is how the acceptance length of the InferenceX
// MTP arms (real acceptance on random-token prompts; not published) was
// estimated: for each AL on a grid, the median |error| of the MTP gain at
// equal interactivity over the TUNED rows only (the gain divides out the
// base step's error). Opt-in, it runs the MTP sweeps once per grid value:
//
//	SPECSIM_FIT_AL=1 go test -v -run EstimateFrontierAL ./simulate
func TestEstimateFrontierAL(t *testing.T) {
	if os.Getenv("SPECSIM_FIT_AL") == "" {
		t.Skip("set SPECSIM_FIT_AL=1 to run the AL grid")
	}
	rows := loadPublished(t)
	var b strings.Builder
	for al := 1.6; al <= 3.81; al += 0.1 {
		var rs []publishedRow // tuned rows only: the held-out ones take no part
		for _, r := range rows {
			if r.HeldOut || r.Metric != "interactivity_at_tput" {
				continue
			}
			if r.Steps > 0 {
				r.AL = math.Round(al*100) / 100
			}
			rs = append(rs, r)
		}
		g, err := frontierGains(rs)
		if err != nil {
			t.Fatal(err)
		}
		var tune []float64
		by := map[string][]string{}
		for _, r := range g {
			tune = append(tune, math.Abs(r.got/r.want-1))
			gpu := strings.SplitN(r.id, "-", 4)[2]
			by[gpu] = append(by[gpu], fmt.Sprintf("%+.0f%%", 100*(r.got/r.want-1)))
		}
		fmt.Fprintf(&b, "AL %.2f: MTP gain median |error| over the tuned rows %.1f%%  b200 %v  h200 %v\n", al, 100*median(tune), by["b200"], by["h200"])
	}
	t.Log("\n" + b.String())
}
