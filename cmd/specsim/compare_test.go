package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/specsim/specsim/simulate"
)

// smallCSV is three measured points of a small, fast deployment.
const smallCSV = `id,model,precision,gpu,topology,conc,isl,osl,range_ratio,spec,requests,measured_tput_per_gpu,measured_tpot_ms,measured_ttft_ms,measured_e2el_s_p50
p1,Qwen3.5-35B-A3B,fp8,h200,agg:tp1,1,1024,256,1,none,24,1000,5,60,1.4
p2,Qwen3.5-35B-A3B,fp8,h200,agg:tp1,8,1024,256,1,none,24,6000,7,80,1.9
p3,Qwen3.5-35B-A3B,fp8,h200,agg:tp1,32,1024,256,1,none,48,15000,10,200,2.8
`

func writeTemp(t *testing.T, name, data string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestCompareCSV(t *testing.T) {
	path := writeTemp(t, "m.csv", smallCSV+"p4,Qwen3.5-35B-A3B,fp8,h200,,4,1024,256,1,none,24,1000,,,\n")
	var out, errb bytes.Buffer
	if code := run([]string{"compare", path}, &out, &errb); code != exitOK {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	for _, want := range []string{"3 measured points compared, 1 skipped", "tput_per_gpu", "median |error|", "pareto_coverage", "no topology", "error most likely in"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("compare output lacks %q:\n%s", want, out.String())
		}
	}
	out.Reset()
	if code := run([]string{"compare", "--json", path}, &out, &errb); code != exitOK {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	var c struct {
		Rows []struct {
			Metrics []struct {
				Metric              string
				Measured, Predicted float64
				Error               float64
			}
		}
		Medians  []struct{ Metric string }
		Coverage []struct {
			Status         string
			MeasuredPoints int `json:"measured_points"`
			FrontierPoints int `json:"frontier_points"`
		} `json:"pareto_coverage"`
	}
	if err := json.Unmarshal(out.Bytes(), &c); err != nil {
		t.Fatal(err)
	}
	if len(c.Rows) != 3 || len(c.Coverage) != 1 || c.Coverage[0].MeasuredPoints != 3 || c.Coverage[0].Status != "WARN" {
		t.Fatalf("JSON %s", out.String())
	}
	// The error is predicted/measured - 1, recomputed here.
	for _, r := range c.Rows {
		for _, m := range r.Metrics {
			if d := m.Predicted/m.Measured - 1 - m.Error; d > 1e-9 || d < -1e-9 {
				t.Errorf("%s: error %v, want %v", m.Metric, m.Error, m.Predicted/m.Measured-1)
			}
		}
	}
	// e2el 1.4 < 1.9 < 2.8 with rising throughput: all three on the frontier.
	if c.Coverage[0].FrontierPoints != 3 {
		t.Errorf("frontier points %d, want 3", c.Coverage[0].FrontierPoints)
	}
	for _, f := range []string{"csv", "markdown"} {
		out.Reset()
		if code := run([]string{"compare", "--format", f, path}, &out, &errb); code != exitOK {
			t.Fatalf("--format %s: exit %d: %s", f, code, errb.String())
		}
		if f == "csv" && !strings.HasPrefix(out.String(), "source,gpu,engine,deployment,metric,measured,predicted,error") {
			t.Errorf("CSV header: %s", out.String())
		}
		if f == "markdown" && !strings.Contains(out.String(), "| --- |") && !strings.Contains(out.String(), "|---") {
			t.Errorf("no Markdown table: %s", out.String())
		}
	}
}

func TestCompareBadInput(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"compare"}, "no result file"},
		{[]string{"compare", "/nonexistent/x.json"}, "no such file"},
		{[]string{"compare", "--set", "colour=red", "X"}, ""},
	} {
		var out, errb bytes.Buffer
		if code := run(tc.args, &out, &errb); code != exitBadInput {
			t.Errorf("%v: exit %d, want %d", tc.args, code, exitBadInput)
		}
		if !strings.Contains(errb.String(), tc.want) {
			t.Errorf("%v: stderr %q lacks %q", tc.args, errb.String(), tc.want)
		}
	}
}

func TestCalibrateWritesAndPredictApplies(t *testing.T) {
	dir := t.TempDir()
	path := writeTemp(t, "m.csv", smallCSV)
	cal := filepath.Join(dir, "cal.yaml")
	var out, errb bytes.Buffer
	code := run([]string{"calibrate", "--params", "host_overhead_ms", "-o", cal, path}, &out, &errb)
	if code != exitOK {
		t.Fatalf("exit %d: %s\n%s", code, errb.String(), out.String())
	}
	for _, want := range []string{"h200/sglang: 3 measured points", "leave-one-out", "wrote " + cal} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("calibrate output lacks %q:\n%s", want, out.String())
		}
	}
	out.Reset()
	code = run([]string{"predict", "--calibration", cal, "--model", "Qwen3.5-35B-A3B", "--precision", "fp8", "--gpu", "h200", "--topology", "agg:tp1",
		"--conc", "4", "--isl", "1024", "--osl", "256", "--spec", "none", "--requests", "24"}, &out, &errb)
	if code != exitOK {
		t.Fatalf("predict exit %d: %s", code, errb.String())
	}
	if !strings.Contains(out.String(), "calibration applied: "+cal+" entry h200/sglang") || !strings.Contains(out.String(), "band: ") {
		t.Errorf("predict does not say it applies the calibration and its band:\n%s", out.String())
	}
	// No entry for this GPU: exit 2 naming what the file has.
	out.Reset()
	errb.Reset()
	code = run([]string{"predict", "--calibration", cal, "--gpu", "b200", "--spec", "none", "--isl", "1024", "--osl", "256", "--conc", "2"}, &out, &errb)
	if code != exitBadInput || !strings.Contains(errb.String(), "no entry for b200/sglang (it has h200/sglang)") {
		t.Errorf("exit %d, stderr %q", code, errb.String())
	}
	// Asking for every parameter from three points on one model is refused.
	errb.Reset()
	code = run([]string{"calibrate", "-o", filepath.Join(dir, "all.yaml"), path}, &out, &errb)
	if code != exitBadInput || !strings.Contains(errb.String(), "cannot tell them apart") && !strings.Contains(errb.String(), "under 1%") {
		t.Errorf("exit %d, stderr %q", code, errb.String())
	}
	if _, err := os.Stat(filepath.Join(dir, "all.yaml")); err == nil {
		t.Error("a refused calibration must not write its file")
	}
}

func TestPredictShowsBand(t *testing.T) {
	var out, errb bytes.Buffer
	if code := run([]string{"predict", "--gpu", "b200", "--topology", "agg:tp4", "--conc", "8", "--isl", "1024", "--osl", "1024", "--steps", "3", "--requests", "40", "--json"}, &out, &errb); code != exitOK {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	var m struct {
		Tput float64 `json:"tput_per_gpu"`
		Band struct {
			Source   string
			Relative struct{ Throughput float64 }
			Tput     struct{ Lo, Hi float64 } `json:"tput_per_gpu"`
		}
	}
	if err := json.Unmarshal(out.Bytes(), &m); err != nil {
		t.Fatal(err)
	}
	w := m.Band.Relative.Throughput
	if !(w > 0) || !strings.Contains(m.Band.Source, "blackwell") {
		t.Fatalf("band %+v", m.Band)
	}
	if d := m.Band.Tput.Hi - m.Tput*(1+w); d > 1e-6 || d < -1e-6 {
		t.Errorf("band hi %v, want %v", m.Band.Tput.Hi, m.Tput*(1+w))
	}
}

func TestCompareAddsLogMetrics(t *testing.T) {
	path := writeTemp(t, "m.csv", "model,precision,gpu,topology,conc,isl,osl,range_ratio,spec,steps,requests,measured_tpot_ms\n"+
		"Qwen3.5-35B-A3B,fp8,h200,agg:tp1,8,1024,256,1,mtp,3,24,4\n")
	var log strings.Builder
	for i, al := range []string{"2.50", "2.70", "2.60", "2.60"} {
		log.WriteString("[2026-07-01 12:00:0" + string(rune('0'+i)) + " TP0] Decode batch, #running-req: 8, accept len: " + al + ", gen throughput (token/s): 100.00, #queue-req: 0\n")
	}
	logPath := writeTemp(t, "d.log", log.String())
	var out, errb bytes.Buffer
	if code := run([]string{"compare", "--json", "--sim", "mean-field", "--logs", logPath, path}, &out, &errb); code != exitOK {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	var c struct {
		Rows []struct {
			Metrics []struct {
				Metric   string
				Measured float64
				Band     *struct{ Lo, Hi float64 }
				InBand   *bool `json:"in_band"`
			}
		}
		Medians []struct {
			Metric string
			InBand *int `json:"in_band"`
		}
	}
	if err := json.Unmarshal(out.Bytes(), &c); err != nil {
		t.Fatal(err)
	}
	if errb.Len() != 0 {
		t.Errorf("8 running at conc 8 warned: %s", errb.String())
	}
	got := map[string]float64{}
	for _, m := range c.Rows[0].Metrics {
		got[m.Metric] = m.Measured
		// The logs' figures are no cost-model figures: no band, no
		// verdict (README); the others have both.
		if banded := m.Metric != "al" && m.Metric != "decode_batch_mean"; (m.Band != nil) != banded || (m.InBand != nil) != banded {
			t.Errorf("%s: band %v in band %v", m.Metric, m.Band, m.InBand)
		}
	}
	for _, m := range c.Medians {
		if banded := m.Metric != "al" && m.Metric != "decode_batch_mean"; (m.InBand != nil) != banded {
			t.Errorf("median %s: in band %v", m.Metric, m.InBand)
		}
	}
	out.Reset()
	if code := run([]string{"compare", "--sim", "mean-field", "--logs", logPath, path}, &out, &errb); code != exitOK ||
		!regexp.MustCompile(`(?m)^\s+al\s+2\.6\s+\S+\s+\S+\s+-\s+-$`).MatchString(out.String()) ||
		!regexp.MustCompile(`(?m)^al\s+1\s+\S+\s+\S+\s+-$`).MatchString(out.String()) {
		t.Errorf("text: al must show no band and no verdict:\n%s", out.String())
	}
	// The same log against a point of 4 sessions: 8 running is flagged.
	four := writeTemp(t, "m4.csv", "model,precision,gpu,topology,conc,isl,osl,range_ratio,spec,steps,requests,measured_tpot_ms\n"+
		"Qwen3.5-35B-A3B,fp8,h200,agg:tp1,4,1024,256,1,mtp,3,24,4\n")
	errb.Reset()
	if code := run([]string{"compare", "--sim", "mean-field", "--logs", logPath, four}, &out, &errb); code != exitOK ||
		!strings.Contains(errb.String(), "8.0 requests running on average over the DP ranks (up to 8 on one rank), more than the 4 sessions of "+four+":2") {
		t.Errorf("8 running at conc 4 not flagged: exit %d %s", code, errb.String())
	}
	// Four intervals, equal weight: mean accept length 2.60; 8 running.
	if d := got["al"] - 2.6; d > 1e-9 || d < -1e-9 || got["decode_batch_mean"] != 8 {
		t.Errorf("log metrics %v, want al 2.60 and decode_batch_mean 8", got)
	}
	two := writeTemp(t, "two.csv", smallCSV)
	if code := run([]string{"compare", "--logs", logPath, two}, &out, &errb); code != exitBadInput || !strings.Contains(errb.String(), "one run") {
		t.Errorf("logs with three points: exit %d, %s", code, errb.String())
	}
}

// TestCompareREADMEExample: the README's compare example runs on the
// repository's fixture, and a point it cannot model says which --set key
// fixes it (compare has no --precision flag).
func TestCompareREADMEExample(t *testing.T) {
	const f = "../../audit/measured/testdata/aiperf_profile_export_aiperf.json"
	code, out, errs := runCLI("compare", "--set", "gpu=h200,topology=agg:tp8,precision=fp8,steps=3,al=2.4", f)
	if code != exitOK || !strings.Contains(out, "1 measured points compared, 0 skipped") {
		t.Errorf("README example: exit %d\n%s%s", code, out, errs)
	}
	// The file records deepseek-ai/DeepSeek-R1 (input_config.endpoint.
	// model_names): no model to --set, and the curve is named after it.
	if !strings.Contains(out, "DeepSeek-R1/1024x1024/h200-sglang/fp8") || errs != "" {
		t.Errorf("README example: curve not named by the recorded model\n%s%s", out, errs)
	}
	// A --set the file contradicts (it records conc 32) is said, not dropped.
	_, out2, errs := runCLI("compare", "--set", "gpu=h200,topology=agg:tp8,precision=fp8,steps=3,al=2.4,conc=64", f)
	if !strings.Contains(errs, "note: --set conc=64 not applied: "+f+" records conc 32") || out2 != out {
		t.Errorf("--set conc=64 against a recorded 32: %s", errs)
	}
	for _, tc := range []struct{ set, want string }{
		{"gpu=h200,topology=agg:tp8,model=DeepSeek-R1,steps=3,al=2.4", "precision fp4: h200 has no FP4 tensor cores"},
		{"gpu=h200,topology=agg:tp8,model=DeepSeek-R1,precision=fp8,steps=3", "give it with --set al=..."},
		{"gpu=h200,topology=agg:tp8,precision=fp8,steps=-3,al=2.4", "--set steps=-3: want the draft length, 0 (no speculation) or a positive integer"},
	} {
		_, out, errs := runCLI("compare", "--set", tc.set, f)
		if !strings.Contains(out+errs, tc.want) || strings.Contains(out+errs, "--precision") {
			t.Errorf("--set %s: want %q and no --precision\n%s%s", tc.set, tc.want, out, errs)
		}
	}
	if _, out, errs := runCLI("compare", "--set", "gpu=h200,topology=agg:tp8,model=DeepSeek-R1,steps=3,al=2.4", f); !strings.Contains(out+errs, "--set precision=") {
		t.Errorf("the fp4 skip does not name --set precision=\n%s%s", out, errs)
	}
}

// TestCalibrateWarnsOnTwoPoints: the two-point fixture pulls
// host_overhead_ms to its floor, minus the default 0.15 ms host time per
// iteration (calLimits), and its leave-one-out band is wider than the
// uncalibrated error: both are said on stderr and in the file's header,
// and the file still loads.
func TestCalibrateWarnsOnTwoPoints(t *testing.T) {
	cal := filepath.Join(t.TempDir(), "cal.yaml")
	var out, errb bytes.Buffer
	code := run([]string{"calibrate", "--params", "host_overhead_ms", "-o", cal, filepath.Join("..", "..", "audit", "measured", "testdata", "measured.csv")}, &out, &errb)
	if code != exitOK {
		t.Fatalf("exit %d: %s\n%s", code, errb.String(), out.String())
	}
	data, err := os.ReadFile(cal)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"host_overhead_ms = -0.15 sits at its limit", "the leave-one-out throughput band"} {
		if !strings.Contains(errb.String(), "specsim calibrate: warning: h200/sglang: "+want) {
			t.Errorf("stderr lacks the warning %q:\n%s", want, errb.String())
		}
		if !strings.Contains(string(data), "# WARNING: h200/sglang: "+want) {
			t.Errorf("file header lacks %q:\n%s", want, data)
		}
	}
	if _, err := simulate.LoadCalibration(cal); err != nil {
		t.Errorf("the warned file does not load: %v", err)
	}
}
