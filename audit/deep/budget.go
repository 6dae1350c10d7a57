package deep

import (
	"fmt"
	"strconv"
	"strings"
)

// Budget limits accepted by ParseBudget.
const (
	MinBudget = 4 << 10
	MaxBudget = 1 << 40
)

// ParseBudget reads a byte count: a plain number of bytes ("123456") or a
// number with a binary (KiB, MiB, GiB, TiB) or decimal (KB, MB, GB, TB)
// unit, case-insensitive, optionally fractional ("1.5GiB"). It must lie
// between 4 KiB and 1 TiB.
func ParseBudget(s string) (int64, error) {
	t := strings.TrimSpace(s)
	i := len(t)
	for i > 0 && (t[i-1] < '0' || t[i-1] > '9') {
		i--
	}
	num, unit := strings.TrimSpace(t[:i]), strings.ToLower(strings.TrimSpace(t[i:]))
	mult := map[string]float64{"": 1, "b": 1,
		"kib": 1 << 10, "mib": 1 << 20, "gib": 1 << 30, "tib": 1 << 40,
		"kb": 1e3, "mb": 1e6, "gb": 1e9, "tb": 1e12}[unit]
	x, err := strconv.ParseFloat(num, 64)
	if mult == 0 || err != nil || x != x {
		return 0, fmt.Errorf("budget %q: want bytes, e.g. 64MiB, 1GiB or 123456", s)
	}
	b := x * mult
	if b < MinBudget || b > MaxBudget {
		return 0, fmt.Errorf("budget %q: want between 4KiB and 1TiB", s)
	}
	return int64(b), nil
}
