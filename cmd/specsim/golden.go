package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/specsim/specsim/golden"
	"github.com/specsim/specsim/simulate/chart"
)

func init() {
	register(&command{
		name:    "golden",
		summary: "list and show golden acceptance-length curves (AL per draft length, distributions)",
		run:     runGolden,
	})
}

const goldenHelp = `specsim golden: golden acceptance-length (AL) curves.

Usage:
  specsim golden list [--golden-dir DIR] [--golden-file FILE]... [--json]
  specsim golden show --model M --thinking on|off [--steps K] [--extrapolate] [--plot FILE.png|.svg] [--json | --format markdown|csv]
  specsim golden lookup --model M --thinking on|off --steps K [--draft-model D]

A golden curve gives AL(k), the mean tokens one verify step emits per request
(accepted drafts + the bonus token), for each draft length k. The curves are
embedded (InferenceX golden_al_distribution files); --golden-dir and
--golden-file add curves or override embedded ones with the same model key.
Models are found by key (qwen3.5-397b-a17b-nvfp4), file prefix (qwen3.5) or
hub name (nvidia/Qwen3.5-397B-A17B-NVFP4, Qwen/Qwen3.5-397B-A17B).

Example:
  specsim golden show --model qwen3.5 --thinking on --steps 6`

func runGolden(args []string, stdout, stderr io.Writer) int {
	return subcommands("golden", goldenHelp, map[string]func([]string, io.Writer, io.Writer) int{
		"list":   runGoldenList,
		"show":   runGoldenShow,
		"lookup": runGoldenLookup,
	}, args, stdout, stderr)
}

// goldenFlags are --golden-dir and --golden-file, shared by every command
// that needs golden curves: addGoldenFlags(fs) before parsing, then load().
type goldenFlags struct {
	dir   string
	files goldenFileList
}

type goldenFileList []string

func (l *goldenFileList) String() string     { return strings.Join(*l, ",") }
func (l *goldenFileList) Set(v string) error { *l = append(*l, v); return nil }

func addGoldenFlags(fs *flag.FlagSet) *goldenFlags {
	g := &goldenFlags{}
	fs.StringVar(&g.dir, "golden-dir", "", "directory of golden `DIR`/*.yaml files that add to or override the embedded curves")
	fs.Var(&g.files, "golden-file", "golden `FILE` (InferenceX schema) that adds or overrides curves; repeatable, later files win")
	return g
}

// load returns the embedded curves, then --golden-dir's, then each
// --golden-file's merged over them.
func (g *goldenFlags) load() (*golden.Set, error) { return golden.Load(g.dir, g.files) }

// goldenKeyed is a JSON object with keys in insertion order ("1", "2", ...,
// "10"), which a Go map would sort as strings.
type goldenKeyed struct {
	keys []string
	vals []any
}

func (o *goldenKeyed) add(k string, v any) { o.keys = append(o.keys, k); o.vals = append(o.vals, v) }

func (o goldenKeyed) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, k := range o.keys {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Quote(k))
		b.WriteByte(':')
		var v []byte
		switch x := o.vals[i].(type) {
		case float64:
			v = strconv.AppendFloat(nil, x, 'g', -1, 64)
		case int64:
			v = strconv.AppendInt(nil, x, 10)
		default:
			return nil, fmt.Errorf("goldenKeyed: unsupported %T", x)
		}
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// goldenRound drops float noise from derived values (0.07000000000000006).
func goldenRound(x float64) float64 { return math.Round(x*1e9) / 1e9 }

func goldenRoundAll(xs []float64) []float64 {
	out := make([]float64, len(xs))
	for i, x := range xs {
		out[i] = goldenRound(x)
	}
	return out
}

func goldenCurveObject(al []float64) goldenKeyed {
	var o goldenKeyed
	for k, v := range al {
		o.add(strconv.Itoa(k+1), goldenRound(v))
	}
	return o
}

// ---------------------------------------------------------------------------

type goldenListModel struct {
	Key       string      `json:"key"`
	Model     string      `json:"model"`
	Source    string      `json:"source"`
	CurveName string      `json:"curve_name"`
	Prefixes  []string    `json:"prefixes"`
	Thinking  string      `json:"thinking"`
	Curve     goldenKeyed `json:"curve"`
	Warnings  []string    `json:"warnings"`
}

func runGoldenList(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("golden list", `specsim golden list: every golden curve with its file, prefix and AL per draft length k.

Example:
  specsim golden list --golden-file my_model_mtp.yaml`, stderr)
	gf := addGoldenFlags(fs)
	ff := addFormatFlags(fs)
	pos, err := parseFlags(fs, args)
	if err != nil {
		return usageExit(err)
	}
	if len(pos) > 0 {
		fmt.Fprintf(stderr, "specsim golden list: unexpected argument %q\n", pos[0])
		return exitBadInput
	}
	format, err := ff.resolve()
	if err != nil {
		fmt.Fprintln(stderr, "specsim golden list:", err)
		return exitBadInput
	}
	stdout = textOut(stdout, format)
	set, err := gf.load()
	if err != nil {
		fmt.Fprintln(stderr, "specsim golden list:", err)
		return exitBadInput
	}
	var models []goldenListModel
	maxK := 0
	for _, key := range set.Models() {
		info, err := set.Info(key)
		if err != nil {
			fmt.Fprintln(stderr, "specsim golden list:", err)
			return exitBadInput
		}
		for _, t := range info.Modes {
			c, err := set.Curve(key, t)
			if err != nil {
				fmt.Fprintln(stderr, "specsim golden list:", err)
				return exitBadInput
			}
			w := c.Check()
			if w == nil {
				w = []string{}
			}
			models = append(models, goldenListModel{Key: info.Key, Model: info.Model, Source: info.Source, CurveName: info.CurveName,
				Prefixes: info.Prefixes, Thinking: string(t), Curve: goldenCurveObject(c.AL), Warnings: w})
			maxK = max(maxK, c.MaxK())
		}
	}
	if format == formatJSON {
		if models == nil {
			models = []goldenListModel{}
		}
		if err := writeJSON(stdout, struct {
			Models []goldenListModel `json:"models"`
		}{models}); err != nil {
			fmt.Fprintln(stderr, "specsim golden list:", err)
			return exitBadInput
		}
		return exitOK
	}
	csv := format == formatCSV
	t := &table{header: []string{"model", "prefix", "thinking"}}
	for k := 1; k <= maxK; k++ {
		if csv {
			t.header = append(t.header, fmt.Sprintf("al_k%d", k))
		} else {
			t.header = append(t.header, fmt.Sprintf(">AL k=%d", k))
		}
	}
	t.header = append(t.header, ">warnings")
	for _, m := range models {
		row := []string{m.Key, strings.Join(m.Prefixes, ","), m.Thinking}
		for k := 0; k < maxK; k++ {
			switch {
			case k < len(m.Curve.vals) && csv:
				row = append(row, fmt.Sprint(m.Curve.vals[k])) // goldenCurveObject rounded it
			case k < len(m.Curve.vals):
				row = append(row, fmt.Sprintf("%.2f", m.Curve.vals[k]))
			default:
				row = append(row, "")
			}
		}
		row = append(row, strconv.Itoa(len(m.Warnings)))
		t.add(row...)
	}
	t.write(stdout, format)
	if format != formatMarkdown {
		fmt.Fprintln(stdout, "\nAL counts the bonus token (tokens per verify step per request). Details: specsim golden show --model M --thinking on|off")
	}
	return exitOK
}

// ---------------------------------------------------------------------------

type goldenShowResult struct {
	Model            string                   `json:"model"`
	Thinking         string                   `json:"thinking"`
	Source           string                   `json:"source"`
	Curve            goldenKeyed              `json:"curve"`
	Steps            int                      `json:"steps,omitempty"`
	AL               *float64                 `json:"al,omitempty"`
	PrefixAcceptance []float64                `json:"prefix_acceptance"`
	Conditional      []float64                `json:"conditional_acceptance"`
	Distribution     *goldenKeyed             `json:"distribution,omitempty"`
	Mean             *float64                 `json:"mean,omitempty"`
	Variance         *float64                 `json:"variance,omitempty"`
	Consistent       *goldenRepairJSON        `json:"consistent,omitempty"`
	Extrapolated     *goldenExtrapolationJSON `json:"extrapolated,omitempty"`
	Warnings         []string                 `json:"warnings"`
}

type goldenRepairJSON struct {
	Projection       string      `json:"projection"`
	Curve            goldenKeyed `json:"curve"`
	Moved            goldenKeyed `json:"moved"`
	PrefixAcceptance []float64   `json:"prefix_acceptance"`
}

type goldenExtrapolationJSON struct {
	FromK  int    `json:"from_k"`
	Method string `json:"method"`
}

func runGoldenShow(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("golden show", `specsim golden show: one golden curve, its prefix and conditional acceptance, and with
--steps K the distribution of the accepted length L (tokens per verify step, bonus
included) at draft length K, with mean and variance.

Prefix acceptance p_j = AL(j) - AL(j-1) (AL(0) = 1) is the probability that the first
j drafts are accepted; P(L = 1+j) = p_j - p_(j+1) for j < K and P(L = 1+K) = p_K.
Inconsistent curves (AL falling, or p_j rising) are reported as warnings and
repaired by least-squares projection; distributions come from the repaired curve.

Examples:
  specsim golden show --model qwen3.5 --thinking on --steps 6
  specsim golden show --model nvidia/Qwen3.5-397B-A17B-NVFP4 --thinking off --json
  specsim golden show --model qwen3.5 --steps 10 --extrapolate --plot al.svg`, stderr)
	gf := addGoldenFlags(fs)
	ff := addFormatFlags(fs)
	model := fs.String("model", "", "model `name`: key, file prefix or hub name (required)")
	thinking := fs.String("thinking", "on", "thinking `mode`: on or off (AgentX replays run with thinking on)")
	steps := fs.Int("steps", 0, "draft length `K` (speculative-num-steps / num_speculative_tokens / max_draft_len) for AL and the distribution of L")
	extrapolate := fs.Bool("extrapolate", false, "allow --steps beyond the measured draft lengths (geometric tail, labelled)")
	plotFile := fs.String("plot", "", "write a plot to `FILE` (.png or .svg): AL(k), or with --steps the distribution of L")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return usageExit(err)
	}
	fail := func(err error) int {
		fmt.Fprintln(stderr, "specsim golden show:", err)
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
	if *model == "" {
		return fail(fmt.Errorf("--model is required (a key such as qwen3.5-397b-a17b-nvfp4, a prefix such as qwen3.5, or a hub name)"))
	}
	mode, err := golden.ParseThinking(*thinking)
	if err != nil {
		return fail(err)
	}
	set, err := gf.load()
	if err != nil {
		return fail(err)
	}
	rep, err := set.ReportCurve(*model, mode, *steps, *extrapolate)
	var de *golden.DraftLengthError
	switch {
	case errors.As(err, &de) && de.Extrapolable:
		return fail(fmt.Errorf("--steps %d: %s; --extrapolate extends the curve", de.Steps, de.Reason))
	case errors.As(err, &de):
		return fail(fmt.Errorf("--steps %d: %s", de.Steps, de.Reason))
	case err != nil:
		return fail(err)
	}
	curve, consistent, repair, dist := rep.Curve, rep.Consistent, rep.Repair, rep.Dist
	res := goldenShowResult{
		Model: curve.Model, Thinking: string(mode), Source: curve.Source,
		Curve:            goldenCurveObject(curve.AL),
		PrefixAcceptance: goldenRoundAll(curve.PrefixAcceptance()),
		Conditional:      goldenRoundAll(curve.ConditionalAcceptance()),
		Warnings:         append([]string{}, rep.Warnings...),
	}
	if repair.Changed {
		rj := &goldenRepairJSON{Projection: repair.Projection, Curve: goldenCurveObject(consistent.AL),
			PrefixAcceptance: goldenRoundAll(consistent.PrefixAcceptance())}
		for k, m := range repair.Moved {
			rj.Moved.add(strconv.Itoa(k+1), goldenRound(m))
		}
		res.Consistent = rj
	}
	if curve.Measured > 0 {
		res.Extrapolated = &goldenExtrapolationJSON{FromK: curve.Measured + 1, Method: curve.Extrapolation}
	}
	if rep.Steps > 0 {
		al, mean, variance := goldenRound(rep.AL), goldenRound(rep.Mean), goldenRound(rep.Variance)
		res.Steps, res.AL, res.Mean, res.Variance = rep.Steps, &al, &mean, &variance
		var d goldenKeyed
		for l, p := range dist {
			d.add(strconv.Itoa(l+1), goldenRound(p))
		}
		res.Distribution = &d
	}
	if *plotFile != "" {
		if err := chart.AL(*plotFile, rep); err != nil {
			return fail(plotFlagError(err))
		}
	}
	switch format {
	case formatJSON:
		if err := writeJSON(stdout, res); err != nil {
			return fail(err)
		}
	default:
		goldenShowText(stdout, format, &res, curve, consistent, repair, dist)
	}
	return exitOK
}

func goldenShowText(w io.Writer, format format, res *goldenShowResult, curve, consistent *golden.Curve, repair golden.Repair, dist []float64) {
	md := format == formatMarkdown
	if md {
		fmt.Fprintf(w, "**%s**, thinking %s, from `%s`\n\n", res.Model, res.Thinking, res.Source)
	} else {
		fmt.Fprintf(w, "%s, thinking %s, from %s\n\n", res.Model, res.Thinking, res.Source)
	}
	// CSV is for machines: snake_case headers (the JSON keys') and one
	// number per cell, unrounded beyond goldenRound; extrapolation is a
	// column of its own.
	csv := format == formatCSV
	num := func(x float64, prec int) string {
		if csv {
			return strconv.FormatFloat(goldenRound(x), 'g', -1, 64)
		}
		return strconv.FormatFloat(x, 'f', prec, 64)
	}
	t := &table{header: []string{">k", ">AL (tokens/step)", ">p_k prefix accept"}}
	if csv {
		t.header = []string{"k", "al", "extrapolated", "prefix_acceptance"}
	}
	if repair.Changed {
		if csv {
			t.header = append(t.header, "consistent_al", "moved", "consistent_prefix_acceptance")
		} else {
			t.header = append(t.header, ">consistent AL", ">moved", ">consistent p_k")
		}
	}
	if csv {
		t.header = append(t.header, "conditional_acceptance")
	} else {
		t.header = append(t.header, ">c_k cond. accept")
	}
	cond := res.Conditional
	consistentP := consistent.PrefixAcceptance()
	for k, al := range curve.AL {
		extrap := curve.Measured > 0 && k >= curve.Measured
		row := []string{strconv.Itoa(k + 1), num(al, 3)}
		switch {
		case csv:
			row = append(row, strconv.FormatBool(extrap))
		case extrap:
			row[1] += " (extrap.)"
		}
		row = append(row, num(res.PrefixAcceptance[k], 3))
		if repair.Changed {
			moved := fmt.Sprintf("%+.3f", repair.Moved[k])
			if csv {
				moved = num(repair.Moved[k], 3)
			}
			row = append(row, num(consistent.AL[k], 3), moved, num(consistentP[k], 3))
		}
		row = append(row, num(cond[k], 3))
		t.add(row...)
	}
	t.write(w, format)
	if repair.Changed {
		fmt.Fprintf(w, "\nConsistent curve: %s. c_k = p_k/p_(k-1) of the consistent curve.\n", repair.Projection)
	}
	if dist != nil {
		fmt.Fprintf(w, "\nAt k=%d: AL %.3f; L (tokens per verify step) has mean %.4f, variance %.4f, std %.4f\n\n",
			res.Steps, *res.AL, *res.Mean, *res.Variance, math.Sqrt(*res.Variance))
		d := &table{header: []string{">L (tokens)", ">P(L)", ">P(L >= l)"}}
		if csv {
			d.header = []string{"length", "probability", "probability_at_least"}
		}
		tail := 1.0
		for l, p := range dist {
			d.add(strconv.Itoa(l+1), num(p, 4), num(max(0, tail), 4))
			tail -= p
		}
		d.write(w, format)
	}
	if len(res.Warnings) > 0 {
		fmt.Fprintln(w)
		for _, s := range res.Warnings {
			fmt.Fprintln(w, "warning:", s)
		}
	}
}

const goldenLookupHelp = `specsim golden lookup: the bare golden AL for one model, thinking mode and draft
length, for scripts: one number on stdout, formatted as InferenceX writes it into
SGLANG_SIMULATE_ACC_LEN (Python "%g": 4.80 prints 4.8). TensorRT-LLM's
TLLM_SPEC_DECODE_FORCE_NUM_ACCEPTED_TOKENS is this value minus 1.

A model with several curve files (minimaxm3: eagle3 and eagle3_gqa) is an error
listing them unless --draft-model names the draft checkpoint (the _gqa curve when
its path contains "gqa") or --model names the curve itself.

Example:
  specsim golden lookup --model qwen3.5 --thinking on --steps 6          # 4.8
  specsim golden lookup --model minimaxm3 --steps 3 --draft-model org/MiniMax-M3-EAGLE3-GQA`

func runGoldenLookup(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("golden lookup", goldenLookupHelp, stderr)
	gf := addGoldenFlags(fs)
	model := fs.String("model", "", "model `name`: key, curve name, file prefix or hub name (required)")
	thinking := fs.String("thinking", "on", "thinking `mode`: on or off")
	steps := fs.Int("steps", 0, "draft length `K` (required)")
	draft := fs.String("draft-model", "", "draft checkpoint `path`, to choose among a model's curves")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return usageExit(err)
	}
	fail := func(err error) int {
		fmt.Fprintln(stderr, "specsim golden lookup:", err)
		return exitBadInput
	}
	switch {
	case len(pos) > 0:
		return fail(fmt.Errorf("unexpected argument %q", pos[0]))
	case *model == "":
		return fail(fmt.Errorf("--model is required"))
	case *steps < 1 || *steps > golden.MaxDraftLength:
		return fail(fmt.Errorf("--steps %d: want a draft length in 1..%d", *steps, golden.MaxDraftLength))
	}
	mode, err := golden.ParseThinking(*thinking)
	if err != nil {
		return fail(err)
	}
	set, err := gf.load()
	if err != nil {
		return fail(err)
	}
	curve, err := set.CurveFor(*model, *draft, mode)
	if err != nil {
		return fail(flagError(err))
	}
	al, err := curve.At(*steps)
	if err != nil {
		return fail(err)
	}
	fmt.Fprintln(stdout, strconv.FormatFloat(al, 'g', 6, 64))
	return exitOK
}
