package agentx

import "container/heap"

// ClientRate replays traces under cfg against a server that answers every
// request in svc seconds and returns what InferenceX would measure of the
// client alone: profiled requests per second (count over last end - first
// start, as Measure's throughput) and the profiled requests. The
// replay's own rules (start turns, warm-up, recycled trees starting cold at
// turn 0, idle caps, the finite window) make the rate differ from one over
// the corpus's mean gap and the requests from the corpus's mix; the
// mean-field estimate takes its think time and its requests from here.
func ClientRate(traces []*Trace, cfg Config, svc float64) (rate float64, profiled []Record, err error) {
	rp, err := NewReplay(traces, cfg)
	if err != nil {
		return 0, nil, err
	}
	var fl doneHeap
	for !rp.Finished() {
		t, ok := rp.PeekTime()
		if ok && (len(fl) == 0 || t <= fl[0].t) {
			q := rp.Pop()
			heap.Push(&fl, done{q.Arrival + svc, q.ID})
			continue
		}
		if len(fl) == 0 {
			break
		}
		d := heap.Pop(&fl).(done)
		if err := rp.Complete(d.id, d.t, d.t); err != nil {
			return 0, nil, err
		}
	}
	recs := rp.Records()
	t0, t1, _ := rp.Window()
	m := Measure(recs, t0, t1)
	if m.Requests == 0 || m.DurationS <= 0 {
		return 0, nil, nil
	}
	return float64(m.Requests) / m.DurationS, recs, nil
}

type done struct {
	t  float64
	id int
}

type doneHeap []done

func (h doneHeap) Len() int { return len(h) }
func (h doneHeap) Less(i, j int) bool {
	if h[i].t != h[j].t {
		return h[i].t < h[j].t
	}
	return h[i].id < h[j].id
}
func (h doneHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *doneHeap) Push(x any)   { *h = append(*h, x.(done)) }
func (h *doneHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
