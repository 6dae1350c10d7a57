package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"strconv"
	"strings"
	"time"

	"github.com/specsim/specsim/audit"
	"github.com/specsim/specsim/audit/deep"
)

// The --deep flags of "specsim audit": a bounded read of weight values
// that tells genuine BF16 draft weights from ones quantized to NVFP4, FP8
// or INT4 and written back as BF16. The work is in package audit/deep.

const deepHelp = `
Value test (--deep): reads a bounded sample of the draft's weights with pread
(--deep-budget, default 64MiB in total, split across tensors; --deep-all for
every tensor, not only the draft) and tests whether values stored as
BF16/F16/F32 sit on an NVFP4, FP8 or INT4/INT8 grid, i.e. were quantized and
written back. Draft values on such a grid are the error finding
draft-values-quantized. Adds "deep" to the JSON and a verdict table.
  specsim audit /models/Qwen3.5-397B-A17B-NVFP4 --deep --format markdown
  specsim audit /models/my-draft --deep-all --deep-budget 1GiB --json
`

type deepFlags struct {
	on, all bool
	budget  string
}

func addDeepFlags(fs *flag.FlagSet) *deepFlags {
	d := &deepFlags{}
	fs.BoolVar(&d.on, "deep", false, "also test the draft's weight values (bounded reads): genuine BF16, or quantized and written back")
	fs.BoolVar(&d.all, "deep-all", false, "with --deep: test every BF16/F16/F32 tensor, not only the draft's (implies --deep)")
	fs.StringVar(&d.budget, "deep-budget", "64MiB", "with --deep: most bytes of weights to read in total (64MiB, 1GiB, 123456)")
	return d
}

// run does the deep audit when asked, adds its findings to r, and returns
// its report (nil when --deep is off) or an exit code for bad input.
func (d *deepFlags) run(r *audit.Report, quiet bool, stderr io.Writer) (*deep.Report, int) {
	budget, err := deep.ParseBudget(d.budget)
	if err != nil {
		fmt.Fprintln(stderr, "specsim audit: --deep-budget:", err)
		return nil, exitBadInput
	}
	if !d.on && !d.all {
		return nil, exitOK
	}
	if r.IndexOnly {
		fmt.Fprintf(stderr, "specsim audit: --deep reads weight values, but %s holds none of the shard files its index names (the audit read the index alone): download the shards, or audit without --deep\n", r.Dir)
		return nil, exitBadInput
	}
	opt := deep.Options{Budget: budget}
	if !quiet {
		start, last := time.Now(), time.Time{}
		opt.Progress = func(done, total int, name string) {
			if now := time.Now(); now.Sub(start) > 2*time.Second && now.Sub(last) > time.Second {
				fmt.Fprintf(stderr, "deep audit: %d/%d tensors (%s)\n", done, total, name)
				last = now
			}
		}
	}
	rep, err := r.Deep(d.all, opt)
	if errors.Is(err, fs.ErrNotExist) {
		fmt.Fprintf(stderr, "specsim audit: --deep: %v: a shard file the index names is missing (a partial download?): download it, or audit without --deep\n", err)
		return nil, exitBadInput
	}
	if err != nil {
		fmt.Fprintln(stderr, "specsim audit: --deep:", err)
		return nil, exitBadInput
	}
	return rep, exitOK
}

// auditJSON is the audit report with the "deep" object added.
type auditJSON struct {
	*audit.Report
	Deep *deepJSON `json:"deep,omitempty"`
}

type deepJSON struct {
	BytesRead   int64               `json:"bytes_read"`
	BudgetBytes int64               `json:"budget_bytes"`
	Tensors     []deep.TensorResult `json:"tensors"`
	Modules     []deep.ModuleResult `json:"modules"`
}

func withDeep(r *audit.Report, d *deep.Report) any {
	if d == nil {
		return r
	}
	return auditJSON{r, &deepJSON{BytesRead: d.BytesRead, BudgetBytes: d.BudgetBytes,
		Tensors: nonNil(d.Tensors), Modules: nonNil(d.Modules)}}
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

func mib(b int64) string { return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20)) }

// deepEvidence says how strong a tensor's verdict is.
func deepEvidence(t *deep.TensorResult) string {
	switch {
	case t.Quantized():
		s := "false alarm " + deep.FormatProbability(t.FalseAlarmLog10)
		if t.Detail != "" {
			s += "; " + t.Detail
		}
		return s
	case t.Grid == "none":
		return fmt.Sprintf("closest grid %s holds %.1f%% of blocks (a quantized tensor puts 100%% on its grid)", t.ClosestGrid, 100*t.OnGridFraction)
	}
	return fmt.Sprintf("%d distinct values", t.DistinctValues)
}

func deepTable(d *deep.Report) *table {
	t := &table{header: []string{"tensor", "dtype", "verdict", ">blocks", ">on grid %", ">median residual (codes)", "evidence"}}
	for i := range d.Tensors {
		r := &d.Tensors[i]
		t.add(r.Name, r.DType, r.Verdict, strconv.Itoa(r.BlocksTested), fmt.Sprintf("%.1f", 100*r.OnGridFraction),
			fmt.Sprintf("%.2f", r.MedianResidualULP), deepEvidence(r))
		t.addCSV(r.Name, r.DType, r.Verdict, strconv.Itoa(r.BlocksTested), num(100*r.OnGridFraction), num(r.MedianResidualULP), deepEvidence(r))
	}
	return t
}

func deepModules(d *deep.Report) *table {
	t := &table{header: []string{"module", "verdict", ">tensors"}}
	for _, m := range d.Modules {
		t.add(m.Name, m.Verdict, strconv.Itoa(len(m.Tensors)))
	}
	return t
}

func deepSummary(d *deep.Report) string {
	return fmt.Sprintf("%d tensors tested, %s read of a %s budget", len(d.Tensors), mib(d.BytesRead), mib(d.BudgetBytes))
}

func writeDeepText(w io.Writer, d *deep.Report) {
	if d == nil {
		return
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "Deep value test: %s\n", deepSummary(d))
	if len(d.Tensors) == 0 {
		fmt.Fprintln(w, "  no BF16/F16/F32 draft tensors to test (use --deep-all to test every tensor)")
		return
	}
	deepTable(d).write(w, formatText)
	fmt.Fprintln(w)
	deepModules(d).write(w, formatText)
}

func writeDeepMarkdown(w io.Writer, d *deep.Report) {
	if d == nil {
		return
	}
	fmt.Fprintf(w, "\nDeep value test (%s):\n\n", deepSummary(d))
	if len(d.Tensors) == 0 {
		fmt.Fprintln(w, "No BF16/F16/F32 draft tensors to test.")
		return
	}
	deepModules(d).write(w, formatMarkdown)
	fmt.Fprintln(w)
	deepTable(d).write(w, formatMarkdown)
	fmt.Fprintln(w)
	fmt.Fprintln(w, strings.TrimSpace(`
A block is 16 to 128 consecutive values along the input dimension; it is "on a grid" when one
scale puts every value within BF16 rounding of a grid level. The false-alarm bound assumes genuine
values are smooth at the scale of one grid step.`))
	fmt.Fprintln(w)
}
