package agentx

import (
	"container/heap"
	"sort"
)

// AIPerf's agent-chain detection, ported from SemiAnalysisAI/aiperf
// src/aiperf/dataset/loader/weka_agent_chains.py (detect_agent_chains,
// _Phase1State.classify, _find_extension_target, _max_lcp_chain,
// _resolve_seams, _elect_continuation, _rekey_leftover_forks) and
// weka_trace.py _split_off_preamble. The loader runs it on a trace's
// top-level requests (_detect_and_split_flat_chains) and, nested, on every
// subagent entry's inner requests (_expand_subagent_to_child_plans).
//
// Phase 1 walks requests in (t, outer index) order: a request extends the
// chain whose tail (last hash-bearing request) is a whole prefix of its
// hash list, has ended by its start and ran on the same model (deepest such
// tail); anything else forks a new chain from the tail with the deepest
// common prefix. Phase 2 splices a fork back onto its source tail as a
// compaction seam when that tail was never extended, the fork started after
// the tail ended, on the same model, and not (more than SeamMaxGap after
// the tail and sharing less than SeamMinOverlap of its blocks).

// Seam guard defaults: AIPerf Environment.DATASET.WEKA_SEAM_MAX_GAP_SECONDS
// and WEKA_SEAM_MIN_OVERLAP_RATIO (detect_agent_chains' defaults).
const (
	SeamMaxGapSeconds   = 3600.0
	SeamMinOverlapRatio = 0.5
	// titleGenMaxOutput is weka_trace.py _TITLE_GEN_MAX_OUTPUT_TOKENS.
	titleGenMaxOutput = 64
	chainEpsilon      = 1e-6 // weka_agent_chains.py _EPSILON_SECONDS
	// MaxChainsPerScope bounds detection's work (every request is compared
	// with every chain tail); the public traces stay far below it.
	MaxChainsPerScope = 4096
	// maxChainWork bounds the hash ids phase 1 may compare (an upper bound:
	// each request against every chain tail).
	maxChainWork = 1 << 31
)

// chainReq is one request as chain detection sees it.
type chainReq struct {
	outer  int // index in the list it came from (AIPerf's outer_idx)
	t, end float64
	out    int64
	hash   []int64
	model  string
}

type chainFork struct {
	parent   int // -1: shared no context
	tailReq  int // request index of the tail forked from, -1 if none
	depth    int // blocks shared with that tail
	forkTime float64
}

type agentChain struct {
	reqs     []int // request indices (into the detect input)
	fork     *chainFork
	spliced  int // -1, or the chain it was spliced into
	tail     int // request index of the last hash-bearing request, -1 if none
	tailHash []int64
	tailEnd  float64
	tailMdl  string
}

// detectAgentChains partitions reqs into agent chains. It returns each
// request's chain, numbered 0 for the main chain (the one holding the
// earliest request) and 1.. for the live worker chains in order of their
// first request, and the number of seams merged. ok is false when phase 1
// would pass MaxChainsPerScope chains or maxChainWork comparisons.
func detectAgentChains(reqs []chainReq, maxGap, minOverlap float64) (chainOf []int, nChains, seams int, ok bool) {
	if len(reqs) == 0 {
		return nil, 0, 0, true
	}
	order := make([]int, len(reqs))
	for i := range order {
		order[i] = i
	}
	byTime := func(a, b int) bool {
		if reqs[a].t != reqs[b].t {
			return reqs[a].t < reqs[b].t
		}
		return reqs[a].outer < reqs[b].outer
	}
	sort.SliceStable(order, func(a, b int) bool { return byTime(order[a], order[b]) })

	var chains []agentChain
	of := make([]int, len(reqs))
	forksByTail := map[int][]int{} // tail request -> forked chains
	newChain := func(f *chainFork) int {
		chains = append(chains, agentChain{fork: f, spliced: -1, tail: -1})
		return len(chains) - 1
	}
	appendTo := func(c, i int) {
		ch := &chains[c]
		ch.reqs = append(ch.reqs, i)
		of[i] = c
		if len(reqs[i].hash) > 0 {
			ch.tail, ch.tailHash, ch.tailEnd, ch.tailMdl = i, reqs[i].hash, reqs[i].end, reqs[i].model
		}
	}
	// Phase 1: _Phase1State.classify.
	work := 0
	for _, i := range order {
		r := &reqs[i]
		if work += len(chains) * len(r.hash); work > maxChainWork {
			return nil, 0, 0, false
		}
		if len(r.hash) == 0 { // no LCP evidence: rides the main chain
			if len(chains) == 0 {
				newChain(nil)
			}
			chains[0].reqs = append(chains[0].reqs, i)
			of[i] = 0
			continue
		}
		if len(chains) == 0 {
			appendTo(newChain(nil), i)
			continue
		}
		if c := findExtensionTarget(chains, r.hash, r.t, r.model); c >= 0 {
			appendTo(c, i)
			continue
		}
		parent, depth := maxLCPChain(chains, r.hash)
		if parent < 0 {
			anyHash := false
			for c := range chains {
				anyHash = anyHash || len(chains[c].tailHash) > 0
			}
			if !anyHash { // the first hash-bearing request is the main agent
				appendTo(0, i)
				continue
			}
		}
		if len(chains) >= MaxChainsPerScope {
			return nil, 0, 0, false
		}
		f := &chainFork{parent: parent, tailReq: -1, depth: depth, forkTime: r.t}
		if parent >= 0 {
			f.tailReq = chains[parent].tail
		}
		c := newChain(f)
		appendTo(c, i)
		if f.tailReq >= 0 && depth > 0 {
			forksByTail[f.tailReq] = append(forksByTail[f.tailReq], c)
		}
	}
	seams = resolveSeams(reqs, chains, forksByTail, of, maxGap, minOverlap)

	resolve := func(c int) int {
		for chains[c].spliced >= 0 {
			c = chains[c].spliced
		}
		return c
	}
	main := resolve(of[order[0]])
	var workers []int
	for c := range chains {
		if chains[c].spliced < 0 && c != main {
			workers = append(workers, c)
		}
	}
	sort.SliceStable(workers, func(a, b int) bool {
		return byTime(chains[workers[a]].reqs[0], chains[workers[b]].reqs[0])
	})
	num := make([]int, len(chains))
	num[main] = 0
	for k, c := range workers {
		num[c] = 1 + k
	}
	chainOf = make([]int, len(reqs))
	for i := range reqs {
		chainOf[i] = num[resolve(of[i])]
	}
	return chainOf, 1 + len(workers), seams, true
}

// findExtensionTarget is _find_extension_target: the chain whose tail is a
// whole prefix of h, has ended by t and ran on model; the deepest tail wins,
// ties to the lowest index. -1 if none.
func findExtensionTarget(chains []agentChain, h []int64, t float64, model string) int {
	best, bestLen := -1, -1
	for c := range chains {
		th := chains[c].tailHash
		tl := len(th)
		if tl == 0 || tl > len(h) || tl <= bestLen || chains[c].tailMdl != model || chains[c].tailEnd > t+chainEpsilon {
			continue
		}
		if th[tl-1] == h[tl-1] && lcp(th, h) == tl {
			best, bestLen = c, tl
		}
	}
	return best
}

// maxLCPChain is _max_lcp_chain: the chain tail with the deepest common
// prefix with h (ties: the longer tail, then the lower index); -1, 0 when
// nothing shares a prefix.
func maxLCPChain(chains []agentChain, h []int64) (int, int) {
	best, bestD, bestL := -1, 0, 0
	for c := range chains {
		th := chains[c].tailHash
		if len(th) == 0 {
			continue
		}
		d := lcp(th, h)
		if d == 0 {
			continue
		}
		if d > bestD || (d == bestD && len(th) > bestL) {
			best, bestD, bestL = c, d, len(th)
		}
	}
	return best, bestD
}

type intHeap []int

func (h intHeap) Len() int           { return len(h) }
func (h intHeap) Less(i, j int) bool { return h[i] < h[j] }
func (h intHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *intHeap) Push(x any)        { *h = append(*h, x.(int)) }
func (h *intHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// resolveSeams is _resolve_seams: visit fork sources in outer-index order;
// where the source is still its chain's last hash-bearing request, splice
// the elected continuation on and re-key the other forks against the new
// tail (_rekey_leftover_forks). It returns the number of splices.
func resolveSeams(reqs []chainReq, chains []agentChain, forksByTail map[int][]int, of []int, maxGap, minOverlap float64) int {
	resolve := func(c int) int {
		for chains[c].spliced >= 0 {
			c = chains[c].spliced
		}
		return c
	}
	lastHash := func(c int) int {
		rs := chains[c].reqs
		for k := len(rs) - 1; k >= 0; k-- {
			if len(reqs[rs[k]].hash) > 0 {
				return rs[k]
			}
		}
		return -1
	}
	// AIPerf keys forks_by_tail by outer index; request indices here are a
	// bijection with the same order only if outer indices increase with the
	// index, so the heap holds outer indices and maps back.
	byOuter := map[int]int{}
	keys := &intHeap{}
	for tr := range forksByTail {
		byOuter[reqs[tr].outer] = tr
		*keys = append(*keys, reqs[tr].outer)
	}
	heap.Init(keys)
	processed := map[int]bool{}
	seams := 0
	for keys.Len() > 0 {
		ko := heap.Pop(keys).(int)
		if processed[ko] {
			continue
		}
		processed[ko] = true
		tailReq := byOuter[ko]
		owner := resolve(of[tailReq])
		if lastHash(owner) != tailReq {
			continue // the longer state was extended: every fork is a spawn
		}
		var registered []int
		for _, c := range forksByTail[tailReq] {
			if chains[c].spliced < 0 {
				registered = append(registered, c)
			}
		}
		elected := electContinuation(reqs, chains, registered, tailReq, maxGap, minOverlap)
		if elected < 0 {
			continue
		}
		chains[owner].reqs = append(chains[owner].reqs, chains[elected].reqs...)
		for _, i := range chains[elected].reqs {
			of[i] = owner
		}
		chains[elected].spliced = owner
		seams++
		newTail := lastHash(owner)
		if newTail < 0 {
			continue
		}
		rekeyed := false
		for _, c := range registered {
			ch := &chains[c]
			if c == elected || ch.spliced >= 0 || ch.fork == nil {
				continue
			}
			d := lcp(reqs[newTail].hash, reqs[ch.reqs[0]].hash)
			if d <= 0 {
				continue
			}
			ch.fork.tailReq, ch.fork.depth, ch.fork.parent = newTail, d, owner
			forksByTail[newTail] = append(forksByTail[newTail], c)
			rekeyed = true
		}
		if rekeyed {
			o := reqs[newTail].outer
			byOuter[o] = newTail
			delete(processed, o)
			heap.Push(keys, o)
		}
	}
	return seams
}

// electContinuation is _elect_continuation: among forks of a dead tail, those
// with positive depth that start after the tail ended, on its model, and not
// blocked by the seam guard; the deepest wins, then the earliest fork time,
// then the lowest index. -1 if none.
func electContinuation(reqs []chainReq, chains []agentChain, registered []int, tailReq int, maxGap, minOverlap float64) int {
	tr := &reqs[tailReq]
	tailBlocks := len(tr.hash)
	best := -1
	for _, c := range registered {
		ch := &chains[c]
		if ch.fork == nil || ch.fork.depth <= 0 {
			continue
		}
		first := &reqs[ch.reqs[0]]
		if tr.end > first.t+chainEpsilon || first.model != tr.model {
			continue
		}
		if tailBlocks > 0 && first.t-tr.end > maxGap && float64(ch.fork.depth)/float64(tailBlocks) < minOverlap {
			continue
		}
		if best < 0 {
			best = c
			continue
		}
		b := chains[best].fork
		switch {
		case ch.fork.depth != b.depth:
			if ch.fork.depth > b.depth {
				best = c
			}
		case ch.fork.forkTime != b.forkTime:
			if ch.fork.forkTime < b.forkTime {
				best = c
			}
		case c < best:
			best = c
		}
	}
	return best
}

// splitOffPreamble is weka_trace.py _split_off_preamble: the single earliest
// request is set aside (and later rides the main chain) when it shares no
// prefix with any other request and is either small (output at most 64
// tokens, a title call) or shares no block at all with the rest. It returns
// the preamble's index into reqs, or -1.
func splitOffPreamble(reqs []chainReq) int {
	if len(reqs) < 2 {
		return -1
	}
	first := 0
	for i := range reqs {
		if reqs[i].t < reqs[first].t || (reqs[i].t == reqs[first].t && reqs[i].outer < reqs[first].outer) {
			first = i
		}
	}
	h := reqs[first].hash
	if len(h) == 0 {
		return -1
	}
	for i := range reqs {
		if i != first && len(reqs[i].hash) > 0 && lcp(h, reqs[i].hash) > 0 {
			return -1
		}
	}
	if reqs[first].out > titleGenMaxOutput {
		mine := make(map[int64]struct{}, len(h))
		for _, x := range h {
			mine[x] = struct{}{}
		}
		for i := range reqs {
			if i == first {
				continue
			}
			for _, x := range reqs[i].hash {
				if _, ok := mine[x]; ok {
					return -1
				}
			}
		}
	}
	return first
}
