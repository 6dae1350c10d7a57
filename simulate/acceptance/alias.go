package acceptance

import (
	"fmt"
	"math"
)

// aliasTable draws an index with given probabilities from one 64-bit random
// value in constant time (Vose's alias method). The low 32 bits pick a
// column by multiply-shift and the high 32 bits decide between the column
// and its alias, so each outcome's probability is exact to about 2^-32 per
// column.
type aliasTable struct {
	cells []aliasCell
	n     uint64
}

type aliasCell struct {
	keep  uint64 // keep the column when the high 32 bits are below this (0..2^32)
	index int32  // the column's own outcome
	alias int32  // outcome drawn otherwise
}

// newAliasTable builds the table for probabilities p (non-negative, finite,
// positive sum; normalised here).
func newAliasTable(p []float64) (*aliasTable, error) {
	n := len(p)
	if n == 0 {
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
	scaled := make([]float64, n)
	var small, large []int
	for i, v := range p {
		scaled[i] = v / sum * float64(n)
		if scaled[i] < 1 {
			small = append(small, i)
		} else {
			large = append(large, i)
		}
	}
	t := &aliasTable{cells: make([]aliasCell, n), n: uint64(n)}
	for i := range t.cells {
		t.cells[i] = aliasCell{keep: 1 << 32, index: int32(i), alias: int32(i)}
	}
	for len(small) > 0 && len(large) > 0 {
		s, l := small[len(small)-1], large[len(large)-1]
		small = small[:len(small)-1]
		t.cells[s].keep = uint64(math.Round(scaled[s] * (1 << 32)))
		t.cells[s].alias = int32(l)
		scaled[l] -= 1 - scaled[s]
		if scaled[l] < 1 {
			large = large[:len(large)-1]
			small = append(small, l)
		}
	}
	// Leftovers are 1 up to rounding: they keep their own column.
	return t, nil
}

// draw maps one random value to an outcome index.
func (t *aliasTable) draw(x uint64) int {
	c := &t.cells[(x&0xffffffff)*t.n>>32]
	if x>>32 < c.keep {
		return int(c.index)
	}
	return int(c.alias)
}
