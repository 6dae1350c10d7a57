package main

import (
	"fmt"
	"io"
	"os"
	"time"
)

// progressPrinter returns a progress callback for work counted in units
// (done of total) by command, silent for the first second: on a terminal
// one line that rewrites itself with "\r"; into a file or pipe a plain line
// every progressPlainEvery, never a "\r". Once done reaches total a shown
// progress ends with the elapsed time and a newline. now is the clock
// (time.Now outside tests).
func progressPrinter(w io.Writer, command, units string, now func() time.Time) func(done, total int) {
	return newProgress(w, isTerminal(w), command, units, now)
}

// progressPlainEvery spaces the lines of a progress written to a file.
const progressPlainEvery = 5 * time.Second

func newProgress(w io.Writer, live bool, command, units string, now func() time.Time) func(done, total int) {
	start := now()
	shown := false
	var last time.Time
	return func(done, total int) {
		t := now()
		elapsed := t.Sub(start)
		switch {
		case done < total && elapsed > time.Second && live:
			fmt.Fprintf(w, "\r%s: %d/%d %s", command, done, total, units)
			shown = true
		case done < total && elapsed > time.Second && (last.IsZero() || t.Sub(last) >= progressPlainEvery):
			fmt.Fprintf(w, "%s: %d/%d %s\n", command, done, total, units)
			shown, last = true, t
		case done >= total && shown && live:
			fmt.Fprintf(w, "\r%s: %d/%d %s in %.1fs\n", command, done, total, units, elapsed.Seconds())
			shown = false
		case done >= total && shown:
			fmt.Fprintf(w, "%s: %d/%d %s in %.1fs\n", command, done, total, units, elapsed.Seconds())
			shown = false
		}
	}
}

// isTerminal reports whether w is a character device (a terminal).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
