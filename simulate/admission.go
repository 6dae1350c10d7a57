package simulate

import "math"

// kvPolicy is how an aggregated instance without a prefix cache reserves
// KV for the requests it admits, and what it does when a decode iteration
// finds its rank's pool short.
type kvPolicy uint8

const (
	// kvWhole reserves each request's prompt and whole output when it is
	// admitted, so a running request never runs the pool dry: TensorRT-LLM's
	// default capacity scheduler (GUARANTEED_NO_EVICT), and what every
	// decode worker and prefix-cached instance is simulated with.
	kvWhole kvPolicy = iota
	// kvShare is SGLang's: a request is admitted when its prompt and its
	// output (clipped to sglangClipMaxNewTokens) fit beside the tokens the
	// rank holds and new_token_ratio times the clipped outputs still to come
	// of the requests it runs (schedule_policy.py PrefillAdder,
	// _get_running_request_total_token_offset); when a decode iteration
	// finds too few free tokens for the batch, requests are retracted
	// (schedule_batch.py retract_decode) and prefill again later.
	kvShare
	// kvPaged is vLLM's: pages are allocated as tokens are written; a
	// request is admitted when its prompt fits, and when a running request
	// cannot get its next tokens the most recently scheduled one is
	// preempted and recomputed later (v1/core/sched/scheduler.py).
	kvPaged
	// kvDecodeReserve is SGLang's disaggregated decode side: a request is
	// preallocated its prompt when the prompt and
	// num_reserved_decode_tokens fit beside the tokens the rank holds and
	// that reserve for each request it holds
	// (disaggregation/decode.py DecodePreallocQueue.pop_preallocated,
	// _allocatable_tokens); a decode iteration short of KV retracts as
	// retract_decode does, offloading the KV to the host, and the request
	// resumes, its KV loaded back, once the pool holds it and the reserve
	// (resume_retracted_reqs).
	kvDecodeReserve
)

// sglangReservedDecodeTokens is SGLang's num_reserved_decode_tokens
// default (server_args.py): the decode tokens a disaggregated decode
// worker keeps free for each request it holds.
const sglangReservedDecodeTokens = 512

// SGLang's admission constants (global_config.py, envs): new_token_ratio
// starts at 0.7 (default_init_new_token_ratio times
// schedule_conservativeness 1), decays over 600 decode iterations to 0.14
// of that, and returns to the start whenever the scheduler idles
// (self_check_during_idle); outputs count at most 4096 tokens in the
// estimate (SGLANG_CLIP_MAX_NEW_TOKENS_ESTIMATION); a retraction resets the
// ratio to (decoded + 20 per request) over the requests' max_new_tokens
// plus one (SGLANG_RETRACT_DECODE_STEPS 20).
const (
	sglangInitRatio          = 0.7
	sglangMinRatio           = sglangInitRatio * 0.14
	sglangRatioDecay         = (sglangInitRatio - sglangMinRatio) / 600
	sglangClipMaxNewTokens   = 4096
	sglangRetractDecodeSteps = 20
)

// kvPolicyFor is the policy of an aggregated instance of engine without a
// prefix cache; radixOff says SGLang runs with its radix cache disabled
// (--disable-radix-cache). The benchmark clients ask for every output
// token (sa-bench --ignore-eos, AIPerf's AgentX scenario
// require_ignore_eos), and SGLang admits an ignore_eos request without a
// radix cache by add_one_req_ignore_eos, which counts whole outputs and
// admits only what the pool can finish: the whole-output reservation,
// which it approaches from below (it reuses what earlier finishers free).
func kvPolicyFor(engine string, radixOff bool) kvPolicy {
	switch {
	case engine == "sglang" && !radixOff:
		return kvShare
	case engine == "vllm":
		return kvPaged
	}
	return kvWhole
}

// aggKVPolicy is the policy of the plan's aggregated instances: their
// engine's own without a prefix cache, the whole-output reservation with
// one.
func (p *Plan) aggKVPolicy() kvPolicy {
	if p.cacheOn() || p.agg == nil {
		return kvWhole
	}
	return kvPolicyFor(p.agg.EngineName, p.sc.Server.NoPrefixCache)
}

// decodeKVPolicy is the policy of a disaggregated decode worker of engine.
func decodeKVPolicy(engine string) kvPolicy {
	if engine == "sglang" {
		return kvDecodeReserve
	}
	return kvWhole
}

// decodeFits says whether rank rk of a kvDecodeReserve lane can take a
// request that needs tokens of KV now (its prompt, or a resumed request's
// context) and num_reserved_decode_tokens beside the reserve of each
// request the rank holds.
func (in *instance) decodeFits(rk, tokens int) bool {
	return tokens+sglangReservedDecodeTokens <= in.rankPool()-in.rankTok[rk]-sglangReservedDecodeTokens*in.rankRun[rk]
}

// rankPool is the KV tokens one attention-DP rank of in holds.
func (in *instance) rankPool() int { return in.capTok / in.ranks }

// stepTokens is the KV a decode iteration needs free for each request:
// SGLang's decode_mem_cache_buf_multiplier for EAGLE-style drafts of topk
// 1 (speculative_num_draft_tokens k+1 plus topk x num_steps k; check_decode_mem
// before each iteration) and vLLM's 1+k new tokens plus k lookahead slots;
// one without a draft.
func stepTokens(k int) int {
	if k > 0 {
		return 2*k + 1
	}
	return 1
}

// clippedOutput is what SGLang's estimate counts of r's output still to
// come.
func clippedOutput(r *simRequest) int {
	return min(max(r.OSL-r.gen, 0), sglangClipMaxNewTokens)
}

// shareOffsets sets in.runOff[rk] to what SGLang's PrefillAdder reserves
// for the requests rank rk already holds: new_token_ratio times their
// clipped outputs still to come, for those running (hot) and those
// admitted but still prefilling.
func (in *instance) shareOffsets() {
	if len(in.runOff) < in.ranks {
		in.runOff = make([]float64, in.ranks)
		in.roundOff = make([]int, in.ranks)
	}
	sums := in.roundOff[:in.ranks] // scratch: clipped outputs per rank
	clear(sums)
	for _, h := range in.hot {
		sums[h.rank] += min(int(h.left), sglangClipMaxNewTokens)
	}
	for _, r := range in.waiting {
		if r.admitted {
			sums[r.rank] += clippedOutput(r)
		}
	}
	for rk, s := range sums {
		in.runOff[rk] = in.ratio[rk] * float64(s)
	}
	clear(sums) // roundOff: what this round's admissions reserve in full
}

// admits says whether rank rk of in (not idle) takes r, whose prompt needs
// prompt tokens of KV, under its policy (kvShare or kvPaged); shareOffsets
// ran at the start of the round.
func (in *instance) admits(r *simRequest, prompt, k int) bool {
	rk := r.rank
	free := in.rankPool() - in.rankTok[rk]
	if in.kv == kvPaged {
		// The running requests get their next tokens first; the new one
		// its prompt and the draft's lookahead slots.
		return prompt+k <= free-in.live[rk]*stepTokens(k)
	}
	// PrefillAdder.add_one_req: NO_TOKEN when total_tokens >=
	// rem_total_tokens.
	total := prompt + clippedOutput(r)
	return float64(total) < float64(free)-in.runOff[rk]-float64(in.roundOff[rk])
}

// short says whether rank rk's pool lacks the KV its running requests
// write in the next decode iteration.
func (in *instance) short(rk, k int) bool {
	return in.live[rk] > 0 && in.rankTok[rk]+in.live[rk]*stepTokens(k) > in.rankPool()
}

// victim is the position in in.running of the request rank rk gives up
// first: the latest scheduled (the rank's last, as join orders them)
// under kvPaged, and under kvShare with a draft (retract_decode sorts only
// without speculative decoding and pops from the back of the batch);
// under kvShare without one, the one with the fewest output tokens, then
// the longest prompt, then the latest in the batch (its sort, popped from
// the end).
func (in *instance) victim(rk, k int) int {
	lo := 0
	for _, c := range in.live[:rk] {
		lo += c
	}
	hi := lo + in.live[rk]
	if in.kv == kvPaged || k > 0 {
		return hi - 1
	}
	best := lo
	for j := lo + 1; j < hi; j++ {
		rj, rb := in.running[j], in.running[best]
		gj, gb := rj.OSL-int(in.hot[j].left), rb.OSL-int(in.hot[best].left)
		if gj < gb || gj == gb && rj.ISL >= rb.ISL {
			best = j
		}
	}
	return best
}

// retract takes requests of rank rk out of the running batch (at least
// one, never the last) and returns them: each gives back its KV and its
// slot and keeps the tokens it has emitted, which it prefills again with
// its prompt (redo). Both engines give up requests until the pool holds
// the next iteration's tokens (vLLM's allocate_slots; SGLang's
// update_running_batch passes decode_mem_cache_buf_multiplier to
// retract_decode's check_decode_mem); SGLang then sets the rank's
// new_token_ratio to retract_decode's estimate over the requests left.
func (in *instance) retract(rk, k int, out []*simRequest) []*simRequest {
	for first := true; first || in.short(rk, k); first = false {
		if in.live[rk] <= 1 {
			break
		}
		j := in.victim(rk, k)
		r, h := in.running[j], in.hot[j]
		copy(in.running[j:], in.running[j+1:])
		in.running[len(in.running)-1] = nil
		in.running = in.running[:len(in.running)-1]
		copy(in.hot[j:], in.hot[j+1:])
		in.hot = in.hot[:len(in.hot)-1]
		if in.live[rk] == in.top {
			in.topStale = true
		}
		in.live[rk]--
		in.ctxSum -= h.ctx
		in.rankTok[rk] -= h.ctx
		in.rankRun[rk]--
		r.gen, r.ctx = r.OSL-int(h.left), h.ctx
		r.redo = int32(r.gen)
		r.done, r.admitted = 0, false
		out = append(out, r)
	}
	if in.kv == kvShare {
		decoded, maxNew, n := 0, 0, 0
		for j, h := range in.hot {
			if int(h.rank) != rk {
				continue
			}
			decoded += in.running[j].OSL - int(h.left)
			maxNew += in.running[j].OSL
			n++
		}
		in.ratio[rk] = math.Min(1, float64(decoded+sglangRetractDecodeSteps*n)/float64(maxNew+1))
	}
	return out
}

// decayRatio lowers each busy rank's new_token_ratio for n decode
// iterations run without a retraction (update_running_batch).
func (in *instance) decayRatio(n int) {
	for rk := range in.live {
		in.decayRank(rk, n)
	}
}

// decayRank is decayRatio for rank rk alone.
func (in *instance) decayRank(rk, n int) {
	if in.kv == kvShare && in.live[rk] > 0 {
		in.ratio[rk] = math.Max(in.ratio[rk]-float64(n)*sglangRatioDecay, sglangMinRatio)
	}
}
