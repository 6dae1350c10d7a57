package agentx

import (
	"bytes"
	"errors"
	"os"
	"reflect"
	"strings"
	"testing"
)

func loadFixture(t testing.TB) *Trace {
	t.Helper()
	ts, err := LoadTraces("testdata/subagent.json", 0)
	if err != nil {
		t.Fatal(err)
	}
	return ts[0]
}

// The fixture's values worked by hand: gaps are end-to-start (start minus
// the latest predecessor's start+api_time), subagent inner t is relative to
// the spawn at 30 s, the subagent's end is 30 + 20000 ms, and the first
// root turn after it (t=60) joins it. The subagent's first request waits on
// the turn before the entry (ended at 24 s, before the spawn, so the branch
// is dispatched at its completion) and starts 31 - 30 = 1 s after it.
func TestParseTraceFixture(t *testing.T) {
	tr := loadFixture(t)
	want := []TraceRequest{
		{Session: 0, From: -1, In: 640, Out: 100, Shared: 0, Start: 0, Gap: 0},
		{Session: 0, From: -1, In: 1000, Out: 50, Shared: 640, Start: 20, Gap: 15, Preds: []int32{0}},
		{Session: 1, From: -1, In: 300, Out: 20, Shared: 0, Start: 31, Gap: 1, Preds: []int32{1}},
		{Session: 1, From: -1, In: 400, Out: 30, Shared: 300, Start: 40, Gap: 7, Preds: []int32{2}},
		{Session: 0, From: -1, In: 1200, Out: 10, Shared: 1000, Start: 60, Gap: 17, Preds: []int32{1, 3}},
	}
	if !reflect.DeepEqual(tr.Requests, want) {
		t.Fatalf("requests:\n got %+v\nwant %+v", tr.Requests, want)
	}
	if !reflect.DeepEqual(tr.Sessions, []uint8{KindRoot, KindSubagent}) {
		t.Errorf("sessions %v", tr.Sessions)
	}
	if tr.RootTurns() != 3 || tr.PeakContext() != 1210 {
		t.Errorf("root turns %d, peak %d; want 3, 1210", tr.RootTurns(), tr.PeakContext())
	}
}

func TestParseTraceErrors(t *testing.T) {
	good, err := os.ReadFile("testdata/subagent.json")
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, data, want string
	}{
		{"truncated", string(good[:len(good)/2]), "x.json:"},
		{"negative gap", `{"requests":[{"t":5,"in":1,"out":1},` + "\n" + `{"t":4,"in":1,"out":1}]}`, "x.json:2:1: request 1: t 4 s is before"},
		{"negative t", `{"requests":[{"t":-1,"in":1,"out":1}]}`, "t -1 s"},
		{"huge tokens", `{"requests":[{"t":0,"in":1e300,"out":1}]}`, "is not a int64"},
		{"huge t", `{"requests":[{"t":1e300,"in":1,"out":1}]}`, "want 0..1e+08"},
		{"negative api", `{"requests":[{"t":0,"in":1,"out":1,"api_time":-2}]}`, "api_time -2"},
		{"no requests", `{"id":"x"}`, "no \"requests\""},
		{"empty", `{"requests":[]}`, "is empty"},
		{"not object", `[1,2]`, "want a JSON object"},
		{"bad block", `{"block_size":0.5,"requests":[{"t":0,"in":1,"out":1}]}`, "block_size"},
		{"missing in", `{"requests":[{"t":0,"out":1}]}`, "want \"in\" and \"out\""},
		{"nested subagent", `{"requests":[{"t":0,"in":1,"out":1},{"t":1,"type":"subagent","requests":[{"t":0,"type":"subagent"}]}]}`, "nested subagents"},
		{"trailing garbage", string(good) + "}", "x.json:"},
	}
	for _, c := range cases {
		_, err := ParseTrace("x.json", "x", []byte(c.data))
		var pe *ParseError
		if err == nil || !errors.As(err, &pe) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want a ParseError containing %q", c.name, err, c.want)
		}
	}
}

func TestParseTraceManyRequests(t *testing.T) {
	var b bytes.Buffer
	b.WriteString(`{"requests":[`)
	for i := range MaxRequestsPerFile + 1 {
		if i > 0 {
			b.WriteString(",\n")
		}
		b.WriteString(`{"t":0,"in":1,"out":1}`)
	}
	b.WriteString("]}")
	_, err := ParseTrace("big.json", "big", b.Bytes())
	if err == nil || !strings.Contains(err.Error(), "big.json:200001:") || !strings.Contains(err.Error(), "more than 200000 requests") {
		t.Fatalf("got %v", err)
	}
}

func TestCorpusRoundTrip(t *testing.T) {
	tr := loadFixture(t)
	var b bytes.Buffer
	if err := EncodeCorpus(&b, []*Trace{tr, tr}); err != nil {
		t.Fatal(err)
	}
	got, err := DecodeCorpus(bytes.NewReader(b.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || !reflect.DeepEqual(got[1], tr) {
		t.Fatalf("round trip:\n got %+v\nwant %+v", got[1], tr)
	}
	// Truncated compact data is an error, not a panic.
	for _, n := range []int{0, 10, b.Len() / 2, b.Len() - 1} {
		if _, err := DecodeCorpus(bytes.NewReader(b.Bytes()[:n])); err == nil {
			t.Errorf("truncated at %d: no error", n)
		}
	}
}

// The embedded corpus is the 710 public files the derivation read; counts
// from the derivation run (go run ./simulate/agentx/derive) and checked
// against a Python count of the same JSON files.
func TestDefaultCorpus(t *testing.T) {
	ts, err := DefaultTraces()
	if err != nil {
		t.Fatal(err)
	}
	n, sub := 0, 0
	for _, tr := range ts {
		n += len(tr.Requests)
		for _, k := range tr.Sessions {
			if k == KindSubagent {
				sub++
			}
		}
	}
	// 48658 normal + 676 subagent requests, 63 subagent entries.
	if len(ts) != 710 || n != 49334 || sub != 63 {
		t.Errorf("default corpus: %d traces, %d requests, %d subagent sessions; want 710, 49334, 63", len(ts), n, sub)
	}
}

func FuzzParseTrace(f *testing.F) {
	good, err := os.ReadFile("testdata/subagent.json")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(good)
	f.Add([]byte(`{"requests":[{"t":0,"in":1,"out":1,"hash_ids":[1]},{"t":1,"in":2,"out":1,"hash_ids":[1,2]}]}`))
	f.Add([]byte(`{"requests":[{"t":0,"in":1,"out":1},{"t":1,"type":"subagent","requests":[{"t":0,"in":3,"out":1}]}]}`))
	f.Add([]byte(`{"block_size":64,"requests":[{"t":1e9}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		tr, err := ParseTrace("f.json", "f", data)
		if err != nil {
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("error is not a ParseError: %v", err)
			}
			return
		}
		for p, q := range tr.Requests {
			if q.Shared < 0 || q.Shared > q.In || q.Gap < 0 || int(q.Session) >= len(tr.Sessions) {
				t.Fatalf("request %d out of range: %+v", p, q)
			}
			for _, d := range q.Preds {
				if int(d) >= p || d < 0 {
					t.Fatalf("request %d depends on %d", p, d)
				}
			}
		}
		if _, err := NewReplay([]*Trace{tr}, DefaultConfig(3)); err == nil {
			// a replay of any parsed trace must run to the end
			runFake(t, []*Trace{tr}, func(c *Config) { c.Duration = 100 })
		}
	})
}
