package main

import "testing"

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
		for _, n := range sizes {
			if n < 1 || n > 4096 {
				t.Fatalf("parseTPList(%q) gave size %d", s, n)
			}
		}
	})
}
