package review

import (
	"strings"
	"testing"

	"github.com/specsim/specsim/audit"
	"github.com/specsim/specsim/audit/finding"
	"github.com/specsim/specsim/audit/model"
	"github.com/specsim/specsim/audit/recipe"
)

// TestEnvFindings: logged values compare as numbers (InferenceX writes
// "%g", recipes often '4.80'), a different AL is an error, an absent key a
// warning.
func TestEnvFindings(t *testing.T) {
	want := map[string]string{"SGLANG_SIMULATE_ACC_LEN": "4.8", "SGLANG_SIMULATE_ACC_METHOD": "match-expected"}
	for _, tc := range []struct {
		name  string
		shown map[string][]Shown
		codes []string
	}{
		{"same AL spelled 4.80", map[string][]Shown{"SGLANG_SIMULATE_ACC_LEN": {{Value: "4.80"}}, "SGLANG_SIMULATE_ACC_METHOD": {{Value: "match-expected"}}}, nil},
		{"wrong AL", map[string][]Shown{"SGLANG_SIMULATE_ACC_LEN": {{Value: "3.39"}}, "SGLANG_SIMULATE_ACC_METHOD": {{Value: "match-expected"}}}, []string{CodeEnvMismatch}},
		{"method not shown", map[string][]Shown{"SGLANG_SIMULATE_ACC_LEN": {{Value: "4.8"}}}, []string{CodeEnvNotShown}},
	} {
		var got []string
		for _, f := range envFindings("decode", want, tc.shown) {
			got = append(got, f.Code)
			if f.Code == CodeEnvMismatch && f.Severity != finding.Error || f.Code == CodeEnvNotShown && f.Severity != finding.Warning {
				t.Errorf("%s: %s is %s", tc.name, f.Code, f.Severity)
			}
		}
		if len(got) != len(tc.codes) || len(got) > 0 && got[0] != tc.codes[0] {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.codes)
		}
	}
	hits := map[string][]fileHit{"SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE": {{file: "w.out"}}}
	hits["SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE"][0].Value = "1"
	if fs := prohibitedShown(hits); len(fs) != 1 || fs[0].Severity != finding.Error {
		t.Errorf("prohibited env in a log: %+v", fs)
	}
}

// Problems gathers the errors and warnings of the recipe check, the audit
// and the review, most serious first, without info lines; Prohibited
// picks the precision-lowering recipe settings and the logged ones.
func TestVariantProblemsAndProhibited(t *testing.T) {
	f := func(code string, sev finding.Severity) finding.Finding {
		return finding.Finding{Code: code, Severity: sev, Message: code}
	}
	v := &Variant{
		Recipe: &recipe.VariantReport{Findings: []finding.Finding{
			f(recipe.CodeFP8NextNMoE, finding.Error), f("recipe-note", finding.Info), f(recipe.CodeDraftQuantization, finding.Warning)}},
		Audit:    &audit.Report{Findings: []finding.Finding{f("audit-warn", finding.Warning)}},
		Findings: []finding.Finding{f(CodeProhibitedShown, finding.Error), f(CodeEnvNotShown, finding.Warning)},
	}
	var codes []string
	for _, p := range v.Problems() {
		if p.Severity == finding.Info {
			t.Errorf("Problems kept info %s", p.Code)
		}
		codes = append(codes, p.Code)
	}
	if len(codes) != 5 || codes[0] != recipe.CodeFP8NextNMoE && codes[0] != CodeProhibitedShown {
		t.Errorf("Problems = %v, want 5, errors first", codes)
	}
	codes = nil
	for _, p := range v.Prohibited() {
		codes = append(codes, p.Code)
	}
	if want := []string{recipe.CodeFP8NextNMoE, recipe.CodeDraftQuantization, CodeProhibitedShown}; strings.Join(codes, ",") != strings.Join(want, ",") {
		t.Errorf("Prohibited = %v, want %v", codes, want)
	}
	if (&Variant{}).Problems() != nil || (&Variant{}).Prohibited() != nil {
		t.Error("an empty variant has problems")
	}
}

func TestModelMismatch(t *testing.T) {
	for _, tc := range []struct {
		names  []string
		family string
		want   bool
	}{
		{[]string{"Qwen/Qwen3.5-397B-A17B"}, audit.FamilyDeepSeek, true},
		{[]string{"nvidia/Qwen3.5-397B-A17B-NVFP4"}, audit.FamilyQwen35, false},
		{[]string{"model", "deepseek-ai/DeepSeek-R1-0528"}, audit.FamilyQwen35, true}, // an alias names no family
		{[]string{"moonshotai/Kimi-K2.5"}, audit.FamilyDeepSeek, false},               // Kimi is DeepSeek-V3-shaped
		{[]string{"my-model"}, audit.FamilyDeepSeek, false},
		{[]string{"Qwen/Qwen3.5-397B-A17B"}, audit.FamilyOther, false},
	} {
		_, got := modelMismatch(tc.names, &audit.Report{Family: tc.family})
		if got != tc.want {
			t.Errorf("%v vs %s: mismatch %v, want %v", tc.names, tc.family, got, tc.want)
		}
	}
}

// TestShapeMismatchUnresolved: a served model specsim has no description
// of leaves the checkpoint's shape unchecked, which an info says; a
// resolved one of the same shape says nothing.
func TestShapeMismatchUnresolved(t *testing.T) {
	ar := &audit.Report{Dir: "ckpt", Checkpoint: &audit.Checkpoint{Config: &audit.ModelConfig{NumHiddenLayers: 61, HiddenSize: 7168, NumExperts: 256}}}
	none := func(string) (*model.Architecture, string) { return nil, "" }
	f, ok := shapeMismatch([]string{"deepseek-ai/DeepSeek-V4-Pro"}, none, ar)
	if !ok || f.Code != CodeShapeUnchecked || f.Severity != finding.Info ||
		!strings.Contains(f.Message, "DeepSeek-V4-Pro") || !strings.Contains(f.Message, "layers 61, hidden size 7168, routed experts 256") {
		t.Errorf("finding %+v (ok %v), want an info naming the model and the checkpoint's shape", f, ok)
	}
	same := func(string) (*model.Architecture, string) {
		return &model.Architecture{Layers: 61, Hidden: 7168, Experts: 256}, "preset"
	}
	if f, ok := shapeMismatch([]string{"deepseek-ai/DeepSeek-V3.1"}, same, ar); ok {
		t.Errorf("same shape: %+v", f)
	}
}
