package main

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/specsim/specsim/audit/enginelog"
	"github.com/specsim/specsim/golden"
	"github.com/specsim/specsim/simulate/acceptance"
)

func init() {
	register(&command{
		name:    "logs",
		summary: "measured accept length, throughput and running requests from SGLang/vLLM/TensorRT-LLM logs",
		run:     runLogs,
	})
}

const logsHelp = `
specsim logs FILE... [--al A | --model M --steps K [--thinking on|off] [--golden-dir DIR]] [--buckets N] [--json]

Reads engine logs: SGLang "Decode batch" lines (every layout since v0.4; DP/TP
prefixes), vLLM "SpecDecoding metrics" and "Avg generation throughput" lines,
and TensorRT-LLM iteration-stats JSON and iteration lines. Reports the logged
accept-length distribution (AL per verify step, bonus token included; each
logged value is the mean of one logging interval), generation throughput in
tokens/s summed over data-parallel ranks (each rank logs its own), running
requests over time, and, given a target AL, whether the measured mean agrees
with it: |mean - target| <= 3 x stderr of the mean + 0.02.

The target is --al, or the golden AL of --model at draft length --steps.

Exit status: 0 agrees or no target; 1 the mean disagrees with the target;
2 unreadable input or no decode statistics found.

Example:
  specsim logs decode_0.log decode_1.log --model qwen3.5 --steps 3
`

func runLogs(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("logs", logsHelp, stderr)
	al := fs.Float64("al", 0, "target acceptance length (tokens per verify step, bonus included)")
	model := fs.String("model", "", "model for a golden target (with --steps)")
	steps := fs.Int("steps", 0, "draft length k for the golden target")
	thinking := fs.String("thinking", "on", "thinking mode of the golden target: on or off")
	buckets := fs.Int("buckets", 10, "timeline slices")
	gf := addGoldenFlags(fs)
	ff := addFormatFlags(fs)
	files, err := parseFlags(fs, args)
	if err != nil {
		return usageExit(err)
	}
	format, err := ff.resolve()
	if err != nil {
		fmt.Fprintln(stderr, "specsim logs:", err)
		return exitBadInput
	}
	stdout = textOut(stdout, format)
	if len(files) == 0 {
		fmt.Fprintln(stderr, "specsim logs: want at least one FILE")
		return exitBadInput
	}
	if *buckets < 1 || *buckets > 1000 {
		fmt.Fprintln(stderr, "specsim logs: --buckets must be 1..1000")
		return exitBadInput
	}
	target := 0.0
	switch {
	case *al != 0 && (*model != "" || *steps != 0):
		fmt.Fprintln(stderr, "specsim logs: give --al or --model/--steps, not both")
		return exitBadInput
	case *al != 0:
		if err := (acceptance.Target{AL: *al}).Check(); err != nil {
			fmt.Fprintln(stderr, "specsim logs:", flagError(err))
			return exitBadInput
		}
		if *al > enginelog.MaxDraftTokens+1 {
			fmt.Fprintf(stderr, "specsim logs: --al %g: want an acceptance length in [1, %d] (the bonus token is included)\n", *al, enginelog.MaxDraftTokens+1)
			return exitBadInput
		}
		target = *al
	case *model != "" || *steps != 0:
		if *model == "" || *steps < 1 {
			fmt.Fprintln(stderr, "specsim logs: --model needs --steps >= 1 (and --steps needs --model)")
			return exitBadInput
		}
		t, err := golden.ParseThinking(*thinking)
		if err != nil {
			fmt.Fprintln(stderr, "specsim logs: --thinking:", err)
			return exitBadInput
		}
		set, err := gf.load()
		if err != nil {
			fmt.Fprintln(stderr, "specsim logs:", err)
			return exitBadInput
		}
		c, err := set.Curve(*model, t)
		if err != nil {
			fmt.Fprintln(stderr, "specsim logs:", err)
			return exitBadInput
		}
		p, err := acceptance.Target{Curve: c}.At(*steps)
		if err != nil {
			fmt.Fprintln(stderr, "specsim logs:", flagError(err))
			return exitBadInput
		}
		target = p.AL
	}
	col, err := enginelog.ReadFiles(files, *steps)
	if err != nil {
		fmt.Fprintln(stderr, "specsim logs:", err)
		return exitBadInput
	}
	if col.Stats.Samples == 0 {
		skipped := ""
		if n := col.Stats.LongLines; n > 0 {
			skipped = fmt.Sprintf("; %d over %d KiB skipped unread", n, enginelog.MaxLineBytes>>10)
		}
		fmt.Fprintf(stderr, "specsim logs: no decode statistics in %s (%d lines read%s)\n", strings.Join(files, ", "), col.Stats.Lines, skipped)
		return exitBadInput
	}
	sum := enginelog.Summarize(col, *buckets)
	for _, w := range sum.Warnings {
		fmt.Fprintln(stderr, "specsim logs: warning:", w)
	}
	if target != 0 {
		sum.Agree(target)
	}
	if format == formatJSON {
		if err := writeJSON(stdout, sum); err != nil {
			fmt.Fprintln(stderr, "specsim logs:", err)
			return exitBadInput
		}
	} else {
		writeLogsText(stdout, sum, format)
	}
	if sum.Disagrees() {
		return exitFindings
	}
	return exitOK
}

func f2(x float64) string { return strconv.FormatFloat(x, 'f', 2, 64) }

func writeLogsText(w io.Writer, s *enginelog.Summary, f format) {
	// Markdown joins consecutive lines into one paragraph.
	pw := w
	if f == formatMarkdown {
		pw = paragraphs{w}
	}
	fmt.Fprintf(pw, "%d decode samples from %d lines in %d file(s); engines: %s", s.Samples, s.Lines, len(s.Files), strings.Join(s.Engines, ", "))
	if s.LongLines > 0 {
		fmt.Fprintf(w, "; %d over-long lines skipped", s.LongLines)
	}
	fmt.Fprintln(pw)
	fmt.Fprintf(w, "generation throughput summed over ranks: %s tok/s; running requests summed over ranks: %s\n\n", f2(s.GenThroughput), f2(s.MeanRunning))

	rt := &table{header: []string{"file", "rank", "engine", ">samples", ">mean accept len", ">mean gen tok/s", ">mean running", ">max running"}}
	for _, r := range s.Ranks {
		al := "-" // a rank that logged no accept length (an AL is at least 1)
		if r.MeanAcceptLen > 0 {
			al = f2(r.MeanAcceptLen)
		}
		rt.add(r.File, orDash(r.Rank), r.Engine, strconv.Itoa(r.Samples), al, f2(r.MeanGenThroughput), f2(r.MeanRunning), strconv.Itoa(r.MaxRunning))
	}
	rt.write(w, f)

	if d := s.AcceptLen; d != nil {
		fmt.Fprintln(w)
		fmt.Fprintf(pw, "accept length (tokens per verify step, bonus included) over %d logged intervals:\n", d.Samples)
		fmt.Fprintf(pw, "mean %.3f (unweighted %.3f), stddev %.3f, stderr %.4f, min %.2f, p10 %.2f, p50 %.2f, p90 %.2f, max %.2f\n",
			d.Mean, d.UnweightedMean, d.StdDev, d.StdErr, d.Min, d.P10, d.P50, d.P90, d.Max)
		ht := &table{header: []string{"accept len", ">intervals", "share"},
			csvHeader: []string{"accept_len_lo", "accept_len_hi", "intervals", "share"}}
		for _, b := range d.Histogram {
			if b.Count == 0 {
				continue
			}
			share := float64(b.Count) / float64(d.Samples)
			ht.add(fmt.Sprintf("[%.1f, %.1f)", b.Lo, b.Hi), strconv.Itoa(b.Count), strings.Repeat("#", int(share*40+0.5)))
			ht.addCSV(fmt.Sprint(b.Lo), fmt.Sprint(b.Hi), strconv.Itoa(b.Count), strconv.FormatFloat(share, 'f', 4, 64))
		}
		ht.write(w, f)
	} else {
		fmt.Fprintln(w, "\nno accept-length samples (speculative decoding off, or the engine does not log it)")
	}

	unit := "s"
	if s.TimeAxis == "samples" {
		unit = "fraction of samples"
	}
	fmt.Fprintf(w, "\nover time (%s; running and throughput summed over ranks):\n", unit)
	tt := &table{header: []string{">from", ">to", ">running", ">gen tok/s", ">accept len", ">samples"}}
	prec := 1
	if s.TimeAxis == "samples" {
		prec = 3
	}
	for _, b := range s.Timeline {
		from, to := strconv.FormatFloat(b.StartS, 'f', prec, 64), strconv.FormatFloat(b.EndS, 'f', prec, 64)
		if b.Samples == 0 {
			tt.add(from, to, "-", "-", "-", "0")
			continue
		}
		al := "-"
		if b.AcceptLen > 0 {
			al = f2(b.AcceptLen)
		}
		tt.add(from, to, f2(b.Running), f2(b.GenThroughput), al, strconv.Itoa(b.Samples))
	}
	tt.write(w, f)
	if s.Target != nil {
		fmt.Fprintf(w, "\ntarget AL %.3f: %s\n", s.Target.Target, s.Target.Verdict)
	}
}
