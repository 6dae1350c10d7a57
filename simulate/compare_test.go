package simulate

import (
	"math"
	"strings"
	"testing"
)

func TestParetoCoverage(t *testing.T) {
	// Worked by hand with infx/workflows/pareto_coverage.py's rules: sort by
	// (x, -y); keep a point when its y beats every earlier one, or equals
	// the best at a larger x (a plateau); a point at the same x as the last
	// kept one replaces it.
	pts := []CoveragePoint{
		{"a", 1, 100},
		{"b", 2, 200},
		{"c", 3, 150},         // dominated
		{"d", 4, 200},         // plateau at a larger x: kept
		{"e", 4, 200},         // exact duplicate of d: not a larger x, so not kept
		{"f", 5, 300},         // kept
		{"g", 0, 50},          // invalid x
		{"h", 6, math.NaN()},  // invalid y
		{"i", math.Inf(1), 9}, // invalid x
	}
	c := ParetoCoverage("k", "median E2EL (s)", pts)
	if c.MeasuredPoints != 9 || c.InvalidPoints != 3 {
		t.Fatalf("points %d invalid %d, want 9 and 3", c.MeasuredPoints, c.InvalidPoints)
	}
	if got := strings.Join(c.Frontier, ","); got != "a,b,d,f" {
		t.Errorf("frontier %s, want a,b,d,f", got)
	}
	if c.FrontierPoints != 4 || c.Status != "WARN" || c.RecommendedPoints != 5 {
		t.Errorf("%+v", c)
	}
	var five []CoveragePoint
	for i := range 5 {
		five = append(five, CoveragePoint{string(rune('a' + i)), float64(i + 1), float64(10 * (i + 1))})
	}
	if c := ParetoCoverage("k", "x", five); c.Status != "PASS" || c.FrontierPoints != 5 {
		t.Errorf("five rising points: %+v", c)
	}
	five = append(five, CoveragePoint{"bad", -1, 5})
	if c := ParetoCoverage("k", "x", five); c.Status != "WARN" {
		t.Errorf("an invalid point must make it WARN: %+v", c)
	}
}

func TestDeploymentQueryErrors(t *testing.T) {
	base := map[string]string{"gpu": "h200", "topology": "agg:tp8", "conc": "8", "isl": "1024", "osl": "1024", "spec": "none"}
	for _, tc := range []struct {
		drop, key, val, want string
	}{
		{drop: "gpu", want: "no gpu"},
		{drop: "topology", want: "no topology"},
		{drop: "conc", want: "no conc"},
		{drop: "isl", want: "no isl/osl"},
		{key: "conc", val: "many", want: "want an integer"},
		{key: "spec", val: "mtp", want: "without steps"},
		{key: "steps", val: "3", want: "steps 3 with spec none"},
		{key: "mem_fraction", val: "NaN", want: "want a number"},
		{key: "topology", val: "ring:8", want: "topology"},
		{key: "workload", val: "chat", want: "workload"},
		{key: "isl", val: "-1024", want: `isl "-1024": want a positive token count`},
		{key: "osl", val: "0", want: `osl "0": want a positive token count`},
	} {
		d := map[string]string{}
		for k, v := range base {
			if k != tc.drop {
				d[k] = v
			}
		}
		if tc.key != "" {
			d[tc.key] = tc.val
			if tc.key == "workload" {
				delete(d, "isl")
			}
		}
		if _, _, _, _, err := DeploymentQuery(d, nil); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: error %v, want %q", tc, err, tc.want)
		}
	}
	q, topo, conc, k, err := DeploymentQuery(map[string]string{"gpu": "h200", "topology": "agg:tp8", "conc": "8", "isl": "1024", "osl": "512", "spec": "mtp", "steps": "3", "al": "2.5"}, nil)
	if err != nil || conc != 8 || k != 3 || topo.GPUs() != 8 || q.AL != 2.5 || q.Workload != "fixed" || q.OSL != 512 {
		t.Errorf("q %+v topo %v conc %d k %d err %v", q, topo, conc, k, err)
	}
}

func TestCompareSkipsAndConvertsTotals(t *testing.T) {
	dep := synthDeployment(4)
	ms := []Measurement{
		{Source: "total", Deployment: dep, Metrics: map[string]float64{"tput_total": 8000, "output_tput_total": 1600}},
		{Source: "nogpu", Deployment: map[string]string{"topology": "agg:tp1", "conc": "4"}, Metrics: map[string]float64{"tpot_ms": 5}},
	}
	c, err := Compare(ms, SimMeanField, nil, Env{})
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Rows) != 1 || len(c.Skipped) != 1 || !strings.Contains(c.Skipped[0].Reason, "no gpu") {
		t.Fatalf("rows %+v skipped %+v", c.Rows, c.Skipped)
	}
	// agg:tp1 is one GPU: the totals are the per-GPU figures.
	for _, m := range c.Rows[0].Metrics {
		if (m.Metric == "tput_per_gpu" && m.Measured != 8000) || (m.Metric == "output_tput_per_gpu" && m.Measured != 1600) {
			t.Errorf("%s measured %v", m.Metric, m.Measured)
		}
	}
	if len(c.Rows[0].Metrics) != 2 {
		t.Errorf("metrics %+v", c.Rows[0].Metrics)
	}
}
