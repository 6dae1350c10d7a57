package audit

import (
	"fmt"
	"math"

	"github.com/specsim/specsim/audit/enginelog"
	"github.com/specsim/specsim/audit/safetensors"
)

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
		r.Findings = append(r.Findings, Finding{Code: "log-no-load-lines", Severity: SeverityWarning,
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
		consider := func(what string, tp int, prec string, modeled float64) {
			if modeled <= 0 {
				return
			}
			e := math.Abs(l.GiB-modeled) / modeled
			if e < best.RelError {
				best.What, best.TP, best.Precision, best.ModeledGiB, best.RelError = what, tp, prec, modeled, e
			}
		}
		for _, tp := range c.TP {
			x, ok := cf[tp]
			m := mem[tp]
			switch {
			case l.Engine == "sglang" && l.Draft && ok:
				consider("draft", tp, PrecBF16, x.BF16GiB)
				consider("draft", tp, PrecFP8, x.FP8GiB)
				consider("draft", tp, PrecNVFP4, x.NVFP4GiB)
			case l.Engine == "sglang" && !l.Draft:
				consider("target", tp, "", m.ModelGiB-m.MTPGiB)
			case l.Engine == "vllm" && ok:
				target := m.ModelGiB - m.MTPGiB
				consider("model", tp, PrecBF16, target+x.BF16GiB)
				consider("model", tp, PrecFP8, target+x.FP8GiB)
				consider("model", tp, PrecNVFP4, target+x.NVFP4GiB)
			case l.Engine == "vllm":
				consider("model", tp, "", m.ModelGiB)
			}
		}
		if math.IsInf(best.RelError, 1) {
			continue
		}
		best.RelError = round4(best.RelError)
		r.Log = append(r.Log, best)
		if best.Precision != "" && best.What != "target" {
			sev := SeverityInfo
			msg := fmt.Sprintf("%s line %d logs %.2f GiB: closest to a %s draft at tp=%d (modeled %.2f GiB, %.1f%% off)", c.LogPath, l.Line, l.GiB, best.Precision, best.TP, best.ModeledGiB, 100*best.RelError)
			if best.Precision != r.MTP.ShippedDType && r.MTP.ShippedDType != PrecMixed {
				sev = SeverityWarning
				msg += fmt.Sprintf("; the draft ships %s, so the engine appears to have quantized it", r.MTP.ShippedDType)
			}
			r.Findings = append(r.Findings, Finding{Code: "log-draft-precision", Severity: sev, Message: msg})
		}
	}
	return nil
}
