package main

// These targets cover parsers in sweep.go and predict.go (intList,
// stepRange), files another branch is changing: if one is renamed, rename
// it here too.

import "testing"

// FuzzIntList: the --conc lists of sweep and bestk either fail or give at
// most 256 values, each in 1..max, strictly increasing.
func FuzzIntList(f *testing.F) {
	for _, s := range []string{"1,2,4,8", "", " ", "1,,2", "65536", "65537", "-3", "1, 2 ,3"} {
		f.Add(s, 65536)
	}
	f.Fuzz(func(t *testing.T, s string, maxV int) {
		if maxV < 1 {
			return
		}
		vals, err := intList(s, maxV)
		if err != nil {
			return
		}
		if len(vals) > 256 {
			t.Fatalf("intList(%q) gave %d values", s, len(vals))
		}
		for i, v := range vals {
			if v < 1 || v > maxV {
				t.Fatalf("intList(%q, %d) gave %d", s, maxV, v)
			}
			if i > 0 && v <= vals[i-1] {
				t.Fatalf("intList(%q) gave %v: not strictly increasing", s, vals)
			}
		}
	})
}

// FuzzStepRange: --steps "K" or "LO-HI" either fails or gives
// 0 <= lo <= hi <= 16; "" gives the default.
func FuzzStepRange(f *testing.F) {
	for _, s := range []string{"", "6", "0-8", "5-2", "1-", "-1", "0-99999999", " 3 - 4 ", "+3", "03"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		lo, hi, err := stepRange(s, 6)
		if err != nil {
			return
		}
		if lo < 0 || hi < lo || hi > 16 {
			t.Fatalf("stepRange(%q) = %d, %d", s, lo, hi)
		}
	})
}
