package simulate

import "testing"

// TestPrefixCacheLRUOrder walks a 10-block pool (64-token pages) by hand:
// the least recently used chain loses its tail first, a locked chain is
// never evicted, and a request that cannot get room changes nothing.
func TestPrefixCacheLRUOrder(t *testing.T) {
	c := newPrefixCache(64, 640, 0)
	must := func(session, shared, prompt, need int, now float64, want Hit) {
		t.Helper()
		h, ok := c.acquire(session, -1, shared, prompt, need, now)
		if !ok || h != want {
			t.Fatalf("acquire(session %d at %g) = %+v, %v; want %+v, true", session, now, h, ok, want)
		}
	}
	res := func(session, dev, host int) {
		t.Helper()
		if d, h := c.resident(session); d != dev || h != host {
			t.Errorf("session %d resident %d+%d tokens, want %d+%d", session, d, h, dev, host)
		}
	}
	must(1, 0, 192, 256, 1, Hit{})
	c.release(1, 256, 2)
	must(2, 0, 192, 256, 3, Hit{})
	c.release(2, 256, 4)
	// Session 1 comes back sharing 3 blocks and grows to 6: 8-4+6 = 10 fits.
	must(1, 192, 320, 384, 5, Hit{Device: 192})
	c.release(1, 384, 6)
	res(1, 384, 0)
	// 3 more blocks: session 2 (last used at 4) loses 3 of its 4.
	must(3, 0, 128, 192, 7, Hit{})
	res(2, 64, 0)
	res(1, 384, 0)
	// 5 more: session 2's last block, then 4 of session 1's 6 (session 3
	// is running, so locked).
	must(4, 0, 256, 320, 8, Hit{})
	res(2, 0, 0)
	res(1, 128, 0)
	res(3, 192, 0)
	// Nothing evictable is left but session 1's 2 blocks: 3 blocks fail.
	if _, ok := c.acquire(5, -1, 0, 128, 192, 9); ok {
		t.Fatal("acquire beyond the evictable blocks succeeded")
	}
	res(1, 128, 0)
	if c.devUsed != 10 || c.evictable != 2 {
		t.Errorf("devUsed %d evictable %d, want 10 and 2", c.devUsed, c.evictable)
	}
	if len(c.chains) != 3 {
		t.Errorf("%d chains kept, want 3 (session 2 forgotten)", len(c.chains))
	}
}

// TestPrefixCacheHostTier: evicted blocks go to the host tier and come back
// as host hits; the host tier evicts its own least recently used tails.
func TestPrefixCacheHostTier(t *testing.T) {
	c := newPrefixCache(64, 512, 384) // 8 device, 6 host blocks
	c.acquire(1, -1, 0, 256, 256, 1)
	c.release(1, 256, 2)
	c.acquire(2, -1, 0, 256, 256, 3)
	c.release(2, 256, 4)
	// 8 blocks for session 3 push out all of 1 and 2 (1 first).
	c.acquire(3, -1, 0, 512, 512, 5)
	if d, h := c.resident(1); d != 0 || h != 128 {
		t.Errorf("session 1 after eviction: %d device + %d host tokens, want 0 + 128 (host keeps 6 of 8 blocks, 1's tail lost first)", d, h)
	}
	if d, h := c.resident(2); d != 0 || h != 256 {
		t.Errorf("session 2: %d + %d, want 0 + 256", d, h)
	}
	c.release(3, 512, 6)
	// Session 2 returns sharing its 4 blocks: all from the host tier.
	h, ok := c.acquire(2, -1, 256, 320, 384, 7)
	if !ok || h != (Hit{Host: 256}) {
		t.Fatalf("session 2 hit %+v, %v; want 256 host tokens", h, ok)
	}
	if c.hostHit != 256 || c.devHit != 0 {
		t.Errorf("counters: host %d device %d", c.hostHit, c.devHit)
	}
}

// TestHostLoadCost: a host-tier hit costs its bytes over the host link
// (GB300: NVLink-C2C; H200: PCIe Gen5 x16), a device hit costs nothing.
func TestHostLoadCost(t *testing.T) {
	for _, tc := range []struct {
		gpu string
		bw  float64
	}{{"gb300", 225e9}, {"h200", 64e9}} {
		bw, src := hostLinkBandwidth(tc.gpu)
		if bw != tc.bw || src == "" {
			t.Errorf("%s host link %g B/s (%q), want %g", tc.gpu, bw, src, tc.bw)
		}
	}
	// 65536 tokens x 16 KiB a token over 225 GB/s.
	s := &server{hostBW: 225e9, kvBytesPerToken: 16 << 10}
	if got, want := s.loadTime(65536), 65536*16384/225e9; !near(got, want, 1e-12) {
		t.Errorf("load time %g s, want %g", got, want)
	}
	if s.loadTime(0) != 0 {
		t.Error("no host hit should cost nothing")
	}
	// The prefill that follows overlaps it layer by layer: the slower wins.
	if got := s.prefillWithLoad(0.2, 65536); !near(got, 0.2, 1e-12) {
		t.Errorf("load under compute: %g", got)
	}
	if got, want := s.prefillWithLoad(0.001, 65536), 65536*16384/225e9; !near(got, want, 1e-12) {
		t.Errorf("load over compute: %g, want %g", got, want)
	}
}

// TestRouterAffinity: a session stays where its first request went; new
// sessions go to the least loaded target; the affinity expires after its TTL.
func TestRouterAffinity(t *testing.T) {
	r := newRouter(3, 100, 1)
	a := r.route(7, 1000, 0)
	b := r.route(8, 1000, 0)
	c := r.route(9, 1000, 0)
	if a == b || b == c || a == c {
		t.Fatalf("three new sessions on three idle targets went to %d %d %d", a, b, c)
	}
	r.done(a, 1000)
	for i := range 5 {
		if got := r.route(8, 10, float64(i)); got != b {
			t.Fatalf("session 8 moved from %d to %d", b, got)
		}
		r.done(b, 10)
	}
	// Target a is the idle one now: a new session goes there.
	if got := r.route(10, 5, 6); got != a {
		t.Errorf("new session went to %d, want the idle target %d", got, a)
	}
	// After its TTL of idleness a session is routed afresh.
	r = newRouter(2, 100, 1)
	s1 := r.route(1, 10, 0)
	s2 := r.route(2, 10, 0)
	if s1 == s2 {
		t.Fatalf("two new sessions on two idle targets both went to %d", s1)
	}
	heavy := r.route(3, 1000, 0) // a tie at 10 tokens each: either target
	light := 1 - heavy
	if got := r.route(2, 10, 50); got != s2 {
		t.Errorf("session 2 within its TTL went to %d, want %d", got, s2)
	}
	if got := r.route(1, 10, 200); got != light {
		t.Errorf("session 1 idle past its TTL went to %d, want the less loaded %d", got, light)
	}
}

// BenchmarkPrefixCache: one admit and release of a 100k-token turn among
// 2048 sessions competing for a pool of 50 of them, with a host tier;
// the cost is per request, not per block.
func BenchmarkPrefixCache(b *testing.B) {
	c := newPrefixCache(64, 50*100_000, 100*100_000)
	ctx := make([]int, 2048)
	b.ReportAllocs()
	for i := range b.N {
		s := i % len(ctx)
		shared := ctx[s]
		prompt := min(shared+2000, 200_000)
		if prompt == 200_000 {
			shared = 0
			prompt = 2000
		}
		now := float64(i)
		if _, ok := c.acquire(s, -1, shared, prompt, prompt+500, now); !ok {
			b.Fatal("no room")
		}
		c.release(s, prompt+500, now+0.5)
		ctx[s] = prompt
	}
}

// TestPrefixCacheFork: a new session forked from another reads that
// session's resident blocks as hits (up to what it shares), takes its own
// blocks, and leaves the source's chain as it was.
func TestPrefixCacheFork(t *testing.T) {
	c := newPrefixCache(64, 2048, 0) // 32 blocks
	c.acquire(1, -1, 0, 256, 320, 1)
	c.release(1, 320, 2) // session 1 holds 5 blocks
	// Session 2 forks sharing 3 blocks of session 1's prompt.
	h, ok := c.acquire(2, 1, 192, 384, 448, 3)
	if !ok || h != (Hit{Device: 192}) {
		t.Fatalf("fork hit %+v, %v; want 192 device tokens", h, ok)
	}
	if d, _ := c.resident(1); d != 320 {
		t.Errorf("source session resident %d tokens, want 320", d)
	}
	// Sharing more than the source holds hits only what it holds.
	h, ok = c.acquire(3, 1, 640, 704, 768, 4)
	if !ok || h != (Hit{Device: 320}) {
		t.Fatalf("fork past the source: %+v, %v; want 320 device tokens", h, ok)
	}
	// A fork of an unknown session is cold.
	if h, ok := c.acquire(4, 9, 128, 192, 192, 5); !ok || h != (Hit{}) {
		t.Fatalf("fork of an absent session: %+v, %v; want no hit", h, ok)
	}
}

// TestRouterTiesAreRandom: new sessions arriving at an idle pool one at a
// time (each done before the next) tie on every target; Dynamo picks among
// ties uniformly (selector/default.rs minimum_cost_index), so 8,000 of them
// over 8 targets land 1,000 each, within 5 binomial standard deviations
// (sqrt(8000 x 1/8 x 7/8) = 29.6); an index rule would send all to target 0.
func TestRouterTiesAreRandom(t *testing.T) {
	r := newRouter(8, 100, 3)
	counts := make([]int, 8)
	for s := range 8000 {
		tg := r.route(s, 100, float64(s))
		counts[tg]++
		r.done(tg, 100)
	}
	for tg, n := range counts {
		if n < 1000-148 || n > 1000+148 {
			t.Errorf("target %d got %d of 8000 tied sessions, want 1000 +- 148 (all: %v)", tg, n, counts)
		}
	}
}
