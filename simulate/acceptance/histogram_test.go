package acceptance

import (
	"math"
	"slices"
	"strings"
	"testing"
)

func TestParseHistogram(t *testing.T) {
	h, err := ParseHistogram("h.csv", []byte("# c\n\nLength, Count\n 3 , 2.5\n1,7\n"))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(h.Counts, []float64{7, 0, 2.5}) || h.Total != 9.5 {
		t.Errorf("counts %v total %v", h.Counts, h.Total)
	}
	tests := []struct{ data, want string }{
		{"", "sum to 0"},
		{"length,count\n", "sum to 0"},
		{"1,0\n2,0\n", "sum to 0"},
		{"0,5\n", "line 1: length \"0\""},
		{"66,5\n", "1..65"},
		{"x,5\n", "not an integer"},
		{"1,-5\n", "non-negative"},
		{"1,NaN\n", "non-negative"},
		{"1,Inf\n", "non-negative"},
		{"1,5\n1,6\n", "line 2: length 1 given twice"},
		{"1,5,6\n", "3 fields"},
		{"1,1e308\n2,1e308\n", "positive finite total"},
		{strings.Repeat("1", 5000) + ",1\n", "token too long"},
		{strings.Repeat("#", MaxHistogramBytes+1), "larger than"},
	}
	for _, tt := range tests {
		_, err := ParseHistogram("h.csv", []byte(tt.data))
		if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), "h.csv") {
			t.Errorf("%.40q: %v, want %q", tt.data, err, tt.want)
		}
	}
	if _, err := LoadHistogram("testdata/missing.csv"); err == nil {
		t.Error("missing file loaded")
	}
}

func FuzzParseHistogram(f *testing.F) {
	for _, s := range []string{"length,count\n1,70\n2,130\n4,12\n", "# x\n3,1\n", "1,0.5\n65,2\n", "1,1e308\n2,1e308\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		h, err := ParseHistogram("fuzz.csv", data)
		if err != nil {
			return
		}
		if len(h.Counts) < 1 || len(h.Counts) > MaxDraftLength+1 || !(h.Total > 0) || math.IsInf(h.Total, 0) {
			t.Fatalf("histogram %+v", h)
		}
		d := h.Distribution()
		s, err := New(Config{Method: Empirical, K: len(d) - 1 + boolInt(len(d) == 1), Dist: d, Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		out := make([]int, 8)
		s.Step(out)
		for _, l := range out {
			if l < 1 || l > len(d)+1 || d[min(l, len(d))-1] == 0 && l <= len(d) {
				t.Fatalf("drew %d from %v", l, d)
			}
		}
	})
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// A byte-order-marked histogram's header read as length "\ufefflength".
func TestParseHistogramSkipsByteOrderMark(t *testing.T) {
	for _, tc := range []struct {
		name, data string
		want       []float64
	}{
		{"header", "\ufefflength,count\n1,5\n2,15\n", []float64{0.25, 0.75}},
		{"no header", "\ufeff1,3\n3,1\n", []float64{0.75, 0, 0.25}},
	} {
		h, err := ParseHistogram(tc.name, []byte(tc.data))
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if got := h.Distribution(); !slices.Equal(got, tc.want) {
			t.Errorf("%s: distribution %v, want %v", tc.name, got, tc.want)
		}
	}
}
