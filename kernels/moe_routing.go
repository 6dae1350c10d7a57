package kernels

import (
	"math"
	"sync"
	"sync/atomic"
)

// ExpectedDistinctExperts is the expected number of experts touched when
// tokens tokens each pick topk distinct experts out of experts.
//
// With uniform routing (skew 0) an expert is missed by one token with
// probability 1-topk/E, so E(1-(1-topk/E)^T) experts are touched. With skew
// s > 0 expert popularity follows a Zipf law, p_i proportional to i^-s, and
// expert i is picked by a token with probability q_i = min(1, c*p_i), c set
// so that the q_i sum to topk; the expectation is sum_i 1-(1-q_i)^T. Skew lowers the count (popular experts
// absorb the tokens), which is what load imbalance does to weight traffic.
// The per-token picks are treated as independent across experts, exact for
// s = 0 and a close approximation otherwise. Beyond maxZipfExperts experts
// (far more than any model has) skew is ignored, so that a hostile shape
// cannot make the per-expert table allocate without bound.
func ExpectedDistinctExperts(tokens, experts, topk int, skew float64) float64 {
	return expectedDistinct(nil, tokens, experts, topk, skew)
}

// expectedDistinct is ExpectedDistinctExperts with the per-expert table
// kept in memo (nil: computed afresh).
func expectedDistinct(memo *zipfMemo, tokens, experts, topk int, skew float64) float64 {
	if tokens <= 0 || experts <= 0 || topk <= 0 {
		return 0
	}
	if topk >= experts {
		return float64(experts)
	}
	t := float64(tokens)
	if !(skew > 0) || experts > maxZipfExperts {
		miss := 1 - float64(topk)/float64(experts)
		return float64(experts) * -math.Expm1(t*math.Log(miss))
	}
	logMiss := zipfLogMiss(memo, experts, topk, skew)
	var sum float64
	for _, lm := range logMiss {
		if math.IsInf(lm, -1) {
			sum++
			continue
		}
		sum += -math.Expm1(t * lm)
	}
	return sum
}

type zipfKey struct {
	experts, topk int
	skew          float64
}

// zipfMemo keeps the per-expert tables of one Coster, so that repeated
// lookups in a sweep allocate nothing. It is safe for concurrent use.
type zipfMemo struct {
	tables  sync.Map // zipfKey -> []float64
	entries atomic.Int64
}

// maxZipfEntries bounds the cache when callers sweep many skews, and
// maxZipfExperts the length of one entry.
const (
	maxZipfEntries = 4096
	maxZipfExperts = 1 << 12
)

// zipfLogMiss returns log(1-q_i) per expert, kept in memo when one is
// given.
func zipfLogMiss(memo *zipfMemo, experts, topk int, skew float64) []float64 {
	key := zipfKey{experts, topk, skew}
	if memo != nil {
		if v, ok := memo.tables.Load(key); ok {
			return v.([]float64)
		}
	}
	p := make([]float64, experts)
	var norm float64
	for i := range p {
		p[i] = math.Pow(float64(i+1), -skew)
		norm += p[i]
	}
	// A token picks exactly topk distinct experts, so the inclusion
	// probabilities sum to topk and none exceeds 1: q_i = min(1, c*p_i)
	// with c chosen so that they sum to topk (capped proportional
	// inclusion, the usual approximation of weighted sampling without
	// replacement).
	q := make([]float64, experts)
	capped := make([]bool, experts)
	for range experts {
		var free float64
		nCapped := 0
		for i := range p {
			if capped[i] {
				nCapped++
			} else {
				free += p[i]
			}
		}
		c := (float64(topk) - float64(nCapped)) / free
		changed := false
		for i := range p {
			if capped[i] {
				q[i] = 1
				continue
			}
			q[i] = c * p[i]
			if q[i] >= 1 {
				capped[i], changed = true, true
			}
		}
		if !changed {
			break
		}
	}
	for i := range p {
		p[i] = math.Log1p(-math.Min(q[i], 1))
	}
	if memo != nil && memo.entries.Add(1) <= maxZipfEntries {
		memo.tables.Store(key, p)
	}
	return p
}
