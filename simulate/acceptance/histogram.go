package acceptance

import (
	"bufio"
	"bytes"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/specsim/specsim/internal/regular"
)

// MaxHistogramBytes bounds a histogram file.
const MaxHistogramBytes = 1 << 20

// Histogram is a measured distribution of accepted lengths: Counts[l-1] is
// how often L = l was seen (weights may be fractional).
type Histogram struct {
	Name   string // the file it was read from, for errors
	Counts []float64
	Total  float64
}

// Distribution returns P(L = l) at index l-1.
func (h *Histogram) Distribution() []float64 {
	d := make([]float64, len(h.Counts))
	for i, c := range h.Counts {
		d[i] = c / h.Total
	}
	return d
}

// LoadHistogram reads a histogram file (see ParseHistogram).
func LoadHistogram(name string) (*Histogram, error) {
	data, err := regular.ReadFile(name, MaxHistogramBytes)
	if err != nil {
		return nil, fmt.Errorf("histogram: %w", err)
	}
	return ParseHistogram(name, data)
}

// ParseHistogram reads a CSV histogram of accepted lengths:
//
//	# accepted lengths of one run (bonus token included)
//	length,count
//	1,70
//	2,130
//	4,12
//
// Lines starting with '#' and blank lines are skipped; the header is
// optional; each row is a length in 1..MaxDraftLength+1 and a non-negative
// finite count, each length at most once. Missing lengths count zero. name
// is used in errors.
func ParseHistogram(name string, data []byte) (*Histogram, error) {
	if len(data) > MaxHistogramBytes {
		return nil, fmt.Errorf("histogram %s: larger than %d bytes", name, MaxHistogramBytes)
	}
	counts := make([]float64, MaxDraftLength+1)
	seen := make([]bool, MaxDraftLength+1)
	maxLen := 0
	data = bytes.TrimPrefix(data, []byte("\ufeff")) // the byte-order mark Excel writes
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 4096), 4096)
	line := 0
	rows := 0
	for sc.Scan() {
		line++
		text := strings.TrimSpace(sc.Text())
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		fields := strings.Split(text, ",")
		if len(fields) != 2 {
			return nil, fmt.Errorf("histogram %s: line %d: want \"length,count\", got %d fields", name, line, len(fields))
		}
		ls, cs := strings.TrimSpace(fields[0]), strings.TrimSpace(fields[1])
		if rows == 0 && strings.EqualFold(ls, "length") && strings.EqualFold(cs, "count") {
			rows++
			continue
		}
		rows++
		l, err := strconv.Atoi(ls)
		if err != nil || l < 1 || l > MaxDraftLength+1 {
			return nil, fmt.Errorf("histogram %s: line %d: length %q is not an integer in 1..%d", name, line, ls, MaxDraftLength+1)
		}
		c, err := strconv.ParseFloat(cs, 64)
		if err != nil || c < 0 || math.IsNaN(c) || math.IsInf(c, 0) {
			return nil, fmt.Errorf("histogram %s: line %d: count %q is not a non-negative number", name, line, cs)
		}
		if seen[l-1] {
			return nil, fmt.Errorf("histogram %s: line %d: length %d given twice", name, line, l)
		}
		seen[l-1] = true
		counts[l-1] = c
		maxLen = max(maxLen, l)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("histogram %s: line %d: %v", name, line+1, err)
	}
	h := &Histogram{Name: name, Counts: counts[:maxLen]}
	for _, c := range h.Counts {
		h.Total += c
	}
	if !(h.Total > 0) || math.IsInf(h.Total, 0) {
		return nil, fmt.Errorf("histogram %s: counts sum to %v; need a positive finite total", name, h.Total)
	}
	return h, nil
}
