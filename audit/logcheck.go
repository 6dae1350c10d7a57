package audit

import (
	"fmt"
	"math"

	"github.com/specsim/specsim/audit/enginelog"
	"github.com/specsim/specsim/audit/safetensors"
)

// The band a logged load figure may fall in and still match a modeled
// draft: somewhat below the floor, because the caching allocator can place
// draft tensors in free blocks of the target's segments (the drop in free
// memory is then smaller than the draft's bytes), and barely above the
// allocator footprint (our upper estimate), plus the 0.005 GiB of the
// log's two decimals. The two fractions are assumptions, not measurements.
const (
	LogBelowFloor     = 0.05
	LogAboveFootprint = 0.01
	logRounding       = 0.005
)

// bandDistance is 0 for a logged figure inside [floor*(1-LogBelowFloor),
// footprint*(1+LogAboveFootprint)] (widened by the log's rounding), else
// how far outside, relative to the footprint.
func bandDistance(logged, floor, footprint float64) float64 {
	lo := floor*(1-LogBelowFloor) - logRounding
	hi := footprint*(1+LogAboveFootprint) + logRounding
	switch {
	case logged < lo:
		return (lo - logged) / footprint
	case logged > hi:
		return (logged - hi) / footprint
	}
	return 0
}

func (r *Report) compareLog(c Config) error {
	f, err := safetensors.OpenRegular(c.LogPath)
	if err != nil {
		return &CorruptError{Path: c.LogPath, Err: err}
	}
	defer f.Close()
	loads, err := enginelog.ParseLoad(f)
	if err != nil {
		return &CorruptError{Path: c.LogPath, Err: err}
	}
	if len(loads) == 0 {
		r.Findings = append(r.Findings, Finding{Code: "log-no-load-lines", Severity: SeverityWarning, Location: c.LogPath,
			Message: fmt.Sprintf("%s has no SGLang \"Load weight end ... mem usage=\" or vLLM \"Model loading took\" lines", c.LogPath)})
		return nil
	}
	cf := map[int]Counterfactual{}
	for _, x := range r.Counterfactual {
		cf[x.TP] = x
	}
	mem := map[int]MemoryRow{}
	for _, m := range r.Memory {
		mem[m.TP] = m
	}
	for _, l := range loads {
		best := LogMatch{Line: l.Line, Engine: l.Engine, LoggedGiB: l.GiB, RelError: math.Inf(1)}
		bestMid := math.Inf(1)
		consider := func(what string, tp int, prec string, floor, footprint float64) {
			if footprint <= 0 {
				return
			}
			e := bandDistance(l.GiB, floor, footprint)
			// Inside several bands, prefer the one whose middle is nearest.
			mid := math.Abs(l.GiB-(floor+footprint)/2) / footprint
			if e < best.RelError || e == best.RelError && mid < bestMid {
				best.What, best.TP, best.Precision, best.ModeledGiB, best.FloorGiB, best.RelError = what, tp, prec, footprint, floor, e
				bestMid = mid
			}
		}
		for _, tp := range c.TP {
			x, ok := cf[tp]
			m := mem[tp]
			targetBytes := m.ModelGiB - m.MTPFloorGiB
			switch {
			case l.Engine == "sglang" && l.Draft && ok:
				consider("draft", tp, PrecBF16, x.BF16FloorGiB, x.BF16GiB)
				consider("draft", tp, PrecFP8, x.FP8FloorGiB, x.FP8GiB)
				consider("draft", tp, PrecNVFP4, x.NVFP4FloorGiB, x.NVFP4GiB)
			case l.Engine == "sglang" && !l.Draft:
				consider("target", tp, "", targetBytes, targetBytes)
			case l.Engine == "vllm" && ok:
				consider("model", tp, PrecBF16, targetBytes+x.BF16FloorGiB, targetBytes+x.BF16GiB)
				consider("model", tp, PrecFP8, targetBytes+x.FP8FloorGiB, targetBytes+x.FP8GiB)
				consider("model", tp, PrecNVFP4, targetBytes+x.NVFP4FloorGiB, targetBytes+x.NVFP4GiB)
			case l.Engine == "vllm":
				consider("model", tp, "", m.ModelGiB, m.ModelGiB)
			}
		}
		if math.IsInf(best.RelError, 1) {
			continue
		}
		best.RelError = round4(best.RelError)
		best.Consistent = best.RelError == 0
		r.Log = append(r.Log, best)
		if best.Precision != "" && best.What != "target" {
			sev := SeverityInfo
			var msg string
			if best.Consistent {
				msg = fmt.Sprintf("%s line %d logs %.2f GiB: consistent with a %s draft at tp=%d (floor %.2f GiB of parameters, allocator footprint up to %.2f GiB)", c.LogPath, l.Line, l.GiB, best.Precision, best.TP, best.FloorGiB, best.ModeledGiB)
			} else {
				sev = SeverityWarning
				msg = fmt.Sprintf("%s line %d logs %.2f GiB: outside every modeled band; nearest a %s draft at tp=%d (floor %.2f, footprint %.2f GiB, %.1f%% outside)", c.LogPath, l.Line, l.GiB, best.Precision, best.TP, best.FloorGiB, best.ModeledGiB, 100*best.RelError)
			}
			if best.Precision != r.MTP.ShippedDType && r.MTP.ShippedDType != PrecMixed {
				sev = SeverityWarning
				msg += fmt.Sprintf("; the draft ships %s, so the engine appears to have quantized it", r.MTP.ShippedDType)
			}
			r.Findings = append(r.Findings, Finding{Code: "log-draft-precision", Severity: sev, Message: msg, Location: fmt.Sprintf("%s line %d", c.LogPath, l.Line)})
		}
	}
	return nil
}
