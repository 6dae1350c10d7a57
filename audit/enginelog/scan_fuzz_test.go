package enginelog

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// FuzzScan feeds arbitrary bytes through Scan, the line splitter in front of
// ParseLine: no panic, every sample sits on a counted line in order, and
// lines over MaxLineBytes are counted as skipped, never parsed.
func FuzzScan(f *testing.F) {
	f.Add([]byte("[2026-01-01 00:00:00 TP0] Decode batch, #running-req: 8, #token: 100, accept len: 3.20, gen throughput (token/s): 900.00\n"))
	f.Add([]byte("Decode batch, #running-req: 1, accept len: 2.00\r\nno newline at the end: accept len: 2"))
	f.Add(append(bytes.Repeat([]byte("x"), MaxLineBytes+10), []byte("\nDecode batch, #running-req: 1, accept len: 2.00\n")...))
	f.Add([]byte("\n\n\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		last := 0
		st, err := Scan(bytes.NewReader(data), func(s Sample) error {
			if s.Line <= last {
				t.Fatalf("sample on line %d after one on line %d", s.Line, last)
			}
			last = s.Line
			return nil
		})
		if err != nil {
			t.Fatalf("Scan of an in-memory reader: %v", err)
		}
		if last > st.Lines || st.Samples+st.LongLines > st.Lines {
			t.Fatalf("stats %+v, last sample on line %d", st, last)
		}
		if n := bytes.Count(data, []byte("\n")); st.Lines < n || st.Lines > n+1 {
			t.Fatalf("%d lines counted in input with %d newlines", st.Lines, n)
		}
	})
}

// FuzzSummarize drives whole multi-sample logs through the reader and the
// summary: no panic; a rejected log names its line; an accepted one gives a
// histogram of at most 200 bins that counts every interval, means inside
// [min, max], finite numbers and a summary that encodes as JSON.
func FuzzSummarize(f *testing.F) {
	f.Add([]byte("Decode batch, #running-req: 4, accept len: 1.0\nDecode batch, #running-req: 4, accept len: 1e20\n"), uint8(0), uint8(10))
	f.Add([]byte("[2026-01-01 00:00:00 DP0 TP0] Decode batch, #running-req: 8, accept len: 3.20, gen throughput (token/s): 900.00\n"+
		"[2026-01-01 00:00:10 DP1 TP1] Decode batch, #running-req: 2, accept len: 2.10, gen throughput (token/s): 300.00\n"+
		"[2026-01-01 00:00:20 DP0 TP0] Decode batch, #running-req: 9, accept len: 4.00, gen throughput (token/s): 950.00\n"), uint8(3), uint8(2))
	f.Add([]byte("Engine 000: Avg prompt throughput: 0.0 tokens/s, Avg generation throughput: 50.0 tokens/s, Running: 3 reqs, Waiting: 0 reqs\n"+
		"SpecDecoding metrics: Mean acceptance length: 2.85, Accepted: 90 tokens, Drafted: 120 tokens, Per-position acceptance rate: 0.9, 0.6, 0.35\n"), uint8(0), uint8(1))
	f.Add([]byte(`{"iterLatencyMS": 20, "numActiveRequests": 3, "specDecodingStats": {"numAcceptedTokens": 6, "numRequestsWithDraftTokens": 3}}`+"\n"), uint8(0), uint8(5))
	f.Fuzz(func(t *testing.T, data []byte, steps, buckets uint8) {
		c := &Collection{index: map[[2]string]*Stream{}, steps: int(steps % 16)}
		if err := c.readFrom("fuzz.log", bytes.NewReader(data)); err != nil {
			if !strings.HasPrefix(err.Error(), "fuzz.log: line ") {
				t.Fatalf("error does not name file and line: %v", err)
			}
			return
		}
		sum := Summarize(c, int(buckets%50)+1)
		if d := sum.AcceptLen; d != nil {
			if len(d.Histogram) == 0 || len(d.Histogram) > 200 {
				t.Fatalf("%d histogram bins", len(d.Histogram))
			}
			n := 0
			for _, b := range d.Histogram {
				n += b.Count
			}
			if n != d.Samples {
				t.Fatalf("histogram counts %d of %d intervals", n, d.Samples)
			}
			const eps = 1e-9
			if d.Min < 1 || d.Mean < d.Min-eps || d.Mean > d.Max+eps || d.P50 < d.Min || d.P50 > d.Max {
				t.Fatalf("distribution out of order: %+v", d)
			}
		}
		if _, err := json.Marshal(sum); err != nil {
			t.Fatalf("summary does not encode: %v", err)
		}
		if sum.Target = nil; sum.Agree(2).Verdict == "" {
			t.Fatal("no verdict")
		}
	})
}
