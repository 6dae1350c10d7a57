package simulate

import (
	"encoding/json"
	"math"
	"os"
	"sort"
	"testing"

	quant "github.com/specsim/specsim/internal/quantile"
)

// TestMeanFieldDiag (SPECSIM_MF_DIAG=sweep.json): per event-simulated point
// of a sweep's JSON, the mean-field estimate's errors.
func TestMeanFieldDiag(t *testing.T) {
	path := os.Getenv("SPECSIM_MF_DIAG")
	if path == "" {
		t.Skip("SPECSIM_MF_DIAG unset")
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var sr SweepResult
	if err := json.Unmarshal(b, &sr); err != nil {
		t.Fatal(err)
	}
	q := Query{GPU: "gb300", Workload: "agentx", Model: "Qwen3.5-397B-A17B", Precision: "fp4", SchedOverhead: -1, SpecOverhead: -1, Seed: 1, AgentX: "duration=900"}
	r, err := q.Resolve(testCurves, testCatalog)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	var lr [4][]float64 // log(mean-field / event): tput, interactivity, p90 E2EL, p90 TTFT
	for _, p := range sr.Points {
		if p.Sim != "event" {
			continue
		}
		n++
		topo, _ := ParseTopology(p.Topology)
		m, err := EstimatePoint(r, topo, p.Conc, p.Steps)
		if err != nil {
			t.Fatal(err)
		}
		for i, v := range [][2]float64{{m.TputPerGPU, p.TputPerGPU}, {m.Interactivity, p.Interactivity}, {m.E2EL.P90, p.E2EL.P90}, {m.TTFTp90ms, p.TTFTp90ms}} {
			if v[0] > 0 && v[1] > 0 {
				lr[i] = append(lr[i], math.Log(v[0]/v[1]))
			}
		}
		if n > 80 {
			continue
		}
		e := func(a, b float64) float64 { return (a - b) / b * 100 }
		t.Logf("%-40s c%4d k%d tput %6.0f/%6.0f %+5.0f%% inter %5.0f/%5.0f %+5.0f%% e2el90 %6.1f/%6.1f %+5.0f%% ttft90 %7.0f/%7.0f %+5.0f%% b %5.1f/%5.1f",
			p.Topology, p.Conc, p.Steps, m.TputPerGPU, p.TputPerGPU, e(m.TputPerGPU, p.TputPerGPU),
			m.Interactivity, p.Interactivity, e(m.Interactivity, p.Interactivity),
			m.E2EL.P90, p.E2EL.P90, e(m.E2EL.P90, p.E2EL.P90), m.TTFTp90ms, p.TTFTp90ms, e(m.TTFTp90ms, p.TTFTp90ms),
			m.DecodeBatch, p.DecodeBatch)
	}
	for i, name := range []string{"tput", "interactivity", "p90 E2EL", "p90 TTFT"} {
		xs := lr[i]
		if len(xs) == 0 {
			continue
		}
		sort.Float64s(xs)
		q := func(f float64) float64 { return math.Exp(quant.Sorted(xs, f)) }
		t.Logf("%-14s mean-field/event over %d points: p10 x%.2f  median x%.2f  p90 x%.2f  min x%.2f  max x%.2f", name, len(xs), q(0.1), q(0.5), q(0.9), math.Exp(xs[0]), math.Exp(xs[len(xs)-1]))
	}
}
