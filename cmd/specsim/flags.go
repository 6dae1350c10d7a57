package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
)

// newFlagSet makes a flag set whose --help prints the given text (what the
// command does, an example) followed by the flag list, to standard output
// (the writer run pairs with stderr) with exit 0. A bad flag prints its
// error and one line pointing to --help on stderr, not the whole help.
func newFlagSet(name, help string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	errOut := &wroteWriter{w: stderr}
	fs.SetOutput(errOut)
	helpOut := stderr
	if e, ok := stderr.(*escaper); ok && e.helpTo != nil {
		helpOut = e.helpTo
	}
	fs.Usage = func() {
		// The flag package prints a parse error before it calls Usage;
		// --help calls Usage alone.
		if errOut.wrote {
			errOut.wrote = false
			fmt.Fprintf(stderr, "Run 'specsim %s --help' for its flags.\n", name)
			return
		}
		fmt.Fprintln(helpOut, strings.TrimSpace(help))
		fmt.Fprintln(helpOut, "\nFlags:")
		fs.SetOutput(helpOut)
		fs.PrintDefaults()
		fs.SetOutput(errOut)
	}
	return fs
}

// wroteWriter remembers that something was written through it.
type wroteWriter struct {
	w     io.Writer
	wrote bool
}

func (w *wroteWriter) Write(p []byte) (int, error) {
	w.wrote = true
	return w.w.Write(p)
}

// parseFlags parses args allowing flags before, between and after positional
// arguments ("specsim audit DIR --json"), which the standard flag package
// does not. A lone "--" ends flag parsing. It returns the positional
// arguments, errHelp when --help was asked for, or a usage error.
func parseFlags(fs *flag.FlagSet, args []string) ([]string, error) {
	var positional []string
	for {
		// "-:SELECTOR" (a recipe on standard input, one variant of it) is
		// an argument, not a flag: the flag package would take it for one.
		head, tail := args, []string(nil)
		for i, a := range args {
			if a == "--" {
				break
			}
			if strings.HasPrefix(a, "-:") && !takesValue(fs, args[:i]) {
				head, tail = args[:i], args[i:]
				break
			}
		}
		if err := fs.Parse(head); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if len(rest) == 0 {
			if tail == nil {
				return positional, nil
			}
			positional = append(positional, tail[0])
			args = tail[1:]
			continue
		}
		if rest[0] == "--" {
			return append(append(positional, rest[1:]...), tail...), nil
		}
		positional = append(positional, rest[0])
		args = append(append([]string(nil), rest[1:]...), tail...)
	}
}

// takesValue reports whether the last of before is a flag that takes the
// next argument as its value (--recipe -:sel).
func takesValue(fs *flag.FlagSet, before []string) bool {
	if len(before) == 0 {
		return false
	}
	a := before[len(before)-1]
	if !strings.HasPrefix(a, "-") || a == "-" || strings.Contains(a, "=") {
		return false
	}
	f := fs.Lookup(strings.TrimLeft(a, "-"))
	if f == nil {
		return false
	}
	b, ok := f.Value.(interface{ IsBoolFlag() bool })
	return !ok || !b.IsBoolFlag()
}

// usageExit turns a flag-parsing error into an exit code: 0 for --help
// (the usage text is already printed), 2 otherwise.
func usageExit(err error) int {
	if errors.Is(err, flag.ErrHelp) {
		return exitOK
	}
	return exitBadInput
}
