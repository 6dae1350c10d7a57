package deep

import (
	"encoding/binary"
	"fmt"
	"math"
	"sync"

	"github.com/specsim/specsim/kernels/numfmt"
)

// An elem is one stored value and the interval of real numbers that the
// storage format rounds to it: a quantizer's dequantized product q*s lands
// on this stored value exactly when q*s lies in [lo, hi]. lo and hi bound
// the magnitude; v keeps the sign.
type elem struct {
	v      float64
	lo, hi float64
	ulp    float64 // hi - lo: the spacing of codes around v
	// logRelULP is log(ulp/|v|), the format's relative precision at v.
	logRelULP float64
}

// A storage format of the values under test: how wide a code is, how many
// and how to decode a magnitude code.
type storage struct {
	name      string
	size      int    // bytes per element
	maxFinite uint32 // largest finite magnitude code
	decode    func(code uint32) float64
	// slack widens the rounding interval by this relative amount, so that
	// a product computed in float32 and then rounded to the 16-bit format
	// (a double rounding) is still accepted; 0 for F32.
	slack float64

	once  sync.Once
	elems []elem // 16-bit formats: every finite magnitude code, decoded
}

var storages = map[string]*storage{
	"BF16": {name: "BF16", size: 2, maxFinite: 0x7F7F, slack: 0x1p-22,
		decode: func(c uint32) float64 { return float64(numfmt.BF16(uint16(c))) }},
	"F16": {name: "F16", size: 2, maxFinite: 0x7BFF, slack: 0x1p-22,
		decode: func(c uint32) float64 { return float64(numfmt.F16(uint16(c))) }},
	"F32": {name: "F32", size: 4, maxFinite: 0x7F7FFFFF,
		decode: func(c uint32) float64 { return float64(numfmt.F32(c)) }},
}

// signBit returns the sign-bit mask of a code of this storage.
func (s *storage) signBit() uint32 { return 1 << (8*s.size - 1) }

// decodeElems fills out with the elements of raw (little-endian codes).
// It reports false if any value is infinite or NaN: such a block is not
// tested. It never reads past raw or writes past out.
func (s *storage) decodeElems(raw []byte, out []elem) (finite bool) {
	n := min(len(raw)/s.size, len(out))
	sign := s.signBit()
	var table []elem
	if s.size == 2 {
		table = s.table()
	}
	for i := range n {
		var code uint32
		if s.size == 2 {
			code = uint32(binary.LittleEndian.Uint16(raw[2*i:]))
		} else {
			code = binary.LittleEndian.Uint32(raw[4*i:])
		}
		mag := code &^ sign
		if mag > s.maxFinite {
			return false
		}
		var e elem
		if table != nil {
			e = table[mag]
		} else {
			e = s.elem(mag)
		}
		if code&sign != 0 {
			e.v = -e.v
		}
		out[i] = e
	}
	return true
}

// elem computes the element of a finite magnitude code.
func (s *storage) elem(mag uint32) elem {
	if mag == 0 {
		return elem{}
	}
	v := s.decode(mag)
	// Every real in (lo, hi) rounds to v; ties at the ends go either way
	// depending on the even code, so both ends are accepted.
	lo := (s.decode(mag-1) + v) / 2
	var hi float64
	if mag == s.maxFinite {
		hi = v + (v-s.decode(mag-1))/2
	} else {
		hi = (v + s.decode(mag+1)) / 2
	}
	e := elem{v: v, lo: lo * (1 - s.slack), hi: hi * (1 + s.slack)}
	e.ulp = e.hi - e.lo
	e.logRelULP = math.Log(e.ulp / v)
	return e
}

// table returns the elements of every finite magnitude code of a 16-bit
// format (about 1 MiB), built once.
func (s *storage) table() []elem {
	s.once.Do(func() {
		s.elems = make([]elem, s.maxFinite+1)
		for c := range s.maxFinite + 1 {
			s.elems[c] = s.elem(c)
		}
	})
	return s.elems
}

func storageFor(dtype string) (*storage, error) {
	s, ok := storages[dtype]
	if !ok {
		return nil, fmt.Errorf("dtype %s: value test needs BF16, F16 or F32", dtype)
	}
	return s, nil
}
