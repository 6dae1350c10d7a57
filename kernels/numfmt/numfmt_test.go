package numfmt

import (
	"math"
	"math/rand/v2"
	"testing"
)

// ieee computes, by the textbook formula, the value of a binary float code
// with the given field widths (IEEE rules: exponent all ones is Inf/NaN).
// It shares no code with the package under test.
func ieee(code uint64, expBits, manBits int, ieeeSpecials bool) float64 {
	man := code & (1<<manBits - 1)
	exp := int(code>>manBits) & (1<<expBits - 1)
	neg := code>>(expBits+manBits)&1 == 1
	bias := 1<<(expBits-1) - 1
	var v float64
	switch {
	case ieeeSpecials && exp == 1<<expBits-1 && man == 0:
		v = math.Inf(1)
	case ieeeSpecials && exp == 1<<expBits-1:
		return math.NaN()
	case exp == 0:
		v = float64(man) / math.Pow(2, float64(manBits)) * math.Pow(2, float64(1-bias))
	default:
		v = (1 + float64(man)/math.Pow(2, float64(manBits))) * math.Pow(2, float64(exp-bias))
	}
	if neg {
		v = -v
	}
	return v
}

func same(t *testing.T, what string, code uint64, got float32, want float64) {
	t.Helper()
	if math.IsNaN(want) {
		if !math.IsNaN(float64(got)) {
			t.Fatalf("%s(%#x) = %v, want NaN", what, code, got)
		}
		return
	}
	if float64(got) != want || math.Signbit(float64(got)) != math.Signbit(want) {
		t.Fatalf("%s(%#x) = %v, want %v", what, code, got, want)
	}
}

func TestBF16EveryCode(t *testing.T) {
	for c := 0; c < 1<<16; c++ {
		same(t, "BF16", uint64(c), BF16(uint16(c)), ieee(uint64(c), 8, 7, true))
	}
	// A few values everybody knows.
	for code, want := range map[uint16]float64{0x3F80: 1, 0xC000: -2, 0x3F00: 0.5, 0x7F7F: 3.3895313892515355e38, 0x0001: math.Pow(2, -133)} {
		same(t, "BF16", uint64(code), BF16(code), want)
	}
}

func TestF16EveryCode(t *testing.T) {
	for c := 0; c < 1<<16; c++ {
		same(t, "F16", uint64(c), F16(uint16(c)), ieee(uint64(c), 5, 10, true))
	}
	same(t, "F16", 0x7BFF, F16(0x7BFF), 65504)
	same(t, "F16", 0x0001, F16(0x0001), math.Pow(2, -24))
}

// TestF32Codes covers every exponent and sign with edge and random
// mantissas (all 2^32 codes would take minutes).
func TestF32Codes(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for sign := uint32(0); sign < 2; sign++ {
		for exp := uint32(0); exp < 256; exp++ {
			for _, man := range []uint32{0, 1, 2, 1 << 22, 1<<23 - 1, r.Uint32N(1 << 23), r.Uint32N(1 << 23)} {
				c := sign<<31 | exp<<23 | man
				same(t, "F32", uint64(c), F32(c), ieee(uint64(c), 8, 23, true))
			}
		}
	}
}

func TestE4M3EveryCode(t *testing.T) {
	for c := 0; c < 256; c++ {
		want := ieee(uint64(c), 4, 3, false) // fn variant: no IEEE specials...
		if c&0x7F == 0x7F {
			want = math.NaN() // ...except S.1111.111
		}
		same(t, "E4M3", uint64(c), E4M3(uint8(c)), want)
	}
	for code, want := range map[uint8]float64{0x7E: 448, 0xFE: -448, 0x01: 1.0 / 512, 0x08: 1.0 / 64, 0x38: 1, 0x78: 256, 0x07: 7.0 / 512} {
		same(t, "E4M3", uint64(code), E4M3(code), want)
	}
}

func TestE5M2EveryCode(t *testing.T) {
	for c := 0; c < 256; c++ {
		same(t, "E5M2", uint64(c), E5M2(uint8(c)), ieee(uint64(c), 5, 2, true))
	}
	for code, want := range map[uint8]float64{0x7B: 57344, 0x7C: math.Inf(1), 0xFC: math.Inf(-1), 0x01: math.Pow(2, -16), 0x3C: 1} {
		same(t, "E5M2", uint64(code), E5M2(code), want)
	}
}

func TestE8M0EveryCode(t *testing.T) {
	for c := 0; c < 256; c++ {
		want := math.NaN()
		if c != 255 {
			want = 1
			for e := c - 127; e > 0; e-- {
				want *= 2
			}
			for e := c - 127; e < 0; e++ {
				want /= 2
			}
		}
		same(t, "E8M0", uint64(c), E8M0(uint8(c)), want)
	}
}

func TestE2M1EveryCode(t *testing.T) {
	// The E2M1 magnitudes as ModelOpt and the OCP MX spec list them.
	levels := []float64{0, 0.5, 1, 1.5, 2, 3, 4, 6}
	for c := 0; c < 16; c++ {
		want := levels[c&7]
		if c&8 != 0 {
			want = -want
		}
		same(t, "E2M1", uint64(c), E2M1(uint8(c)), want)
		same(t, "E2M1 high nibble ignored", uint64(c|0xA0), E2M1(uint8(c|0xA0)), want)
	}
}

func TestPackF4(t *testing.T) {
	for b := 0; b < 256; b++ {
		lo, hi := UnpackF4(uint8(b))
		if lo != uint8(b)&15 || hi != uint8(b)>>4 {
			t.Fatalf("UnpackF4(%#x) = %#x, %#x", b, lo, hi)
		}
		if PackF4(lo, hi) != uint8(b) {
			t.Fatalf("PackF4(UnpackF4(%#x)) = %#x", b, PackF4(lo, hi))
		}
	}
	// ModelOpt packs [1.0, -6.0] (codes 0x2, 0xF) as 0xF2: first element low.
	if got := PackF4(ToE2M1(1), ToE2M1(-6)); got != 0xF2 {
		t.Fatalf("PackF4(1, -6) = %#x, want 0xF2", got)
	}
}

// roundTripAndTies checks an encoder against its decoder on every finite
// code, on the midpoints between neighbours (ties go to the even code) and
// just off them, and saturation beyond the largest value.
func roundTripAndTies(t *testing.T, name string, n int, dec func(uint8) float32, enc func(float64) uint8, max float64) {
	t.Helper()
	var pos []uint8
	for c := 0; c < n; c++ {
		v := float64(dec(uint8(c)))
		if math.IsNaN(v) || math.IsInf(v, 0) {
			continue
		}
		if got := enc(v); dec(got) != dec(uint8(c)) || math.Signbit(float64(dec(got))) != math.Signbit(v) {
			t.Fatalf("%s: enc(%v) = %#x, want %#x", name, v, got, c)
		}
		if c < n/2 {
			pos = append(pos, uint8(c))
		}
	}
	for i := 0; i+1 < len(pos); i++ {
		a, b := float64(dec(pos[i])), float64(dec(pos[i+1]))
		mid := (a + b) / 2
		even := pos[i]
		if even&1 != 0 {
			even = pos[i+1]
		}
		if got := enc(mid); got != even {
			t.Fatalf("%s: tie %v between %v and %v -> %#x, want even %#x", name, mid, a, b, got, even)
		}
		if got := enc(math.Nextafter(mid, a)); got != pos[i] {
			t.Fatalf("%s: just below %v -> %#x, want %#x", name, mid, got, pos[i])
		}
		if got := enc(math.Nextafter(mid, b)); got != pos[i+1] {
			t.Fatalf("%s: just above %v -> %#x, want %#x", name, mid, got, pos[i+1])
		}
		if got := enc(-math.Nextafter(mid, b)); dec(got) != -dec(pos[i+1]) {
			t.Fatalf("%s: negative side of %v -> %#x", name, mid, got)
		}
	}
	if got := float64(dec(enc(max * 10))); got != max {
		t.Fatalf("%s: enc(10*max) decodes to %v, want saturation at %v", name, got, max)
	}
	if got := float64(dec(enc(math.Inf(-1)))); got != -max {
		t.Fatalf("%s: enc(-Inf) decodes to %v, want %v", name, got, -max)
	}
}

func TestEncoders(t *testing.T) {
	roundTripAndTies(t, "E4M3", 256, E4M3, ToE4M3, 448)
	roundTripAndTies(t, "E5M2", 256, E5M2, ToE5M2, 57344)
	roundTripAndTies(t, "E2M1", 16, E2M1, ToE2M1, 6)
	if !math.IsNaN(float64(E4M3(ToE4M3(math.NaN())))) {
		t.Fatal("ToE4M3(NaN) is not NaN")
	}
}

// TestToBF16 compares against rounding done by exact float64 arithmetic:
// pick the nearer of the two bfloat16 neighbours, the even one on a tie.
func TestToBF16(t *testing.T) {
	check := func(f float32) {
		got := ToBF16(f)
		if f != f {
			if BF16(got) == BF16(got) {
				t.Fatalf("ToBF16(NaN) = %#x", got)
			}
			return
		}
		down := uint16(math.Float32bits(f) >> 16)
		up := down + 1
		x := float64(f)
		// Beyond the largest finite code, the next step is 2^128 (which is
		// where IEEE rounding overflows to infinity).
		dd, du := math.Abs(x-ieee(uint64(down), 8, 7, false)), math.Abs(ieee(uint64(up), 8, 7, false)-x)
		want := down
		if du < dd || (du == dd && down&1 == 1) {
			want = up
		}
		if math.Float32bits(f)&0xFFFF == 0 {
			want = down
		}
		if got != want {
			t.Fatalf("ToBF16(%v = %#x) = %#x, want %#x", f, math.Float32bits(f), got, want)
		}
	}
	r := rand.New(rand.NewPCG(3, 4))
	for range 1 << 20 {
		check(math.Float32frombits(r.Uint32()))
	}
	for c := 0; c < 1<<16; c++ { // every code, every midpoint and its neighbours
		base := uint32(c) << 16
		for _, low := range []uint32{0, 0x7FFF, 0x8000, 0x8001, 0xFFFF} {
			check(math.Float32frombits(base | low))
		}
	}
	if ToBF16(3.4e38) != 0x7F80 { // largest float32 rounds up to +Inf
		t.Fatalf("ToBF16(3.4e38) = %#x, want +Inf 0x7F80", ToBF16(3.4e38))
	}
}

func BenchmarkBF16(b *testing.B) {
	var s float32
	for i := range b.N {
		s += BF16(uint16(i))
	}
	_ = s
}
