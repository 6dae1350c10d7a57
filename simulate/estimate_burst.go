package simulate

import (
	"container/heap"
	"math"
	"sort"
)

// burstBin is the fluid queue's time step, seconds.
const burstBin = 1.0

// burstWaits is the wait a replay's own arrival pattern adds in front of a
// pool of lanes prefill servers, beyond the steady state's M/G/1 draw: the
// pool as a fluid FIFO queue over the profiled requests of the client-only
// replay (clientAt), each bringing its prefill on engine e (its prefix
// kept with probability keep). The burst it is for is AIPerf's warm-up
// barrier: the replay releases every turn held during the warm-up when
// profiling starts (Replay.maybeStartProfiling; AIPerf
// timing/strategies/agentic_replay.py, AgenticReplayStrategy.
// _execute_profiling dispatches every lane's continuation at once, and
// lanes whose trajectory ended spawn fresh sessions from turn 0).
//
// The client-only arrivals are stretched in time to the estimate's request
// rate lam, and the prefills scaled to the estimate's mean prefill meanS,
// so that the fluid pool runs at the estimate's own utilization. The
// loop stays closed: a session's next request arrives as late as its
// earlier ones waited. Backlog Q after each bin of burstBin seconds is
// max(0, Q + work arrived - lanes x burstBin), at most the pool's share of
// the conc sessions' mean prefills (as prefillWait); a request arriving in
// a bin waits the backlog at the bin's start over lanes. The queue is
// followed until its first backlog has drained; later bursts are the M/G/1
// draw's. The result is the waits' distribution: wait[i] shared by
// share[i] of the profiled requests, ascending. Nil when there is no
// client replay to follow.
func (p *Plan) burstWaits(e *Engine, lanes, lam, keep, meanS, conc float64) (wait, share []float64) {
	tr := p.sc.Workload.Trace
	if tr == nil || lam <= 0 || lanes <= 0 || meanS <= 0 {
		return nil, nil
	}
	c := tr.clientAt(p.sc.Conc)
	if c == nil || len(c.reqs) < momentSamples || c.span <= 0 {
		return nil, nil
	}
	price := make([]float64, len(c.reps))
	for j, r := range c.reps {
		price[j] = p.prefillTime(e, r)
	}
	n := float64(len(c.reqs))
	tot := 0.0
	for i := range c.reqs {
		tot += keep*price[c.hit[i]] + (1-keep)*price[c.miss[i]]
	}
	if tot <= 0 {
		return nil, nil
	}
	norm := meanS * n / tot
	stretch := math.Max(1, n/c.span/lam)
	qmax := lanes * math.Max(conc/lanes-1, 0) * meanS
	h := make(arrivals, 0, len(c.heads))
	for _, i := range c.heads {
		h = append(h, arrival{c.at[i] * stretch, i})
	}
	heap.Init(&h)
	bin, q, work, cnt, seen, done := 0, 0.0, 0.0, 0.0, false, 0.0
	var levels [][2]float64
	for h.Len() > 0 {
		a := heap.Pop(&h).(arrival)
		if b := int(a.t / burstBin); b > bin {
			if cnt > 0 {
				levels = append(levels, [2]float64{q / lanes, cnt})
				done += cnt
			}
			for ; bin < b; bin++ {
				q = min(math.Max(0, q+work-lanes*burstBin), qmax)
				work = 0
			}
			cnt = 0
			seen = seen || q > 0
			if seen && q == 0 {
				break
			}
		}
		i := a.i
		work += norm * (keep*price[c.hit[i]] + (1-keep)*price[c.miss[i]])
		cnt++
		if j := c.next[i]; j >= 0 {
			// the session's next request keeps its recorded gap after
			// this one's wait
			heap.Push(&h, arrival{c.at[j]*stretch + (a.t - c.at[i]*stretch) + q/lanes, j})
		}
	}
	if cnt > 0 && h.Len() == 0 {
		levels = append(levels, [2]float64{q / lanes, cnt})
		done += cnt
	}
	if rest := n - done; rest > 0 {
		levels = append(levels, [2]float64{0, rest})
	}
	sort.Slice(levels, func(i, j int) bool { return levels[i][0] < levels[j][0] })
	wait, share = make([]float64, len(levels)), make([]float64, len(levels))
	for i, l := range levels {
		wait[i], share[i] = l[0], l[1]/n
	}
	return wait, share
}

// arrival is one request of the client replay at its (closed-loop) time t.
type arrival struct {
	t float64
	i int32
}

type arrivals []arrival

func (h arrivals) Len() int           { return len(h) }
func (h arrivals) Less(i, j int) bool { return h[i].t < h[j].t }
func (h arrivals) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *arrivals) Push(x any)        { *h = append(*h, x.(arrival)) }
func (h *arrivals) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// waitQuantile is the u-quantile of a distribution burstWaits returns.
func waitQuantile(wait, share []float64, u float64) float64 {
	acc := 0.0
	for i, s := range share {
		acc += s
		if u < acc {
			return wait[i]
		}
	}
	if len(wait) == 0 {
		return 0
	}
	return wait[len(wait)-1]
}
