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

	stepMu sync.RWMutex
	steps  map[sharedStepKey]Breakdown // DecodeStep's, by stepKey
	fwdMu  sync.RWMutex
	fwd    map[sharedStepKey]Breakdown // prefillForward's, by prefillShapeKey
}

func newSweepMemo() *sweepMemo {
	return &sweepMemo{moments: map[sharedMomentKey]*onceMoments{}, steps: map[sharedStepKey]Breakdown{}, fwd: map[sharedStepKey]Breakdown{}}
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

// step is DecodeStep's value under stepKey key on an engine of par, if a
// worker priced it.
func (s *sweepMemo) step(par Parallel, key uint64) (Breakdown, bool) {
	s.stepMu.RLock()
	b, ok := s.steps[sharedStepKey{par, key}]
	s.stepMu.RUnlock()
	return b, ok
}

func (s *sweepMemo) putStep(par Parallel, key uint64, b Breakdown) {
	s.stepMu.Lock()
	s.steps[sharedStepKey{par, key}] = b
	s.stepMu.Unlock()
}

// forward is prefillForward's value under prefillShapeKey key on an
// engine of par, if a worker priced it.
func (s *sweepMemo) forward(par Parallel, key uint64) (Breakdown, bool) {
	s.fwdMu.RLock()
	b, ok := s.fwd[sharedStepKey{par, key}]
	s.fwdMu.RUnlock()
	return b, ok
}

func (s *sweepMemo) putForward(par Parallel, key uint64, b Breakdown) {
	s.fwdMu.Lock()
	s.fwd[sharedStepKey{par, key}] = b
	s.fwdMu.Unlock()
}
