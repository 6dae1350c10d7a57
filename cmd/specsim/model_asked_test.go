package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestPredictEchoesModelAsked: an alias resolves to its preset
// (simulate/presets.go: deepseek-r1 and dsv3 are DeepSeek-V3's aliases),
// and predict says both what was asked and what ran; the preset's own
// name, in any case, is echoed once.
func TestPredictEchoesModelAsked(t *testing.T) {
	for _, tc := range []struct {
		model, resolved, asked, header string
	}{
		{"deepseek-r1", "DeepSeek-V3", "deepseek-r1", "DeepSeek-V3 (--model deepseek-r1) FP4 on 8 x B200"},
		{"dsv3", "DeepSeek-V3", "dsv3", "DeepSeek-V3 (--model dsv3) FP4 on 8 x B200"},
		{"deepseek-v3", "DeepSeek-V3", "", "DeepSeek-V3 FP4 on 8 x B200"},
	} {
		args := []string{"predict", "--model", tc.model, "--al", "2.5", "--steps", "2", "--gpu", "b200", "--topology", "agg:tp8", "--isl", "1024", "--osl", "1024", "--conc", "4", "--requests", "40"}
		code, out, errs := runCLI(args...)
		if code != exitOK || !strings.HasPrefix(out, tc.header+",") {
			t.Errorf("--model %s: exit %d, header %.80q, want %q (%s)", tc.model, code, out, tc.header, errs)
		}
		_, js, _ := runCLI(append(args, "--json")...)
		var d struct {
			Inputs struct {
				Model      string `json:"model"`
				ModelAsked string `json:"model_asked"`
			} `json:"inputs"`
		}
		if err := json.Unmarshal([]byte(js), &d); err != nil || d.Inputs.Model != tc.resolved || d.Inputs.ModelAsked != tc.asked {
			t.Errorf("--model %s: inputs %+v (%v), want model %q model_asked %q", tc.model, d.Inputs, err, tc.resolved, tc.asked)
		}
	}
}

// TestAgentXTraceErrorNamesFlag: a trace path that cannot be read is
// refused naming --agentx-trace and the path.
func TestAgentXTraceErrorNamesFlag(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct{ path, want string }{
		{dir + "/missing", "specsim predict: --agentx-trace " + dir + "/missing: no such file or directory"},
		{dir, "specsim predict: --agentx-trace " + dir + ": "},
	} {
		code, _, errs := runCLI("predict", "--agentx-trace", tc.path)
		if code != exitBadInput || !strings.HasPrefix(errs, tc.want) {
			t.Errorf("%s: exit %d %q, want exit 2 and %q", tc.path, code, errs, tc.want)
		}
	}
}
