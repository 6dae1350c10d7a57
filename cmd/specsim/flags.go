package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
)

// newFlagSet makes a flag set whose --help prints the given text (what the
// command does, an example) followed by the flag list.
func newFlagSet(name, help string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		out := fs.Output()
		fmt.Fprintln(out, strings.TrimSpace(help))
		fmt.Fprintln(out, "\nFlags:")
		fs.PrintDefaults()
	}
	return fs
}

// parseFlags parses args allowing flags before, between and after positional
// arguments ("specsim audit DIR --json"), which the standard flag package
// does not. A lone "--" ends flag parsing. It returns the positional
// arguments, errHelp when --help was asked for, or a usage error.
func parseFlags(fs *flag.FlagSet, args []string) ([]string, error) {
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return positional, nil
		}
		if rest[0] == "--" {
			return append(positional, rest[1:]...), nil
		}
		positional = append(positional, rest[0])
		args = rest[1:]
	}
}

// usageExit turns a flag-parsing error into an exit code: 0 for --help
// (the usage text is already printed), 2 otherwise.
func usageExit(err error) int {
	if errors.Is(err, flag.ErrHelp) {
		return exitOK
	}
	return exitBadInput
}
