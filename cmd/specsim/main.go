// Command specsim predicts speculative-decoding throughput, audits MTP draft
// checkpoints and validates benchmark recipes. Run "specsim help" for the list
// of subcommands; every subcommand teaches its flags with --help.
//
// This package holds flags, output formats and exit codes only; the domain
// logic lives in the golden, kernels, simulate and audit packages.
package main

import (
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
)

// Exit codes shared by every subcommand.
const (
	exitOK       = 0 // clean
	exitFindings = 1 // the check found error-severity findings
	exitBadInput = 2 // bad input, usage error or internal failure
)

// A command is one subcommand. Each lives in its own file and registers
// itself from an init function, so that adding a subcommand touches no
// other file.
type command struct {
	name    string
	summary string // one line for "specsim help"
	run     func(args []string, stdout, stderr io.Writer) int
}

var commands = map[string]*command{}

func register(c *command) {
	if _, dup := commands[c.name]; dup {
		panic("specsim: duplicate command " + c.name)
	}
	commands[c.name] = c
}

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run dispatches to a subcommand. It never lets a panic escape: an
// internal failure is reported as exit 2 with the panic value.
func run(args []string, stdout, stderr io.Writer) (code int) {
	out, errs := newEscaper(stdout), newEscaper(stderr)
	defer out.Flush()
	defer errs.Flush()
	errs.helpTo = out
	stdout, stderr = out, errs
	defer func() {
		if r := recover(); r != nil {
			fmt.Fprintf(stderr, "specsim: internal error: %v\n", r)
			code = exitBadInput
		}
	}()
	if len(args) == 0 {
		usage(stderr)
		return exitBadInput
	}
	name := args[0]
	switch name {
	case "help", "-h", "-help", "--help":
		if len(args) > 1 {
			c, ok := commands[args[1]]
			if !ok {
				fmt.Fprintf(stderr, "specsim: unknown command %q\n\n", args[1])
				usage(stderr)
				return exitBadInput
			}
			// 'help golden show' is 'golden show --help'.
			return c.run(append(append([]string(nil), args[2:]...), "--help"), stdout, stderr)
		}
		usage(stdout)
		return exitOK
	}
	c, ok := commands[name]
	if !ok {
		fmt.Fprintf(stderr, "specsim: unknown command %q; run 'specsim help' for the commands\n", name)
		return exitBadInput
	}
	return c.run(args[1:], stdout, stderr)
}

func usage(w io.Writer) {
	fmt.Fprint(w, `specsim: speculative-decoding simulator, checkpoint auditor and recipe checker
for MTP / EAGLE / NEXTN on large MoE models.

Usage:
  specsim <command> [flags]
  specsim help <command>

Commands:
`)
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	width := 0
	for _, n := range names {
		width = max(width, len(n))
	}
	for _, n := range names {
		fmt.Fprintf(w, "  %-*s  %s\n", width, n, commands[n].summary)
	}
	fmt.Fprint(w, `
Exit codes: 0 clean; 1 error findings; 2 bad input, usage error or internal failure.
Run "specsim <command> --help" for flags, units and an example.
`)
}

// joinQuoted lists choices for error messages: "a", "b", "c".
func joinQuoted(items []string) string {
	q := make([]string, len(items))
	for i, s := range items {
		q[i] = fmt.Sprintf("%q", s)
	}
	return strings.Join(q, ", ")
}

// subcommands dispatches a command group ("specsim kernels predict ...") to
// the subcommand named by args[0], printing the group's help for --help and
// a usage error (exit 2) for a missing or unknown subcommand.
func subcommands(group, help string, subs map[string]func(args []string, stdout, stderr io.Writer) int, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprintln(stderr, help)
		return exitBadInput
	}
	if run, ok := subs[args[0]]; ok {
		return run(args[1:], stdout, stderr)
	}
	switch args[0] {
	case "-h", "-help", "--help", "help":
		fmt.Fprintln(stdout, help)
		return exitOK
	}
	names := make([]string, 0, len(subs))
	for n := range subs {
		names = append(names, n)
	}
	sort.Strings(names)
	fmt.Fprintf(stderr, "specsim %s: unknown subcommand %q (want %s; specsim %s --help for their flags)\n", group, args[0], strings.Join(names, ", "), group)
	return exitBadInput
}
