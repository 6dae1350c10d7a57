package main

import (
	"fmt"
	"github.com/specsim/specsim/internal/regular"
	"io"
	"time"

	"github.com/specsim/specsim/simulate"
	"github.com/specsim/specsim/simulate/chart"
)

func init() {
	register(&command{name: "merge", summary: "join the JSON outputs of 'sweep --shard I/N' into the unsharded sweep's frontiers", run: runMerge})
}

const mergeHelp = `
specsim merge: join the JSON outputs of the N shards of one sweep
('specsim sweep ... --shard I/N --json', I = 0..N-1) into the result the
unsharded sweep gives: the same points, frontiers, top points and refinement
counts. merge takes every point back to its mean-field estimate and runs the
unsharded sweep's refinement rounds over the union, reusing each shard's
event simulations; a candidate no shard simulated is simulated here, on the
query rebuilt from the shards' inputs (pass the sweep's --golden-dir,
--golden-file and --gpu-catalog if it had any). Every shard must have been
swept with the same inputs and specsim version; a missing, repeated or
foreign shard, or a point with a negative figure, is an error naming the
file (and the input that differs). Output formats are sweep's
(--format text|json|markdown|csv).

--emit DIR writes a recipe for each interactivity frontier point, as sweep
--emit does on the unsharded sweep.

Example (after a Slurm array job wrote shard-0.json .. shard-7.json):
  specsim merge shard-*.json --plot frontier.png --emit recipes/
`

func runMerge(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("merge", mergeHelp, stderr)
	plotPath := fs.String("plot", "", "draw the frontiers (MTP against none) into FILE.png or FILE.svg")
	all := fs.Bool("all", false, "print every point, not just the frontiers")
	emitDir := fs.String("emit", "", "write an srt-slurm schema-2 recipe for each interactivity frontier point of the merged sweep into DIR, which must be new or empty (as sweep --emit)")
	ff := addFormatFlags(fs)
	fs.Lookup("format").Usage = sweepFormatUsage
	gf := addGoldenFlags(fs)
	catalog := addGPUCatalogFlag(fs)
	files, err := parseFlags(fs, args)
	if err != nil {
		return usageExit(err)
	}
	fail := func(err error) int { fmt.Fprintln(stderr, "specsim merge:", err); return exitBadInput }
	if len(files) == 0 {
		return fail(fmt.Errorf("no files; give the shard outputs, e.g. specsim merge shard-*.json"))
	}
	if len(files) > 4096 {
		return fail(fmt.Errorf("%d files: at most 4096 shards", len(files)))
	}
	format, csvOut, err := resolveSweepFormat(ff)
	if err != nil {
		return fail(err)
	}
	if *plotPath != "" {
		if err := chart.CheckPath(*plotPath); err != nil {
			return fail(fmt.Errorf("--plot %w", err))
		}
	}
	if *emitDir != "" {
		if err := writableDir(*emitDir); err != nil {
			return fail(fmt.Errorf("--emit %v", err))
		}
	}
	outs := make([]*simulate.SweepOutput, len(files))
	for i, name := range files {
		f, _, err := regular.Open(name)
		if err != nil {
			return fail(err)
		}
		outs[i], err = simulate.ReadSweepOutput(name, f)
		f.Close()
		if err != nil {
			return fail(err)
		}
	}
	progress := stageProgress(stderr, "merge", stderrIsTerminal(), 5*time.Second, time.Now)
	// A point the unsharded rounds need that no shard simulated is
	// simulated here, on the sweep's query rebuilt from its inputs.
	resolve := func(in simulate.SweepInputs) (*simulate.Resolved, error) {
		set, err := gf.load()
		if err != nil {
			return nil, err
		}
		cat, err := catalog.load()
		if err != nil {
			return nil, err
		}
		return in.Query.ToQuery().Resolve(set, cat)
	}
	so, err := simulate.Merge(files, outs, resolve, progress)
	if err != nil {
		return fail(err)
	}
	var r *simulate.Resolved
	if *emitDir != "" {
		// The recipes carry the deployment the shards' query describes.
		if r, err = resolve(so.Inputs); err != nil {
			return fail(fmt.Errorf("--emit: %v", err))
		}
	}
	return writeSweep(stdout, stderr, "merge", so, r, format, csvOut, *all, *plotPath, *emitDir, progress)
}
