package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The done-when deployment runs, says what capped it, and reports
// the AgentX client side.
func TestPredictAgentX1P1D(t *testing.T) {
	code, out, errs := runCLI("predict", "--workload", "agentx", "--topology", "disagg:1xtp1+1xtp2", "--conc", "38", "--max-running", "6", "--cuda-graph-max-bs", "6")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, want := range []string{"agentx trace replay of kv-cache-tester", "capped by", "--max-running", "agentx client", "E2E normalized interactivity", "session trees / sessions replayed"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

func TestPredictAgentXTraceFile(t *testing.T) {
	code, out, errs := runCLI("predict", "--agentx-trace", "../../simulate/agentx/testdata/subagent.json", "--conc", "2", "--agentx", "duration=300", "--json")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var m struct {
		AgentX struct {
			Corpus           string `json:"corpus"`
			SubagentSessions int    `json:"subagent_sessions"`
		} `json:"agentx"`
	}
	if err := json.Unmarshal([]byte(out), &m); err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(m.AgentX.Corpus, "subagent.json") || m.AgentX.SubagentSessions == 0 {
		t.Errorf("agentx report %+v", m.AgentX)
	}
}

func TestPredictAgentXBadTrace(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(bad, []byte("{\"requests\":[\n{\"t\":5,\"in\":10,\"out\":1},\n{\"t\":1,\"in\":10,\"out\":1}]}"), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := map[string]string{
		bad:                         "bad.json:3:1: request 1: t 1 s is before",
		filepath.Join(dir, "none"):  "no such file",
		"--agentx=duration=-5":      "--agentx duration=-5: want (0, 518400] seconds",
		"--agentx=trace-idle-cap=x": "trace-idle-cap",
	}
	for arg, want := range cases {
		args := []string{"predict", "--agentx-trace", arg}
		if strings.HasPrefix(arg, "--agentx=") {
			args = []string{"predict", arg}
		}
		code, _, errs := runCLI(args...)
		if code != exitBadInput || !strings.Contains(errs, want) {
			t.Errorf("%s: exit %d, stderr %q; want exit 2 and %q", arg, code, errs, want)
		}
	}
}

// The longest window --agentx duration accepts runs: the warm-up before it
// and the drain after it fit under the simulation's cap of 7 simulated
// days (604800 s, the old top of the range, always hit it).
func TestPredictAgentXLongestWindow(t *testing.T) {
	code, out, errs := runCLI("predict", "--agentx", "duration=518400", "--conc", "1", "--steps", "1", "--json")
	if code != exitOK || !strings.Contains(out, `"window_s": 518400`) {
		t.Errorf("duration=518400: exit %d %s", code, errs)
	}
}
