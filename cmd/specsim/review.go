package main

import (
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	"github.com/specsim/specsim/audit"
	"github.com/specsim/specsim/audit/model"
	"github.com/specsim/specsim/audit/recipe"
	"github.com/specsim/specsim/audit/review"
	"github.com/specsim/specsim/golden"
	"github.com/specsim/specsim/simulate"
)

func init() {
	register(&command{
		name:    "review",
		summary: "the PR evidence for a recipe and its checkpoint: draft precision (shipped / effective) and golden AL",
		run:     runReview,
	})
}

const reviewHelp = `specsim review: the evidence block a speculative-decoding PR needs, from a recipe,
the checkpoint it serves and (optionally) the job's logs.

Usage:
  specsim review --recipe FILE[:selector] --checkpoint DIR|hf://ORG/MODEL[@REV] [--log FILE]... [--format markdown | --json]

It writes two sections per recipe variant:
  Draft precision (shipped / effective): the MTP head's shipped precision and its
    evidence (tensor and scale counts from shard headers, or inferred from an
    index-only download), exclude coverage, the pinned engine's rule that
    decides the effective precision, the draft MoE backend and any fallback,
    per-rank draft memory (bytes floor and allocator footprint) against the
    logs' "Load weight end" lines, and prohibited settings the recipe inherits.
  Golden AL: the golden AL per role, the environment each role must run with,
    and with --log what the workers' environment dumps show and the logged
    accept length against the golden AL (accept-len-mismatch where it
    disagrees, as specsim logs judges).
The audit runs under the generation role's engine, parallel layout, draft
quantization, environment and MoE backends. Exit 0 when every check passes,
1 when any fails, 2 on bad input.

Example:
  specsim review --recipe recipes/qwen3.5-disagg.yaml:override_tp4_tp4_c8 \
      --checkpoint /models/Qwen3.5-397B-A17B-NVFP4 --log decode_0.out --format markdown`

func runReview(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("review", reviewHelp, stderr)
	gf := addGoldenFlags(fs)
	ff := addFormatFlags(fs)
	recipePath := fs.String("recipe", "", "srt-slurm recipe `FILE[:selector]` (required)")
	ckpt := fs.String("checkpoint", "", "checkpoint `DIR` (configs + index suffice) or hf://ORG/MODEL[@REV] (required)")
	var logs goldenFileList
	fs.Var(&logs, "log", "job log `FILE` (worker stdout: load lines, env dumps, decode lines); repeatable")
	model := fs.String("model", "", "golden model name, when the recipe's names do not find a curve")
	thinking := fs.String("thinking", "", "thinking `mode` on|off (default on: AgentX replays agentic traces with thinking on)")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return usageExit(err)
	}
	fail := func(err error) int {
		fmt.Fprintln(stderr, "specsim review:", err)
		return exitBadInput
	}
	format, err := ff.resolve()
	if err != nil {
		return fail(err)
	}
	stdout = textOut(stdout, format)
	switch {
	case len(pos) > 0:
		return fail(fmt.Errorf("unexpected argument %q (use --recipe and --checkpoint)", pos[0]))
	case *recipePath == "" || *ckpt == "":
		return fail(errors.New("--recipe and --checkpoint are required (see --help)"))
	}
	if *thinking != "" {
		t, err := golden.ParseThinking(*thinking)
		if err != nil {
			return fail(fmt.Errorf("--thinking: %w", err))
		}
		*thinking = string(t)
	}
	set, err := gf.load()
	if err != nil {
		return fail(err)
	}
	rc, err := loadRecipeArg(*recipePath) // "-": standard input, as recipe check
	if err != nil {
		return fail(err)
	}
	in := review.Input{Recipe: rc, RecipeOpts: recipe.Options{Curves: goldenCurves{set}, Model: *model, Thinking: *thinking},
		Checkpoint: *ckpt, Logs: logs, Audit: auditSource, Served: servedModel}
	rep, err := review.Build(in)
	if err != nil {
		var ce *audit.CorruptError
		if errors.As(err, &ce) {
			return fail(fmt.Errorf("unreadable or corrupt input: %w", err))
		}
		return fail(err)
	}
	switch format {
	case formatJSON:
		if err := writeJSON(stdout, rep); err != nil {
			return fail(err)
		}
	case formatCSV:
		writeReviewCSV(stdout, rep)
	case formatMarkdown:
		writeReviewMarkdown(stdout, rep, reviewCommand(*recipePath, *ckpt, logs, *model, *thinking))
	default:
		writeReviewText(stdout, rep)
	}
	if rep.Failed() {
		return exitFindings
	}
	return exitOK
}

func reviewCommand(recipePath, ckpt string, logs []string, model, thinking string) string {
	parts := []string{"specsim", "review", "--recipe", recipePath, "--checkpoint", ckpt}
	for _, l := range logs {
		parts = append(parts, "--log", l)
	}
	if model != "" {
		parts = append(parts, "--model", model)
	}
	if thinking != "" {
		parts = append(parts, "--thinking", thinking)
	}
	return strings.Join(append(parts, "--format", "markdown"), " ")
}

// md escapes a cell for a Markdown table.
func md(s string) string {
	return strings.NewReplacer("|", `\|`, "\n", " ").Replace(s)
}

// precisionRows are the rows of the draft-precision table.
func precisionRows(v *review.Variant) [][2]string {
	a := v.Audit
	m := a.MTP
	var rows [][2]string
	if !m.Present {
		return append(rows, [2]string{"MTP head", "none in the weight map"})
	}
	src := "shard headers"
	if m.ShippedInferred {
		src = "inferred from the weight map and configs: index-only, no shard header read"
		if !a.IndexOnly {
			src = "inferred from the weight map and configs: its shard is absent"
		}
	}
	rows = append(rows,
		[2]string{"MTP head", fmt.Sprintf("%s, %d layer(s), prefix `%s`", a.Draft.Kind, a.Draft.Layers, a.Draft.Prefix)},
		[2]string{"shipped precision", fmt.Sprintf("**%s** (%s)", m.ShippedDType, src)},
		[2]string{"evidence", fmt.Sprintf("%d MTP tensors, %d scale tensors, %d parameters, %s", m.TensorCount, m.ScaleTensorCount, m.ParamCount, gib(m.Bytes))},
	)
	q := "unquantized checkpoint"
	if cq := a.Checkpoint.Config.Quant; cq != nil {
		q = fmt.Sprintf("%s (%s), %d exclude patterns", cq.Algo, cq.Method, len(cq.Exclude))
	}
	rows = append(rows, [2]string{"checkpoint quantization", q})
	var cov []string
	for _, f := range a.Findings {
		if strings.Contains(f.Code, "exclude") && strings.HasPrefix(f.Code, "mtp-") {
			cov = append(cov, fmt.Sprintf("%s `%s`: %s", f.Severity, f.Code, firstSentence(f.Message)))
		}
	}
	if len(cov) == 0 {
		cov = []string{"every MTP linear is covered as shipped"}
	}
	rows = append(rows, [2]string{"exclude coverage", strings.Join(cov, "; ")})
	image := v.Container
	if image == "" {
		image = "not pinned"
	}
	if v.Engine != recipe.EngineSGLang && v.Engine != recipe.EngineVLLM {
		rows = append(rows, [2]string{fmt.Sprintf("effective precision (%s, image `%s`)", v.Engine, image),
			fmt.Sprintf("not modelled for %s: check its MTP loader by hand (SGLang would serve it as %s: %s)", v.Engine, m.EffectiveDType, a.Effective.Reason)})
	} else {
		rows = append(rows, [2]string{fmt.Sprintf("effective precision (%s, image `%s`)", a.Engine, image), fmt.Sprintf("**%s**: %s", m.EffectiveDType, a.Effective.Reason)})
	}
	if (v.Engine == recipe.EngineSGLang || v.Engine == recipe.EngineVLLM) && (a.Effective.Backend != "" || a.Effective.BackendNote != "") {
		fb := "no fallback"
		if a.Effective.FellBack {
			fb = "**falls back**"
		}
		rows = append(rows, [2]string{"draft MoE backend", fmt.Sprintf("%s, %s: %s", a.Effective.Backend, fb, a.Effective.BackendNote)})
	}
	var prohibited []string
	for _, f := range v.Prohibited() {
		prohibited = append(prohibited, fmt.Sprintf("%s `%s`: %s", f.Severity, f.Code, f.Message))
	}
	if len(prohibited) == 0 {
		prohibited = []string{"none set or inherited (SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE, draft quantization, draft dtype overrides)"}
	}
	rows = append(rows, [2]string{"prohibited settings", strings.Join(prohibited, "; ")})
	return rows
}

func firstSentence(s string) string {
	if i := strings.Index(s, ". "); i > 0 {
		return s[:i]
	}
	return s
}

func memoryRows(v *review.Variant) *table {
	t := &table{header: []string{">tp", ">ep", ">dp", ">draft floor GiB", ">draft footprint GiB", ">if BF16 GiB", ">if FP8 GiB", ">if NVFP4 GiB"}}
	cf := map[int]audit.Counterfactual{}
	for _, c := range v.Audit.Counterfactual {
		cf[c.TP] = c
	}
	for _, m := range v.Audit.Memory {
		c := cf[m.TP]
		t.add(strconv.Itoa(m.TP), strconv.Itoa(m.EP), strconv.Itoa(m.DP), fmt.Sprintf("%.3f", m.MTPFloorGiB), fmt.Sprintf("%.3f", m.MTPGiB),
			fmt.Sprintf("%.3f", c.BF16GiB), fmt.Sprintf("%.3f", c.FP8GiB), fmt.Sprintf("%.3f", c.NVFP4GiB))
		t.addCSV(strconv.Itoa(m.TP), strconv.Itoa(m.EP), strconv.Itoa(m.DP), num(m.MTPFloorGiB), num(m.MTPGiB),
			num(c.BF16GiB), num(c.FP8GiB), num(c.NVFP4GiB))
	}
	return t
}

func roleRows(v *review.Variant, logs bool) *table {
	h := []string{"role", "engine", ">k", ">golden AL", "must run with", "injected"}
	if logs {
		h = append(h, "logs show")
	}
	t := &table{header: h, csvHeader: append([]string{"role", "engine", "k", "golden_al", "must_run_with", "injected", "injected_by"}, h[6:]...)}
	for _, r := range v.Roles {
		al, k := "-", "-"
		if r.ExpectedAL != nil {
			al = recipe.FormatAL(*r.ExpectedAL)
		}
		if r.DraftLen > 0 {
			k = strconv.Itoa(r.DraftLen)
		}
		must := injectionCell(r.MustShow)
		inj := "no (schema 1: the recipe sets it)"
		if r.Injected {
			inj = "yes (synthetic acceptance)"
		}
		if r.ExpectedAL == nil {
			inj = "-"
		}
		row := []string{r.Role, r.Engine, k, al, must, inj}
		// CSV: injected true/false (empty without a golden AL) and who
		// injects: specsim's synthetic acceptance or the recipe.
		injected, by := "", ""
		if r.ExpectedAL != nil {
			injected, by = strconv.FormatBool(r.Injected), "recipe"
			if r.Injected {
				by = "synthetic_acceptance"
			}
		}
		crow := []string{r.Role, r.Engine, k, al, must, injected, by}
		if logs {
			row = append(row, shownCell(r))
			crow = append(crow, shownCell(r))
		}
		t.add(row...)
		t.addCSV(crow...)
	}
	return t
}

func shownCell(r review.Role) string {
	if len(r.MustShow) == 0 {
		return "-"
	}
	keys := make([]string, 0, len(r.MustShow))
	for k := range r.MustShow {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var parts []string
	for _, k := range keys {
		vals := r.Shown[k]
		if len(vals) == 0 {
			parts = append(parts, k+": not shown")
			continue
		}
		var vs []string
		for _, s := range vals {
			vs = append(vs, fmt.Sprintf("%s (%dx, %s:%d)", s.Value, s.Count, s.File, s.Line))
		}
		parts = append(parts, k+"="+strings.Join(vs, ", "))
	}
	return strings.Join(parts, "; ")
}

func writeReviewMarkdown(w io.Writer, rep *review.Report, command string) {
	for i := range rep.Variants {
		v := &rep.Variants[i]
		if len(rep.Variants) > 1 {
			fmt.Fprintf(w, "## Variant `%s`\n\n", v.Name)
		}
		fmt.Fprintf(w, "### Draft precision (shipped / effective)\n\n")
		if v.Audit == nil {
			fmt.Fprintf(w, "No speculative generation role: nothing to audit.\n\n")
		} else {
			fmt.Fprintf(w, "Checkpoint `%s`, draft role `%s` (%s, %s).\n\n", rep.Checkpoint, v.DraftRole, v.Engine, v.Layout)
			fmt.Fprintln(w, "| | |")
			fmt.Fprintln(w, "|---|---|")
			for _, r := range precisionRows(v) {
				fmt.Fprintf(w, "| %s | %s |\n", md(r[0]), md(r[1]))
			}
			fmt.Fprintln(w)
			if len(v.Audit.Memory) > 0 {
				fmt.Fprintf(w, "Draft weight memory per rank (GiB = 2^30 bytes, as SGLang logs it; the floor is the parameter bytes, the footprint an upper estimate with allocator rounding):\n\n")
				memoryRows(v).write(w, formatMarkdown)
				fmt.Fprintln(w)
			}
			if len(v.Audit.Log) > 0 {
				logTable(v.Audit).write(w, formatMarkdown)
				fmt.Fprintln(w)
			}
		}
		fmt.Fprintf(w, "### Golden AL\n\n")
		if v.Curve != "" {
			fmt.Fprintf(w, "Golden curve `%s`, thinking %s.\n\n", v.Curve, v.Thinking)
		} else {
			fmt.Fprintf(w, "No golden curve found for the recipe's model (see findings).\n\n")
		}
		roleRows(v, len(rep.Logs) > 0).write(w, formatMarkdown)
		fmt.Fprintln(w)
		if v.Accept != nil {
			fmt.Fprintf(w, "Logged accept length vs the golden AL: %s.\n\n", v.Accept.Verdict)
		}
		if fs := v.Problems(); len(fs) > 0 {
			fmt.Fprintf(w, "Findings:\n\n")
			for _, f := range fs {
				fmt.Fprintf(w, "- **%s** `%s`: %s\n", f.Severity, f.Code, f.Message)
			}
			fmt.Fprintln(w)
		}
	}
	fmt.Fprintf(w, "Command: `%s`\n", command)
}

// writeReviewCSV writes the review as tables with a variant column: the
// roles, the draft memory and load log where audited, and one table of
// findings, the JSON's "findings" (errors and warnings of the recipe
// check, the checkpoint audit and the review, most serious first).
func writeReviewCSV(w io.Writer, rep *review.Report) {
	var roles, mem, logs, findings *table
	for i := range rep.Variants {
		v := &rep.Variants[i]
		roles = roleRows(v, len(rep.Logs) > 0).withColumn(roles, "variant", v.Name)
		if v.Audit != nil && len(v.Audit.Memory) > 0 {
			mem = memoryRows(v).withColumn(mem, "variant", v.Name)
		}
		if v.Audit != nil && len(v.Audit.Log) > 0 {
			logs = logTable(v.Audit).withColumn(logs, "variant", v.Name)
		}
		findings = findingsCSV(v.Problems()).withColumn(findings, "variant", v.Name)
	}
	for _, t := range []*table{roles, mem, logs, findings} {
		if t != nil {
			t.write(w, formatCSV)
		}
	}
}

func writeReviewText(w io.Writer, rep *review.Report) {
	for i := range rep.Variants {
		v := &rep.Variants[i]
		fmt.Fprintf(w, "== %s\n", v.Name)
		fmt.Fprintln(w, "Draft precision (shipped / effective)")
		if v.Audit == nil {
			fmt.Fprintln(w, "  no speculative generation role: nothing to audit")
		} else {
			fmt.Fprintf(w, "  checkpoint %s, draft role %s (%s, %s)\n", rep.Checkpoint, v.DraftRole, v.Engine, v.Layout)
			for _, r := range precisionRows(v) {
				fmt.Fprintf(w, "  %-24s %s\n", r[0]+":", strings.ReplaceAll(r[1], "**", ""))
			}
			if len(v.Audit.Memory) > 0 {
				memoryRows(v).write(w, formatText)
			}
			if len(v.Audit.Log) > 0 {
				logTable(v.Audit).write(w, formatText)
			}
		}
		fmt.Fprintln(w)
		fmt.Fprintln(w, "Golden AL")
		if v.Curve != "" {
			fmt.Fprintf(w, "  curve %s, thinking %s\n", v.Curve, v.Thinking)
		}
		roleRows(v, len(rep.Logs) > 0).write(w, formatText)
		if v.Accept != nil {
			fmt.Fprintf(w, "  logged accept length: %s\n", v.Accept.Verdict)
		}
		if fs := v.Problems(); len(fs) > 0 {
			fmt.Fprintln(w)
			for _, f := range fs {
				fmt.Fprintf(w, "  %-7s %s: %s\n", f.Severity, f.Code, f.Message)
			}
		}
		fmt.Fprintln(w)
	}
}

// servedModel is the shape of the preset a recipe's model name resolves
// to, nil for a name no preset has.
func servedModel(name string) (*model.Architecture, string) {
	m, err := simulate.LookupPreset(name)
	if err != nil {
		return nil, ""
	}
	return &m.Architecture, m.Name + " from " + m.Source
}
