package recipe

import "testing"

func TestNameConcurrency(t *testing.T) {
	for _, c := range []struct {
		names []string
		conc  int
		ok    bool
	}{
		{[]string{"override_tp2_tp2_c72"}, 72, true},
		{[]string{"override_tp4_tp4_c128", "disagg-gb300-1p1d-tp4-tp4-c128-mtp-hicache-session-jid2527417"}, 128, true},
		{[]string{"override_c24", "agg-gb300-tp2-c24-mtp-hicache-jid2530012"}, 24, true},
		{[]string{"override_c24", "agg-gb300-tp2-c32-mtp"}, 0, false}, // disagree
		{[]string{"override_mtp3", "cuda"}, 0, false},
		{[]string{"ctx1_gen5_dep8_batch16"}, 0, false},
		{[]string{"c0", "c07", "c+1", "c12345678"}, 0, false},
		{nil, 0, false},
	} {
		conc, ok := NameConcurrency(c.names...)
		if conc != c.conc || ok != c.ok {
			t.Errorf("NameConcurrency(%q) = %d, %v; want %d, %v", c.names, conc, ok, c.conc, c.ok)
		}
	}
}

func FuzzNameConcurrency(f *testing.F) {
	f.Add("override_tp2_tp2_c72", "disagg-c72")
	f.Add("c", "c-1")
	f.Fuzz(func(t *testing.T, a, b string) {
		conc, ok := NameConcurrency(a, b)
		if ok && (conc < 1 || conc > 999999) {
			t.Fatalf("NameConcurrency(%q, %q) = %d", a, b, conc)
		}
		if !ok && conc != 0 {
			t.Fatalf("not ok but conc %d", conc)
		}
	})
}
