package measured

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// Label columns a CSV may carry besides deployment and metric columns.
var labelColumns = map[string]bool{"id": true, "note": true, "source": true}

// parseCSV reads the plain CSV format: leading '#' lines are comments, then
// a header of deployment columns (DeploymentKeys), measured_<metric>
// columns (MetricKeys) and optional id/note/source labels; one row per
// measured point; an empty cell means the default.
func parseCSV(name string, data []byte) (*Set, error) {
	line := 1
	for len(data) > 0 && data[0] == '#' {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			return nil, fmt.Errorf("%s: only comment lines, no header", name)
		}
		data = data[i+1:]
		line++
	}
	r := csv.NewReader(bytes.NewReader(data))
	r.Comment = '#'
	header, err := r.Read()
	if err != nil {
		if errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("%s: no header row", name)
		}
		return nil, fmt.Errorf("%s: not a CSV of measured points: %v", name, err)
	}
	type col struct {
		dep, metric, label string
	}
	cols := make([]col, len(header))
	seen := map[string]bool{}
	nMetric := 0
	for i, h := range header {
		h = strings.ToLower(strings.TrimSpace(h))
		if seen[h] {
			return nil, fmt.Errorf("%s:%d: column %q appears twice", name, line, h)
		}
		seen[h] = true
		switch {
		case strings.HasPrefix(h, "measured_"):
			k := strings.TrimPrefix(h, "measured_")
			if _, ok := MetricKeys[k]; !ok {
				return nil, fmt.Errorf("%s:%d: column %q: unknown metric %q (measured_ takes one of %s)", name, line, h, k, strings.Join(SortedMetricKeys(), ", "))
			}
			cols[i].metric = k
			nMetric++
		case isDeploymentKey(h):
			cols[i].dep = h
		case labelColumns[h]:
			cols[i].label = h
		default:
			return nil, fmt.Errorf("%s:%d: unknown column %q: deployment columns are predict's flags in snake_case (%s), metrics are measured_<key> (%s)",
				name, line, h, strings.Join(DeploymentKeys, ", "), strings.Join(SortedMetricKeys(), ", "))
		}
	}
	if nMetric == 0 {
		return nil, fmt.Errorf("%s:%d: no measured_<metric> column", name, line)
	}
	s := &Set{}
	for {
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %v", name, err)
		}
		ln, _ := r.FieldPos(0)
		src := fmt.Sprintf("%s:%d", name, ln+line-1)
		if len(s.Points)+len(s.Skips) >= MaxPoints {
			return nil, fmt.Errorf("%s: more than %d rows", name, MaxPoints)
		}
		p := Point{Source: src, Format: FormatCSV, Deployment: map[string]string{}, Metrics: map[string]float64{}}
		for i, v := range rec {
			v = strings.TrimSpace(v)
			if v == "" {
				continue
			}
			c := cols[i]
			switch {
			case c.metric != "":
				f, err := atof(v)
				if err != nil {
					return nil, fmt.Errorf("%s: measured_%s %q: %v", src, c.metric, v, err)
				}
				p.Metrics[c.metric] = f
			case c.dep != "":
				p.Deployment[c.dep] = v
			case c.label == "id":
				p.Source = src + " (" + v + ")"
			}
		}
		if len(p.Metrics) == 0 {
			s.Skips = append(s.Skips, Skip{src, "no measured_ value in this row"})
			continue
		}
		s.Points = append(s.Points, p)
	}
	if len(s.Points) == 0 && len(s.Skips) == 0 {
		return nil, fmt.Errorf("%s: a header but no rows", name)
	}
	return s, nil
}

func atof(s string) (float64, error) {
	f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil {
		return 0, errors.New("not a number")
	}
	return f, nil
}
