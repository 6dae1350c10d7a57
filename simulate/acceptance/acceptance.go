package acceptance

import (
	"fmt"
	"math"
	"math/bits"
	"math/rand/v2"
	"strings"

	"github.com/specsim/specsim/golden"
)

// Method names.
const (
	SGLangMatchExpected = "sglang-match-expected" // SGLANG_SIMULATE_ACC_METHOD=match-expected
	SGLangMultinomial   = "sglang-multinomial"    // SGLANG_SIMULATE_ACC_METHOD=multinomial
	VLLMSynthetic       = "vllm-synthetic"        // rejection_sample_method: synthetic
	TRTLLM              = "trtllm"                // TLLM_SPEC_DECODE_FORCE_NUM_ACCEPTED_TOKENS
	Chain               = "chain"                 // per request, L from the golden distribution at k
	Empirical           = "empirical"             // per request, L from a measured histogram
)

// MaxDraftLength bounds K: the one bound on the draft length, shared with
// the golden curves.
const MaxDraftLength = golden.MaxDraftLength

// Config selects a sampler.
type Config struct {
	Method   string    // one of Methods()
	K        int       // draft length
	TargetAL float64   // AL including the bonus token (engine methods; ignored by chain / empirical)
	Dist     []float64 // P(L = l) at index l-1 (for chain / empirical; normalised here)
	Seed     uint64

	// Rates, for vllm-synthetic only, are vLLM's synthetic_acceptance_rates:
	// per-position unconditional rates (position j accepted together with
	// all before it), K of them in [0, 1], non-increasing. As in vLLM they
	// exclude a target AL: set one or the other.
	Rates []float64
}

// Sampler draws accepted lengths. A Sampler is not safe for concurrent use;
// give each goroutine its own (with its own seed).
type Sampler interface {
	// Step draws the accepted length (bonus included, in [1, K+1]) of each
	// request in one verify step of a batch; len(out) is the batch size.
	// Engine semantics decide who shares a draw.
	Step(out []int)
	// ExpectedMean is the sampler's exact long-run mean (differs from
	// TargetAL where the engine is biased).
	ExpectedMean() float64
}

// Analytic is implemented by every sampler of this package: the exact
// marginal distribution of one request's accepted length, P(L = l) at
// index l-1, l = 1..K+1, that its draws follow.
type Analytic interface {
	Marginal() []float64
}

// SharedDraw is implemented by samplers whose requests in one Step all get
// the same length (SGLang's one draw per verify step).
type SharedDraw interface {
	SharesDraw() bool
	// Steps draws ahead: out[i] is the length the i-th next Step gives its
	// batch, and the Steps after them continue where these left off.
	Steps(out []int)
}

// Methods lists the method names New accepts.
func Methods() []string {
	return []string{SGLangMatchExpected, SGLangMultinomial, VLLMSynthetic, TRTLLM, Chain, Empirical}
}

// New builds the sampler a Config names. Engine methods need TargetAL in
// [1, K+1]; chain and empirical need Dist over 1..K+1 (shorter is padded
// with zeros, mass beyond K+1 is an error).
func New(c Config) (Sampler, error) {
	if c.K < 1 || c.K > MaxDraftLength {
		return nil, fmt.Errorf("draft length k=%d outside 1..%d", c.K, MaxDraftLength)
	}
	if c.Rates != nil {
		if c.Method != VLLMSynthetic {
			return nil, fmt.Errorf("%s: per-position rates apply to %s only", c.Method, VLLMSynthetic)
		}
		if c.TargetAL != 0 {
			return nil, fmt.Errorf("%s: give rates or a target AL, not both (vLLM makes them mutually exclusive)", c.Method)
		}
		if err := checkRates(c.Rates, c.K); err != nil {
			return nil, fmt.Errorf("%s: %v", c.Method, err)
		}
	}
	switch c.Method {
	case SGLangMatchExpected, SGLangMultinomial, VLLMSynthetic, TRTLLM:
		if c.Rates != nil {
			break
		}
		if math.IsNaN(c.TargetAL) || c.TargetAL < 1 || c.TargetAL > float64(c.K+1) {
			return nil, fmt.Errorf("%s: target AL %v outside [1, %d] (k=%d; AL counts the bonus token)", c.Method, c.TargetAL, c.K+1, c.K)
		}
	}
	rng := rand.NewPCG(c.Seed, pcgStream)
	switch c.Method {
	case SGLangMatchExpected:
		return newMatchExpected(c, rng), nil
	case SGLangMultinomial:
		return newMultinomial(c, rng)
	case VLLMSynthetic:
		return newVLLMSynthetic(c, rng)
	case TRTLLM:
		return newTRTLLM(c, rng)
	case Chain, Empirical:
		return newTable(c, rng)
	}
	return nil, fmt.Errorf("unknown acceptance method %q; methods: %s", c.Method, strings.Join(Methods(), ", "))
}

// pcgStream is the second PCG seed word; Config.Seed is the first.
const pcgStream = 0x5be0cd19137e2179

// meanOf is the mean of P(L = l) at index l-1.
func meanOf(d []float64) float64 {
	m := 0.0
	for i, p := range d {
		m += float64(i+1) * p
	}
	return m
}

// probThreshold turns a probability into a threshold t such that a uniform
// 64-bit x satisfies x < t with that probability.
func probThreshold(p float64) uint64 {
	switch {
	case p <= 0:
		return 0
	case p >= 1:
		return math.MaxUint64
	}
	return uint64(p * (1 << 64))
}

// ---------------------------------------------------------------------------

// matchExpected is SGLang's SGLANG_SIMULATE_ACC_METHOD=match-expected.
//
// Source: sgl-project/sglang python/sglang/srt/speculative/spec_utils.py,
// sample_simulated_acc_len, called from eagle_sample in
// python/sglang/srt/speculative/eagle_utils.py. The target is clamped to
// [1, steps+1]; L is floor(target) with probability 1-frac and ceil with
// probability frac (no draw when the target is an integer), drawn ONCE per
// verify step and written to every request of the batch
// (num_correct_drafts.fill_(L-1)). Mean exactly the target, variance
// frac(1-frac) (SGLang passes the two weights through a float32 tensor to
// torch.multinomial; that rounding, below 1e-7, is not modelled).
type matchExpected struct {
	rng          rand.PCG
	lower, upper int
	maxLen       int
	upperBelow   uint64 // draw upper when x < upperBelow
	mean, wUpper float64
}

func newMatchExpected(c Config, rng *rand.PCG) *matchExpected {
	t := min(float64(c.K+1), max(1, c.TargetAL))
	lower := int(math.Floor(t))
	upper := lower
	if lower < c.K+1 {
		upper = lower + 1
	}
	w := t - float64(lower)
	return &matchExpected{rng: *rng, lower: lower, upper: upper, maxLen: c.K + 1, upperBelow: probThreshold(w), mean: t, wUpper: w}
}

func (s *matchExpected) Step(out []int) {
	if len(out) == 0 {
		return
	}
	l := s.lower
	if s.upper != s.lower {
		// The borrow of x - upperBelow is 1 exactly when x < upperBelow:
		// a coin with P(upper) = frac and no branch to mispredict.
		_, borrow := bits.Sub64(s.rng.Uint64(), s.upperBelow, 0)
		l += int(borrow)
	}
	for i := range out {
		out[i] = l
	}
}

func (s *matchExpected) Steps(out []int) {
	if s.upper == s.lower {
		for i := range out {
			out[i] = s.lower
		}
		return
	}
	for i := range out {
		_, borrow := bits.Sub64(s.rng.Uint64(), s.upperBelow, 0)
		out[i] = s.lower + int(borrow)
	}
}

func (s *matchExpected) ExpectedMean() float64 { return s.mean }
func (s *matchExpected) SharesDraw() bool      { return true }
func (s *matchExpected) Marginal() []float64 {
	d := make([]float64, s.maxLen)
	d[s.lower-1] += 1 - s.wUpper
	d[s.upper-1] += s.wUpper
	return d
}

// ---------------------------------------------------------------------------

// multinomial is SGLang's SGLANG_SIMULATE_ACC_METHOD=multinomial (a
// misnomer: it is a rounded normal).
//
// Source: sgl-project/sglang python/sglang/srt/speculative/spec_utils.py,
// sample_simulated_acc_len: x = torch.normal(target, 1.0); clamp x to
// [1, steps+1]; L = round(x) (half to even). One draw per verify step for
// the whole batch, like match-expected. The clamp folds the tail above
// steps+1 onto steps+1 (and the tail below 1 onto 1), so the mean is pulled
// toward the middle of [1, steps+1]: 3.24 with 4 draft tokens (steps 3)
// averages 3.127.
//
// L takes integer values with P(L = l) = Phi(l+1/2-t) - Phi(l-1/2-t) for
// 1 < l < steps+1 and open-ended bins at both ends (ties have probability
// zero), so the sampler draws L from those exact probabilities with an
// alias table instead of drawing a normal: the same distribution for one
// 64-bit draw. (Older SGLang, eagle_utils.py _generate_simulated_accept_index,
// clamped to steps instead of steps+1 and used multinomial by default; this
// sampler follows the current code.)
type multinomial struct {
	rng   rand.PCG
	table *aliasTable
	marg  []float64
	mean  float64
}

func newMultinomial(c Config, rng *rand.PCG) (*multinomial, error) {
	d := roundedClampedNormal(c.TargetAL, c.K+1)
	t, err := newAliasTable(d)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", c.Method, err)
	}
	return &multinomial{rng: *rng, table: t, marg: d, mean: meanOf(d)}, nil
}

// roundedClampedNormal is the distribution of round(clamp(N(mu,1), 1, maxLen)).
func roundedClampedNormal(mu float64, maxLen int) []float64 {
	cdf := func(x float64) float64 { return 0.5 * math.Erfc(-(x-mu)/math.Sqrt2) }
	d := make([]float64, maxLen)
	for l := 1; l <= maxLen; l++ {
		lo, hi := 0.0, 1.0
		if l > 1 {
			lo = cdf(float64(l) - 0.5)
		}
		if l < maxLen {
			hi = cdf(float64(l) + 0.5)
		}
		d[l-1] = hi - lo
	}
	return d
}

func (s *multinomial) Step(out []int) {
	if len(out) == 0 {
		return
	}
	l := s.table.draw(s.rng.Uint64())
	for i := range out {
		out[i] = l
	}
}

func (s *multinomial) Steps(out []int) {
	for i := range out {
		out[i] = s.table.draw(s.rng.Uint64())
	}
}

func (s *multinomial) ExpectedMean() float64 { return s.mean }
func (s *multinomial) SharesDraw() bool      { return true }
func (s *multinomial) Marginal() []float64   { return append([]float64(nil), s.marg...) }

// ---------------------------------------------------------------------------

// vllmRates is _acceptance_length_to_rates.
func vllmRates(length float64, n int) []float64 {
	drafts := length - 1
	full := int(drafts) // Python int() truncates; drafts >= 0 here
	r := make([]float64, 0, n+1)
	for range full {
		r = append(r, 1)
	}
	r = append(r, drafts-float64(full))
	for len(r) < n {
		r = append(r, 0)
	}
	return r[:n]
}

// conditionalRates is unconditional_to_conditional_rates, then the float32
// tensor the kernels read.
func conditionalRates(p []float64) []float64 {
	c := make([]float64, len(p))
	prev := 1.0
	for i, v := range p {
		if prev > 0 {
			c[i] = float64(float32(v / prev))
		}
		prev = v
	}
	return c
}

// chainDistribution is P(L = 1+j), j = 0..k, for independent positions
// accepted with conditional rates c, stopping at the first rejection.
func chainDistribution(c []float64) []float64 {
	d := make([]float64, len(c)+1)
	reach := 1.0
	for j, r := range c {
		r = min(1, max(0, r))
		d[j] = reach * (1 - r)
		reach *= r
	}
	d[len(c)] = reach
	return d
}

// checkRates applies vLLM's checks on synthetic_acceptance_rates.
func checkRates(r []float64, k int) error {
	if len(r) != k {
		return fmt.Errorf("%d rates for k=%d draft positions", len(r), k)
	}
	for i, v := range r {
		if !(v >= 0 && v <= 1) {
			return fmt.Errorf("rate %d is %v, outside [0, 1]", i+1, v)
		}
		if i > 0 && v > r[i-1] {
			return fmt.Errorf("rate %d (%v) exceeds rate %d (%v); unconditional rates must not increase", i+1, v, i, r[i-1])
		}
	}
	return nil
}

// newVLLMSynthetic is vLLM's rejection_sample_method "synthetic" with
// synthetic_acceptance_length (Config.TargetAL) or synthetic_acceptance_rates
// (Config.Rates).
//
// Sources: vllm-project/vllm vllm/config/speculative.py
// (SpeculativeConfig._acceptance_length_to_rates: with d = AL-1 drafts
// expected, unconditional per-position rates are [1]*floor(d) + [frac(d)] +
// [0]*..., cut to k), vllm/v1/spec_decode/utils.py
// (unconditional_to_conditional_rates: c_i = p_i/p_(i-1), 0 after a zero),
// and the synthetic branch of the rejection kernels
// (vllm/v1/sample/rejection_sampler.py; MRV2
// vllm/v1/worker/gpu/spec_decode/synthetic_rejection_sampler_utils.py):
// for each request and each position, draw u, accept while u < c_i (the
// rates live in a float32 tensor), stop at the first rejection, and emit
// the target's token there or the bonus token after k acceptances. Every
// request and position draws independently.
//
// With the length-derived rates only one position is random, so a request
// gets floor(AL) or floor(AL)+1 with P(+1) = float32(frac(AL-1)); the mean
// is AL up to that float32 rounding. Because positions are independent and
// the chain stops at the first rejection, L has P(L = 1+j) =
// c_1...c_j (1 - c_(j+1)); the sampler draws it from those probabilities
// (one 64-bit draw per request, with the table sampler below) rather than
// one draw per position.
func newVLLMSynthetic(c Config, rng *rand.PCG) (*table, error) {
	rates := c.Rates
	if rates == nil {
		rates = vllmRates(c.TargetAL, c.K)
	}
	d := chainDistribution(conditionalRates(rates))
	t, err := newAliasTable(d)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", c.Method, err)
	}
	return &table{rng: *rng, cells: t.cells, mask: t.mask, marg: d, mean: meanOf(d)}, nil
}

// ---------------------------------------------------------------------------

// TensorRT-LLM's fixed-seed uniform pool: size and hash strides from
// tensorrt_llm/_torch/speculative/interface.py.
const (
	trtPoolSize      = 1 << 16
	trtCounterStride = 6007
	trtSlotStride    = 1009
)

// trtllm is TensorRT-LLM's TLLM_SPEC_DECODE_FORCE_NUM_ACCEPTED_TOKENS on
// the one-model (MTP / EAGLE3 one-model) path.
//
// Source: NVIDIA/TensorRT-LLM tensorrt_llm/_torch/speculative/interface.py,
// SpecWorkerBase._apply_force_accepted_tokens and
// _ensure_force_accept_rng_state. The value F counts accepted DRAFT tokens
// (AL - 1). base = min(int(F)+1, k+1) tokens; if frac(F) > 0 and base <
// k+1, each generation request adds one token when pool[idx] < frac(F),
// where pool is 65536 float32 uniforms drawn once from a fixed-seed CPU
// generator and idx = (counter*6007 + slot*1009) & 65535, the counter
// advancing by one per verify step and slot being the request's index in
// the batch. So draws are per request, but a deterministic hash of a fixed
// pool: the same (step, slot) always reads the same entry, and the long-run
// acceptance of the extra token is the fraction of the pool below frac(F),
// not frac(F) itself.
//
// This sampler keeps that structure (pool size, strides, counter, float32
// comparison); the pool's values come from Config.Seed through PCG, as
// 24-bit uniforms like torch.rand's float32, instead of torch's generator
// seeded with 0xACCE9D. F = 0 turns the override off in TensorRT-LLM, so
// a target AL of exactly 1 is refused. Older TensorRT-LLM versions and the
// two-model path parse the value as an integer only.
type trtllm struct {
	base, maxTotal int
	random         bool
	below          uint32 // extra token when pool entry < below (24-bit units)
	counter        uint64
	pool           *[trtPoolSize]uint32
	mean           float64
	wExtra         float64
}

func newTRTLLM(c Config, rng *rand.PCG) (*trtllm, error) {
	forced := c.TargetAL - 1
	if forced == 0 {
		return nil, fmt.Errorf("%s: target AL 1 means TLLM_SPEC_DECODE_FORCE_NUM_ACCEPTED_TOKENS=0, which turns the override off", c.Method)
	}
	intPart := int(forced)
	frac := forced - float64(intPart)
	s := &trtllm{maxTotal: c.K + 1, base: min(intPart+1, c.K+1)}
	s.mean = float64(s.base)
	if frac > 0 && s.base < s.maxTotal {
		s.random = true
		// torch compares the float32 pool with the Python float cast to
		// float32; pool values are multiples of 2^-24.
		s.below = uint32(math.Ceil(float64(float32(frac)) * (1 << 24)))
		s.pool = new([trtPoolSize]uint32)
		hits := 0
		for i := range s.pool {
			s.pool[i] = uint32(rng.Uint64() >> 40)
			if s.pool[i] < s.below {
				hits++
			}
		}
		// Over 65536 consecutive steps each slot reads every pool entry once
		// (6007 is odd, so the counter stride is a bijection mod 2^16).
		s.wExtra = float64(hits) / trtPoolSize
		s.mean += s.wExtra
	}
	return s, nil
}

func (s *trtllm) Step(out []int) {
	if !s.random {
		for i := range out {
			out[i] = s.base
		}
		return
	}
	s.counter++
	idx := s.counter * trtCounterStride
	pool, below, base := s.pool, s.below, s.base
	for i := range out {
		l := base
		if pool[idx&(trtPoolSize-1)] < below {
			l++
		}
		out[i] = l
		idx += trtSlotStride
	}
}

func (s *trtllm) ExpectedMean() float64 { return s.mean }
func (s *trtllm) Marginal() []float64 {
	d := make([]float64, s.maxTotal)
	d[s.base-1] = 1 - s.wExtra
	if s.random {
		d[s.base] = s.wExtra
	}
	return d
}

// ---------------------------------------------------------------------------

// table draws each request's own L every step from a fixed distribution
// over 1..K+1. It is the chain and empirical methods (chain: the golden
// distribution at k, golden.Curve.Distribution; empirical: a measured
// histogram, ParseHistogram), and runs vllm-synthetic's closed-form
// distribution. Chain and empirical are no engine's forced acceptance: they
// model real acceptance with a chain draft whose per-position acceptance
// matches the golden curve, or a measured run.
type table struct {
	rng   rand.PCG
	cells []aliasCell // the alias table's cells and mask, held here to
	mask  uint64      // save indirections in Step
	marg  []float64
	mean  float64
}

func newTable(c Config, rng *rand.PCG) (*table, error) {
	if len(c.Dist) == 0 {
		return nil, fmt.Errorf("%s: no distribution given", c.Method)
	}
	d := make([]float64, c.K+1)
	sum := 0.0
	for i, p := range c.Dist {
		if p < 0 || math.IsNaN(p) || math.IsInf(p, 0) {
			return nil, fmt.Errorf("%s: P(L=%d) = %v is not a probability", c.Method, i+1, p)
		}
		if i > c.K {
			if p > 0 {
				return nil, fmt.Errorf("%s: P(L=%d) = %v but k=%d allows L up to %d", c.Method, i+1, p, c.K, c.K+1)
			}
			continue
		}
		d[i] = p
		sum += p
	}
	if !(sum > 0) {
		return nil, fmt.Errorf("%s: distribution has no mass", c.Method)
	}
	for i := range d {
		d[i] /= sum
	}
	t, err := newAliasTable(d)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", c.Method, err)
	}
	return &table{rng: *rng, cells: t.cells, mask: t.mask, marg: d, mean: meanOf(d)}, nil
}

// Step draws one length per request from the alias table (see
// aliasTable.draw; the loop repeats it so that the generator's state can
// stay in registers, on a local copy written back at the end).
func (s *table) Step(out []int) {
	r := s.rng
	cells, mask := s.cells, s.mask
	for i := range out {
		x := r.Uint64()
		c := &cells[x&mask]
		own := int64(x>>32-c.keep) >> 63
		out[i] = int(c.other + c.diff&own)
	}
	s.rng = r
}

func (s *table) ExpectedMean() float64 { return s.mean }
func (s *table) Marginal() []float64   { return append([]float64(nil), s.marg...) }
