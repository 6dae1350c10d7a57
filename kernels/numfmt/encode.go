package numfmt

import (
	"math"
	"sort"
)

// ToBF16 rounds a float32 to the nearest bfloat16, ties to even, the way
// PyTorch's .to(torch.bfloat16) does. NaNs stay NaN (quiet); values beyond
// the largest finite bfloat16 round to infinity.
func ToBF16(f float32) uint16 {
	bits := math.Float32bits(f)
	if f != f {
		return uint16(bits>>16) | 0x0040
	}
	bits += 0x7FFF + (bits>>16)&1
	return uint16(bits >> 16)
}

// ToE4M3 rounds x to the nearest F8_E4M3 code, ties to even, saturating at
// ±448 (exporters clamp to the finite range before casting). NaN gives 0x7F.
func ToE4M3(x float64) uint8 { return e4m3Table.encode(x) }

// ToE5M2 rounds x to the nearest F8_E5M2 code, ties to even, saturating at
// ±57344 instead of overflowing to infinity. NaN gives 0x7F; ±Inf saturates.
func ToE5M2(x float64) uint8 { return e5m2Table.encode(x) }

// ToE2M1 rounds x to the nearest FP4 E2M1 code (low nibble), ties to even,
// saturating at ±6. NaN gives 0 (E2M1 has no NaN).
func ToE2M1(x float64) uint8 {
	if x != x {
		return 0
	}
	return e2m1Table.encode(x)
}

// A codeTable lists the non-negative finite values of a small float format
// in increasing order, with their codes, for round-to-nearest encoding.
type codeTable struct {
	values []float64
	codes  []uint8
	sign   uint8 // the sign bit
	nan    uint8
}

func newCodeTable(decode func(uint8) float32, signBit uint8, nan uint8) *codeTable {
	t := &codeTable{sign: signBit, nan: nan}
	for c := 0; c < int(signBit); c++ {
		v := float64(decode(uint8(c)))
		if math.IsNaN(v) || math.IsInf(v, 0) {
			continue
		}
		t.values = append(t.values, v)
		t.codes = append(t.codes, uint8(c))
	}
	return t // codes of one sign increase with value, so already sorted
}

var (
	e4m3Table = newCodeTable(E4M3, 0x80, 0x7F)
	e5m2Table = newCodeTable(E5M2, 0x80, 0x7F)
	e2m1Table = newCodeTable(E2M1, 0x08, 0)
)

func (t *codeTable) encode(x float64) uint8 {
	if x != x {
		return t.nan
	}
	var sign uint8
	if math.Signbit(x) {
		sign, x = t.sign, -x
	}
	n := len(t.values)
	i := sort.SearchFloat64s(t.values, x) // first value >= x
	switch {
	case i == n:
		return sign | t.codes[n-1]
	case t.values[i] == x || i == 0:
		return sign | t.codes[i]
	}
	lo, hi := t.values[i-1], t.values[i]
	mid := lo + (hi-lo)/2
	switch {
	case x < mid:
		return sign | t.codes[i-1]
	case x > mid:
		return sign | t.codes[i]
	case t.codes[i-1]&1 == 0:
		return sign | t.codes[i-1]
	}
	return sign | t.codes[i]
}
