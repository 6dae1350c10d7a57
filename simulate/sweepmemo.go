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
// Parallel and key: a shard per Parallel, which each engine looks up once
// (Engine.sharedShard), so that a price's lookup hashes its key alone.
type sharedPrices struct {
	mu     sync.Mutex
	shards map[Parallel]*priceShard
}

type priceShard struct {
	mu sync.RWMutex
	m  map[uint64]Breakdown
}

// shard is the prices of engines of par.
func (p *sharedPrices) shard(par Parallel) *priceShard {
	p.mu.Lock()
	defer p.mu.Unlock()
	s := p.shards[par]
	if s == nil {
		s = &priceShard{m: map[uint64]Breakdown{}}
		p.shards[par] = s
	}
	return s
}

// get is the price under key, if a worker priced it.
func (s *priceShard) get(key uint64) (Breakdown, bool) {
	s.mu.RLock()
	b, ok := s.m[key]
	s.mu.RUnlock()
	return b, ok
}

func (s *priceShard) put(key uint64, b Breakdown) {
	s.mu.Lock()
	s.m[key] = b
	s.mu.Unlock()
}

// engineShards are an engine's shards of its sweep's shared prices.
type engineShards struct{ steps, fwd *priceShard }

// sharedShards are e.shared's shards of e's Parallel, looked up on first
// use.
func (e *Engine) sharedShards() *engineShards {
	if e.shards.steps == nil {
		e.shards = engineShards{e.shared.steps.shard(e.Par), e.shared.fwd.shard(e.Par)}
	}
	return &e.shards
}

func newSweepMemo() *sweepMemo {
	return &sweepMemo{moments: map[sharedMomentKey]*onceMoments{}, steps: sharedPrices{shards: map[Parallel]*priceShard{}}, fwd: sharedPrices{shards: map[Parallel]*priceShard{}}}
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
