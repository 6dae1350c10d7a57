package simulate

import (
	"fmt"
)

// KCandidate is one draft length evaluated at one concurrency.
type KCandidate struct {
	K             int     `json:"k"`
	AL            float64 `json:"al"`
	StepMS        float64 `json:"step_ms"`
	DraftMS       float64 `json:"draft_ms"`
	TPOTms        float64 `json:"tpot_ms"`
	Interactivity float64 `json:"interactivity"`
	TputPerGPU    float64 `json:"tput_per_gpu"`
	OutputPerGPU  float64 `json:"output_tput_per_gpu"`
}

// BestKRow is the best draft length at one concurrency and why.
type BestKRow struct {
	Conc       int          `json:"conc"`
	BestK      int          `json:"best_k"`
	Speedup    float64      `json:"speedup_vs_none"` // output throughput at best k over k = 0
	Why        string       `json:"why"`
	Candidates []KCandidate `json:"candidates"`
}

// BestK evaluates draft lengths lo..hi (0 = no speculation) at each
// concurrency on topology t and picks the one with the highest output
// throughput (at a fixed closed-loop concurrency that is also the lowest
// TPOT). simulate selects the event simulation over the mean-field estimate.
func BestK(r *Resolved, t Topology, concs []int, lo, hi int, simulate bool, progress func(done, total int)) ([]BestKRow, error) {
	if lo < 0 || hi < lo {
		return nil, fmt.Errorf("draft lengths %d..%d: want 0 <= lo <= hi", lo, hi)
	}
	var rows []BestKRow
	for ci, c := range concs {
		if progress != nil {
			progress(ci, len(concs))
		}
		row := BestKRow{Conc: c}
		for k := lo; k <= hi; k++ {
			var res *Result
			var err error
			if simulate {
				res, err = Predict(r, t, c, k)
			} else {
				res, err = EstimatePoint(r, t, c, k)
			}
			if err != nil {
				return nil, fmt.Errorf("conc %d, k %d: %w", c, k, err)
			}
			row.Candidates = append(row.Candidates, KCandidate{K: k, AL: res.AL, StepMS: res.StepMS.Total, DraftMS: res.StepMS.Draft,
				TPOTms: res.TPOTms, Interactivity: res.Interactivity, TputPerGPU: res.TputPerGPU, OutputPerGPU: res.OutputPerGPU})
		}
		best := 0
		for i, cand := range row.Candidates {
			if cand.OutputPerGPU > row.Candidates[best].OutputPerGPU {
				best = i
			}
		}
		b := row.Candidates[best]
		row.BestK = b.K
		base := row.Candidates[0]
		if base.K == 0 && base.OutputPerGPU > 0 {
			row.Speedup = b.OutputPerGPU / base.OutputPerGPU
		}
		row.Why = explainK(row.Candidates, best)
		rows = append(rows, row)
	}
	if progress != nil {
		progress(len(concs), len(concs))
	}
	return rows, nil
}

// explainK says what the best draft length buys against no speculation and
// why one step more does not pay.
func explainK(cs []KCandidate, best int) string {
	b := cs[best]
	var why string
	if cs[0].K == 0 && b.K > 0 {
		s0 := cs[0].StepMS
		why = fmt.Sprintf("k=%d: AL %.2f tokens per iteration for a %.2fx longer iteration (%.2f -> %.2f ms: draft %.2f ms, verify +%.2f ms)",
			b.K, b.AL, b.StepMS/s0, s0, b.StepMS, b.DraftMS, b.StepMS-b.DraftMS-s0)
	} else if b.K == 0 && len(cs) == 1 {
		return "no speculation: only k=0 was evaluated, so no draft length was compared (evaluate a range such as 0-8)"
	} else if b.K == 0 {
		why = "no speculation: every draft length costs more iteration time than its acceptance returns"
		if len(cs) > 1 {
			c := cs[1]
			why += fmt.Sprintf(" (k=%d: AL %.2f for a %.2fx iteration)", c.K, c.AL, c.StepMS/cs[0].StepMS)
		}
		return why
	} else {
		why = fmt.Sprintf("k=%d: AL %.2f at %.2f ms per iteration", b.K, b.AL, b.StepMS)
	}
	if best+1 < len(cs) {
		n := cs[best+1]
		why += fmt.Sprintf("; k=%d would add %.0f%% acceptance for %.0f%% more iteration time", n.K, 100*(n.AL/b.AL-1), 100*(n.StepMS/b.StepMS-1))
	}
	return why
}
