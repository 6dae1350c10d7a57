package main

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/specsim/specsim/audit/finding"
	"github.com/specsim/specsim/audit/recipe"
	"github.com/specsim/specsim/golden"
	"github.com/specsim/specsim/simulate"
)

func init() {
	register(&command{
		name:    "recipe",
		summary: "check an srt-slurm recipe's simulated-acceptance env and draft precision (recipe check FILE[:selector]), or write one (recipe emit)",
		run:     runRecipe,
	})
}

var recipeHelp = `
specsim recipe check FILE[:selector] [--model M] [--thinking on|off] [--golden-dir DIR] [--golden-file FILE]
                     [--json | --format markdown]
specsim recipe emit [predict's deployment flags] [--engine sglang|vllm|trtllm] [--conc N]
                     (writes a recipe; see specsim recipe emit --help)

Resolves every variant of an srt-slurm recipe (schema 2: base + override_* /
zip_override_* merged as srt-slurm merges them; schema 1: backend.*_environment
and backend.<engine>_config.<mode>), works out the golden acceptance length
(AL, tokens per verify step including the bonus token) each speculative role
gets from AgentX synthetic acceptance, and checks hard-coded values, method,
token mode, topk, draft lengths, draft precision (speculative-draft-model-
quantization, SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE anywhere it is inherited) and
CUDA-graph coverage of the running-request cap per rank.

The selector is base, override_<name>, zip_override_<name>, zip_override_<name>[i]
or a glob (override_tp4_*); without one every override variant is checked.
Thinking is on by default (AgentX replays agentic traces with thinking on).

Exit status: 0 clean, 1 error findings, 2 unreadable or invalid input (a value
out of its engine's range is named with its key path and the range).

Example:
  specsim recipe check testdata/recipes/schema2_qwen3.5_sglang_gb300-fp4_agentx_disagg-variants.yaml:override_tp4_tp4_c8
  specsim recipe emit --topology disagg:1xtp4+1xtp4 --steps 3 | specsim recipe check -

Finding codes (stable; scripts match on them):
` + wrapCodes(recipe.Codes())

// wrapCodes lists codes comma-separated, indented, under 80 columns.
func wrapCodes(codes []string) string {
	var b strings.Builder
	line := " "
	for i, c := range codes {
		if i < len(codes)-1 {
			c += ","
		}
		if len(line)+1+len(c) > 78 {
			b.WriteString(line + "\n")
			line = " "
		}
		line += " " + c
	}
	return b.String() + line + "\n"
}

func runRecipe(args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 && args[0] == "emit" {
		return runRecipeEmit(args[1:], stdout, stderr)
	}
	if len(args) == 0 || args[0] != "check" {
		if len(args) > 0 && (args[0] == "--help" || args[0] == "-h" || args[0] == "-help") {
			fmt.Fprintln(stdout, strings.TrimSpace(recipeHelp))
			return exitOK
		}
		fmt.Fprintln(stderr, "specsim recipe: want \"recipe check FILE[:selector]\" or \"recipe emit [flags]\"; see specsim recipe --help")
		return exitBadInput
	}
	fs := newFlagSet("recipe check", recipeHelp, stderr)
	model := fs.String("model", "", "model name for the golden curve (key, prefix such as qwen3.5, or hub name); default: from the recipe")
	thinking := fs.String("thinking", "", "thinking mode of the golden curve: on or off (default on)")
	gf := addGoldenFlags(fs)
	ff := addFormatFlags(fs)
	pos, err := parseFlags(fs, args[1:])
	if err != nil {
		return usageExit(err)
	}
	format, err := ff.resolve()
	if err != nil {
		fmt.Fprintln(stderr, "specsim recipe check:", err)
		return exitBadInput
	}
	stdout = textOut(stdout, format)
	if len(pos) != 1 {
		fmt.Fprintln(stderr, "specsim recipe check: want exactly one FILE[:selector]")
		return exitBadInput
	}
	if *thinking != "" {
		t, err := golden.ParseThinking(*thinking)
		if err != nil {
			fmt.Fprintln(stderr, "specsim recipe check: --thinking:", err)
			return exitBadInput
		}
		*thinking = string(t)
	}
	set, err := gf.load()
	if err != nil {
		fmt.Fprintln(stderr, "specsim recipe check:", err)
		return exitBadInput
	}
	r, err := loadRecipeArg(pos[0])
	if err != nil {
		fmt.Fprintln(stderr, "specsim recipe check:", err)
		return exitBadInput
	}
	invalid := false
	for _, v := range r.Variants {
		for _, iv := range v.InvalidValues() {
			fmt.Fprintf(stderr, "specsim recipe check: %s:%s: %s\n", r.File, v.Name, iv)
			invalid = true
		}
	}
	if invalid {
		return exitBadInput
	}
	rep := recipe.Check(r, recipe.Options{Curves: goldenCurves{set}, Model: *model, Thinking: *thinking})
	switch format {
	case formatJSON:
		if err := writeJSON(stdout, rep); err != nil {
			fmt.Fprintln(stderr, "specsim recipe check:", err)
			return exitBadInput
		}
	case formatMarkdown:
		writeRecipeMarkdown(stdout, rep)
	case formatCSV:
		writeRecipeCSV(stdout, rep)
	default:
		writeRecipeText(stdout, rep)
	}
	if rep.Errors() > 0 {
		return exitFindings
	}
	return exitOK
}

// goldenCurves adapts a golden.Set to what the recipe checks need. A name
// the set does not know but a preset does reads the preset's curve (its
// GoldenKey: Qwen3.5-122B-A10B borrows the 397B's), the curve predict and
// recipe emit take for that model.
type goldenCurves struct{ set *golden.Set }

func (g goldenCurves) key(name string) string {
	if _, err := g.set.Resolve(name); err != nil {
		if m, perr := simulate.LookupPreset(name); perr == nil && m.GoldenKey != "" {
			return m.GoldenKey
		}
	}
	return name
}

func (g goldenCurves) Curve(name, thinking string) (*recipe.GoldenCurve, error) {
	t, err := golden.ParseThinking(thinking)
	if err != nil {
		return nil, err
	}
	c, err := g.set.Curve(g.key(name), t)
	if err != nil {
		return nil, err
	}
	return &recipe.GoldenCurve{Model: c.Model, Thinking: string(c.Thinking), Source: c.Source, AL: append([]float64(nil), c.AL...)}, nil
}

func (g goldenCurves) Prefix(name string) (string, error) {
	info, err := g.set.Info(g.key(name))
	if err != nil {
		return "", err
	}
	if len(info.Prefixes) == 0 {
		return "", errors.New("no prefix")
	}
	return info.Prefixes[0], nil
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func intCell(n int) string {
	if n == 0 {
		return "-"
	}
	return strconv.Itoa(n)
}

func injectionCell(env map[string]string) string {
	keys := make([]string, 0, len(env))
	for k := range env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "=" + env[k]
	}
	if len(parts) == 0 {
		return "-"
	}
	return strings.Join(parts, " ")
}

func roleTable(v *recipe.VariantReport) *table {
	t := &table{header: []string{"role", "engine", "algorithm", ">k", ">topk", ">draft tokens", "draft quant", "draft MoE runner", ">expected AL", "injection"}}
	for i := range v.Roles {
		rr := &v.Roles[i]
		r := rr.Resolved()
		algo, k, topk, ndt, quant, moe, al := "-", "-", "-", "-", "-", "-", "-"
		if s := r.Spec; s != nil {
			algo, k, topk, ndt = orDash(s.Algorithm), intCell(s.DraftLength), intCell(s.TopK), intCell(s.NumDraftTokens)
			quant, moe = s.DraftQuantization, orDash(s.MoERunner)
			if quant == "" {
				quant = "as target"
			}
		}
		if rr.ExpectedAL != nil {
			al = recipe.FormatAL(*rr.ExpectedAL)
		}
		inj := injectionCell(rr.Env)
		if !rr.Injected && rr.ExpectedAL != nil {
			inj = "none (schema 1); runs with " + inj
		}
		t.add(rr.Role, rr.Engine, algo, k, topk, ndt, quant, moe, al, inj)
	}
	return t
}

func findingTable(fs []recipe.Finding) *table {
	t := &table{header: []string{"severity", "code", "message"}}
	for _, f := range fs {
		t.add(string(f.Severity), f.Code, f.Message)
	}
	return t
}

func curveLine(v *recipe.VariantReport) string {
	c := v.Curve()
	if c == nil {
		return ""
	}
	return fmt.Sprintf("golden curve %s, thinking %s (%s)", c.Model, c.Thinking, c.Source)
}

// writeRecipeCSV writes the check as two tables, roles and findings, each
// with a variant column (the recipe-wide findings under variant ""); the
// findings carry review's and audit's columns (severity, code, location,
// message), most serious first within each variant as review sorts them.
func writeRecipeCSV(w io.Writer, rep *recipe.Report) {
	var roles, findings *table
	sorted := func(fs []recipe.Finding) []recipe.Finding {
		fs = slices.Clone(fs)
		finding.Sort(fs)
		return fs
	}
	findings = findingsCSV(sorted(rep.Findings)).withColumn(nil, "variant", "")
	for i := range rep.Variants {
		v := &rep.Variants[i]
		roles = roleTable(v).withColumn(roles, "variant", v.Name)
		findings = findingsCSV(sorted(v.Findings)).withColumn(findings, "variant", v.Name)
	}
	if roles != nil {
		roles.write(w, formatCSV)
	}
	findings.write(w, formatCSV)
}

func writeRecipeText(w io.Writer, rep *recipe.Report) {
	fmt.Fprintf(w, "recipe %s: %d variant(s), %d error finding(s)\n", rep.File, len(rep.Variants), rep.Errors())
	if len(rep.Findings) > 0 {
		fmt.Fprintln(w)
		findingTable(rep.Findings).write(w, formatText)
	}
	for i := range rep.Variants {
		v := &rep.Variants[i]
		fmt.Fprintf(w, "\n== %s", v.Name)
		if j := v.Variant().JobName; j != "" && j != v.Name {
			fmt.Fprintf(w, " (%s)", j)
		}
		fmt.Fprintln(w)
		if l := curveLine(v); l != "" {
			fmt.Fprintln(w, l)
		}
		roleTable(v).write(w, formatText)
		if len(v.Findings) == 0 {
			fmt.Fprintln(w, "no findings")
			continue
		}
		fmt.Fprintln(w)
		findingTable(v.Findings).write(w, formatText)
	}
}

func writeRecipeMarkdown(w io.Writer, rep *recipe.Report) {
	status := "passes"
	if rep.Errors() > 0 {
		status = fmt.Sprintf("**%d error finding(s)**", rep.Errors())
	}
	fmt.Fprintf(w, "### specsim recipe check: `%s`\n\n%d variant(s); %s.\n", rep.File, len(rep.Variants), status)
	if len(rep.Findings) > 0 {
		fmt.Fprintln(w)
		findingTable(rep.Findings).write(w, formatMarkdown)
	}
	for i := range rep.Variants {
		v := &rep.Variants[i]
		fmt.Fprintf(w, "\n#### `%s`\n\n", v.Name)
		if l := curveLine(v); l != "" {
			fmt.Fprintf(w, "%s\n\n", l)
		}
		roleTable(v).write(w, formatMarkdown)
		if len(v.Findings) == 0 {
			fmt.Fprintln(w, "\nNo findings.")
			continue
		}
		fmt.Fprintln(w)
		findingTable(v.Findings).write(w, formatMarkdown)
	}
}
