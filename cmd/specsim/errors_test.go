package main

import (
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/specsim/specsim/audit"
	"github.com/specsim/specsim/audit/measured"
	"github.com/specsim/specsim/golden"
	"github.com/specsim/specsim/kernels"
	"github.com/specsim/specsim/simulate"
	"github.com/specsim/specsim/simulate/acceptance"
)

func TestFlagError(t *testing.T) {
	for _, tt := range []struct {
		err  error
		want string
	}{
		{&simulate.Error{Field: "MoESkew", Value: "9", Reason: "want 0..4"}, "--moe-skew 9: want 0..4"},
		{fmt.Errorf("wrapped: %w", &simulate.Error{Field: "AL", Reason: "no curve"}), "--al: no curve; pass --al"},
		{&acceptance.Error{Field: acceptance.FieldHistogram, Value: "h.csv", Reason: "too long"}, "--histogram h.csv: too long"},
		{&simulate.Error{Field: "Unmapped", Value: "x", Reason: "r"}, "Unmapped x: r"},
		{&simulate.Error{Field: "Sim", Value: "exact", Reason: "want event or mean-field"}, "--sim exact: want event or mean-field"},
		{&simulate.Error{Field: "Params", Value: "a,b", Reason: "r"}, "--params a,b: r"},
		{&simulate.Error{Field: "AgentX.duration", Value: "x", Reason: "not a number"}, "--agentx duration=x: not a number"},
		{&simulate.Error{Field: "AgentX", Value: "isl-median", Reason: "want key=value"}, "--agentx isl-median: want key=value"},
		{&simulate.Error{Field: "Deployment.gpu", Reason: "no gpu"}, "--set gpu: no gpu; pass --set gpu=..."},
		{&simulate.Error{Field: "Unmapped.key", Value: "v", Reason: "r"}, "Unmapped key=v: r"},
		{&golden.Error{Field: "DraftModel", Reason: "several curves"}, "--draft-model: several curves; pass --draft-model"},
		{&kernels.Error{Field: "GPU", Value: "h200", Reason: `t.txt was measured on "NVIDIA B200"`}, `--gpu h200: t.txt was measured on "NVIDIA B200"`},
		// simulate wraps a kernels error: the inner, more exact one names the flag.
		{&simulate.Error{Field: "KernelTables", Value: "t.txt", Reason: "r", Err: &kernels.Error{Field: "GPU", Value: "h200", Reason: "r2"}}, "--gpu h200: r2"},
		{&audit.Error{Field: "DraftQuantization", Value: "fp3", Reason: "SGLang accepts fp8"}, "--draft-quantization fp3: SGLang accepts fp8"},
		{&measured.Error{Field: "Deployment.colour", Value: "red", Reason: "not a deployment key"}, "--set colour=red: not a deployment key"},
		{fmt.Errorf("plain"), "plain"},
	} {
		if got := flagError(tt.err).Error(); got != tt.want {
			t.Errorf("%v: %q, want %q", tt.err, got, tt.want)
		}
	}
	// Every Query field has a flag.
	for _, f := range reflect.VisibleFields(reflect.TypeOf(simulate.Query{})) {
		if _, ok := queryFlagNames[f.Name]; !ok {
			t.Errorf("Query.%s has no flag name", f.Name)
		}
	}
}

// TestCLIErrorsNameTheFlag: the library's typed errors reach the user as
// the flag that sets the field.
func TestCLIErrorsNameTheFlag(t *testing.T) {
	csv := writeTemp(t, "m.csv", smallCSV+"p4,Qwen3.5-35B-A3B,fp8,,agg:tp1,4,1024,256,1,none,24,1000,,,\n")
	cal := writeTemp(t, "empty.yaml", "")
	aic := filepath.Join("..", "..", "kernels", "testdata", "aic", "gemm_perf.txt")
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"predict", "--precision", "fp3"}, "--precision fp3: want fp4, fp8 or bf16"},
		{[]string{"predict", "--precision", "fp4", "--gpu", "h200", "--topology", "agg:tp8"}, "--precision fp4: h200 has no FP4 tensor cores"},
		{[]string{"predict", "--workload", "agentx", "--agentx", "duration=x"}, "--agentx duration=x: not a number"},
		{[]string{"predict", "--workload", "agentx", "--agentx", "isl-max=1.5"}, "--agentx isl-max=1.5: want a whole token count"},
		{[]string{"predict", "--workload", "agentx", "--agentx", "foo=1"}, "--agentx foo=1: not a key"},
		{[]string{"predict", "--workload", "agentx", "--agentx", "isl-median"}, "--agentx isl-median: want key=value"},
		{[]string{"predict", "--agentx", "max-context=500000"}, "--agentx max-context=500000: above Qwen3.5-397B-A17B's context length 262144"},
		{[]string{"predict", "--isl", "1000", "--osl", "100", "--agentx", "duration=NaN"}, "--agentx duration=NaN: sets the agentx workloads; it does not apply to the fixed"},
		{[]string{"predict", "--workload", "agentx", "--agentx", "duration=NaN"}, "--agentx duration=NaN: not a number"},
		// Out-of-range values name their flag and key as typed; integer
		// bounds print as integers (1<<30 = 1073741824).
		{[]string{"predict", "--isl", "1000", "--osl", "100", "--cached", "NaN"}, "--cached NaN: want a prompt share in [0, 1)"},
		{[]string{"predict", "--agentx", "duration=1e12"}, "--agentx duration=1e12: want (0, 518400] seconds"},
		{[]string{"predict", "--agentx", "start-min=0.8,start-max=0.5"}, "--agentx start-min=0.8: above start-max 0.5"},
		{[]string{"predict", "--agentx", "start-max=1.5"}, "--agentx start-max=1.5: want [0, 1]"},
		{[]string{"predict", "--agentx", "max-context=2e9"}, "--agentx max-context=2e9: want a whole number in 0..1073741824"},
		{[]string{"predict", "--workload", "agentx-synthetic", "--agentx", "cache-hit=1"}, "--agentx cache-hit=1: want [0, 1)"},
		{[]string{"predict", "--calibration", cal}, "--calibration " + cal + ": empty file"},
		{[]string{"compare", "--sim", "exact", csv}, "--sim exact: want event or mean-field"},
		{[]string{"calibrate", "-o", filepath.Join(t.TempDir(), "c.yaml"), "--params", "host_overhead_ms,warp", csv}, `--params host_overhead_ms,warp: "warp" is not a parameter`},
		{[]string{"compare", "--set", "colour=red", csv}, "--set colour=red: not a deployment key"},
		{[]string{"golden", "lookup", "--model", "minimaxm3", "--steps", "3"}, "--draft-model: model \"minimaxm3\" has several golden curves"},
		{[]string{"kernels", "predict", "--gpu", "h200", "--kernel-table", aic, "--op", "copy", "--n", "100"}, `--gpu h200: ` + aic + ` was measured on "NVIDIA B200"`},
		{[]string{"predict", "--precision", "fp8", "--gpu", "h200", "--topology", "agg:tp8", "--kernel-table", aic}, `--gpu h200: ` + aic + ` was measured on "NVIDIA B200"`},
		{[]string{"audit", t.TempDir(), "--draft-quantization", "fp3"}, "--draft-quantization fp3: SGLang accepts"},
	} {
		code, _, errs := runCLI(tt.args...)
		if code != exitBadInput || !strings.Contains(errs, tt.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit %d and %q", tt.args, code, errs, exitBadInput, tt.want)
		}
	}
	// A point without its GPU is skipped, naming the --set that supplies it.
	code, out, errs := runCLI("compare", csv)
	if code != exitOK || !strings.Contains(out, "--set gpu: no gpu in the result file (a CSV column or a JSON key); pass --set gpu=...") {
		t.Errorf("compare: exit %d, %s%s; want the skipped point to name --set gpu", code, out, errs)
	}
}
