package main

import (
	"encoding/csv"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"strconv"
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
//
// CSV is for programs: its header is the display header in snake_case
// (csvName) and a "-" cell (no value) is empty. A table whose display cells
// are words or bars sets csvHeader and csvRows (or a header alone), which
// CSV prints instead.
type table struct {
	header []string
	rows   [][]string

	csvHeader []string
	csvRows   [][]string
}

// addCSV adds a row that only CSV prints (see table).
func (t *table) addCSV(cells ...string) { t.csvRows = append(t.csvRows, cells) }

func (t *table) add(cells ...string) { t.rows = append(t.rows, cells) }

// withColumn returns t with a first column name whose every cell is
// value (appended to into when into is not nil: one table for many).
func (t *table) withColumn(into *table, name, value string) *table {
	if into == nil {
		into = &table{header: append([]string{name}, t.header...)}
		if t.csvHeader != nil {
			into.csvHeader = append([]string{name}, t.csvHeader...)
		}
	}
	for _, r := range t.rows {
		into.add(append([]string{value}, r...)...)
	}
	for _, r := range t.csvRows {
		into.addCSV(append([]string{value}, r...)...)
	}
	return into
}

// num is a CSV cell: x unrounded, as JSON writes it.
func num(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }

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
	rows := t.rows
	if t.csvHeader != nil {
		names = t.csvHeader
	}
	if t.csvRows != nil {
		rows = t.csvRows
	}
	header := make([]string, len(names))
	for i, n := range names {
		header[i] = csvName(n)
	}
	cw := csv.NewWriter(w)
	if err := cw.Write(header); err != nil {
		return err
	}
	for _, r := range rows {
		cells := make([]string, len(r))
		for i, c := range r {
			if c != "-" {
				cells[i] = c
			}
		}
		if err := cw.Write(cells); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

var csvSymbols = strings.NewReplacer("%", "_pct_", "/", "_per_", ">=", "_ge_", "<=", "_le_")

// csvName is a display header in snake_case: "draft floor GiB" is
// draft_floor_gib, "median |error|" median_abs_error, "tok/s/user"
// tok_per_s_per_user, "outside %" outside_pct.
func csvName(h string) string {
	h = strings.ToLower(h)
	for {
		i := strings.IndexByte(h, '|')
		j := -1
		if i >= 0 {
			j = strings.IndexByte(h[i+1:], '|')
		}
		if j < 0 {
			break
		}
		h = h[:i] + "abs_" + h[i+1:i+1+j] + h[i+2+j:]
	}
	h = csvSymbols.Replace(h)
	var b strings.Builder
	under := false
	for _, r := range h {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			if under && b.Len() > 0 {
				b.WriteByte('_')
			}
			b.WriteRune(r)
			under = false
		} else {
			under = true
		}
	}
	return b.String()
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

// markdownCell keeps a cell on its row: a pipe would end the cell and a
// line break the row (a recipe value or model name may hold either).
var markdownCell = strings.NewReplacer("|", `\|`, "\r\n", `\n`, "\n", `\n`, "\r", `\r`)

func (t *table) writeMarkdown(w io.Writer) {
	names, right := t.columns()
	esc := markdownCell.Replace
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
