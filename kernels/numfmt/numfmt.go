// Package numfmt decodes and encodes the element formats that checkpoints
// store weights in: BF16, F16, F32, the FP8 variants F8_E4M3 (the "fn"
// flavour: no infinities, NaN only at 0x7F/0xFF, largest finite 448),
// F8_E5M2 and F8_E8M0 (a bare power-of-two exponent used as a block scale),
// and packed FP4 E2M1 (two codes per byte, as NVFP4 and MXFP4 store them).
//
// The decoders exist so that the deep checkpoint audit can look at weight
// values, not only at the dtype a header claims; the encoders (round to
// nearest, ties to even) exist so that tests can build quantized fixtures
// bit-for-bit the way exporters do. Every decoder is a pure function of its
// code, so none of them can fail or panic on arbitrary bytes.
package numfmt

import (
	"math"

	"github.com/x448/float16"
)

// BF16 returns the value of a bfloat16 code: the top half of a float32.
func BF16(code uint16) float32 { return math.Float32frombits(uint32(code) << 16) }

// F16 returns the value of an IEEE 754 binary16 code.
func F16(code uint16) float32 { return float16.Frombits(code).Float32() }

// F32 returns the value of an IEEE 754 binary32 code.
func F32(code uint32) float32 { return math.Float32frombits(code) }

// E4M3 returns the value of an F8_E4M3 (float8_e4m3fn) code: 1 sign bit,
// 4 exponent bits with bias 7, 3 mantissa bits, subnormals, no infinities;
// 0x7F and 0xFF are NaN, so the largest finite magnitude is 448.
func E4M3(code uint8) float32 {
	if code&0x7F == 0x7F {
		return float32(math.NaN())
	}
	return float32(minifloat(code, 4, 3, 7))
}

// E5M2 returns the value of an F8_E5M2 code: 1 sign bit, 5 exponent bits
// with bias 15, 2 mantissa bits, IEEE-style infinities (0x7C, 0xFC) and NaNs
// (exponent all ones with a nonzero mantissa); largest finite 57344.
func E5M2(code uint8) float32 {
	if code&0x7C == 0x7C {
		if code&0x03 == 0 {
			if code&0x80 != 0 {
				return float32(math.Inf(-1))
			}
			return float32(math.Inf(1))
		}
		return float32(math.NaN())
	}
	return float32(minifloat(code, 5, 2, 15))
}

// E8M0 returns the value of an F8_E8M0 code, the unsigned power-of-two
// scale of the OCP microscaling (MX) formats: 2^(code-127); 0xFF is NaN.
func E8M0(code uint8) float32 {
	if code == 0xFF {
		return float32(math.NaN())
	}
	return float32(math.Ldexp(1, int(code)-127))
}

// E2M1 returns the value of a 4-bit FP4 E2M1 code (the low nibble of code;
// the high nibble is ignored): 1 sign bit, 2 exponent bits with bias 1,
// 1 mantissa bit. The magnitudes are 0, 0.5, 1, 1.5, 2, 3, 4 and 6; there
// are no infinities or NaNs.
func E2M1(code uint8) float32 { return float32(minifloat(code&0x0F, 2, 1, 1)) }

// UnpackF4 splits one byte of a packed F4 tensor into its two element
// codes. ModelOpt packs element 2i into the low nibble and element 2i+1
// into the high nibble (q[..., 0::2] | q[..., 1::2] << 4, along the last
// dimension), so first is the earlier element.
func UnpackF4(b uint8) (first, second uint8) { return b & 0x0F, b >> 4 }

// PackF4 is the inverse of UnpackF4: first goes into the low nibble.
func PackF4(first, second uint8) uint8 { return first&0x0F | (second&0x0F)<<4 }

// minifloat decodes a small binary float with the sign in the bit above the
// exponent field, no special values (callers handle those).
func minifloat(code uint8, expBits, manBits uint, bias int) float64 {
	sign := float64(1)
	if code>>(expBits+manBits)&1 != 0 {
		sign = -1
	}
	exp := int(code>>manBits) & (1<<expBits - 1)
	man := float64(int(code) & (1<<manBits - 1))
	if exp == 0 { // subnormal: 0.m x 2^(1-bias)
		return sign * math.Ldexp(man, 1-bias-int(manBits))
	}
	return sign * math.Ldexp(float64(int(1)<<manBits)+man, exp-bias-int(manBits))
}
