package main

import (
	"slices"
	"strings"
	"testing"
)

// FuzzParseTPList: audit --tp either fails or gives 1..maxTPSizes sizes,
// each a TP size from 1 to 4096.
func FuzzParseTPList(f *testing.F) {
	for _, s := range []string{"1,2,4,8", "4", "", "1,,2", " 8 , 16", "0", "-1", "99999999999999999999", "4096,4097"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		sizes, err := parseTPList(s)
		if err != nil {
			return
		}
		if len(sizes) == 0 || len(sizes) > maxTPSizes {
			t.Fatalf("parseTPList(%q) gave %d sizes", s, len(sizes))
		}
		for i, n := range sizes {
			if slices.Contains(sizes[:i], n) {
				t.Fatalf("parseTPList(%q) gave %d twice", s, n)
			}
			if n < 1 || n > 4096 {
				t.Fatalf("parseTPList(%q) gave size %d", s, n)
			}
		}
	})
}

// audit --tp 1,1 printed the same memory row twice.
func TestParseTPList(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []int
		err  string
	}{
		{"1,2,4,8", []int{1, 2, 4, 8}, ""},
		{" 8 , 4", []int{8, 4}, ""},
		{"1,1", nil, `--tp "1,1": 1 given twice`},
		{"4,2,4", nil, `--tp "4,2,4": 4 given twice`},
		{"0", nil, "sizes from 1 to 4096"},
	} {
		got, err := parseTPList(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q: error %v, want %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("%q: %v %v, want %v", tc.in, got, err, tc.want)
		}
	}
}
