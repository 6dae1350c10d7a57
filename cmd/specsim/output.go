package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// format is how a command prints its result.
type format int

const (
	formatText format = iota
	formatJSON
	formatMarkdown
)

// formatFlags adds --json and --format to a flag set. Call resolve after
// parsing.
type formatFlags struct {
	json   bool
	format string
}

func addFormatFlags(fs *flag.FlagSet, markdown bool) *formatFlags {
	f := &formatFlags{}
	fs.BoolVar(&f.json, "json", false, "print JSON with stable snake_case keys (same as --format json)")
	choices := "text|json"
	if markdown {
		choices = "text|json|markdown"
	}
	fs.StringVar(&f.format, "format", "text", "output format: "+choices)
	return f
}

func (f *formatFlags) resolve(markdown bool) (format, error) {
	if f.json {
		if f.format != "text" && f.format != "json" {
			return 0, fmt.Errorf("--json conflicts with --format %s", f.format)
		}
		return formatJSON, nil
	}
	switch f.format {
	case "text", "table", "":
		return formatText, nil
	case "json":
		return formatJSON, nil
	case "markdown", "md":
		if markdown {
			return formatMarkdown, nil
		}
	}
	if markdown {
		return 0, fmt.Errorf("--format %q: want text, json or markdown", f.format)
	}
	return 0, fmt.Errorf("--format %q: want text or json", f.format)
}

// writeJSON prints v indented, with a trailing newline. Field order follows
// the struct definitions and map keys are sorted, so output is stable.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// table is a rectangular result printed aligned for terminals or as a
// GitHub-flavoured Markdown table. Columns whose header starts with '>' are
// right-aligned (numbers); the '>' is not printed.
type table struct {
	header []string
	rows   [][]string
}

func (t *table) add(cells ...string) { t.rows = append(t.rows, cells) }

func (t *table) columns() (names []string, right []bool) {
	names = make([]string, len(t.header))
	right = make([]bool, len(t.header))
	for i, h := range t.header {
		if strings.HasPrefix(h, ">") {
			right[i] = true
			h = h[1:]
		}
		names[i] = h
	}
	return names, right
}

func (t *table) writeText(w io.Writer) {
	names, right := t.columns()
	width := make([]int, len(names))
	for i, n := range names {
		width[i] = utf8.RuneCountInString(n)
	}
	for _, r := range t.rows {
		for i := range min(len(r), len(width)) {
			width[i] = max(width[i], utf8.RuneCountInString(r[i]))
		}
	}
	line := func(cells []string) {
		var b strings.Builder
		for i := range width {
			c := ""
			if i < len(cells) {
				c = cells[i]
			}
			pad := strings.Repeat(" ", width[i]-utf8.RuneCountInString(c))
			if i > 0 {
				b.WriteString("  ")
			}
			if right[i] {
				b.WriteString(pad + c)
			} else if i == len(width)-1 {
				b.WriteString(c)
			} else {
				b.WriteString(c + pad)
			}
		}
		fmt.Fprintln(w, b.String())
	}
	line(names)
	sep := make([]string, len(width))
	for i := range width {
		sep[i] = strings.Repeat("-", width[i])
	}
	line(sep)
	for _, r := range t.rows {
		line(r)
	}
}

func (t *table) writeMarkdown(w io.Writer) {
	names, right := t.columns()
	esc := func(s string) string { return strings.ReplaceAll(s, "|", `\|`) }
	fmt.Fprint(w, "|")
	for _, n := range names {
		fmt.Fprintf(w, " %s |", esc(n))
	}
	fmt.Fprint(w, "\n|")
	for i := range names {
		if right[i] {
			fmt.Fprint(w, "---:|")
		} else {
			fmt.Fprint(w, "---|")
		}
	}
	fmt.Fprintln(w)
	for _, r := range t.rows {
		fmt.Fprint(w, "|")
		for i := range names {
			c := ""
			if i < len(r) {
				c = r[i]
			}
			fmt.Fprintf(w, " %s |", esc(c))
		}
		fmt.Fprintln(w)
	}
}
