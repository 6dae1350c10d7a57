package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// TestPredictRecipeJSONStepSources: predict --recipe --json's result
// carries the decode step's cost sources (step_ms.sources) as predict
// --json does for the same deployment. The recipe runs first, so that no
// earlier predict in this process shares its result.
func TestPredictRecipeJSONStepSources(t *testing.T) {
	for _, flags := range [][]string{
		{"--agentx", "duration=61", "--conc", "3"},
		{"--agentx", "duration=61", "--conc", "3", "--engine", "vllm", "--topology", "agg:tp4"},
	} {
		code, text, stderr := runCLI(append([]string{"recipe", "emit"}, flags...)...)
		if code != exitOK {
			t.Fatalf("recipe emit %v: exit %d: %s", flags, code, stderr)
		}
		file := filepath.Join(t.TempDir(), "r.yaml")
		if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		type step struct {
			Sources []string `json:"sources"`
		}
		code, out, stderr := runCLI("predict", "--recipe", file, "--agentx", "duration=61", "--json")
		if code != exitOK {
			t.Fatalf("predict --recipe %v: exit %d: %s", flags, code, stderr)
		}
		var got struct {
			Variants []struct {
				Result struct {
					StepMS step `json:"step_ms"`
				} `json:"result"`
			} `json:"variants"`
		}
		if err := json.Unmarshal([]byte(out), &got); err != nil || len(got.Variants) != 1 {
			t.Fatalf("predict --recipe JSON: %v", err)
		}
		code, out, stderr = runCLI(append([]string{"predict", "--json"}, flags...)...)
		if code != exitOK {
			t.Fatalf("predict %v: exit %d: %s", flags, code, stderr)
		}
		var want struct {
			StepMS step `json:"step_ms"`
		}
		if err := json.Unmarshal([]byte(out), &want); err != nil {
			t.Fatal(err)
		}
		if len(want.StepMS.Sources) == 0 || !reflect.DeepEqual(got.Variants[0].Result.StepMS.Sources, want.StepMS.Sources) {
			t.Errorf("%v: predict --recipe step_ms.sources %q, predict's %q", flags, got.Variants[0].Result.StepMS.Sources, want.StepMS.Sources)
		}
	}
}
