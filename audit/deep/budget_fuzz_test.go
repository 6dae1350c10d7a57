package deep

import (
	"strconv"
	"testing"
)

// FuzzParseBudget: any string gives an error or a budget within
// [MinBudget, MaxBudget] that reads back as itself in plain bytes.
func FuzzParseBudget(f *testing.F) {
	for _, s := range []string{"64MiB", "1.5GiB", "123456", "4KiB", "1TiB", "1e9999", "NaN", "-1", " 2 gb ", "0x10", "1.0000001TiB", "mib"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		b, err := ParseBudget(s)
		if err != nil {
			return
		}
		if b < MinBudget || b > MaxBudget {
			t.Fatalf("ParseBudget(%q) = %d, outside [%d, %d]", s, b, int64(MinBudget), int64(MaxBudget))
		}
		if again, err := ParseBudget(strconv.FormatInt(b, 10)); err != nil || again != b {
			t.Fatalf("ParseBudget(%q) = %d, which reads back as %d (%v)", s, b, again, err)
		}
	})
}
