package simulate

import (
	"encoding/json"
	"os"
	"testing"
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
	q := Query{GPU: "gb300", Workload: "agentx", Model: "Qwen3.5-397B-A17B", Precision: "fp4", SchedOverhead: -1, SpecOverhead: -1, Seed: 1}
	r, err := q.Resolve(testCurves, testCatalog)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, p := range sr.Points {
		if p.Sim != "event" || n > 80 {
			continue
		}
		n++
		topo, _ := ParseTopology(p.Topology)
		m, err := EstimatePoint(r, topo, p.Conc, p.Steps)
		if err != nil {
			t.Fatal(err)
		}
		e := func(a, b float64) float64 { return (a - b) / b * 100 }
		t.Logf("%-40s c%4d k%d tput %6.0f/%6.0f %+5.0f%% inter %5.0f/%5.0f %+5.0f%% e2el90 %6.1f/%6.1f %+5.0f%% ttft90 %7.0f/%7.0f %+5.0f%% b %5.1f/%5.1f",
			p.Topology, p.Conc, p.Steps, m.TputPerGPU, p.TputPerGPU, e(m.TputPerGPU, p.TputPerGPU),
			m.Interactivity, p.Interactivity, e(m.Interactivity, p.Interactivity),
			m.E2EL.P90, p.E2EL.P90, e(m.E2EL.P90, p.E2EL.P90), m.TTFTp90ms, p.TTFTp90ms, e(m.TTFTp90ms, p.TTFTp90ms),
			m.DecodeBatch, p.DecodeBatch)
	}
}
