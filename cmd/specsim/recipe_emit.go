package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/specsim/specsim/audit/recipe"
	"github.com/specsim/specsim/internal/regular"
	"github.com/specsim/specsim/simulate"
	"github.com/specsim/specsim/simulate/emit"
)

const recipeEmitHelp = `
specsim recipe emit: write an srt-slurm schema-2 recipe for one deployment,
given with predict's flags (--model, --precision, --gpu, --topology, --steps,
--conc, --max-running, --cuda-graph-max-bs, --mem-fraction, --chunk, ...).
The speculative settings are the ones whose golden AL AgentX's synthetic
acceptance will inject (the recipe says which AL and where it came from in
a comment); with --isl/--osl the benchmark is sa-bench, which injects
nothing: the engine measures real acceptance and the golden AL is the
expectation the prediction assumes. A model without a golden curve needs
--al, and its speculative roles force that AL themselves (AgentX has none
to inject). A deployment predict refuses with the same flags (weights or
caches that do not fit) gets no recipe: emit exits 2 with predict's message. Fields that
depend on the cluster (model path, container, Slurm account and partition)
are set to FILL-IN for you to fill. --engine sglang, vllm or trtllm picks the
argument spelling; a layout the engine does not deploy (SGLang: pipeline
stages with speculation outside disaggregated prefill workers) is refused.

Example:
  specsim recipe emit --gpu gb300 --topology agg:tp4 --steps 3 --conc 32 > tp4.yaml
  specsim recipe emit --topology disagg:1xtp4+1xtp4 --steps 3 | specsim recipe check -
  specsim recipe emit --model DeepSeek-V3 --topology agg:tp8 --steps 3 --al 2.4 | specsim recipe check -
`

func runRecipeEmit(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("recipe emit", recipeEmitHelp, stderr)
	qf := addQueryFlags(fs, true)
	fs.Lookup("steps").Usage = "draft length k (speculative-num-steps), one value; 0 = no speculation (default 6)"
	conc := fs.Int("conc", 7, "benchmark concurrency the recipe is for")
	rest, err := parseFlags(fs, args)
	if err != nil {
		return usageExit(err)
	}
	fail := func(err error) int { fmt.Fprintln(stderr, "specsim recipe emit:", flagError(err)); return exitBadInput }
	if len(rest) > 0 {
		return fail(fmt.Errorf("unexpected argument %q", rest[0]))
	}
	res, err := qf.resolve()
	if err != nil {
		return fail(err)
	}
	k := 0
	if qf.q.Spec != "none" {
		if k, err = oneStep("recipe emit", qf.steps, 6); err != nil {
			return fail(err)
		}
		if k == 0 {
			qf.q.Spec = "none" // as predict: --steps 0 is no speculation
			if res, err = qf.resolve(); err != nil {
				return fail(err)
			}
		}
	}
	topo, err := simulate.ParseTopology(qf.q.Topology)
	if err != nil {
		return fail(err)
	}
	// What predict with the same flags does before it simulates: a
	// deployment it refuses (weights or caches that do not fit, a running
	// default too large for the state pools) gets no recipe either, with
	// predict's message and hint.
	if err := simulate.EngineRuns(strings.ToLower(qf.q.Engine), topo, k); err != nil {
		return fail(fmt.Errorf("--engine %s does not deploy %v", qf.q.Engine, err))
	}
	if err := simulate.CheckPlan(res, topo, *conc, k); err != nil {
		return fail(err)
	}
	text, err := emit.Recipe(res, topo, *conc, k, specsimVersion(), "")
	if err != nil {
		return fail(err)
	}
	io.WriteString(stdout, text)
	return exitOK
}

// emitFrontierRecipes writes one recipe per interactivity frontier point
// of a sweep into dir (emit.Frontier); r is the sweep's query resolved
// again from the inputs it echoed. It returns a line to print for each
// point: the file written, or why the point has none.
func emitFrontierRecipes(dir string, so *simulate.SweepOutput, r *simulate.Resolved) ([]string, error) {
	if r == nil {
		return nil, fmt.Errorf("--emit needs the sweep's query (use it on sweep, not merge)")
	}
	files, err := emit.Frontier(so, r, specsimVersion())
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	var out []string
	for i, f := range files {
		if f.Err != nil {
			out = append(out, fmt.Sprintf("no recipe for frontier point %d: %v", i+1, flagError(f.Err)))
			continue
		}
		name := filepath.Join(dir, f.Name)
		if err := regular.WriteFile(name, []byte(f.Text), nil); err != nil {
			return nil, err
		}
		out = append(out, "recipe written to "+name)
	}
	return out, nil
}

// loadRecipeArg loads FILE[:selector], or a recipe on standard input for
// "-" (what 'recipe emit | recipe check -' pipes).
func loadRecipeArg(arg string) (*recipe.Recipe, error) {
	file, sel := recipe.SplitSelector(arg)
	if arg != "-" && file != "-" {
		return recipe.Load(arg)
	}
	if arg == "-" {
		sel = ""
	}
	data, err := io.ReadAll(io.LimitReader(os.Stdin, recipe.MaxFileBytes+1))
	if err != nil {
		return nil, fmt.Errorf("standard input: %v", err)
	}
	if len(data) > recipe.MaxFileBytes {
		return nil, fmt.Errorf("standard input: larger than %d bytes; not a recipe", recipe.MaxFileBytes)
	}
	return recipe.Parse("<stdin>", data, sel)
}
