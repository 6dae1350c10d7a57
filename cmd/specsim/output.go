package main

import (
	"encoding/csv"
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
	formatCSV // the tables alone, as RFC 4180 CSV, a blank line between two
)

// formatFlags adds --json and --format to a flag set. Call resolve after
// parsing.
type formatFlags struct {
	json   bool
	format string
}

// addFormatFlags adds --json and --format text|json|markdown|csv. Every
// table a command prints goes through table.write, so every format suits
// every command: markdown and csv differ from text in how tables are
// drawn, and csv drops the prose around them.
func addFormatFlags(fs *flag.FlagSet) *formatFlags {
	f := &formatFlags{}
	fs.BoolVar(&f.json, "json", false, "print JSON with stable snake_case keys (same as --format json)")
	fs.StringVar(&f.format, "format", "text", "output format: text|json|markdown|csv (csv: the tables alone, a blank line between two)")
	return f
}

func (f *formatFlags) resolve() (format, error) {
	name := strings.ToLower(f.format)
	if f.json {
		if name != "text" && name != "json" {
			return 0, fmt.Errorf("--json conflicts with --format %s", f.format)
		}
		return formatJSON, nil
	}
	switch name {
	case "text", "table", "":
		return formatText, nil
	case "json":
		return formatJSON, nil
	case "markdown", "md":
		return formatMarkdown, nil
	case "csv":
		return formatCSV, nil
	}
	return 0, fmt.Errorf("--format %q: want text, json, markdown or csv", f.format)
}

// textOut is where a command writes its text result in format f: stdout,
// or under csv a writer that drops prose and takes tables (table.write)
// as CSV.
func textOut(stdout io.Writer, f format) io.Writer {
	if f == formatCSV {
		return &csvOut{w: stdout}
	}
	return stdout
}

// csvOut drops what is written to it; table.write writes tables to w.
type csvOut struct {
	w      io.Writer
	tables int
}

func (c *csvOut) Write(p []byte) (int, error) { return len(p), nil }

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

// withColumn returns t with a first column name whose every cell is
// value (appended to into when into is not nil: one table for many).
func (t *table) withColumn(into *table, name, value string) *table {
	if into == nil {
		into = &table{header: append([]string{name}, t.header...)}
	}
	for _, r := range t.rows {
		into.add(append([]string{value}, r...)...)
	}
	return into
}

// write prints t in format f: as CSV where w is a textOut of csv,
// Markdown for markdown, aligned text otherwise.
func (t *table) write(w io.Writer, f format) {
	if c, ok := w.(*csvOut); ok {
		if c.tables > 0 {
			fmt.Fprintln(c.w)
		}
		c.tables++
		t.writeCSV(c.w)
		return
	}
	if f == formatMarkdown {
		t.writeMarkdown(w)
		return
	}
	t.writeText(w)
}

// writeCSV prints the header (without alignment marks) and the rows as
// RFC 4180 CSV.
func (t *table) writeCSV(w io.Writer) error {
	names, _ := t.columns()
	cw := csv.NewWriter(w)
	if err := cw.Write(names); err != nil {
		return err
	}
	if err := cw.WriteAll(t.rows); err != nil {
		return err
	}
	return cw.Error()
}

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
