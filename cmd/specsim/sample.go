package main

import (
	"flag"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/specsim/specsim/golden"
	"github.com/specsim/specsim/simulate/acceptance"
)

func init() {
	register(&command{
		name:    "sample",
		summary: "draw accepted lengths the way SGLang, vLLM or TensorRT-LLM simulate acceptance",
		run:     runSample,
	})
}

// Bounds on one sampling run: about a second of work at a few ns per draw.
const (
	sampleMaxBatch = 1 << 20
	sampleMaxDraws = 1_000_000_000
)

const sampleHelp = `specsim sample: draw accepted lengths L (tokens per verify step per request, bonus
token included) for a batch over many verify steps, with one engine's simulated-acceptance
semantics, and compare the sampled mean with the target AL and the method's exact mean.

Methods:
  sglang-match-expected  SGLANG_SIMULATE_ACC_LEN, METHOD=match-expected: floor/ceil of the
                         target, ONE draw per verify step shared by the whole batch; exact mean
  sglang-multinomial     METHOD=multinomial: round(clamp(N(AL, 1), 1, k+1)), one draw per
                         step for the batch; biased (3.24 at k=3 averages 3.127)
  vllm-synthetic         rejection_sample_method=synthetic, synthetic_acceptance_length:
                         per-request, per-position acceptance from vLLM's rate schedule
  trtllm                 TLLM_SPEC_DECODE_FORCE_NUM_ACCEPTED_TOKENS = AL-1: per request from
                         a fixed 65536-entry uniform pool hashed by (step, slot)
  chain                  per request and step, L from the golden distribution at k
  empirical              per request and step, L from --histogram FILE (CSV length,count)

The target is the golden AL(k) of --model/--thinking, or --al. Request i is batch
slot i in every step; per_request gives min, p50 and max over the B requests of
each one's mean L over the N steps (identical when the batch shares one draw).
The same flags and seed give byte-identical output.

Example:
  specsim sample --model qwen3.5 --thinking on --steps 6 --method sglang-match-expected --batch 64 --iterations 20000 --seed 1`

type samplePerRequest struct {
	Min float64 `json:"min"`
	P50 float64 `json:"p50"`
	Max float64 `json:"max"`
}

type sampleResult struct {
	Method       string           `json:"method"`
	Model        string           `json:"model,omitempty"`
	Thinking     string           `json:"thinking,omitempty"`
	Steps        int              `json:"steps"`
	Batch        int              `json:"batch"`
	Iterations   int              `json:"iterations"`
	Seed         uint64           `json:"seed"`
	SharedDraw   bool             `json:"shared_draw"`
	TargetAL     float64          `json:"target_al"`
	TargetSource string           `json:"target_source"`
	ExpectedMean float64          `json:"expected_mean"`
	ExpectedStd  float64          `json:"expected_std"`
	MeanAL       float64          `json:"mean_al"`
	Std          float64          `json:"std"`
	Bias         float64          `json:"bias"`
	Histogram    goldenKeyed      `json:"histogram"`
	PerRequest   samplePerRequest `json:"per_request"`
	Warnings     []string         `json:"warnings"`
}

func runSample(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("sample", sampleHelp, stderr)
	gf := addGoldenFlags(fs)
	ff := addFormatFlags(fs)
	model := fs.String("model", "", "model `name` for the golden target (key, file prefix or hub name)")
	thinking := fs.String("thinking", "on", "thinking `mode`: on or off")
	steps := fs.Int("steps", 0, "draft length `K` (speculative-num-steps / num_speculative_tokens / max_draft_len)")
	method := fs.String("method", acceptance.SGLangMatchExpected, "acceptance `method`: "+strings.Join(acceptance.Methods(), ", "))
	batch := fs.Int("batch", 64, "requests per verify step (`B`)")
	iterations := fs.Int("iterations", 20000, "verify steps to simulate (`N`)")
	seed := fs.Uint64("seed", 1, "random `seed`")
	al := fs.Float64("al", 0, "target AL (tokens per step, bonus included) instead of the golden curve's")
	histFile := fs.String("histogram", "", "CSV `FILE` of accepted lengths (length,count) for --method empirical")
	extrapolate := fs.Bool("extrapolate", false, "allow --steps beyond the golden curve's measured draft lengths (geometric tail, labelled)")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return usageExit(err)
	}
	fail := func(err error) int {
		fmt.Fprintln(stderr, "specsim sample:", flagError(err))
		return exitBadInput
	}
	if len(pos) > 0 {
		return fail(fmt.Errorf("unexpected argument %q", pos[0]))
	}
	format, err := ff.resolve()
	if err != nil {
		return fail(err)
	}
	stdout = textOut(stdout, format)
	alSet := false
	fs.Visit(func(f *flag.Flag) { alSet = alSet || f.Name == "al" })
	if *batch < 1 || *batch > sampleMaxBatch {
		return fail(fmt.Errorf("--batch %d outside 1..%d", *batch, sampleMaxBatch))
	}
	if *iterations < 1 {
		return fail(fmt.Errorf("--iterations %d: want at least 1", *iterations))
	}
	if int64(*batch)*int64(*iterations) > sampleMaxDraws {
		return fail(fmt.Errorf("--batch %d x --iterations %d = %d draws, more than the cap of %d; lower one of them",
			*batch, *iterations, int64(*batch)*int64(*iterations), sampleMaxDraws))
	}
	valid := false
	for _, m := range acceptance.Methods() {
		valid = valid || m == *method
	}
	if !valid {
		return fail(fmt.Errorf("unknown --method %q; methods: %s", *method, strings.Join(acceptance.Methods(), ", ")))
	}
	mode, err := golden.ParseThinking(*thinking)
	if err != nil {
		return fail(err)
	}
	if alSet && !(*al >= 1) {
		return fail(fmt.Errorf("--al %g: the acceptance length counts the bonus token, so it is at least 1", *al))
	}
	res := sampleResult{Method: *method, Batch: *batch, Iterations: *iterations, Seed: *seed, Warnings: []string{}}
	target := acceptance.Target{Method: *method}
	if alSet {
		target.AL = *al
	}
	k := *steps

	if *model != "" {
		set, err := gf.load()
		if err != nil {
			return fail(err)
		}
		if target.Curve, err = set.Curve(*model, mode); err != nil {
			return fail(err)
		}
		res.Model, res.Thinking = target.Curve.Model, string(mode)
	}
	if *method == acceptance.Empirical {
		if *histFile == "" {
			return fail(fmt.Errorf("--method empirical needs --histogram FILE (CSV length,count)"))
		}
		if target.Hist, err = acceptance.LoadHistogram(*histFile); err != nil {
			return fail(err)
		}
		if k == 0 {
			k = max(1, len(target.Hist.Counts)-1)
		}
	} else if *histFile != "" {
		return fail(fmt.Errorf("--histogram applies to --method empirical only"))
	}
	if k < 1 || k > acceptance.MaxDraftLength {
		return fail(fmt.Errorf("--steps %d outside 1..%d (the draft length k is required)", k, acceptance.MaxDraftLength))
	}
	res.Steps = k
	if curve := target.Curve; curve != nil && k > curve.MaxK() && !alSet {
		if !*extrapolate {
			return fail(fmt.Errorf("%s thinking %s: no golden AL at k=%d; measured draft lengths are 1..%d (%s); --extrapolate extends the curve, --al sets a target",
				curve.Model, mode, k, curve.MaxK(), curve.Source))
		}
		if target.Curve, err = curve.Extrapolate(k); err != nil {
			return fail(err)
		}
		res.Warnings = append(res.Warnings, fmt.Sprintf("golden AL at k=%d is extrapolated, not measured: %s", k, target.Curve.Extrapolation))
	}
	if target.Curve == nil && *method == acceptance.Chain {
		return fail(fmt.Errorf("--method chain needs --model"))
	}
	if target.Curve == nil && !alSet && *method != acceptance.Empirical {
		return fail(fmt.Errorf("--method %s needs --model (for the golden AL) or --al", *method))
	}
	sampler, point, err := target.Sampler(k, *seed)
	if err != nil {
		return fail(flagError(err))
	}
	res.TargetAL, res.TargetSource = point.AL, point.Source
	if point.Source == acceptance.SourceAL {
		res.TargetSource = "--al"
	}
	if curve := target.Curve; *method == acceptance.Chain {
		if cc, r := curve.Consistent(); r.Touches(k) {
			res.Warnings = append(res.Warnings, fmt.Sprintf("the golden curve is inconsistent; the distribution at k=%d comes from its consistent projection, mean %.3f against the measured %.3f",
				k, cc.AL[k-1], res.TargetAL))
		}
		for _, w := range curve.Check() {
			res.Warnings = append(res.Warnings, w)
		}
	}
	if sd, ok := sampler.(acceptance.SharedDraw); ok {
		res.SharedDraw = sd.SharesDraw()
	}
	res.ExpectedMean = goldenRound(sampler.ExpectedMean())
	if a, ok := sampler.(acceptance.Analytic); ok {
		_, v := golden.Moments(a.Marginal())
		res.ExpectedStd = goldenRound(math.Sqrt(v))
	}

	total := int64(*batch) * int64(*iterations)
	if format != formatJSON && total >= 100_000_000 {
		fmt.Fprintf(stderr, "specsim sample: drawing %d lengths...\n", total)
	}
	draws := acceptance.Draw(sampler, k, *batch, *iterations)
	counts := draws.Counts
	res.MeanAL = goldenRound(draws.Mean)
	res.Std = goldenRound(draws.Std)
	res.Bias = goldenRound(draws.Mean - res.TargetAL)
	for l := 1; l <= k+1; l++ {
		res.Histogram.add(strconv.Itoa(l), counts[l])
	}
	pr := draws.PerRequest
	res.PerRequest = samplePerRequest{Min: goldenRound(pr.Min), P50: goldenRound(pr.P50), Max: goldenRound(pr.Max)}

	if format == formatJSON {
		if err := writeJSON(stdout, res); err != nil {
			return fail(err)
		}
		return exitOK
	}
	sampleText(stdout, &res, counts, sampler, format)
	return exitOK
}

func sampleText(w io.Writer, res *sampleResult, counts []int64, s acceptance.Sampler, f format) {
	who := "each request draws its own length"
	if res.SharedDraw {
		who = "one draw per verify step, shared by the whole batch"
	}
	// Markdown joins consecutive lines into one paragraph, and a line
	// right after a table is one more row of it.
	pw := w
	if f == formatMarkdown {
		pw = paragraphs{w}
	}
	fmt.Fprintf(pw, "method %s (%s), k=%d, batch %d x %d verify steps, seed %d\n", res.Method, who, res.Steps, res.Batch, res.Iterations, res.Seed)
	fmt.Fprintf(pw, "target AL      %.4f  (%s)\n", res.TargetAL, res.TargetSource)
	fmt.Fprintf(pw, "expected mean  %.4f  (exact for this method; std %.4f)\n", res.ExpectedMean, res.ExpectedStd)
	fmt.Fprintf(pw, "sampled mean   %.4f  std %.4f  bias %+.4f (sampled - target)\n", res.MeanAL, res.Std, res.Bias)
	fmt.Fprintf(w, "per-request mean: min %.4f  p50 %.4f  max %.4f\n\n", res.PerRequest.Min, res.PerRequest.P50, res.PerRequest.Max)
	var marg []float64
	if a, ok := s.(acceptance.Analytic); ok {
		marg = a.Marginal()
	}
	total := float64(res.Batch) * float64(res.Iterations)
	t := &table{header: []string{">L (tokens)", ">count", ">share", ">expected share"}, csvHeader: []string{"length", "count", "share", "expected_share"}}
	for l := 1; l < len(counts); l++ {
		exp := ""
		if l-1 < len(marg) {
			exp = fmt.Sprintf("%.4f", marg[l-1])
		}
		t.add(strconv.Itoa(l), strconv.FormatInt(counts[l], 10), fmt.Sprintf("%.4f", float64(counts[l])/total), exp)
	}
	t.write(w, f)
	if f == formatMarkdown && len(res.Warnings) > 0 {
		fmt.Fprintln(w)
	}
	for _, s := range res.Warnings {
		fmt.Fprintln(pw, "warning:", s)
	}
}
