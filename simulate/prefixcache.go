package simulate

import "fmt"

// prefixCache is one rank's prefix (radix) KV cache with an optional host
// tier, reduced to what AgentX traffic makes of a radix tree.
//
// SGLang's RadixCache (python/sglang/srt/mem_cache/radix_cache.py) keys
// page-aligned token runs; match_prefix stamps last_access_time on every
// node of the matched path, cache_finished_req inserts the request's
// tokens, and evict pops leaves off a heap ordered by last_access_time.
// Each AgentX session extends one path (its turn's prompt starts with the
// previous turn's, and AIPerf makes each play's prefix unique), so the tree
// is a set of chains, one per session, whose nodes share the time of the
// session's last request. LRU leaf eviction then trims the least recently
// used chain from its tail. A chain is kept as two counts, device blocks
// (a prefix) and host blocks (the part of the tail HiCache wrote back), so
// every operation costs O(log chains), never O(blocks).
//
// HiCache (python/sglang/srt/mem_cache/hiradix_cache.py, write_back
// policy as the recipes set): a block evicted from the device is written to
// the host tier (evict -> write_backup), the host tier evicts its own LRU
// leaves (evict_host), and a match that runs into host blocks loads them
// back to the device before the prefill uses them (load_back). Host size:
// --hicache-size GB, or --hicache-ratio times the device pool
// (memory_pool_host.py HostKVCache).
//
// Simplification: when a session's new prompt shares less than the chain
// holds (a rewritten context), the unmatched tail is dropped at once; in
// SGLang it lingers as a separate branch until evicted.
type prefixCache struct {
	page      int // tokens per block
	devCap    int // device blocks (the KV pool)
	hostCap   int // host blocks (0 = no host tier)
	devUsed   int // blocks held by chains (locked ones included)
	evictable int // device blocks of unlocked chains
	hostUsed  int
	chains    map[int]*chain
	devLRU    chainHeap // unlocked chains with device blocks
	hostLRU   chainHeap // chains with host blocks
	freeChain []*chain

	// Counters for the report, in tokens.
	lookups, devHit, hostHit, promptTokens int64
	evictedDev, evictedHost                int64
}

type chain struct {
	session   int
	dev, host int // blocks: dev is a prefix of the chain, host the tail after it
	last      float64
	locks     int
	devIdx    int // index in devLRU, -1 when absent
	hostIdx   int
}

func newPrefixCache(page, devTokens, hostTokens int) *prefixCache {
	page = max(page, 1)
	return &prefixCache{page: page, devCap: devTokens / page, hostCap: hostTokens / page, chains: map[int]*chain{},
		devLRU: chainHeap{dev: true}, hostLRU: chainHeap{}}
}

// Hit is what a lookup found, in tokens.
type Hit struct {
	Device int // resident in HBM
	Host   int // in the host tier, to load back before use
}

// acquire admits a request of session whose prompt shares shared tokens
// with the session's previous prompt (on a session's first request, with
// session from's latest; from is -1 when none) and needs need tokens of KV in all
// (prompt plus the output it will write). It returns the hit and whether
// the device pool could make room; on false nothing changed.
func (c *prefixCache) acquire(session, from, shared, prompt, need int, now float64) (Hit, bool) {
	ch := c.chains[session]
	want := shared / c.page
	var devHit, hostHit int
	if ch != nil {
		devHit = min(want, ch.dev)
		hostHit = min(want-devHit, ch.host)
	} else if src := c.chains[from]; from >= 0 && src != nil {
		// A new session forked from another: its prefix matches that
		// session's cached blocks, read in place (the radix tree shares the
		// nodes; the new chain's own copy is counted below as its need).
		devHit = min(want, src.dev)
		hostHit = min(want-devHit, src.host)
	}
	needBlocks := ceilDiv(need, c.page)
	// The chain's own blocks beyond the match are dropped (a rewritten
	// context), which frees room before anything else is evicted.
	own, ownEvictable := 0, 0
	if ch != nil {
		own = ch.dev
		if ch.devIdx >= 0 {
			ownEvictable = ch.dev
		}
	}
	short := c.devUsed - own + needBlocks - c.devCap
	if short > c.evictable-ownEvictable {
		return Hit{}, false
	}
	if ch == nil {
		ch = c.newChain(session)
	}
	// Detach the chain: its matched host blocks are loaded back, the rest
	// of it is dropped, and nothing below may evict it.
	c.evictable -= ownEvictable
	c.devLRU.remove(ch)
	c.hostLRU.remove(ch)
	c.devUsed -= ch.dev
	c.hostUsed -= ch.host
	ch.dev, ch.host = 0, 0
	ch.locks++
	if short > 0 {
		c.makeRoom(short)
	}
	ch.dev = needBlocks
	c.devUsed += needBlocks
	ch.last = now
	c.lookups++
	c.promptTokens += int64(prompt)
	c.devHit += int64(devHit * c.page)
	c.hostHit += int64(hostHit * c.page)
	return Hit{Device: devHit * c.page, Host: hostHit * c.page}, true
}

// release unlocks the session's chain at time now, keeping tokens of it
// (the finished request's prompt and output, as cache_finished_req does).
func (c *prefixCache) release(session, tokens int, now float64) {
	ch := c.chains[session]
	if ch == nil || ch.locks == 0 {
		return
	}
	ch.locks--
	keep := min(ceilDiv(tokens, c.page), ch.dev)
	c.devUsed -= ch.dev - keep
	ch.dev = keep
	ch.last = now
	if ch.locks == 0 && ch.dev > 0 {
		c.devLRU.push(ch)
		c.evictable += ch.dev
	}
}

// makeRoom evicts need device blocks from unlocked chains, least recently
// used first, writing them to the host tier when there is one.
func (c *prefixCache) makeRoom(need int) {
	for need > 0 && c.devLRU.Len() > 0 {
		ch := c.devLRU.items[0]
		n := min(need, ch.dev)
		ch.dev -= n
		c.devUsed -= n
		c.evictable -= n
		need -= n
		c.evictedDev += int64(n * c.page)
		if c.hostCap > 0 {
			c.writeHost(ch, n)
		}
		if ch.dev == 0 {
			c.devLRU.pop()
		}
		c.gc(ch)
	}
}

// writeHost puts n blocks evicted from ch's device tail at the head of its
// host part, evicting the host tier's least recently used tails to fit.
func (c *prefixCache) writeHost(ch *chain, n int) {
	n = min(n, c.hostCap)
	for c.hostUsed+n > c.hostCap && c.hostLRU.Len() > 0 {
		v := c.hostLRU.items[0]
		m := min(c.hostUsed+n-c.hostCap, v.host)
		v.host -= m
		c.hostUsed -= m
		c.evictedHost += int64(m * c.page)
		if v.host == 0 {
			c.hostLRU.pop()
		}
		if v != ch {
			c.gc(v)
		}
	}
	ch.host += n
	c.hostUsed += n
	if ch.host > 0 {
		c.hostLRU.push(ch)
	}
}

func (c *prefixCache) newChain(session int) *chain {
	var ch *chain
	if n := len(c.freeChain); n > 0 {
		ch, c.freeChain = c.freeChain[n-1], c.freeChain[:n-1]
		*ch = chain{}
	} else {
		ch = &chain{}
	}
	ch.session, ch.devIdx, ch.hostIdx = session, -1, -1
	c.chains[session] = ch
	return ch
}

// gc forgets a chain with nothing cached and no request.
func (c *prefixCache) gc(ch *chain) {
	if ch.dev == 0 && ch.host == 0 && ch.locks == 0 && ch.devIdx < 0 && ch.hostIdx < 0 {
		delete(c.chains, ch.session)
		c.freeChain = append(c.freeChain, ch)
	}
}

// resident is the session's cached tokens (device, host).
func (c *prefixCache) resident(session int) (int, int) {
	if ch := c.chains[session]; ch != nil {
		return ch.dev * c.page, ch.host * c.page
	}
	return 0, 0
}

// CacheReport is the prefix cache's outcome over a run, all ranks summed.
// It counts every prompt the server saw, warm-up included; the AgentX
// report's server_cached_fraction counts the profiled requests alone, as
// the benchmark's metrics do, so the two differ by the warm-up's share.
type CacheReport struct {
	// HitRate is cached prompt tokens (device and host) over prompt tokens.
	HitRate     float64 `json:"hit_rate"`
	DeviceHit   float64 `json:"device_hit_rate"`
	HostHit     float64 `json:"host_hit_rate"`
	EvictedGiB  float64 `json:"evicted_device_gib"`
	HostLoadGiB float64 `json:"host_loaded_gib"`
	// HostLoadS is the summed time of host-tier loads (before overlap with
	// compute), in seconds.
	HostLoadS float64 `json:"host_load_s"`
	Ranks     int     `json:"ranks"`
}

func (c *prefixCache) String() string {
	return fmt.Sprintf("prefix cache: %d/%d device blocks, %d/%d host blocks, %d chains", c.devUsed, c.devCap, c.hostUsed, c.hostCap, len(c.chains))
}

// chainHeap orders chains by last use; dev picks which index it keeps.
// Chains can tie on last use, so the heap moves its elements exactly as
// container/heap's Push, Pop, Fix and Remove do (which chain of a tie
// evicts first depends on where the heap holds them), with the element in
// hand kept out of the slice while it sifts.
type chainHeap struct {
	items []*chain
	dev   bool
}

func (h *chainHeap) idx(ch *chain) *int {
	if h.dev {
		return &ch.devIdx
	}
	return &ch.hostIdx
}

func (h *chainHeap) Len() int { return len(h.items) }

// push adds or re-orders ch.
func (h *chainHeap) push(ch *chain) {
	if i := *h.idx(ch); i >= 0 {
		if !h.down(i, len(h.items), ch) {
			h.up(i, ch)
		}
		return
	}
	h.items = append(h.items, ch)
	h.up(len(h.items)-1, ch)
}

// pop removes the least recently used chain.
func (h *chainHeap) pop() *chain {
	return h.removeAt(0)
}

func (h *chainHeap) remove(ch *chain) {
	if i := *h.idx(ch); i >= 0 {
		h.removeAt(i)
	}
}

// removeAt is container/heap.Remove: the last element takes slot i and
// sifts down, else up, over the rest.
func (h *chainHeap) removeAt(i int) *chain {
	n := len(h.items) - 1
	ch := h.items[i]
	if n != i {
		if x := h.items[n]; !h.down(i, n, x) {
			h.up(i, x)
		}
	}
	h.items[n] = nil
	h.items = h.items[:n]
	*h.idx(ch) = -1
	return ch
}

// up sifts x, which belongs at j, toward the root.
func (h *chainHeap) up(j int, x *chain) {
	for j > 0 {
		i := (j - 1) / 2
		if !(x.last < h.items[i].last) {
			break
		}
		h.items[j] = h.items[i]
		*h.idx(h.items[j]) = j
		j = i
	}
	h.items[j] = x
	*h.idx(x) = j
}

// down sifts x, which belongs at i0, toward the leaves of items[:n]; it
// reports whether x moved.
func (h *chainHeap) down(i0, n int, x *chain) bool {
	i := i0
	for {
		j := 2*i + 1
		if j >= n || j < 0 {
			break
		}
		if j2 := j + 1; j2 < n && h.items[j2].last < h.items[j].last {
			j = j2
		}
		if !(h.items[j].last < x.last) {
			break
		}
		h.items[i] = h.items[j]
		*h.idx(h.items[i]) = i
		i = j
	}
	h.items[i] = x
	*h.idx(x) = i
	return i > i0
}
