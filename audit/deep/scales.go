package deep

import (
	"math"
)

// scaleDetail describes how the scales of on-grid blocks relate, which
// tells apart the quantizers that share a value grid: for FP8, one scale
// per tensor, per 128x128 tile, or per row; for FP4, E4M3 block scales
// under one tensor scale (NVFP4) or power-of-two block scales (MXFP4).
func scaleDetail(s *gridStats, p *plan) string {
	if len(s.scales) < 2 {
		return ""
	}
	switch s.g.code {
	case "fp8_e4m3", "fp8_e5m2":
		if consistentModPow2(s.scales) {
			return "one scale for the whole tensor (per-tensor scale)"
		}
		if p.height < tileRows {
			return "scales vary between rows (per-channel or 128x128 block scales; the budget did not allow whole tiles)"
		}
		byUnit := map[int][]scaleRec{}
		for _, r := range s.scales {
			byUnit[r.tile] = append(byUnit[r.tile], r)
		}
		for _, rs := range byUnit {
			if !consistentModPow2(rs) {
				return "scales vary within 128x128 tiles (per-channel scales)"
			}
		}
		return "one scale per 128x128 tile (block scales)"
	case "fp8_e4m3_g32":
		if fractionOnScaleGrid(s.scales, 0) >= 0.95 {
			return detailMXFP8
		}
		return "block scales are not powers of two"
	case "nvfp4":
		if fractionOnScaleGrid(s.scales, 0) >= 0.95 {
			return detailMXFP4
		}
		if fractionOnScaleGrid(s.scales, 3) >= 0.95 {
			return "E4M3 block scales times one per-tensor scale (two-level NVFP4 scaling)"
		}
		return detailFP4Other
	}
	return ""
}

// Details that name the format more precisely than the grid.
const (
	detailMXFP4    = "power-of-two block scales (E8M0 scales, as MXFP4)"
	detailMXFP8    = "power-of-two block scales (E8M0 scales, as MXFP8)"
	detailFP4Other = "block scales are not E4M3 values under one tensor scale"
)

// consistentModPow2 reports whether one scale, up to a power of two per
// block, lies in every block's feasible interval: FP8 blocks fitted with
// their maximum at the top of the format's range agree up to a power of
// two when they share a scale.
func consistentModPow2(recs []scaleRec) bool {
	lo, hi := recs[0].lo, recs[0].hi
	for _, r := range recs[1:] {
		k := math.Round(math.Log2((lo + hi) / (r.lo + r.hi)))
		lo, hi = max(lo, math.Ldexp(r.lo, int(k))), min(hi, math.Ldexp(r.hi, int(k)))
		if lo > hi {
			return false
		}
	}
	return true
}

// scaleRounding allows a dequantizer that rounds each combined block scale
// to BF16 before multiplying (half a BF16 step, 2^-8 relative, for the
// block's scale and again for the reference's).
const scaleRounding = 0x1p-7

// fractionOnScaleGrid tests two-level scaling: block scale = e * g with one
// tensor scale g and e a float with mantBits mantissa bits (3 for E4M3, 0
// for E8M0). The reference is the largest block scale; each of its
// possible mantissas fixes g, and the answer is the best fraction of
// blocks whose scale divided by g has such a mantissa.
func fractionOnScaleGrid(recs []scaleRec, mantBits int) float64 {
	ref := recs[0]
	for _, r := range recs {
		if r.hi > ref.hi {
			ref = r
		}
	}
	steps := math.Ldexp(1, mantBits)
	best := 0.0
	for m := steps; m < 2*steps; m++ {
		c := m / steps
		gLo, gHi := ref.lo/c, ref.hi/c
		ok := 0
		for _, r := range recs {
			rLo, rHi := r.lo/gHi, r.hi/gLo
			_, e := math.Frexp(rLo)
			mLo, mHi := math.Ldexp(rLo, 1-e)*steps, math.Ldexp(rHi, 1-e)*steps // in [steps, 2*steps)
			mLo, mHi = mLo*(1-scaleRounding), mHi*(1+scaleRounding)
			if math.Ceil(mLo) <= math.Floor(mHi) {
				ok++
			}
		}
		best = max(best, float64(ok)/float64(len(recs)))
	}
	return best
}
