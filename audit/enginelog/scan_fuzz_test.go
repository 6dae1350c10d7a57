package enginelog

import (
	"bytes"
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
