package kernels

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
)

// OpColumns are the shape columns of a measured op table and of
// "kernels predict --input", in order.
var OpColumns = []string{"op", "dtype", "m", "n", "k", "tokens", "experts", "topk", "hidden", "inter",
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
}

// Limits that bound what a table file may cost.
const (
	maxTableBytes = 32 << 20
	maxTableRows  = 500_000
	maxDim        = 1 << 40
)

// ParseOpTable reads an op CSV: optional "# key: value" metadata lines, a
// header naming at least "op" (other OpColumns optional, extra columns
// ignored), then rows. With needLatency the "latency_us" column is required
// and every row must carry a positive latency.
func ParseOpTable(name string, data []byte, needLatency bool) (*OpTable, error) {
	meta, body, headerLine, err := splitMeta(name, data)
	if err != nil {
		return nil, err
	}
	r := csv.NewReader(bytes.NewReader(body))
	r.FieldsPerRecord = -1
	r.ReuseRecord = true
	header, err := r.Read()
	if err != nil {
		return nil, fmt.Errorf("%s:%d: reading header: %v", name, headerLine, err)
	}
	col := map[string]int{}
	for i, h := range header {
		col[strings.ToLower(strings.TrimSpace(h))] = i
	}
	if _, ok := col["op"]; !ok {
		return nil, fmt.Errorf("%s:%d: header has no \"op\" column (want %s)", name, headerLine, strings.Join(OpColumns, ","))
	}
	latCol, hasLat := col["latency_us"]
	if needLatency && !hasLat {
		return nil, fmt.Errorf("%s:%d: header has no \"latency_us\" column", name, headerLine)
	}
	t := &OpTable{Name: name, Meta: meta}
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
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		line, _ := r.FieldPos(0)
		line += headerLine - 1
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %v", name, line, err)
		}
		if len(rec) == 1 && strings.TrimSpace(rec[0]) == "" {
			continue
		}
		if len(t.Rows) >= maxTableRows {
			return nil, fmt.Errorf("%s: more than %d rows", name, maxTableRows)
		}
		cell := func(c string) string {
			if i, ok := col[c]; ok && i < len(rec) {
				return strings.TrimSpace(rec[i])
			}
			return ""
		}
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
		if hasLat && latCol < len(rec) && strings.TrimSpace(rec[latCol]) != "" {
			v, err := strconv.ParseFloat(strings.TrimSpace(rec[latCol]), 64)
			if err != nil || !positiveFinite(v) {
				return nil, fmt.Errorf("%s:%d: column latency_us: want a positive number, got %q", name, line, rec[latCol])
			}
			row.LatencyUS = v
		} else if needLatency {
			return nil, fmt.Errorf("%s:%d: column latency_us is empty", name, line)
		}
		t.Rows = append(t.Rows, row)
	}
	return t, nil
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
	meta, body, headerLine, err := splitMeta(name, data)
	if err != nil {
		return nil, err
	}
	r := csv.NewReader(bytes.NewReader(body))
	r.FieldsPerRecord = -1
	r.ReuseRecord = true
	header, err := r.Read()
	if err != nil {
		return nil, fmt.Errorf("%s:%d: reading header: %v", name, headerLine, err)
	}
	col := map[string]int{}
	for i, h := range header {
		col[strings.ToLower(strings.TrimSpace(h))] = i
	}
	for _, need := range []string{"op", "gpus", "bytes", "latency_us"} {
		if _, ok := col[need]; !ok {
			return nil, fmt.Errorf("%s:%d: header has no %q column (want op,dtype,gpus,bytes,latency_us)", name, headerLine, need)
		}
	}
	t := &CollectiveTable{Name: name, Meta: meta}
	for {
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		line, _ := r.FieldPos(0)
		line += headerLine - 1
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %v", name, line, err)
		}
		if len(rec) == 1 && strings.TrimSpace(rec[0]) == "" {
			continue
		}
		if len(t.Rows) >= maxTableRows {
			return nil, fmt.Errorf("%s: more than %d rows", name, maxTableRows)
		}
		cell := func(c string) string {
			if i, ok := col[c]; ok && i < len(rec) {
				return strings.TrimSpace(rec[i])
			}
			return ""
		}
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
		if err != nil || !positiveFinite(v) {
			return nil, fmt.Errorf("%s:%d: column latency_us: want a positive number, got %q", name, line, cell("latency_us"))
		}
		row.LatencyUS = v
		t.Rows = append(t.Rows, row)
	}
	return t, nil
}
