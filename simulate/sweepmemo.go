package simulate

import "sync"

// sweepMemo is what the workers of one sweep share (workerCopies): values
// that each worker's engine of a Parallel, built alike, would otherwise
// price again. A value is shared only when pricing it raised no shape
// error on an engine free of one (Engine.Err), so that a worker taking it
// ends as it would have pricing it itself.
type sweepMemo struct {
	mu      sync.Mutex
	moments map[sharedMomentKey]*onceMoments

	steps sharedPrices // DecodeStep's, by stepKey
	fwd   sharedPrices // prefillForward's, by prefillShapeKey
}

// sharedPrices is one kind of the workers' shared prices, by engine
// Parallel and key.
type sharedPrices struct {
	mu sync.RWMutex
	m  map[sharedStepKey]Breakdown
}

// get is the price under key on an engine of par, if a worker priced it.
func (p *sharedPrices) get(par Parallel, key uint64) (Breakdown, bool) {
	p.mu.RLock()
	b, ok := p.m[sharedStepKey{par, key}]
	p.mu.RUnlock()
	return b, ok
}

func (p *sharedPrices) put(par Parallel, key uint64, b Breakdown) {
	p.mu.Lock()
	p.m[sharedStepKey{par, key}] = b
	p.mu.Unlock()
}

func newSweepMemo() *sweepMemo {
	return &sweepMemo{moments: map[sharedMomentKey]*onceMoments{}, steps: sharedPrices{m: map[sharedStepKey]Breakdown{}}, fwd: sharedPrices{m: map[sharedStepKey]Breakdown{}}}
}

type sharedMomentKey struct {
	par Parallel
	key momentKey
}

type onceMoments struct {
	once sync.Once
	m    prefillMoments
	ok   bool // priced without a shape error
}

type sharedStepKey struct {
	par Parallel
	key uint64 // stepKey or prefillShapeKey
}

// moment is the prefill moments of key on engine e: priced by price once,
// by the first worker to ask, while the others wait.
func (s *sweepMemo) moment(e *Engine, key momentKey, price func() prefillMoments) prefillMoments {
	k := sharedMomentKey{e.Par, key}
	s.mu.Lock()
	o := s.moments[k]
	if o == nil {
		o = new(onceMoments)
		s.moments[k] = o
	}
	s.mu.Unlock()
	mine := false
	o.once.Do(func() {
		mine = true
		clean := e.Err() == nil
		o.m = price()
		o.ok = clean && e.Err() == nil
	})
	if mine || o.ok {
		return o.m
	}
	return price()
}
