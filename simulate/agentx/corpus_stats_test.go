package agentx

import "testing"

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
}
