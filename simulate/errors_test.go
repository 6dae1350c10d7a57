package simulate

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSettingErrorsAreTyped: every error about a setting a command passes
// in (calibration options, --calibration files, precision, the AgentX
// pairs, a measured deployment's missing keys) is an *Error naming the
// field and the value given, and its text names no command's flag.
func TestSettingErrorsAreTyped(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty.yaml")
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	cal := &CalibrationFile{Path: "c.yaml", Entries: []CalEntry{{GPU: "b200", Engine: "sglang"}}}
	noGPU := synthDeployment(4)
	delete(noGPU, "gpu")
	mtpNoSteps := synthDeployment(4)
	mtpNoSteps["spec"] = "mtp"
	h200, err := testCatalog.Lookup("h200")
	if err != nil {
		t.Fatal(err)
	}
	model, err := LookupPreset("Qwen3.5-397B-A17B")
	if err != nil {
		t.Fatal(err)
	}
	agentx := func(s string) error {
		a := DefaultAgentX()
		return ParseAgentXOverrides(&a, s)
	}
	for _, tt := range []struct {
		name         string
		call         func() error
		field, value string
	}{
		{"calibrate sim", func() error {
			_, _, _, err := Calibrate(nil, CalibrateOptions{Sim: "exact"})
			return err
		}, "Sim", "exact"},
		{"calibrate params", func() error {
			_, _, _, err := Calibrate(nil, CalibrateOptions{Params: []string{"sched", "warp"}})
			return err
		}, "Params", "sched,warp"},
		{"compare sim", func() error { _, err := Compare(nil, "exact", nil, Env{}); return err }, "Sim", "exact"},
		{"calibration missing", func() error { _, err := LoadCalibration(filepath.Join(dir, "none")); return err }, "Calibration", filepath.Join(dir, "none")},
		{"calibration empty", func() error { _, err := LoadCalibration(empty); return err }, "Calibration", empty},
		{"calibration no entry", func() error { _, err := cal.For("h200", "sglang"); return err }, "Calibration", "c.yaml"},
		{"precision", func() error { _, err := ParsePrecision("fp3"); return err }, "Precision", "fp3"},
		{"fp4 off Blackwell", func() error {
			_, err := NewEngine(model, h200, Parallel{TP: 8, EP: 8, PP: 1}, EngineConfig{Precision: FP4, SchedOverhead: -1, SpecOverhead: -1})
			return err
		}, "Precision", "fp4"},
		{"agentx no =", func() error { return agentx("isl-median") }, "AgentX", "isl-median"},
		{"agentx empty pair", func() error { return agentx("isl-median=1,,osl-max=9") }, "AgentX", "isl-median=1,,osl-max=9"},
		{"agentx twice", func() error { return agentx("isl-median=1,isl-median=2") }, "AgentX.isl-median", "2"},
		{"agentx not a number", func() error { return agentx("cache-hit=x") }, "AgentX.cache-hit", "x"},
		{"agentx not whole", func() error { return agentx("isl-max=1.5") }, "AgentX.isl-max", "1.5"},
		{"agentx unknown key", func() error { return agentx("foo=1") }, "AgentX.foo", "1"},
		{"agentx replay not a number", func() error { return agentx("duration=x") }, "AgentX.duration", "x"},
		{"agentx replay not whole", func() error { return agentx("max-traces=2.5") }, "AgentX.max-traces", "2.5"},
		{"deployment no gpu", func() error { _, _, _, _, err := DeploymentQuery(noGPU, nil); return err }, "Deployment.gpu", ""},
		{"deployment no steps", func() error { _, _, _, _, err := DeploymentQuery(mtpNoSteps, nil); return err }, "Deployment.steps", ""},
	} {
		err := tt.call()
		var e *Error
		if !errors.As(err, &e) || e.Field != tt.field || e.Value != tt.value {
			t.Errorf("%s: error %#v, want a *simulate.Error on %s with value %q", tt.name, err, tt.field, tt.value)
			continue
		}
		if strings.Contains(err.Error(), "--") {
			t.Errorf("%s: %q names a flag", tt.name, err)
		}
	}
}

// TestSkippedCarriesTheError: a measured point Compare cannot model keeps
// its error, so a command can restate a missing key as its own flag.
func TestSkippedCarriesTheError(t *testing.T) {
	dep := synthDeployment(4)
	delete(dep, "topology")
	c, err := Compare([]Measurement{{Source: "p", Deployment: dep, Metrics: map[string]float64{"tpot_ms": 5}}}, SimMeanField, nil, Env{Curves: testCurves, Catalog: testCatalog})
	if err != nil {
		t.Fatal(err)
	}
	var e *Error
	if len(c.Skipped) != 1 || !errors.As(c.Skipped[0].Err, &e) || e.Field != "Deployment.topology" || c.Skipped[0].Reason != e.Error() {
		t.Errorf("skipped %+v, want one point skipped with its *Error on Deployment.topology", c.Skipped)
	}
}

// compare takes the concurrencies predict runs, 1..65536, and no more.
func TestDeploymentQueryConcBound(t *testing.T) {
	dep := map[string]string{"gpu": "gb300", "topology": "agg:tp2", "isl": "1024", "osl": "1024", "steps": "3"}
	for conc, ok := range map[string]bool{"1": true, "65536": true, "65537": false, "100000": false} {
		dep["conc"] = conc
		_, _, _, _, err := DeploymentQuery(dep, nil)
		if (err == nil) != ok || err != nil && !strings.Contains(err.Error(), "want 1..65536 sessions") {
			t.Errorf("conc %s: %v", conc, err)
		}
	}
}
