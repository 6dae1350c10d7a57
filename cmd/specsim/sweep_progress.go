package main

import (
	"fmt"
	"io"
	"os"
	"time"
)

// stderrIsTerminal reports whether the process's stderr is a terminal (a
// live, rewritten progress line) or a file or pipe (plain lines).
var stderrIsTerminal = func() bool {
	fi, err := os.Stderr.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// stageProgress reports a multi-stage job (pricing, refining, plotting).
// On a terminal each stage is progressPrinter's live line; otherwise it
// writes a plain line at most every period and one when a stage that took
// longer than a second ends, never a carriage return.
func stageProgress(w io.Writer, command string, tty bool, period time.Duration, now func() time.Time) func(stage string, done, total int) {
	units := map[string]string{"pricing": "topologies", "refining": "candidates", "plotting": "plots"}
	var cur string
	var live func(done, total int)
	var start, last time.Time
	return func(stage string, done, total int) {
		if stage != cur {
			cur = stage
			if tty {
				live = progressPrinter(w, command+" "+stage, units[stage], now)
			} else {
				start = now()
				last = start
			}
		}
		if tty {
			live(done, total)
			return
		}
		t := now()
		switch {
		case done >= total && t.Sub(start) > time.Second:
			fmt.Fprintf(w, "%s: %s %d/%d %s done in %.1fs\n", command, stage, done, total, units[stage], t.Sub(start).Seconds())
		case done < total && t.Sub(last) >= period:
			fmt.Fprintf(w, "%s: %s %d/%d %s (%.0fs)\n", command, stage, done, total, units[stage], t.Sub(start).Seconds())
			last = t
		}
	}
}
