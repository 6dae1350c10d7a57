package simulate

import (
	"errors"
	"math"
	"strconv"
	"strings"
	"testing"
)

// synthDeployment is a small, fast deployment the calibration tests share.
func synthDeployment(conc int) map[string]string {
	return map[string]string{"model": "Qwen3.5-35B-A3B", "precision": "fp8", "gpu": "h200", "topology": "agg:tp1",
		"conc": strconv.Itoa(conc), "isl": "1024", "osl": "256", "range_ratio": "1", "spec": "none", "requests": "48", "engine": "sglang"}
}

// synthTruth makes "measured" points from the model with a known shift
// applied through a different path than the calibration's: the
// --sched-overhead-ms value of the query itself (host time per iteration)
// and, when bw is not 1, the GPU's datasheet HBM bandwidth scaled by bw
// (which slows every memory-bound kernel as a memory efficiency of bw
// would).
func synthTruth(t *testing.T, concs []int, schedMS, bw float64) []Measurement {
	t.Helper()
	var out []Measurement
	for _, c := range concs {
		dep := synthDeployment(c)
		q, topo, conc, k, err := DeploymentQuery(dep, nil)
		if err != nil {
			t.Fatal(err)
		}
		q.SchedOverhead = schedMS
		r, err := q.Resolve(testCurves, testCatalog)
		if err != nil {
			t.Fatal(err)
		}
		g := *r.GPU.GPU
		g.HBMBandwidth *= bw
		r.GPU.GPU = &g
		res, err := Predict(r, topo, conc, k)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, Measurement{Source: "truth conc " + strconv.Itoa(c), Deployment: dep,
			Metrics: map[string]float64{"tput_per_gpu": res.TputPerGPU, "tpot_ms": res.TPOTms, "ttft_ms": res.TTFTms}})
	}
	return out
}

func TestCalibrateRecoversShiftAndHelpsHeldOut(t *testing.T) {
	// The model's own host time is 0.15 ms; the truth runs at 0.55 ms.
	const truthSched, modelSched, truthBW = 0.55, 0.15, 0.8
	train := synthTruth(t, []int{1, 4, 16, 64}, truthSched, truthBW)
	held := synthTruth(t, []int{2, 8, 32}, truthSched, truthBW)
	file, reps, skipped, err := Calibrate(train, CalibrateOptions{Params: []string{"host_overhead_ms", "mem_efficiency_scale"}})
	if err != nil {
		t.Fatalf("Calibrate: %v (reports %+v)", err, reps)
	}
	if len(skipped) > 0 || len(file.Entries) != 1 {
		t.Fatalf("skipped %v, entries %d", skipped, len(file.Entries))
	}
	p := file.Entries[0].Params
	if d := p.HostOverheadMS - (truthSched - modelSched); math.Abs(d) > 0.05 {
		t.Errorf("host_overhead_ms fitted %+.3f, the truth's shift is %+.3f", p.HostOverheadMS, truthSched-modelSched)
	}
	if math.Abs(p.MemScale/truthBW-1) > 0.05 {
		t.Errorf("mem_efficiency_scale fitted %.3f, the truth's bandwidth is x%.2f", p.MemScale, truthBW)
	}
	before, err := Compare(held, SimEvent, nil, Env{})
	if err != nil {
		t.Fatal(err)
	}
	file.Path = "test"
	after, err := Compare(held, SimEvent, file, Env{})
	if err != nil {
		t.Fatal(err)
	}
	med := func(c *Comparison, m string) float64 {
		for _, e := range c.Medians {
			if e.Metric == m {
				return e.Abs
			}
		}
		t.Fatalf("no median for %s", m)
		return 0
	}
	for _, m := range []string{"tput_per_gpu", "tpot_ms"} {
		b, a := med(before, m), med(after, m)
		t.Logf("held-out %s: median |error| %.1f%% before, %.1f%% after", m, 100*b, 100*a)
		if !(b > 0.03) {
			t.Fatalf("the shift should make the uncalibrated model miss by more than 3%% on %s, got %.1f%%", m, 100*b)
		}
		if !(a < b/3) {
			t.Errorf("held-out %s error %.1f%% after calibration is not under a third of %.1f%% before", m, 100*a, 100*b)
		}
	}
	e := file.Entries[0]
	if e.LeaveOneOut["tpot_ms"] >= e.Before["tpot_ms"] {
		t.Errorf("leave-one-out %v not below before %v", e.LeaveOneOut, e.Before)
	}
}

func TestCalibrateRefusesUndeterminedParameters(t *testing.T) {
	ms := synthTruth(t, []int{4, 16}, 0.3, 1)
	for i := range ms {
		ms[i].Metrics = map[string]float64{"tput_per_gpu": ms[i].Metrics["tput_per_gpu"]}
	}
	_, reps, _, err := Calibrate(ms, CalibrateOptions{})
	var u *UnidentifiableError
	if !errors.As(err, &u) {
		t.Fatalf("two throughput figures and four parameters: want an UnidentifiableError, got %v", err)
	}
	if len(reps) != 1 || reps[0].Refused == "" || !strings.Contains(err.Error(), "h200/sglang") {
		t.Fatalf("report %+v, error %v", reps, err)
	}
}

func TestCalibrateRejectsUnknownParameter(t *testing.T) {
	if _, _, _, err := Calibrate(nil, CalibrateOptions{Params: []string{"magic"}}); err == nil || !strings.Contains(err.Error(), "magic") {
		t.Fatalf("want an error naming the parameter, got %v", err)
	}
}

// TestCalibrateProgress: four points, one of them on a GPU the catalog
// lacks, make 4 resolutions + 1 group fit + 3 leave-one-out refits = 8
// steps, reported in order and ending at 8 of 8.
func TestCalibrateProgress(t *testing.T) {
	ms := synthTruth(t, []int{1, 4, 16}, 0.55, 1)
	bad := synthDeployment(2)
	bad["gpu"] = "a100"
	ms = append(ms, Measurement{Source: "a100", Deployment: bad, Metrics: map[string]float64{"tput_per_gpu": 100}})
	var calls [][2]int
	_, _, skipped, err := Calibrate(ms, CalibrateOptions{Sim: SimMeanField, Params: []string{"host_overhead_ms"},
		Progress: func(done, total int) { calls = append(calls, [2]int{done, total}) }})
	if err != nil || len(skipped) != 1 {
		t.Fatalf("err %v, skipped %v", err, skipped)
	}
	if len(calls) < 8 || calls[len(calls)-1] != [2]int{8, 8} {
		t.Fatalf("calls %v, want 8 steps ending at 8/8", calls)
	}
	for i := 1; i < len(calls); i++ {
		if calls[i][0] < calls[i-1][0] || calls[i][0] > calls[i][1] {
			t.Errorf("call %d: %v after %v", i, calls[i], calls[i-1])
		}
	}
}

// TestCalWarnings: a parameter at its limit, and a band wider than the
// uncalibrated error of its kind, are each one warning; a band within it is
// none.
func TestCalWarnings(t *testing.T) {
	e := CalEntry{Points: 2, Params: CalParams{HostOverheadMS: -0.15, MemScale: 1, ComputeScale: 1},
		Before: map[string]float64{"tput_per_gpu": 0.70, "tpot_ms": 0.25}}
	for _, tt := range []struct {
		name     string
		thr, lat float64
		atLimit  []string
		want     []string
	}{
		{"within", 0.69, 0.25, nil, nil},
		{"throughput band 3.04 > 0.70", 3.04, 0.21, nil, []string{"throughput band ×/÷ 4.040 (-75.2%/+304.0%) is wider than the uncalibrated median |error| 70.0%"}},
		{"latency band 0.26 > 0.25", 0.5, 0.26, nil, []string{"latency band ×/÷ 1.260 (-20.6%/+26.0%) is wider than the uncalibrated median |error| 25.0%"}},
		{"at limit", 0.5, 0.2, []string{"host_overhead_ms"}, []string{"host_overhead_ms = -0.15 sits at its limit"}},
	} {
		e.Band.Throughput, e.Band.Latency = tt.thr, tt.lat
		got := calWarnings(e, tt.atLimit)
		if len(got) != len(tt.want) {
			t.Errorf("%s: %q, want %d warnings", tt.name, got, len(tt.want))
			continue
		}
		for i := range got {
			if !strings.Contains(got[i], tt.want[i]) {
				t.Errorf("%s: %q lacks %q", tt.name, got[i], tt.want[i])
			}
		}
	}
}
