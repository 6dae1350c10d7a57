package enginelog

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// sglangLines is n SGLang decode lines of rank TP0, every step seconds
// from 12:00:00 on the given date.
func sglangLines(date string, start, n, step int) string {
	var b strings.Builder
	for i := range n {
		s := start + i*step
		fmt.Fprintf(&b, "[%s %02d:%02d:%02d TP0] Decode batch. #running-req: 8, #token: 1234, token usage: 0.05, accept len: 2.50, gen throughput (token/s): 300.00, #queue-req: 0\n",
			date, 12+s/3600, s/60%60, s%60)
	}
	return b.String()
}

// TestTimelineGapWarning: a silence longer than 100 median sample
// intervals is a warning naming both sides; one within it is none.
func TestTimelineGapWarning(t *testing.T) {
	for _, tt := range []struct {
		name  string
		files map[string]string
		want  []string // substrings of the warning; nil: no warning
	}{
		// 10 s steps, one 90 s silence: 9 median intervals.
		{"short pause", map[string]string{"a.log": sglangLines("2026-07-01", 0, 10, 10) + sglangLines("2026-07-01", 180, 5, 10)}, nil},
		// Two runs an hour apart, 1 s steps: 12:00:09 -> 13:00:00 is
		// 3591 s, 3591 median intervals.
		{"two runs", map[string]string{
			"a.log": sglangLines("2026-07-01", 0, 10, 1),
			"b.log": sglangLines("2026-07-01", 3600, 10, 1),
		}, []string{"(3591 s) from a.log:10 (2026-07-01 12:00:09) to b.log:1 (2026-07-01 13:00:00)", "3591x the median 1s"}},
	} {
		c := &Collection{index: map[[2]string]*Stream{}}
		for _, name := range []string{"a.log", "b.log"} {
			if text, ok := tt.files[name]; ok {
				if err := c.readFrom(name, strings.NewReader(text)); err != nil {
					t.Fatal(err)
				}
			}
		}
		s := Summarize(c, 10)
		if tt.want == nil {
			if len(s.Warnings) != 0 {
				t.Errorf("%s: warnings %q, want none", tt.name, s.Warnings)
			}
			continue
		}
		if len(s.Warnings) != 1 {
			t.Fatalf("%s: warnings %q, want one", tt.name, s.Warnings)
		}
		for _, w := range tt.want {
			if !strings.Contains(s.Warnings[0], w) {
				t.Errorf("%s: %q lacks %q", tt.name, s.Warnings[0], w)
			}
		}
	}
	// The fixture mixes 2025 and 2026 stamps: 2025-07-01 12:00:05 to
	// 2026-07-01 12:00:06 is 365 days and 1 s = 31536001 s, and 8 of the
	// 10 slices of that year hold no sample.
	path := filepath.Join("testdata", "sglang_layouts.log")
	c, err := ReadFiles([]string{path}, 0)
	if err != nil {
		t.Fatal(err)
	}
	s := Summarize(c, 10)
	if len(s.Warnings) != 1 || !strings.Contains(s.Warnings[0], "(31536001 s) from "+path+":3") || !strings.Contains(s.Warnings[0], "8 of 10 timeline slices are empty") {
		t.Errorf("fixture warnings %q", s.Warnings)
	}
}
