package simulate

import (
	"cmp"
	"math"
	"math/bits"
	"math/rand/v2"
	"slices"
	"sort"
	"sync"
)

// meanFieldSamples is how many requests a mean-field estimate draws to
// turn length distributions into percentiles and the prefill queue's
// service time into its moments. A queue's wait follows E[S^2], which
// AgentX's rare whole-prompt prefills (compactions, new sessions, evicted
// chains) dominate and a few dozen samples miss; and a p90 taken over n
// draws is the population's quantile at 0.9 +- sqrt(0.9 x 0.1 / n) (the
// order statistic's standard error): +-3.8 points at 64 draws, where
// AgentX's output and prefill lengths are heavy-tailed enough that p86 and
// p94 differ by tens of percent, +-0.9 at 1,024. The draws are the same
// at every point of one concurrency (requestSampler) and priced once per
// prefill engine of a sweep (prefillMoments).
const meanFieldSamples = 1024

// momentKey identifies the requests prefillMoments draws (a trace
// replay's depend on the concurrency: requestSampler).
type momentKey struct {
	wl    Workload
	conc  int
	seed  uint64
	spec  bool
	chunk int
}

// prefillMoments are E[S] and E[S^2] of one request's prefill alone, with
// its cached prefix found (hit) and with none of it (miss), over the
// sampled requests reqs, whose own prefill times are hitT and missT.
type prefillMoments struct {
	hit1, hit2, miss1, miss2 float64
	reqs                     []Request
	hitT, missT              []float64
}

// prefillMoments draws meanFieldSamples requests of the workload
// (requestSampler: the same for every point of a sweep at one
// concurrency) and prices them on engine e.
func (p *Plan) prefillMoments(e *Engine) prefillMoments {
	spec := p.sc.Spec.Steps > 0 && (!p.sc.Topology.Disagg || p.sc.Server.PrefillDraft)
	conc := 0
	if p.sc.Workload.Trace != nil {
		conc = p.sc.Conc
	}
	key := momentKey{p.sc.Workload, conc, p.sc.Seed, spec, p.chunk}
	if m, ok := memoGet(&e.pm.moments, key); ok && stepMemo {
		return m
	}
	var m prefillMoments
	if s := p.sc.shared; s != nil && stepMemo {
		m = s.moment(e, key, func() prefillMoments { return p.priceMoments(e) })
	} else {
		m = p.priceMoments(e)
	}
	memoPut(e.pm.moments, key, m)
	return m
}

// priceMoments prices prefillMoments' requests on engine e.
func (p *Plan) priceMoments(e *Engine) prefillMoments {
	rng := rand.New(rand.NewPCG(p.sc.Seed, 0x6d6f6d))
	m := prefillMoments{reqs: make([]Request, meanFieldSamples), hitT: make([]float64, meanFieldSamples), missT: make([]float64, meanFieldSamples)}
	sample := p.requestSampler()
	for i := range meanFieldSamples {
		r := sample(rng)
		m.reqs[i] = r
		h := p.prefillTime(e, r)
		r.Cached = 0
		s := p.prefillTime(e, r)
		m.hitT[i], m.missT[i] = h, s
		m.hit1 += h / meanFieldSamples
		m.hit2 += h * h / meanFieldSamples
		m.miss1 += s / meanFieldSamples
		m.miss2 += s * s / meanFieldSamples
	}
	return m
}

// requestSampler draws requests for the estimate: of a trace replay, the
// requests the replay's client profiles at this concurrency (clientAt),
// else the workload's (a seeded draw). At low concurrency the client
// profiles a few hundred requests of a handful of trees, whose output tail
// is shorter than the corpus's (at conc 8 the corpus's lengths put the
// estimate's throughput at x0.66 of the event's, the client's at x0.98).
// The client's requests are sampled stratified by output length
// (proportional allocation: the middle of each of meanFieldSamples equal
// strata in order of output, then new prompt tokens, repeating requests
// when there are fewer; Cochran, Sampling Techniques, 1977, ch. 5), so the
// sample's output-length quantiles are the population's: a random draw of
// 1,024 puts the p90 anywhere within about +-8% of it (813-957 tokens at
// conc 1024 over five seeds, population 874), and E2EL's p90 with it. The
// i-th call gives the i-th stratum.
func (p *Plan) requestSampler() func(*rand.Rand) Request {
	if tr := p.sc.Workload.Trace; tr != nil {
		if c := tr.clientAt(p.sc.Conc); c != nil && len(c.strata) > 0 {
			i := 0
			return func(*rand.Rand) Request {
				r := c.strata[i]
				i++
				return r
			}
		}
	}
	return p.sc.Workload.Sample
}

// stratify is requestSampler's meanFieldSamples draws of reqs, in order:
// the middle request of each of meanFieldSamples equal strata of reqs
// sorted by output length, then new prompt tokens (nil for no requests).
func stratify(reqs []Request) []Request {
	if len(reqs) == 0 {
		return nil
	}
	byOSL := make([]int32, len(reqs))
	for i := range byOSL {
		byOSL[i] = int32(i)
	}
	slices.SortFunc(byOSL, func(i, j int32) int {
		a, b := reqs[i], reqs[j]
		return cmp.Or(cmp.Compare(a.OSL, b.OSL), cmp.Compare(a.ISL-a.Cached, b.ISL-b.Cached), cmp.Compare(i, j))
	})
	out := make([]Request, meanFieldSamples)
	for i := range out {
		out[i] = reqs[byOSL[(2*i+1)*len(byOSL)/(2*meanFieldSamples)]]
	}
	return out
}

// prefillKey memoizes one request's whole prefill on one engine.
type prefillKey struct {
	newTok, before int
	spec           bool
	chunk          int
}

// packed is k in one word (24 bits of newTok, 18 of before, 20 of chunk,
// spec), and false where a field does not fit.
func (k prefillKey) packed() (uint64, bool) {
	if k.newTok < 0 || k.newTok >= 1<<24 || k.before < 0 || k.before >= 1<<18 || k.chunk < 0 || k.chunk >= 1<<20 {
		return 0, false
	}
	key := uint64(k.newTok)<<39 | uint64(k.before)<<21 | uint64(k.chunk)<<1
	if k.spec {
		key |= 1
	}
	return key, true
}

// prefillTime is one request's prefill alone on engine e, chunk by chunk.
func (p *Plan) prefillTime(e *Engine, r Request) float64 {
	spec := p.sc.Spec.Steps > 0 && (!p.sc.Topology.Disagg || p.sc.Server.PrefillDraft)
	key := prefillKey{(r.ISL - r.Cached) >> 6, r.Cached >> 8, spec, p.chunk}
	packed, fits := key.packed()
	if fits {
		if t, ok := e.prefillTable.get(packed); ok {
			return t
		}
	} else {
		if e.prefillMemo == nil {
			e.prefillMemo = map[prefillKey]float64{}
		}
		if t, ok := e.prefillMemo[key]; ok {
			return t
		}
	}
	// Price the bin's representative (cached prefix at the bin's lower edge,
	// new tokens at its middle), not whichever request reached the bin first,
	// so that the memo's value is a function of its key alone and the
	// estimate does not depend on the order requests arrive in.
	cached := key.before << 8
	isl := cached + key.newTok<<6 + 32
	t := 0.0
	done := cached
	for done < isl {
		n := min(isl-done, p.chunk)
		t += e.prefillTime([]PrefillPart{{New: n, Before: done, Last: done+n >= isl}}, spec)
		done += n
	}
	if fits {
		e.prefillTable.put(packed, t)
		return t
	}
	if len(e.prefillMemo) > 1<<16 {
		clear(e.prefillMemo)
	}
	e.prefillMemo[key] = t
	return t
}

// Estimate is the mean-field (steady-state) version of Simulate: fast
// enough for sweeps over thousands of deployments. Each lane's decode batch,
// prefill share and request rate come from a fixed point of Little's law
// over the closed loop; percentiles come from sampled request lengths
// (without the AL variance that Simulate draws step by step).
func (p *Plan) Estimate() (*Result, error) { return p.shapeChecked(p.estimate()) }

func (p *Plan) estimate() (*Result, error) {
	// The sampled requests are the prefill moments' (prefillMoments),
	// their prefills priced once per engine; a fixed workload's one.
	var m prefillMoments
	var reqs []Request
	if p.sc.Workload.Name == "fixed" {
		reqs = []Request{p.sc.Workload.Sample(rand.New(rand.NewPCG(p.sc.Seed, 0x5eed)))}
	} else {
		m = p.prefillMoments(p.prefillEngine())
		reqs = m.reqs
	}
	var isl, osl float64
	for _, r := range reqs {
		isl += float64(r.ISL)
		osl += float64(r.OSL)
	}
	n := float64(len(reqs))
	isl, osl = isl/n, osl/n
	// The prefix cache's keep depends on how regular each session's
	// return is (cacheKeep), which depends on the queueing the estimate
	// finds with it: iterate the two to agreement.
	var finish func() *Result
	var regular float64
	prev := -1.0
	buf := estimateBufs.Get().(*estimateBuf)
	defer estimateBufs.Put(buf)
	order := seededPerm(p.sc.Seed, 0xe71c7, len(reqs))
	theta := p.sc.Workload.ThinkTime()
	if tr := p.sc.Workload.Trace; tr != nil {
		if c := tr.clientAt(p.sc.Conc); c != nil {
			theta = c.think
		}
	}
	for range 6 {
		h := p.cacheKeep(float64(p.sc.Conc), isl+osl, regular, theta)
		if math.Abs(h-prev) < 0.005 {
			break
		}
		prev = h
		// LRU evicts a session's chain whole (every node of it was last
		// touched at its previous turn), so a turn finds either its whole
		// shared prefix or none of it: round((1-h) n) of the sampled
		// turns, picked in a seeded order, re-prefill their whole prompt.
		kept := append(buf.kept[:0], reqs...)
		buf.kept = kept
		if h < 1 {
			lost := int(math.Round((1 - h) * float64(len(kept))))
			if len(kept) == 1 {
				kept[0].Cached = int(h * float64(kept[0].Cached))
				lost = 0
			}
			for _, i := range order[:lost] {
				kept[i].Cached = 0
			}
		}
		var err error
		if finish, regular, err = p.estimateKept(kept, m, isl, osl, h, buf); err != nil {
			return nil, err
		}
		if !p.cacheOn() {
			break
		}
	}
	return finish(), nil
}

// estimateKept is Estimate over the sampled requests reqs (their cached
// prefixes as the cache keeps them; mean lengths isl and osl): the fixed
// point, and a func that turns it into the Result (its percentiles, priced
// only for the keep the estimate settles on). It also returns the part of
// a session's cycle that does not vary from cycle to cycle: its time in
// the server (prefill, queue, decode).
func (p *Plan) estimateKept(reqs []Request, m prefillMoments, isl, osl, keep float64, buf *estimateBuf) (func() *Result, float64, error) {
	n := float64(len(reqs))
	ctx := isl + osl/2
	al := 1.0
	k := p.sc.Spec.Steps
	if k > 0 {
		s, err := p.newSampler(p.sc.Seed)
		if err != nil {
			return nil, 0, err
		}
		al = s.ExpectedMean()
	}
	conc := float64(p.sc.Conc)
	if tr := p.sc.Workload.Trace; tr != nil {
		conc *= tr.par // chains of a tree that run side by side
	}
	think := p.sc.Workload.ThinkTime()
	t := p.sc.Topology
	pre, dec := p.agg, p.agg
	preLanes, decLanes := float64(t.Agg.PP), float64(t.Agg.PP)
	mem := p.aggMem
	if t.Disagg {
		pre, dec = p.prefill, p.decode
		preLanes = float64(t.PrefillWorkers * t.Prefill.PP)
		decLanes = float64(t.DecodeWorkers * t.Decode.PP)
		mem = p.decMem
	}
	tp := buf.column(&buf.tp, len(reqs))
	meanTp, soloS2 := 0.0, 0.0
	for i, r := range reqs {
		switch {
		case len(reqs) == 1:
			tp[i] = p.prefillTime(pre, r)
		case r.Cached == 0:
			tp[i] = m.missT[i]
		default:
			tp[i] = m.hitT[i]
		}
		meanTp += tp[i] / n
		soloS2 += tp[i] * tp[i] / n
	}
	if len(reqs) > 1 {
		// The queue's service time: a turn finds its prefix with
		// probability keep (cacheKeep), else re-prefills it.
		meanTp = keep*m.hit1 + (1-keep)*m.miss1
		soloS2 = keep*m.hit2 + (1-keep)*m.miss2
	}
	capRun := conc / decLanes
	deployed, decoded := p.DeployedMaxRunning()
	if t.Disagg {
		deployed = decoded
	}
	if deployed > 0 {
		capRun = math.Min(capRun, math.Ceil(float64(deployed)/float64(dec.Par.PP)))
	}
	tokCap := float64(mem.TokensFit*dec.Par.AttentionDP()) / float64(dec.Par.PP)
	held := isl + osl // what admission reserves a request (kvWhole)
	if !t.Disagg && p.aggKVPolicy() != kvWhole {
		held = isl + osl/2 // what it holds on average: output KV is taken as written
	}
	capRun = math.Max(1, math.Min(capRun, math.Floor(tokCap/held)))
	transfer := 0.0
	if t.Disagg {
		transfer = p.transfer(int(isl))
	}
	steps := math.Max(osl-1, 0) / al
	// Prefills that arrive while a forward runs are batched into one
	// prefill forward (up to the chunk), sharing its weight reads.
	meanNew, meanCached := 0, 0
	for _, r := range reqs {
		meanNew += r.ISL - r.Cached
		meanCached += r.Cached
	}
	meanNew, meanCached = max(meanNew/len(reqs), 1), meanCached/len(reqs)
	soloTp := meanTp
	batchedTp := func(m int) float64 {
		m = max(1, min(m, p.chunk/meanNew))
		if m == 1 {
			return soloTp
		}
		parts := make([]PrefillPart, m)
		for i := range parts {
			parts[i] = PrefillPart{New: meanNew, Before: meanCached, Last: true}
		}
		return pre.prefillTime(parts, k > 0) / float64(m)
	}
	// With in-flight batching the contexts ride in generation iterations:
	// a request's prefill costs what it adds to the iteration that carries
	// it, shared with the other contexts of that iteration (at least one).
	mixedTp := func(b, m int) float64 {
		m = max(1, min(m, p.chunk/meanNew))
		parts := make([]PrefillPart, m)
		for i := range parts {
			parts[i] = PrefillPart{New: meanNew, Before: meanCached, Last: true}
		}
		return pre.MixedExtra(b, k+1, parts, k > 0) / float64(m)
	}
	// Step time at a fractional batch, interpolated between the whole
	// batches DecodeStep prices. Under DP attention every rank runs each
	// forward padded to the fullest rank's batch (SGLang's DP-attention
	// padding, as the event simulation prices it): x requests decoding
	// over dp ranks run as dp times the fullest rank's. The ranks are the
	// router's targets, aggregated or disaggregated (newServer), each
	// session bound to one, so which ranks are busy is chance
	// (fullestRank).
	dp := float64(dec.Par.AttentionDP())
	stepAt := func(x float64) float64 {
		x = math.Max(x, 1)
		if dp > 1 {
			x = dp * fullestRank(x, dp)
		}
		lo := math.Floor(x)
		t0 := dec.DecodeStep(int(lo), k, int(ctx)).Total()
		if f := x - lo; f > 1e-9 {
			return t0 + f*(dec.DecodeStep(int(lo)+1, k, int(ctx)).Total()-t0)
		}
		return t0
	}
	// The batch a decoding request runs in is not the time-average batch
	// b but b as its own steps see it: itself plus the others decoding
	// (each of the lane's other n-1 sessions decodes with probability
	// occ/n; the inspection paradox of the event simulation's batches).
	// occ is the lane's time-average number of decoding requests (Little's
	// law), which unlike b is not floored at one: a lane idle half the
	// time has occ 0.5, and its requests mostly decode alone.
	perLaneSessions := conc / decLanes
	seen := func(b float64) float64 {
		n := math.Max(perLaneSessions, 1)
		return math.Max(1, math.Min(capRun, 1+b*(n-1)/n))
	}
	// Fixed point over the decode batch b (per decode lane).
	b := math.Max(1, math.Min(capRun, conc/decLanes))
	occ := b
	var td, tds, lambda, rhoP, ttft, wq, rhoQ float64
	thinkEff := think
	if tr := p.sc.Workload.Trace; tr != nil {
		// The replay's own rate of requests per session (start turns,
		// warm-up, tree restarts, AIPerf's idle caps, the finite window;
		// agentx.ClientRate), not one over the corpus's mean gap.
		if c := tr.clientAt(p.sc.Conc); c != nil {
			thinkEff = c.think
		}
	}
	// prefillWait is the mean wait of a prefill in the queue of one of
	// lanes prefill servers fed lam requests/s in all: Pollaczek-Khinchine
	// for an M/G/1 queue per server, W = lam1 E[S^2] / (2 (1-rho)), with
	// lane sessions ahead at most (a closed loop of conc sessions cannot
	// queue more than the lane's other sessions). It also returns rho.
	//
	// The lane serves a closed loop of conc/lanes sessions, and a
	// session's own request never waits behind itself: by the arrival
	// theorem of closed networks (Lavenberg and Reiser, J. Appl. Prob.
	// 17(4), 1980) a request finds the lane as the other sessions keep it,
	// busy a fraction othersBusy of what rho says, and waits that fraction
	// of the open queue's mean (busyFrac, for waitAt below too).
	var busyFrac float64
	prefillWait := func(lam, lanes, meanS float64) (float64, float64) {
		lam1 := lam / lanes
		rho := math.Min(lam1*meanS, 0.999)
		s2 := soloS2 * (meanS / soloTp) * (meanS / soloTp)
		w := lam1 * s2 / (2 * (1 - rho))
		busyFrac = othersBusy(conc / lanes)
		return math.Min(w*busyFrac, math.Max(conc/lanes-1, 0)*meanS), rho
	}
	lambda = conc / math.Max(meanTp+steps*1e-3, 1e-6)
	// driven is the rate the sessions drive through a disaggregated
	// deployment's prefill pool: the pool queues what the clients send,
	// not what the decode pool could take (at a batch floored at one,
	// lanes*b/decodeTime overstates the rate of a lightly loaded pool).
	driven := math.Inf(1)
	for range 40 {
		prevLambda := lambda
		bi := max(int(math.Round(b)), 1)
		td = stepAt(b)
		tds = stepAt(seen(occ))
		if !t.Disagg {
			m := int(math.Round(lambda / decLanes * td))
			if pre.MixesContext() {
				meanTp = mixedTp(bi, m)
			} else {
				meanTp = batchedTp(m)
			}
		}
		if !t.Disagg {
			// One lane alternates prefills and decode iterations; the
			// scheduler runs a waiting prefill before the next decode
			// step (SGLang get_next_batch_to_run), so a prefill waits for
			// the step in flight and the prefills queued ahead of it.
			perLane := 1 / (meanTp + steps*td/b)
			lambda = math.Min(lambda, perLane*decLanes)
			wq, rhoQ = prefillWait(lambda, decLanes, meanTp)
			rhoP = rhoQ
			ttft = meanTp + td/2 + wq
		} else {
			// Prefill pool as a queue in front of the decode pool.
			decodeTime := steps * tds
			lambdaD := decLanes * b / math.Max(decodeTime, 1e-9)
			lambdaP := preLanes / meanTp
			lambda = math.Min(math.Min(lambdaD, lambdaP*0.999), driven)
			wq, rhoQ = prefillWait(lambda, preLanes, meanTp)
			ttft = meanTp + wq + transfer
		}
		// Little's law over the closed loop: sessions = rate x cycle,
		// think time included.
		cycle := ttft + steps*tds/(1-rhoP) + thinkEff
		want := conc / cycle // the rate the sessions would drive
		if t.Disagg {
			lambda = math.Min(lambda, want)
			if math.IsInf(driven, 1) {
				driven = want
			} else {
				driven = 0.5*driven + 0.5*want
			}
		} else {
			lambda = math.Min(want, decLanes/(meanTp+steps*td/b))
		}
		nocc := math.Min(capRun, lambda/decLanes*steps*tds/(1-rhoP))
		nb := math.Max(1, nocc)
		if math.Abs(nb-b) < 0.01 && math.Abs(nocc-occ) < 0.01 && (!t.Disagg || math.Abs(lambda-prevLambda) <= 1e-6*lambda) {
			b, occ = nb, nocc
			break
		}
		b = 0.5*b + 0.5*nb
		occ = 0.5*occ + 0.5*nocc
	}
	cycle := conc / lambda
	// Requests beyond the running cap wait before their prefill.
	queueWait := math.Max(0, cycle-(ttft+steps*tds/(1-rhoP)+thinkEff))
	finish := func() *Result {
		// Each sampled request waits a draw of the prefill queue's wait: zero
		// with probability 1-pb (pb: rho as the other sessions see it),
		// otherwise exponential with mean wq/pb (the M/G/1 wait's usual
		// two-part approximation), the draws stratified over the samples in
		// a seeded order.
		order := seededPerm(p.sc.Seed, 0x9e3779b9, len(reqs))
		pb := rhoQ * busyFrac
		waitAt := func(u float64) float64 {
			if pb <= 0 || wq <= 0 || u <= 1-pb {
				return 0
			}
			return wq / pb * math.Log(pb/(1-u))
		}
		// An aggregated lane that does not mix prefill chunks into decode
		// iterations stops decoding for every prefill forward (SGLang runs
		// a waiting prefill batch before the next decode step): a request
		// whose decode needs d0 of the lane's decode time is held by the
		// prefills that arrive meanwhile and the busy periods they start,
		// as a preemptive-resume low-priority job of an M/G/1 queue is:
		// Poisson(lamLane d0) busy periods, each a prefill time over
		// 1-rhoP. Its mean is d0/(1-rhoP), as before; its spread is the
		// median TPOT's distance from the mean.
		var stalls *rand.Rand
		if !t.Disagg && !pre.MixesContext() && rhoP > 0 && len(reqs) > 1 {
			stalls = rand.New(rand.NewPCG(p.sc.Seed, 0x57a115))
		}
		lamLane := lambda / decLanes
		stallOf := func(d0 float64) float64 {
			n := poissonDraw(stalls, lamLane*d0)
			var s float64
			if n > 64 {
				// The sum of n prefill times, by its mean and variance.
				sd := math.Sqrt(float64(n) * math.Max(soloS2-soloTp*soloTp, 0))
				s = math.Max(0, float64(n)*soloTp+sd*stalls.NormFloat64())
			} else {
				for range n {
					s += tp[stalls.IntN(len(tp))]
				}
			}
			return s * meanTp / soloTp / (1 - rhoP)
		}
		ttfts := buf.column(&buf.ttft, len(reqs))
		tpots := buf.column(&buf.tpot, len(reqs))[:0]
		e2els := buf.column(&buf.e2el, len(reqs))
		norm := buf.column(&buf.norm, len(reqs))
		var tokens, out float64
		var bounds [4]bitBounds
		for i := range bounds {
			bounds[i].lo = math.MaxUint64
		}
		for i, r := range reqs {
			w := wq
			if len(reqs) > 1 {
				w = waitAt((float64(order[i]) + 0.5) / float64(len(reqs)))
			}
			ti := tp[i]*meanTp/soloTp + (ttft - meanTp - wq) + w + queueWait
			d0 := math.Max(float64(r.OSL-1), 0) / al * tds
			di := d0 / (1 - rhoP)
			if stalls != nil {
				di = d0 + stallOf(d0)
			}
			ttfts[i] = ti
			e2els[i] = ti + di
			if r.OSL > 1 {
				tpots = append(tpots, di/float64(r.OSL-1))
				bounds[1].add(tpots[len(tpots)-1])
			}
			norm[i] = e2els[i] / float64(r.OSL)
			bounds[0].add(ti)
			bounds[2].add(e2els[i])
			bounds[3].add(norm[i])
			tokens += float64(r.ISL + r.OSL)
			out += float64(r.OSL)
		}
		// Throughput: lambda requests per second of mean size.
		window := n / lambda
		res := p.estimateResult([4][]float64{ttfts, tpots, e2els, norm}, bounds, tokens, out, window, len(reqs), buf)
		res.StepMS = dec.DecodeStep(max(int(math.Round(b)), 1), k, int(ctx)).Report()
		res.DecodeBatch = b * float64(dec.Par.PP)
		res.ALRealized = al
		res.Sim = "mean-field"
		return res
	}
	return finish, ttft + queueWait + steps*tds/(1-rhoP), nil
}

// estimateBuf is the scratch space of one estimate: the sampled requests
// as the cache keeps them, their prefill times and latency columns. An
// estimate's Result holds none of it.
type estimateBuf struct {
	kept                       []Request
	tp, ttft, tpot, e2el, norm []float64
	scratch                    []float64 // quantiles5090's
}

var estimateBufs = sync.Pool{New: func() any { return new(estimateBuf) }}

// column is *c resized to n values (their contents undefined).
func (*estimateBuf) column(c *[]float64, n int) []float64 {
	if cap(*c) < n {
		*c = make([]float64, n)
	}
	*c = (*c)[:n]
	return *c
}

// permKey names a seeded permutation (seededPerm).
type permKey struct {
	seed, stream uint64
	n            int
}

// perms holds the seeded permutations the estimate draws: the same few at
// every point of a sweep. A long-lived process that varies the seed
// starts it over at 64.
var perms struct {
	sync.Mutex
	m map[permKey][]int
}

// seededPerm is rand.New(rand.NewPCG(seed, stream)).Perm(n), shared: the
// caller must not modify it.
func seededPerm(seed, stream uint64, n int) []int {
	key := permKey{seed, stream, n}
	perms.Lock()
	defer perms.Unlock()
	if v, ok := perms.m[key]; ok {
		return v
	}
	if perms.m == nil || len(perms.m) >= 64 {
		perms.m = map[permKey][]int{}
	}
	v := rand.New(rand.NewPCG(seed, stream)).Perm(n)
	perms.m[key] = v
	return v
}

// cacheKeep is the fraction of a session's shared prefix that is still in
// its rank's radix cache when the session's next turn arrives, by Che's
// approximation of an LRU cache (Che, Tung and Wang, IEEE JSAC 20(7),
// 2002) extended to renewal request processes (Fricker, Robert and
// Roberts, ITC 24, 2012): n sessions with chain size s share a cache of C
// tokens (device pool plus HiCache host tier); each session returns after
// a cycle T, and a chain survives when T is shorter than the time t_C in
// which the other sessions touch C tokens, n s F_e(t_C) = C with F_e the
// equilibrium distribution of T. With T = D + X, D the cycle's regular
// part (its time in the server, which a saturated FIFO queue makes much the
// same for every session) and X exponential with the think time's mean
// theta, the kept fraction is F(t_C) = max(0, k - (1-k) D/theta) for the
// capacity ratio k = C/(n s) < 1: Che's k when the think time dominates,
// and nothing kept (the LRU's cyclic-access thrash) when the regular part
// does. The event simulation runs the LRU itself (prefixCache); without a
// trace replay no cache decides hits.
func (p *Plan) cacheKeep(conc, chain, regular, theta float64) float64 {
	if !p.cacheOn() || chain <= 0 {
		return 1
	}
	t := p.sc.Topology
	e, mem, lanes := p.agg, p.aggMem, float64(t.Agg.PP)
	if t.Disagg {
		e, mem, lanes = p.prefill, p.preMem, float64(t.PrefillWorkers*t.Prefill.PP)
	}
	caches := lanes * float64(e.Par.AttentionDP())
	capTok := float64(mem.TokensFit+mem.HostTokens) / float64(e.Par.PP)
	return renewalKeep(capTok/(conc/caches*chain), regular, theta)
}

// renewalKeep is the LRU hit probability of cacheKeep for capacity ratio
// k, a cycle's regular part d and its exponential part's mean theta.
func renewalKeep(k, d, theta float64) float64 {
	switch {
	case k >= 1:
		return 1
	case d <= 0:
		return k
	case theta <= 0:
		return 0
	}
	return math.Max(0, k-(1-k)*d/theta)
}

// othersBusy is the fraction of a lane's load that a request arriving from
// one of n sessions finds (the other n-1 sessions' share): 0 for a lone
// session, (n-1)/n otherwise.
func othersBusy(n float64) float64 { return math.Max(n-1, 0) / math.Max(n, 1) }

// prefillEngine is the engine that runs the prefills: the aggregated
// instance's, or the prefill pool's.
func (p *Plan) prefillEngine() *Engine {
	if p.sc.Topology.Disagg {
		return p.prefill
	}
	return p.agg
}

// estimateResult is result of the estimate's columns (which it reorders),
// its quantiles found by selection (quantiles5090) rather than sorts, the
// estimate pricing thousands of points: the same values wherever no value
// is NaN or negative (a negative zero ties with zero in sort.Float64s,
// whichever lands at a quantile's position); otherwise result's sorts.
// The columns are ttft, tpot, e2el and norm, their values' bit patterns
// within bounds.
func (p *Plan) estimateResult(cols [4][]float64, bounds [4]bitBounds, tokens, outTokens, window float64, n int, buf *estimateBuf) *Result {
	for _, b := range bounds {
		if !b.plain() {
			return p.result(cols[0], cols[1], cols[2], cols[3], tokens, outTokens, window, n)
		}
	}
	scratch := buf.column(&buf.scratch, len(cols[0]))
	var v [4][2]float64
	for i, xs := range cols {
		v[i][0], v[i][1] = quantiles5090(xs, bounds[i], scratch)
	}
	q := latencies{ttft50: v[0][0], ttft90: v[0][1], tpot50: v[1][0], tpot90: v[1][1], e2el50: v[2][0], e2el90: v[2][1], norm90: v[3][1]}
	return p.resultOf(q, tokens, outTokens, window, n)
}

// bitBounds are the least and the greatest bit pattern of a column's
// values.
type bitBounds struct{ lo, hi uint64 }

func (b *bitBounds) add(x float64) {
	u := math.Float64bits(x)
	b.lo, b.hi = min(b.lo, u), max(b.hi, u)
}

// plain says whether no value is NaN or negative (negative zero included):
// their patterns lie above +Inf's.
func (b bitBounds) plain() bool { return b.hi <= math.Float64bits(math.Inf(1)) }

// quantiles5090 is the median and the 0.9-quantile of xs as
// quantile.Sorted defines them (order statistics floor(q(n-1)) and the
// next, interpolated); xs (no NaN, none negative, bit patterns within
// bounds) is reordered, scratch (len(xs) values at least) overwritten.
func quantiles5090(xs []float64, bounds bitBounds, scratch []float64) (p50, p90 float64) {
	if len(xs) == 0 {
		return 0, 0
	}
	var ranks [4]int
	var pos [2]float64
	for i, q := range []float64{0.5, 0.9} {
		pos[i] = q * float64(len(xs)-1)
		lo := int(math.Floor(pos[i]))
		ranks[2*i], ranks[2*i+1] = lo, min(lo+1, len(xs)-1)
	}
	v := orderStats(xs, bounds, ranks, scratch)
	at := func(i int) float64 {
		lo := float64(ranks[2*i])
		return v[2*i] + (pos[i]-lo)*(v[2*i+1]-v[2*i])
	}
	return at(0), at(1)
}

// orderStats is the values sorting xs (no NaN, none negative, bit
// patterns within bounds) would put at ranks. Their bit patterns order as the values do: a histogram of
// xs over 256 equal spans of its patterns (the span a piece of an
// exponent, so a few per octave of a long tail) finds which span holds
// each rank, and selection (selectNth) among the values gathered from
// those spans alone the ranks' values. xs is reordered and scratch
// (len(xs) values at least) overwritten.
func orderStats(xs []float64, bounds bitBounds, ranks [4]int, scratch []float64) [4]float64 {
	var out [4]float64
	if len(xs) <= 32 {
		slices.Sort(xs)
		for i, r := range ranks {
			out[i] = xs[r]
		}
		return out
	}
	lo, hi := bounds.lo, bounds.hi
	shift := max(bits.Len64(hi-lo), 8) - 8
	var count [256]int32
	for _, x := range xs {
		count[(math.Float64bits(x)-lo)>>shift]++
	}
	// The span of each rank, the first rank below it and, where
	// its values are gathered, where in scratch.
	var span [4]int
	var start [256]int32
	var slot [256]int32
	below := int32(0)
	for b := range count {
		start[b] = below
		below += count[b]
		slot[b] = -1
	}
	for i, r := range ranks {
		span[i] = sort.Search(256, func(b int) bool { return start[b]+count[b] > int32(r) })
	}
	if shift == 0 {
		for i, b := range span {
			out[i] = math.Float64frombits(lo + uint64(b))
		}
		return out
	}
	next := int32(0)
	for _, b := range span {
		if slot[b] < 0 {
			slot[b] = next
			next += count[b]
		}
	}
	var fill [256]int32
	for _, x := range xs {
		b := (math.Float64bits(x) - lo) >> shift
		if at := slot[b]; at >= 0 {
			scratch[at+fill[b]] = x
			fill[b]++
		}
	}
	for i, b := range span {
		seg := scratch[slot[b] : slot[b]+count[b]]
		k := ranks[i] - int(start[b])
		selectNth(seg, k)
		out[i] = seg[k]
	}
	return out
}

// selectNth reorders xs (no NaN) so that xs[k] is the value sorting would
// put there, none before it larger and none after it smaller: Hoare's
// selection with a median-of-three pivot (Press et al., Numerical Recipes,
// 3rd ed., 8.5), whose scans stop at values equal to the pivot so that
// runs of equal values split evenly.
func selectNth(xs []float64, k int) {
	l, r := 0, len(xs)-1
	for r > l+1 {
		mid := int(uint(l+r) >> 1)
		xs[mid], xs[l+1] = xs[l+1], xs[mid]
		if xs[l] > xs[r] {
			xs[l], xs[r] = xs[r], xs[l]
		}
		if xs[l+1] > xs[r] {
			xs[l+1], xs[r] = xs[r], xs[l+1]
		}
		if xs[l] > xs[l+1] {
			xs[l], xs[l+1] = xs[l+1], xs[l]
		}
		i, j := l+1, r
		pivot := xs[l+1]
		for {
			for i++; xs[i] < pivot; i++ {
			}
			for j--; xs[j] > pivot; j-- {
			}
			if j < i {
				break
			}
			xs[i], xs[j] = xs[j], xs[i]
		}
		xs[l+1], xs[j] = xs[j], pivot
		if j >= k {
			r = j - 1
		}
		if j <= k {
			l = i
		}
	}
	if r == l+1 && xs[r] < xs[l] {
		xs[l], xs[r] = xs[r], xs[l]
	}
}

// poissonDraw draws a Poisson count of mean mu from rng: by Knuth's
// product of uniforms up to mu 30, by the rounded normal N(mu, mu) above.
func poissonDraw(rng *rand.Rand, mu float64) int {
	switch {
	case !(mu > 0):
		return 0
	case mu > 30:
		return max(0, int(math.Round(mu+math.Sqrt(mu)*rng.NormFloat64())))
	}
	limit, prod, n := math.Exp(-mu), rng.Float64(), 0
	for prod > limit {
		prod *= rng.Float64()
		n++
	}
	return n
}

// normalMaxMean is the expected largest of n independent standard normal
// draws, for n = 2, 4, ..., 64 (Tippett 1925; Harter 1961).
var normalMaxMean = map[int]float64{2: 0.5642, 4: 1.0294, 8: 1.4236, 16: 1.7660, 32: 2.0697, 64: 2.3409}

// fullestRank is the expected count of the fullest of dp ranks when x
// requests decode on them. The router spreads sessions evenly, but which
// of them are decoding at an instant is a random subset, so a rank's count
// is binomial, mean x/dp and variance x/dp (1-1/dp), and the fullest is
// about its mean plus its deviation times the expected largest of dp
// normal draws; never below ceil(x/dp), the even split.
func fullestRank(x, dp float64) float64 {
	mu := x / dp
	even := math.Ceil(mu - 1e-9)
	e, ok := normalMaxMean[int(dp)]
	if !ok {
		e = math.Sqrt(2 * math.Log(dp))
	}
	return math.Max(even, mu+math.Sqrt(mu*(1-1/dp))*e)
}
