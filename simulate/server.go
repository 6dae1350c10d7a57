package simulate

import "fmt"

// hostLinkBandwidth is the host-to-device bandwidth one GPU has for HiCache
// loads, bytes/s in one direction, and where the figure comes from.
func hostLinkBandwidth(gpu string) (float64, string) {
	switch gpu {
	case "gb200", "gb300":
		// One Grace CPU serves two Blackwell GPUs over NVLink-C2C, 900 GB/s
		// bidirectional per Grace (NVIDIA GB200/GB300 NVL72 specifications);
		// split over its two GPUs and two directions that is 225 GB/s a GPU
		// each way, under the Grace LPDDR5X bandwidth share (~512 GB/s / 2).
		return 225e9, "NVLink-C2C 900 GB/s bidirectional per Grace, shared by 2 GPUs"
	case "b300":
		// HGX B300: PCIe Gen6 x16 to the host (through ConnectX-8).
		return 128e9, "PCIe Gen6 x16, 128 GB/s per direction"
	default:
		// HGX H100/H200/B200: PCIe Gen5 x16.
		return 64e9, "PCIe Gen5 x16, 64 GB/s per direction"
	}
}

// server holds the serving side's state beyond the step model: routing of
// sessions over the entry pool's targets (an instance's attention-DP rank),
// each target's prefix cache and the host link that loads HiCache hits.
type server struct {
	rt     *router
	caches []*prefixCache // per entry target; nil entries: no cache
	// targets maps an entry target to its instance and rank.
	targetInst, targetRank []int
	// A disaggregated pool's decode side: its router over the decode
	// lanes' DP ranks (drt; nil when aggregated), each target's lane and
	// rank, and whether a request's decode target is chosen when it
	// arrives (SGLang's bootstrap handshake) or when its prefill is done.
	drt                    *router
	decodeInst, decodeRank []int
	decodeAtDispatch       bool
	hostBW                 float64
	hostSrc                string
	kvBytesPerToken        float64 // KV bytes a token occupies on one GPU of the entry instance
	hostLoadS              float64
	hostLoadTok            int64
}

// loadTime is the time to bring tokens of KV from the host tier into HBM:
// every GPU of the instance loads its own shard over its own link.
func (s *server) loadTime(tokens int) float64 {
	if tokens <= 0 || s.hostBW <= 0 {
		return 0
	}
	return float64(tokens) * s.kvBytesPerToken / s.hostBW
}

// prefillWithLoad is a prefill forward that first needs hostTokens loaded:
// HiCache loads layer by layer on its own stream while the forward runs
// (hiradix_cache.py load_back with the layer-done counter the attention
// layers wait on), so the slower of the two sets the time.
func (s *server) prefillWithLoad(compute float64, hostTokens int) float64 {
	return max(compute, s.loadTime(hostTokens))
}

// report sums the caches.
func (s *server) report() *CacheReport {
	var lookups, dev, host, prompt, evicted int64
	n := 0
	for _, c := range s.caches {
		if c == nil {
			continue
		}
		n++
		lookups += c.lookups
		dev += c.devHit
		host += c.hostHit
		prompt += c.promptTokens
		evicted += c.evictedDev
	}
	if n == 0 || prompt == 0 {
		return nil
	}
	p := float64(prompt)
	return &CacheReport{HitRate: float64(dev+host) / p, DeviceHit: float64(dev) / p, HostHit: float64(host) / p,
		EvictedGiB: float64(evicted) * s.kvBytesPerToken / gib, HostLoadGiB: float64(s.hostLoadTok) * s.kvBytesPerToken / gib,
		HostLoadS: s.hostLoadS, Ranks: n}
}

func (s *server) String() string {
	return fmt.Sprintf("server: %d targets, host link %s", len(s.targetInst), s.hostSrc)
}

// cacheOn: the prefix cache decides hits only where requests say what
// they share with their session (trace replays); the closed-loop workload
// states its cached prefix itself.
func (p *Plan) cacheOn() bool { return p.sc.Workload.Trace != nil && !p.sc.Server.NoPrefixCache }

// newServer sets up routing over the entry instances' DP ranks and, when
// the pool is disaggregated, over the decode instances' DP ranks.
//
// The decode side routes as the Dynamo frontend of the disaggregated
// recipes does (ai-dynamo/dynamo lib/llm/src/kv_router/prefill_router):
// a session keeps its decode target too (X-Dynamo-Session-ID affinity is
// held per request phase, prefill and decode, each a worker and DP rank),
// and a session's first request goes to the target with the least active
// load, where the decode router counts the prompt blocks of the requests
// it has routed there and not yet finished, with no prompt overlap credit
// and no prefill tokens (build_decode_router_override:
// overlap_score_credit 0, track_prefill_tokens false). With SGLang the
// prefill worker returns its bootstrap address at once and the router
// sends the decode request on while the prefill runs (PrefillOutcome::
// Bootstrap), so the decode target is chosen on arrival; with vLLM and
// TensorRT-LLM the router waits for the prefill result first. Either
// way a target's load counts every request routed to it, so the
// requests one prefill forward completes spread over the decode pool
// instead of all joining whichever worker was least loaded then.
func (p *Plan) newServer(inst []*instance, entry, decodeIdx []int) *server {
	s := &server{}
	for _, i := range entry {
		in := inst[i]
		in.target0 = len(s.targetInst)
		for r := range in.ranks {
			s.targetInst = append(s.targetInst, i)
			s.targetRank = append(s.targetRank, r)
			if in.caches != nil {
				s.caches = append(s.caches, in.caches[r])
			}
		}
	}
	s.rt = newRouter(len(s.targetInst), DefaultAffinityTTL, p.sc.Seed)
	if len(decodeIdx) > 0 && inst[decodeIdx[0]].role == roleDecode {
		for _, i := range decodeIdx {
			for r := range inst[i].ranks {
				s.decodeInst = append(s.decodeInst, i)
				s.decodeRank = append(s.decodeRank, r)
			}
		}
		s.drt = newRouter(len(s.decodeInst), DefaultAffinityTTL, p.sc.Seed^0xdec0de)
		s.decodeAtDispatch = p.decode.EngineName == "sglang"
	}
	s.hostBW, s.hostSrc = hostLinkBandwidth(p.gpuName)
	e := p.agg
	if e == nil {
		e = p.prefill
	}
	s.kvBytesPerToken = e.kvPerToken(p.sc.Spec.Steps > 0)
	return s
}

// noteLoad counts a host-tier load for the report.
func (s *server) noteLoad(tokens int) {
	if tokens > 0 {
		s.hostLoadTok += int64(tokens)
		s.hostLoadS += s.loadTime(tokens)
	}
}
