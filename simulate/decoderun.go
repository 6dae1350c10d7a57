package simulate

import "github.com/specsim/specsim/simulate/acceptance"

// Decode runs: a lane's decode iterations computed ahead of the event loop.
//
// Between two changes to its batch (a request finishing, or one arriving
// at the lane) a lane's decode iterations touch nothing outside the lane:
// the same members, one acceptance draw per DP rank and iteration from the
// rank's own sampler, a step time that depends only on the batch and its
// mean context. An AgentX decode lane runs tens of iterations per change
// at a batch of one or two, and an event per iteration made those
// iterations most of a disaggregated sweep point's cost. So when a lane
// starts such an iteration, runAhead computes the iterations that follow,
// as far as the first one in which a member would finish, and schedules
// one event, at the end of that last iteration. An arrival at the lane
// before then cuts the run at the first iteration boundary at or after
// it: the iterations after that boundary are undone (their draws go back
// to the rank's sampler queue, to be drawn again in order) and an event is
// scheduled at the boundary, where the arrival joins the batch as it did
// with one event per iteration. Every figure is the one the iteration-by-
// iteration loop gives (TestDecodeRunsIdentical), except where an arrival
// lands on a boundary at the very same float64 time.
//
// Runs need draws that do not depend on the batch size: SGLang's shared
// draw per verify step (acceptance.SharedDraw), or no speculation.

// maxRunAhead bounds the iterations one run computes ahead: an arrival
// undoes the ones past it, and longer runs waste more than they save
// (BenchmarkRefineSim: 16 to 128 save about as much).
const maxRunAhead = 32

// runBackoff is how many iterations a lane whose run saved at most one
// event runs one event each before it tries again.
const runBackoff = 8

// decodeRuns switches runs on; tests turn it off to compare.
var decodeRuns = true

// decodeTally sums the decode iterations the lanes run. Its sums are of
// whole numbers, so the order lanes add to them does not matter.
type decodeTally struct {
	steps    int
	batchSum int
	accepted int
	verifies int
	imbSteps int
}

// decodeRun is the run a lane has computed ahead (on) and not yet confirmed.
type decodeRun struct {
	on  bool
	gen int64 // tag of the run's pending event; a cut retires it
	// backoff is how many iterations the lane runs one event each before
	// it tries a run again, after a run that saved at most one event (a
	// member finishing or arriving at once, as in a full DP-attention
	// batch, where computing ahead costs more than it saves).
	backoff int
	bsz     int   // members
	priced  int   // batch the step is priced at (DP padding)
	active  []int // ranks with members, ascending
	count   []int // members per rank
	left    []int // per rank, the fewest tokens any member has left at the run's start
	off     []int // per rank, tokens accepted by the iterations computed ahead
	// Iteration j (0-based) computed ahead ends at ends[j], drew
	// draws[j*len(active):(j+1)*len(active)] and is followed by an
	// iteration priced prices[next[j]] for a mean context in the 256-token
	// bin of ctxs[j] (its first: the bin is all the pricing reads).
	ends   []float64
	draws  []int
	next   []int32
	ctxs   []int
	prices []Breakdown
	undone []int // scratch for endRun
}

// canRun says whether the lane's next decode iteration may start a run:
// a decode iteration with nothing waiting to join it, and draws that do
// not depend on the batch.
func (in *instance) canRun() bool {
	if !decodeRuns || in.role == rolePrefill || len(in.waiting) > 0 || len(in.parts) > 0 {
		return false
	}
	return in.batchFreeDraws
}

// batchFreeDraws says whether sampler s draws independently of the batch
// size: none (no speculation) or a shared draw per verify step.
func batchFreeDraws(s acceptance.Sampler) bool {
	if s == nil {
		return true
	}
	sd, ok := s.(acceptance.SharedDraw)
	return ok && sd.SharesDraw()
}

// drawAhead refills rank rk's empty queue from its sampler. A
// shared-draw rank's next accepted length is the front of its queue
// (in.ahead[rk].pop(), after drawAhead when empty); the decode loops spell
// that out, as a call that may refill is too large to inline.
func (in *instance) drawAhead(rk int) {
	q := &in.ahead[rk]
	if cap(q.buf) < drawBlock {
		q.buf = make([]int, drawBlock)
	}
	q.buf = q.buf[:drawBlock]
	q.head = 0
	in.shared[rk].Steps(q.buf)
}

// drawBlock is how many shared draws a rank's queue takes from its
// sampler at once.
const drawBlock = 64

// join adds r to the lane's running batch (and its state to hot), behind
// the requests of its rank and any lower one.
func (in *instance) join(r *simRequest) {
	rk := r.rank
	h := memberState{left: int32(r.OSL - r.gen), rank: rk, ctx: r.ctx}
	in.running = append(in.running, r)
	in.hot = append(in.hot, h)
	if n := len(in.running); n > 1 && in.hot[n-2].rank > rk {
		pos := 0
		for _, c := range in.live[:rk+1] {
			pos += c
		}
		copy(in.running[pos+1:], in.running[pos:n-1])
		in.running[pos] = r
		copy(in.hot[pos+1:], in.hot[pos:n-1])
		in.hot[pos] = h
	}
	in.ctxSum += r.ctx
	in.live[rk]++
	in.top = max(in.top, in.live[rk])
}

// unDraw puts draws back in front of rank rk's queue, first to be drawn
// first.
func (in *instance) unDraw(rk int, ls []int) {
	if in.sampler == nil || len(ls) == 0 {
		return
	}
	q := &in.ahead[rk]
	if q.head < len(ls) {
		// The queued draws move to the end of the buffer (a new one when
		// it lacks room in front for these and as many again).
		rest := q.buf[q.head:]
		buf := q.buf[:cap(q.buf)]
		if len(buf)-len(rest) < 2*len(ls) {
			buf = make([]int, max(2*len(ls)+len(rest), 2*drawBlock))
		}
		gap := len(buf) - len(rest)
		copy(buf[gap:], rest)
		q.buf, q.head = buf, gap
	}
	q.head -= len(ls)
	copy(q.buf[q.head:], ls)
}

// memberState is what a decode iteration reads and writes of a running
// request, kept in the lane's hot, parallel to running: its simRequest's
// gen and ctx are brought up to date when it leaves the batch.
type memberState struct {
	left int32 // output tokens still to emit (OSL - gen)
	rank int32
	ctx  int // context length
}

// drawQueue holds a rank's shared draws taken from its sampler and not
// yet used (drawn ahead, or put back by a cut), buf[head:] in the order
// they are to be drawn.
type drawQueue struct {
	buf  []int
	head int
}

func (q *drawQueue) pop() int {
	q.head++
	return q.buf[q.head-1]
}

// stepGroup is a lane's latest iterations of one pricing: n of them,
// priced b, with DP imbalance imb, all of key (stepGroupKey).
type stepGroup struct {
	key uint64
	b   Breakdown
	imb float64
	n   int
}

// stepGroupKey identifies the pricing DecodeStep gives a batch of bsz
// members priced at priced with mean context ctx (its memo's ctx/256
// bins); 0 where the fields do not fit the key (never grouped).
func stepGroupKey(bsz, priced, ctx int) uint64 {
	if bsz <= 0 || bsz >= 1<<24 || priced >= 1<<24 || ctx < 0 || ctx>>8 >= 1<<16 {
		return 0
	}
	return uint64(bsz)<<40 | uint64(priced)<<16 | uint64(ctx>>8)
}

// price tallies one decode iteration priced b, of bsz members priced at a
// batch of priced with mean context ctx, as the lane starts it. A lane
// sums its pricing by groups of consecutive iterations priced alike
// (n b rather than b + b + ... + b): the same sums however the
// iterations reach it, one at a time or confirmed from a run.
func (in *instance) price(t *decodeTally, b *Breakdown, bsz, priced, ctx int) {
	t.steps++
	t.batchSum += bsz
	if in.ranks > 1 {
		t.imbSteps++
	}
	g := &in.steps
	key := stepGroupKey(bsz, priced, ctx)
	if key != 0 && key == g.key && g.n > 0 {
		g.n++
		return
	}
	in.flushSteps()
	g.key, g.b, g.n, g.imb = key, *b, 1, 0
	if in.ranks > 1 {
		g.imb = float64(priced) / float64(bsz)
	}
}

// priceRun is price called m times in a row with the same arguments.
func (in *instance) priceRun(t *decodeTally, b *Breakdown, bsz, priced, ctx, m int) {
	in.price(t, b, bsz, priced, ctx)
	if m == 1 {
		return
	}
	if g := &in.steps; g.key == 0 {
		for range m - 1 {
			in.price(t, b, bsz, priced, ctx)
		}
		return
	}
	t.steps += m - 1
	t.batchSum += (m - 1) * bsz
	if in.ranks > 1 {
		t.imbSteps += m - 1
	}
	in.steps.n += m - 1
}

// flushSteps adds the lane's latest group of iterations to its sums.
func (in *instance) flushSteps() {
	g := &in.steps
	if g.n == 0 {
		return
	}
	n := float64(g.n)
	in.stepSum = in.stepSum.plus(scale(g.b, n))
	in.imbSum += g.imb * n
	g.n = 0
}

// runAhead starts a run on lane in, whose iteration over in.members ends
// at e, priced cur (DecodeStep at priced, k and the mean context of
// ctxSum, the members' context lengths summed): it computes the
// iterations that follow while none of them finishes a member, and
// returns the time of the last iteration's end, for the lane's event.
func (in *instance) runAhead(e float64, ctxSum, priced, k int, cur *Breakdown) float64 {
	r := &in.run
	if len(r.count) < in.ranks {
		r.count, r.left, r.off = make([]int, in.ranks), make([]int, in.ranks), make([]int, in.ranks)
	}
	r.on, r.bsz, r.priced = true, len(in.members), priced
	r.active, r.ends, r.draws, r.next, r.ctxs = r.active[:0], r.ends[:0], r.draws[:0], r.next[:0], r.ctxs[:0]
	for _, h := range in.hot {
		rk := h.rank
		if r.count[rk] == 0 {
			r.left[rk] = int(h.left)
		}
		r.count[rk]++
		r.left[rk] = min(r.left[rk], int(h.left))
	}
	for rk, c := range r.count[:in.ranks] {
		if c > 0 {
			r.active = append(r.active, rk)
		}
	}
	// DecodeStep prices by ctx/256 alone: an iteration in cur's bin is
	// priced cur, and the mean context's bin is recomputed only when
	// ctxSum reaches the next one's (it only grows).
	r.prices = append(r.prices[:0], *cur)
	step := cur.Total()
	lastQ := ctxSum / r.bsz >> 8
	nextBin := (lastQ + 1) << 8 * r.bsz
	for len(r.ends) < maxRunAhead {
		base := len(r.draws)
		finishes := false
		for _, rk := range r.active {
			l := 1
			if in.ahead != nil {
				q := &in.ahead[rk]
				if q.head == len(q.buf) {
					in.drawAhead(rk)
				}
				l = q.pop()
			}
			r.draws = append(r.draws, l)
			if r.off[rk]+l >= r.left[rk] {
				finishes = true
				break
			}
		}
		if !finishes && in.kv != kvWhole && in.outgrows(base, k) {
			// The pool lacks the next iteration's tokens: the run stops
			// here, and the lane's next iteration retracts (kick).
			finishes = true
		}
		if finishes {
			// A member finishes in this iteration: its draws go back
			// (each the last its rank's queue popped), and the ranks
			// after the one that finishes draw nothing.
			if in.ahead != nil {
				for _, rk := range r.active[:len(r.draws)-base] {
					in.ahead[rk].head--
				}
			}
			r.draws = r.draws[:base]
			break
		}
		for a, rk := range r.active {
			l := r.draws[base+a]
			r.off[rk] += l
			ctxSum += l * r.count[rk]
		}
		if ctxSum >= nextBin {
			ctx := ctxSum / r.bsz
			lastQ = ctx >> 8
			nextBin = (lastQ + 1) << 8 * r.bsz
			b := in.eng.DecodeStep(priced, k, ctx)
			r.prices = append(r.prices, b)
			step = b.Total()
		}
		r.ends = append(r.ends, e)
		r.next = append(r.next, int32(len(r.prices)-1))
		r.ctxs = append(r.ctxs, lastQ<<8)
		e += step
	}
	return e
}

// outgrows says whether, once the iteration whose draws start at
// r.draws[base] is run, a rank of in lacks the KV the iteration after it
// writes (admission.go).
func (in *instance) outgrows(base, k int) bool {
	r := &in.run
	for a, rk := range r.active {
		c := r.count[rk]
		if in.rankTok[rk]+(r.off[rk]+r.draws[base+a]+stepTokens(k))*c > in.rankPool() {
			return true
		}
	}
	return false
}

// confirm takes the first n iterations of the run as run: their draws
// and the pricing of the iteration after each.
func (in *instance) confirm(t *decodeTally, n int) {
	r := &in.run
	na := len(r.active)
	for j := range n {
		for a, rk := range r.active {
			t.accepted += r.draws[j*na+a] * r.count[rk]
		}
	}
	t.verifies += n * r.bsz
	// Iterations that share a pricing share its key (its ctx/256), so
	// each run of them is tallied at once.
	for j := 0; j < n; {
		k := j + 1
		for k < n && r.next[k] == r.next[j] {
			k++
		}
		in.priceRun(t, &r.prices[r.next[j]], r.bsz, r.priced, r.ctxs[j], k-j)
		j = k
	}
}

// endRun ends the run after its first n iterations: the later ones are
// undone (their draws put back), the members take the tokens the first n
// accepted, and the run's pending event is retired.
func (in *instance) endRun(t *decodeTally, n int) {
	r := &in.run
	in.confirm(t, n)
	if n <= 1 {
		r.backoff = runBackoff
	}
	na := len(r.active)
	if n < len(r.ends) {
		for a, rk := range r.active {
			r.undone = r.undone[:0]
			for j := n; j < len(r.ends); j++ {
				l := r.draws[j*na+a]
				r.off[rk] -= l
				r.undone = append(r.undone, l)
			}
			in.unDraw(rk, r.undone)
		}
	}
	for i := range in.hot {
		h := &in.hot[i]
		o := r.off[h.rank]
		h.left -= int32(o)
		h.ctx += o
	}
	if in.kv != kvWhole {
		for _, rk := range r.active {
			in.rankTok[rk] += r.off[rk] * r.count[rk]
		}
		in.decayRatio(n)
	}
	for _, rk := range r.active {
		r.count[rk], r.off[rk] = 0, 0
	}
	r.on = false
	r.gen++
}

// cut ends the run at the first iteration boundary at or after t (an
// arrival's time) and returns that boundary; ok is false when the run
// computed no boundary at or after t (the arrival joins at the run's own
// event).
func (in *instance) cut(tally *decodeTally, t float64) (at float64, ok bool) {
	r := &in.run
	for j, e := range r.ends {
		if e >= t {
			in.endRun(tally, j)
			return e, true
		}
	}
	return 0, false
}

// settle confirms the iterations of the run that ended before t, when the
// simulation stops at t.
func (in *instance) settle(tally *decodeTally, t float64) {
	if !in.run.on {
		return
	}
	n := 0
	for n < len(in.run.ends) && in.run.ends[n] < t {
		n++
	}
	in.confirm(tally, n)
	in.run.on = false
}
