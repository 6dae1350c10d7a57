package acceptance

import (
	"fmt"
	"math"
)

// aliasTable draws an outcome with given probabilities from one 64-bit
// random value in constant time (Vose's alias method). The table is padded
// to a power of two with zero-probability columns, so the low bits pick a
// column with a mask; the high 32 bits decide between the column's own
// outcome and its alias. Each outcome's probability is exact to 2^-32 per
// column.
type aliasTable struct {
	cells []aliasCell
	mask  uint64
}

type aliasCell struct {
	keep  uint64 // keep the column's own outcome when the high 32 bits are below this (0..2^32)
	other int64  // the alias outcome, as a length (index + 1)
	diff  int64  // own outcome - other, so that the choice needs no branch
}

// newAliasTable builds the table for probabilities p (non-negative, finite,
// positive sum; normalised here). Outcome i is reported as length i+1.
func newAliasTable(p []float64) (*aliasTable, error) {
	if len(p) == 0 {
		return nil, fmt.Errorf("empty distribution")
	}
	sum := 0.0
	for i, v := range p {
		if v < 0 || math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("probability %d is %v", i, v)
		}
		sum += v
	}
	if !(sum > 0) || math.IsInf(sum, 0) {
		return nil, fmt.Errorf("probabilities sum to %v", sum)
	}
	n := 1
	for n < len(p) {
		n *= 2
	}
	scaled := make([]float64, n)
	var small, large []int
	for i := range scaled {
		if i < len(p) {
			scaled[i] = p[i] / sum * float64(n)
		}
		if scaled[i] < 1 {
			small = append(small, i)
		} else {
			large = append(large, i)
		}
	}
	t := &aliasTable{cells: make([]aliasCell, n), mask: uint64(n - 1)}
	for i := range t.cells {
		t.cells[i] = aliasCell{keep: 1 << 32, other: int64(i + 1)}
	}
	for len(small) > 0 && len(large) > 0 {
		s, l := small[len(small)-1], large[len(large)-1]
		small = small[:len(small)-1]
		t.cells[s] = aliasCell{keep: uint64(math.Round(scaled[s] * (1 << 32))), other: int64(l + 1), diff: int64(s - l)}
		scaled[l] -= 1 - scaled[s]
		if scaled[l] < 1 {
			large = large[:len(large)-1]
			small = append(small, l)
		}
	}
	// Leftovers are 1 up to rounding: they keep their own column.
	return t, nil
}

// draw maps one random value to a length. The high 32 bits are below
// 2^32 and keep is at most 2^32, so their difference is negative exactly
// when the column keeps its own outcome; its sign bit, spread into a mask,
// picks the outcome without a branch the CPU would mispredict.
func (t *aliasTable) draw(x uint64) int {
	c := &t.cells[x&t.mask]
	own := int64(x>>32-c.keep) >> 63
	return int(c.other + c.diff&own)
}
