package agentx

import (
	"os"
	"testing"
)

// TestEmbeddedCorpusMatchesPublicFiles checks the embedded corpus against
// totals computed independently (a Python pass over the raw JSON of
// callanjfox/kv-cache-tester traces/ at 94f6046, the 710 files the
// derivation had): the first 393 files in name order, less those whose peak
// prompt+output (subagent requests included) exceeds 262144 tokens, as
// build_replay_cmd's --num-dataset-entries 393 --max-context-length keep them.
func TestEmbeddedCorpusMatchesPublicFiles(t *testing.T) {
	traces, err := DefaultTraces()
	if err != nil {
		t.Fatal(err)
	}
	if len(traces) != 710 {
		t.Fatalf("embedded corpus has %d traces, want 710", len(traces))
	}
	var kept, reqs, subSess, subReqs, sideSess, sideReqs int
	var in, out int64
	for _, tr := range traces[:393] {
		if tr.PeakContext() > 262144 {
			continue
		}
		kept++
		reqs += len(tr.Requests)
		for _, q := range tr.Requests {
			in += int64(q.In)
			out += int64(q.Out)
			switch tr.Sessions[q.Session] {
			case KindSubagent:
				subReqs++
			case KindSide:
				sideReqs++
			}
		}
		for _, k := range tr.Sessions {
			switch k {
			case KindSubagent:
				subSess++
			case KindSide:
				sideSess++
			}
		}
	}
	t.Logf("kept %d traces, %d requests (%d in %d subagent chains, %d in %d side chains of the root), %d in, %d out tokens", kept, reqs, subReqs, subSess, sideReqs, sideSess, in, out)
	if kept != 323 || reqs != 20450 || in != 2022079005 || out != 8802738 || subReqs != 676 || subSess != 63 {
		t.Errorf("embedded corpus differs from the public files: want 323 traces, 20450 requests (676 in 63 subagent entries, one chain each), 2022079005 in, 8802738 out")
	}
	// AIPerf's chain split of the same files, counted by a second program:
	// a stdlib-Python transcription of weka_agent_chains.py
	// (detect_agent_chains with its seam defaults) and weka_trace.py
	// _split_off_preamble, run on the raw JSON (top level and nested in
	// each subagent entry); it agrees with this package tree by tree.
	if sideSess != 102 || sideReqs != 3834 {
		t.Errorf("root worker chains: %d with %d requests, want 102 with 3834 (AIPerf's rule on the raw files)", sideSess, sideReqs)
	}
}

// chainStats counts a corpus's chains as AgentX replays it: the first n
// traces whose peak context fits in 262144 tokens.
func chainStats(traces []*Trace, n int) (kept, root, side, sub, sideReqs, subReqs int) {
	for _, tr := range traces[:min(n, len(traces))] {
		if tr.PeakContext() > 262144 {
			continue
		}
		kept++
		for _, k := range tr.Sessions {
			switch k {
			case KindRoot:
				root++
			case KindSide:
				side++
			case KindSubagent:
				sub++
			}
		}
		for _, q := range tr.Requests {
			switch tr.Sessions[q.Session] {
			case KindSide:
				sideReqs++
			case KindSubagent:
				subReqs++
			}
		}
	}
	return
}

// TestChainsPerTree logs the embedded corpus's chains per tree and, with
// SPECSIM_AGENTX_TRACES=DIR (kv-cache-tester traces/), the same counted
// from the raw files.
func TestChainsPerTree(t *testing.T) {
	traces, err := DefaultTraces()
	if err != nil {
		t.Fatal(err)
	}
	log := func(what string, ts []*Trace) {
		kept, root, side, sub, sideReqs, subReqs := chainStats(ts, 393)
		t.Logf("%s: %d trees, %d root, %d side chains (%d requests), %d subagent chains (%d requests): %.2f chains per tree",
			what, kept, root, side, sideReqs, sub, subReqs, float64(root+side+sub)/float64(kept))
	}
	log("embedded", traces)
	if dir := os.Getenv("SPECSIM_AGENTX_TRACES"); dir != "" {
		raw, err := LoadTraces(dir, 393)
		if err != nil {
			t.Fatal(err)
		}
		log("raw files", raw)
	}
}
