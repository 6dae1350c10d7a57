package kernels

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
)

// opColumns are the shape columns of a measured op table and of
// "kernels predict --input", in order.
var opColumns = []string{"op", "dtype", "m", "n", "k", "tokens", "experts", "topk", "hidden", "inter",
	"batch", "q_len", "kv_len", "heads", "kv_heads", "head_dim"}

// OpRow is one row of an op table: the op, its dtype and the shape columns
// that apply to it (0 where a cell is empty), with the measured latency
// where the table has one.
type OpRow struct {
	Op                                   string
	DType                                DType
	M, N, K                              int
	Tokens, Experts, TopK, Hidden, Inter int
	Batch, QLen, KVLen                   int
	Heads, KVHeads, HeadDim              int
	LatencyUS                            float64 // 0 when the table has none
	Line                                 int     // line in the file, for messages
}

// OpTable is a parsed op CSV.
type OpTable struct {
	Name string            // file name, for messages
	Meta map[string]string // "# key: value" lines before the header
	Rows []OpRow
	// Ignored are the header's columns the table does not read (neither
	// an op column nor latency_us), in header order.
	Ignored []string
}

// Only is the table's rows of one op (nil for a nil table).
func (t *OpTable) Only(op string) *OpTable {
	if t == nil {
		return nil
	}
	out := &OpTable{Name: t.Name, Meta: t.Meta}
	for _, r := range t.Rows {
		if r.Op == op {
			out.Rows = append(out.Rows, r)
		}
	}
	return out
}

// Limits that bound what a table file may cost.
const (
	maxTableBytes = 8 << 20 // the measured H200 op table is under 1 MiB
	maxTableRows  = 100_000 // it has 16,572 rows; validate fits every row
	maxDim        = 1 << 40
	// maxLatencyUS bounds a measured latency: 100 s for one kernel or
	// collective is no measurement.
	maxLatencyUS = 1e8
)

// MaxTableBytes is the largest table file the readers accept.
const MaxTableBytes = maxTableBytes

// ParseOpTable reads an op CSV: optional "# key: value" metadata lines, a
// header naming at least "op" (other opColumns optional, extra columns
// ignored), then rows. With needLatency the "latency_us" column is required
// and every row must carry a positive latency.
func ParseOpTable(name string, data []byte, needLatency bool) (*OpTable, error) {
	meta, rows, err := readCSV(name, data)
	if err != nil {
		return nil, err
	}
	if !rows.has("op") {
		return nil, fmt.Errorf("%s:%d: header has no \"op\" column (want %s)", name, rows.headerLine, strings.Join(opColumns, ","))
	}
	hasLat := rows.has("latency_us")
	if needLatency && !hasLat {
		return nil, fmt.Errorf("%s:%d: header has no \"latency_us\" column", name, rows.headerLine)
	}
	// Size the rows and the duplicate check for the file's line count
	// (bounded by maxTableRows): growing them row by row copied the
	// 16,572 H200 rows many times over.
	n := min(bytes.Count(data, []byte{'\n'})+1, maxTableRows)
	t := &OpTable{Name: name, Meta: meta, Rows: make([]OpRow, 0, n), Ignored: rows.unknown(append(slices.Clone(opColumns), "latency_us"))}
	seen := make(map[OpRow]int, n)
	ints := []struct {
		name string
		dst  func(*OpRow) *int
	}{
		{"m", func(r *OpRow) *int { return &r.M }}, {"n", func(r *OpRow) *int { return &r.N }},
		{"k", func(r *OpRow) *int { return &r.K }}, {"tokens", func(r *OpRow) *int { return &r.Tokens }},
		{"experts", func(r *OpRow) *int { return &r.Experts }}, {"topk", func(r *OpRow) *int { return &r.TopK }},
		{"hidden", func(r *OpRow) *int { return &r.Hidden }}, {"inter", func(r *OpRow) *int { return &r.Inter }},
		{"batch", func(r *OpRow) *int { return &r.Batch }}, {"q_len", func(r *OpRow) *int { return &r.QLen }},
		{"kv_len", func(r *OpRow) *int { return &r.KVLen }}, {"heads", func(r *OpRow) *int { return &r.Heads }},
		{"kv_heads", func(r *OpRow) *int { return &r.KVHeads }}, {"head_dim", func(r *OpRow) *int { return &r.HeadDim }},
	}
	for {
		ok, err := rows.next()
		if err != nil {
			return nil, err
		}
		if !ok {
			break
		}
		line, cell := rows.line, rows.cell
		row := OpRow{Op: strings.ToLower(cell("op")), Line: line}
		if row.Op == "" {
			return nil, fmt.Errorf("%s:%d: empty op", name, line)
		}
		if row.DType, err = parseCellDType(cell("dtype")); err != nil {
			return nil, fmt.Errorf("%s:%d: column dtype: %v", name, line, err)
		}
		for _, ic := range ints {
			v, err := parseDim(cell(ic.name))
			if err != nil {
				return nil, fmt.Errorf("%s:%d: column %s: %v", name, line, ic.name, err)
			}
			*ic.dst(&row) = v
		}
		if lat := cell("latency_us"); lat != "" {
			v, err := strconv.ParseFloat(lat, 64)
			if err != nil || !positiveFinite(v) || v > maxLatencyUS {
				return nil, fmt.Errorf("%s:%d: column latency_us: want a positive number of microseconds up to %g, got %q", name, line, float64(maxLatencyUS), lat)
			}
			row.LatencyUS = v
		} else if needLatency {
			return nil, fmt.Errorf("%s:%d: column latency_us is empty", name, line)
		}
		if hasLat {
			// Two measurements of one shape were averaged without a word
			// by the interpolation grid; a table keeps one per shape.
			key := row
			key.LatencyUS, key.Line = 0, 0
			if first, dup := seen[key]; dup {
				return nil, fmt.Errorf("%s:%d: same op, dtype and shape as line %d; keep one measurement per shape (the median of repeats)", name, line, first)
			}
			seen[key] = line
		}
		t.Rows = append(t.Rows, row)
	}
	return t, nil
}

// csvRows reads the rows of a measured-table CSV by column name, skipping
// blank rows and stopping at maxTableRows.
type csvRows struct {
	name       string
	headerLine int // file line of the header
	r          *csv.Reader
	col        map[string]int // lower-case column name -> index
	rec        []string       // the current row
	line       int            // its file line
	n          int            // rows returned so far
}

// readCSV splits off the "# key: value" lines and reads the header.
// unknown is the header's columns not in known, in header order.
func (r *csvRows) unknown(known []string) []string {
	var out []string
	for c := range r.col {
		if !slices.Contains(known, c) {
			out = append(out, c)
		}
	}
	slices.SortFunc(out, func(a, b string) int { return r.col[a] - r.col[b] })
	return out
}

func readCSV(name string, data []byte) (map[string]string, *csvRows, error) {
	meta, body, headerLine, err := splitMeta(name, data)
	if err != nil {
		return nil, nil, err
	}
	r := csv.NewReader(bytes.NewReader(body))
	r.FieldsPerRecord = -1
	r.ReuseRecord = true
	header, err := r.Read()
	if err != nil {
		return nil, nil, fmt.Errorf("%s:%d: reading header: %v", name, headerLine, err)
	}
	col := map[string]int{}
	for i, h := range header {
		col[strings.ToLower(strings.TrimSpace(h))] = i
	}
	return meta, &csvRows{name: name, headerLine: headerLine, r: r, col: col}, nil
}

// require is an error naming the first of columns the header lacks, with
// the file, the header's line and suffix (what the file should hold).
func (c *csvRows) require(name, suffix string, columns ...string) error {
	for _, col := range columns {
		if !c.has(col) {
			return fmt.Errorf("%s:%d: header has no %q column%s", name, c.headerLine, col, suffix)
		}
	}
	return nil
}

func (c *csvRows) has(column string) bool {
	_, ok := c.col[column]
	return ok
}

// next moves to the next non-blank row; false at the end of the table.
func (c *csvRows) next() (bool, error) {
	for {
		rec, err := c.r.Read()
		if errors.Is(err, io.EOF) {
			return false, nil
		}
		if err != nil {
			return false, csvError(c.name, c.headerLine, err)
		}
		if len(rec) == 1 && strings.TrimSpace(rec[0]) == "" {
			continue
		}
		if c.n >= maxTableRows {
			return false, fmt.Errorf("%s: more than %d rows", c.name, maxTableRows)
		}
		line, _ := c.r.FieldPos(0)
		c.rec, c.line, c.n = rec, line+c.headerLine-1, c.n+1
		return true, nil
	}
}

// cell is the current row's trimmed value in a column ("" when the column
// or the cell is missing).
func (c *csvRows) cell(column string) string {
	if i, ok := c.col[column]; ok && i < len(c.rec) {
		return strings.TrimSpace(c.rec[i])
	}
	return ""
}

// csvError names the file line of an encoding/csv error (its line counts
// from the header, which sits at headerLine).
func csvError(name string, headerLine int, err error) error {
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		return fmt.Errorf("%s:%d: %v", name, pe.Line+headerLine-1, pe.Err)
	}
	return fmt.Errorf("%s: %v", name, err)
}

func parseCellDType(s string) (DType, error) {
	if s == "" {
		return BF16, nil
	}
	return ParseDType(s)
}

func parseDim(s string) (int, error) {
	if s == "" {
		return 0, nil
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		// Accept "4096.0" as collectors sometimes write floats.
		fv, ferr := strconv.ParseFloat(s, 64)
		if ferr != nil || fv != math.Trunc(fv) {
			return 0, fmt.Errorf("want a whole number, got %q", s)
		}
		if fv < 0 || fv > maxDim {
			return 0, fmt.Errorf("%q is out of range 0..%d", s, int64(maxDim))
		}
		v = int64(fv)
	}
	if v < 0 || v > maxDim {
		return 0, fmt.Errorf("%q is out of range 0..%d", s, int64(maxDim))
	}
	return int(v), nil
}

// splitMeta separates the leading "# key: value" lines (and blank lines)
// from the CSV body. headerLine is the 1-based line of the header.
func splitMeta(name string, data []byte) (meta map[string]string, body []byte, headerLine int, err error) {
	if len(data) > maxTableBytes {
		return nil, nil, 0, fmt.Errorf("%s: %d bytes, limit %d", name, len(data), maxTableBytes)
	}
	meta = map[string]string{}
	data = bytes.TrimPrefix(data, []byte("\ufeff")) // the byte-order mark Excel writes
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	offset := 0
	line := 0
	for sc.Scan() {
		text := sc.Text()
		trimmed := strings.TrimSpace(text)
		if trimmed != "" && !strings.HasPrefix(trimmed, "#") {
			return meta, data[offset:], line + 1, nil
		}
		line++
		offset += len(text) + 1
		if offset > len(data) {
			offset = len(data)
		}
		if k, v, ok := strings.Cut(strings.TrimSpace(strings.TrimPrefix(trimmed, "#")), ":"); ok && len(meta) < 256 {
			meta[strings.TrimSpace(k)] = strings.TrimSpace(v)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, nil, 0, fmt.Errorf("%s:%d: %v", name, line+1, err)
	}
	return nil, nil, 0, fmt.Errorf("%s: no CSV header after %d comment lines", name, line)
}

// CollectiveRow is one row of a collective table.
type CollectiveRow struct {
	Op        CollectiveOp
	DType     DType
	GPUs      int
	Bytes     float64 // per-GPU message
	LatencyUS float64
	Line      int
}

// CollectiveTable is a parsed collectives CSV.
type CollectiveTable struct {
	Name string
	Meta map[string]string
	Rows []CollectiveRow
}

// ParseCollectiveTable reads a collectives CSV with the columns
// op,dtype,gpus,bytes,latency_us after optional "# key: value" lines.
func ParseCollectiveTable(name string, data []byte) (*CollectiveTable, error) {
	meta, rows, err := readCSV(name, data)
	if err != nil {
		return nil, err
	}
	if err := rows.require(name, " (want op,dtype,gpus,bytes,latency_us)", "op", "gpus", "bytes", "latency_us"); err != nil {
		return nil, err
	}
	t := &CollectiveTable{Name: name, Meta: meta}
	type collKey struct {
		op    CollectiveOp
		dt    DType
		gpus  int
		bytes float64
	}
	seen := map[collKey]int{}
	for {
		ok, err := rows.next()
		if err != nil {
			return nil, err
		}
		if !ok {
			break
		}
		line, cell := rows.line, rows.cell
		row := CollectiveRow{Line: line}
		if row.Op, err = ParseCollectiveOp(cell("op")); err != nil {
			return nil, fmt.Errorf("%s:%d: column op: %v", name, line, err)
		}
		if row.DType, err = parseCellDType(cell("dtype")); err != nil {
			return nil, fmt.Errorf("%s:%d: column dtype: %v", name, line, err)
		}
		if row.GPUs, err = parseDim(cell("gpus")); err != nil || row.GPUs < 2 || row.GPUs > 1<<16 {
			return nil, fmt.Errorf("%s:%d: column gpus: want 2..65536, got %q", name, line, cell("gpus"))
		}
		b, err := parseDim(cell("bytes"))
		if err != nil || b <= 0 {
			return nil, fmt.Errorf("%s:%d: column bytes: want a positive whole number, got %q", name, line, cell("bytes"))
		}
		row.Bytes = float64(b)
		v, err := strconv.ParseFloat(cell("latency_us"), 64)
		if err != nil || !positiveFinite(v) || v > maxLatencyUS {
			return nil, fmt.Errorf("%s:%d: column latency_us: want a positive number of microseconds up to %g, got %q", name, line, float64(maxLatencyUS), cell("latency_us"))
		}
		row.LatencyUS = v
		key := collKey{row.Op, row.DType, row.GPUs, row.Bytes}
		if first, dup := seen[key]; dup {
			return nil, fmt.Errorf("%s:%d: same op, dtype, gpus and bytes as line %d; keep one measurement per size", name, line, first)
		}
		seen[key] = line
		t.Rows = append(t.Rows, row)
	}
	return t, nil
}
