package simulate

import "fmt"

// SLA limits filter a sweep's points before its frontiers, as
// AIConfigurator's --ttft/--tpot do. A zero limit is off. Latency limits
// apply to p90 values (the percentile InferenceX's agentic frontier uses).
type SLA struct {
	MaxTTFTms        float64 `json:"max_ttft_ms_p90,omitempty"`
	MaxTPOTms        float64 `json:"max_tpot_ms_p90,omitempty"`
	MaxE2ELs         float64 `json:"max_e2el_s_p90,omitempty"`
	MinInteractivity float64 `json:"min_interactivity,omitempty"`
}

// SLARemoval is how many points one limit removed; a point breaking several
// limits is counted under the first in the order TTFT, TPOT, E2EL,
// interactivity.
type SLARemoval struct {
	Limit   string  `json:"limit"`
	Value   float64 `json:"value"`
	Removed int     `json:"removed"`
	// OnEstimate is how many of Removed were never event-simulated: their
	// mean-field estimates break the limit. A settled sweep leaves none
	// whose estimate would reach a frontier if it kept to the limit.
	OnEstimate int `json:"removed_on_estimate"`
}

// Validate rejects negative or non-finite limits.
func (s SLA) Validate() error {
	for _, l := range s.limits() {
		if !(l.value >= 0) || l.value > 1e12 {
			return fmt.Errorf("--%s %g: want a finite value >= 0 (0 = no limit)", l.flag, l.value)
		}
	}
	return nil
}

type slaLimit struct {
	flag   string
	value  float64
	breaks func(p *Point) bool
}

func (s SLA) limits() []slaLimit {
	return []slaLimit{
		{"max-ttft-ms", s.MaxTTFTms, func(p *Point) bool { return p.TTFTp90ms > s.MaxTTFTms }},
		{"max-tpot-ms", s.MaxTPOTms, func(p *Point) bool { return p.TPOTp90ms > s.MaxTPOTms }},
		{"max-e2el-s", s.MaxE2ELs, func(p *Point) bool { return p.E2EL.P90 > s.MaxE2ELs }},
		{"min-interactivity", s.MinInteractivity, func(p *Point) bool { return p.Interactivity < s.MinInteractivity }},
	}
}

// broken is the first set limit p breaks, in Filter's order.
func (s SLA) broken(p *Point) (slaLimit, bool) {
	for _, l := range s.limits() {
		if l.value > 0 && l.breaks(p) {
			return l, true
		}
	}
	return slaLimit{}, false
}

// Filter returns the points every limit keeps and, for each limit that is
// set, how many points it removed.
func (s SLA) Filter(points []Point) ([]Point, []SLARemoval) {
	return s.filter(points, true)
}

// filterSimulated is Filter that removes only event-simulated points: a
// point judged on its estimate alone stays, so that the search simulates
// it if it would reach a frontier (an estimate can put a point outside a
// limit it keeps to once simulated).
func (s SLA) filterSimulated(points []Point) []Point {
	kept, _ := s.filter(points, false)
	return kept
}

func (s SLA) filter(points []Point, estimates bool) ([]Point, []SLARemoval) {
	ls := s.limits()
	var removed []SLARemoval
	slot := make([]int, len(ls))
	for i, l := range ls {
		slot[i] = -1
		if l.value > 0 {
			slot[i] = len(removed)
			removed = append(removed, SLARemoval{Limit: l.flag, Value: l.value})
		}
	}
	if len(removed) == 0 {
		return points, nil
	}
	kept := make([]Point, 0, len(points))
outer:
	for i := range points {
		onEstimate := points[i].Sim != "event"
		for j, l := range ls {
			if slot[j] >= 0 && (estimates || !onEstimate) && l.breaks(&points[i]) {
				removed[slot[j]].Removed++
				if onEstimate {
					removed[slot[j]].OnEstimate++
				}
				continue outer
			}
		}
		kept = append(kept, points[i])
	}
	return kept, removed
}
