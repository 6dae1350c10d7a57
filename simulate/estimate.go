package simulate

import (
	"math"
	"math/rand/v2"
)

// meanFieldSamples is how many requests a mean-field estimate draws to
// turn length distributions into percentiles.
const meanFieldSamples = 64

// prefillKey memoizes one request's whole prefill on one engine.
type prefillKey struct {
	newTok, before int
	spec           bool
	chunk          int
}

// prefillTime is one request's prefill alone on engine e, chunk by chunk.
func (p *Plan) prefillTime(e *Engine, r Request) float64 {
	spec := p.sc.Spec.Steps > 0 && (!p.sc.Topology.Disagg || p.sc.Server.PrefillDraft)
	key := prefillKey{(r.ISL - r.Cached) >> 6, r.Cached >> 8, spec, p.chunk}
	if e.prefillMemo == nil {
		e.prefillMemo = map[prefillKey]float64{}
	}
	if t, ok := e.prefillMemo[key]; ok {
		return t
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
		t += e.Prefill([]PrefillPart{{New: n, Before: done, Last: done+n >= isl}}, spec).Total()
		done += n
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
	rng := rand.New(rand.NewPCG(p.sc.Seed, 0x5eed))
	reqs := make([]Request, meanFieldSamples)
	if p.sc.Workload.Name == "fixed" {
		reqs = reqs[:1]
	}
	var isl, osl, ctx float64
	for i := range reqs {
		reqs[i] = p.sc.Workload.Sample(rng)
		isl += float64(reqs[i].ISL)
		osl += float64(reqs[i].OSL)
	}
	n := float64(len(reqs))
	isl, osl = isl/n, osl/n
	if h := p.cacheKeep(float64(p.sc.Conc), isl+osl); h < 1 {
		for i := range reqs {
			reqs[i].Cached = int(h * float64(reqs[i].Cached))
		}
	}
	ctx = isl + osl/2
	al := 1.0
	k := p.sc.Spec.Steps
	if k > 0 {
		s, err := p.newSampler(p.sc.Seed)
		if err != nil {
			return nil, err
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
	tp := make([]float64, len(reqs))
	meanTp := 0.0
	for i, r := range reqs {
		tp[i] = p.prefillTime(pre, r)
		meanTp += tp[i] / n
	}
	capRun := conc / decLanes
	if p.sc.MaxRunning > 0 {
		capRun = math.Min(capRun, math.Ceil(float64(p.sc.MaxRunning)/float64(dec.Par.PP)))
	}
	tokCap := float64(mem.TokensFit*dec.Par.AttentionDP()) / float64(dec.Par.PP)
	capRun = math.Max(1, math.Min(capRun, math.Floor(tokCap/(isl+osl))))
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
		return pre.Prefill(parts, k > 0).Total() / float64(m)
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
	// Fixed point over the decode batch b (per decode lane).
	b := math.Max(1, math.Min(capRun, conc/decLanes))
	var td, lambda, rhoP, ttft, wq float64
	thinkEff := think
	if tr := p.sc.Workload.Trace; tr != nil && p.sc.Conc == 1 {
		// AIPerf's system idle cap (agentx.Replay.capSystem) shortens
		// every gap of a lone session, nothing else being in flight.
		// With more sessions it applies only when all are idle and the
		// next arrival is over the cap away; not modelled.
		thinkEff = tr.thinkAlone
	}
	lambda = conc / math.Max(meanTp+steps*1e-3, 1e-6)
	for range 40 {
		bi := max(int(math.Round(b)), 1)
		td = dec.DecodeStep(bi, k, int(ctx)).Total()
		if !t.Disagg {
			m := int(math.Round(lambda / decLanes * td))
			if pre.MixesContext() {
				meanTp = mixedTp(bi, m)
			} else {
				meanTp = batchedTp(m)
			}
		}
		if !t.Disagg {
			// One lane alternates prefills and decode iterations.
			perLane := 1 / (meanTp + steps*td/b)
			lambda = perLane * decLanes
			rhoP = perLane * meanTp
			ttft = meanTp + td/2 + rhoP*meanTp
		} else {
			// Prefill pool as a queue in front of the decode pool.
			decodeTime := steps * td
			lambdaD := decLanes * b / math.Max(decodeTime, 1e-9)
			lambdaP := preLanes / meanTp
			lambda = math.Min(lambdaD, lambdaP*0.999)
			rho := lambda * meanTp / preLanes
			wq = rho / (2 * (1 - rho)) * meanTp
			ttft = meanTp + wq + transfer
		}
		// Little's law over the closed loop: sessions = rate x cycle,
		// think time included.
		cycle := ttft + steps*td/(1-rhoP) + thinkEff
		want := conc / cycle // the rate the sessions would drive
		if want < lambda {
			lambda = want
		}
		nb := math.Max(1, math.Min(capRun, lambda/decLanes*steps*td/(1-rhoP)))
		if math.Abs(nb-b) < 0.01 {
			b = nb
			break
		}
		b = 0.5*b + 0.5*nb
	}
	cycle := conc / lambda
	// Requests beyond the running cap wait before their prefill.
	queueWait := math.Max(0, cycle-(ttft+steps*td/(1-rhoP)+thinkEff))
	ttfts := make([]float64, len(reqs))
	tpots := make([]float64, 0, len(reqs))
	e2els := make([]float64, len(reqs))
	norm := make([]float64, len(reqs))
	var tokens, out float64
	for i, r := range reqs {
		ti := tp[i]*meanTp/soloTp + (ttft - meanTp) + queueWait
		di := math.Max(float64(r.OSL-1), 0) / al * td / (1 - rhoP)
		ttfts[i] = ti
		e2els[i] = ti + di
		if r.OSL > 1 {
			tpots = append(tpots, di/float64(r.OSL-1))
		}
		norm[i] = e2els[i] / float64(r.OSL)
		tokens += float64(r.ISL + r.OSL)
		out += float64(r.OSL)
	}
	// Throughput: lambda requests per second of mean size.
	window := n / lambda
	res := p.result(ttfts, tpots, e2els, norm, tokens, out, window, len(reqs))
	res.StepMS = dec.DecodeStep(max(int(math.Round(b)), 1), k, int(ctx)).Report()
	res.DecodeBatch = b * float64(dec.Par.PP)
	res.ALRealized = al
	res.Sim = "mean-field"
	return res, nil
}

// cacheKeep is the fraction of a session's shared prefix that is still in
// its rank's radix cache when the session's next turn arrives, by Che's
// approximation of an LRU cache (Che, Tung and Wang, IEEE JSAC 20(7),
// 2002): with n sessions of equal rate and chain size s sharing a cache of
// C tokens (device pool plus HiCache host tier), a chain survives with
// probability 1-exp(-T/cycle) where T solves n s (1-exp(-T/cycle)) = C,
// i.e. min(1, C/(n s)). The event simulation runs the LRU itself
// (prefixCache); without a trace replay no cache decides hits.
func (p *Plan) cacheKeep(conc, chain float64) float64 {
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
	return math.Min(1, capTok/(conc/caches*chain))
}
