// Package measured reads the results of real benchmark runs so that they
// can be compared with predictions and used for calibration: InferenceX
// result rows (the agg_*.json its jobs write, single rows or the
// aggregated list), AIPerf's profile_export_aiperf.json, SGLang
// bench_serving's JSON lines, and a plain CSV of measured points.
//
// Every reader turns a file into Points: the deployment in the words of
// specsim predict's flags (snake_case keys, see DeploymentKeys) and the
// measured metrics under predict's JSON keys (see MetricKeys), in predict's
// units (ms for TTFT and TPOT, s for E2EL, tokens/s for throughputs).
// Records a reader recognizes but cannot use become Skips with the reason;
// a file it does not recognize, or one that is truncated or mixes units, is
// an error naming the file and the field.
package measured

import (
	"bytes"
	"errors"
	"fmt"
	"github.com/specsim/specsim/internal/regular"
	"io"
	"maps"
	"math"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// Point is one measured run of one deployment.
type Point struct {
	// Source is where the point came from: file:line or file[index].
	Source string `json:"source"`
	// Format is the reader that produced it (FormatCSV, ...).
	Format string `json:"format"`
	// Deployment holds predict's flags in snake_case (DeploymentKeys);
	// a missing key means the flag's default.
	Deployment map[string]string `json:"deployment"`
	// Metrics holds measured figures under predict's JSON keys (MetricKeys).
	Metrics map[string]float64 `json:"metrics"`
}

// Skip is a record that was read but cannot be compared, and why.
type Skip struct {
	Source string `json:"source"`
	Reason string `json:"reason"`
}

// Set is what one or more files hold.
type Set struct {
	Points []Point `json:"points"`
	Skips  []Skip  `json:"skips"`
	// NotApplied lists the defaults SetDefaults did not apply because
	// points record another value (a command says so: a recorded value
	// wins, but the user asked for something else).
	NotApplied []NotApplied `json:"not_applied,omitempty"`
}

// NotApplied is a default (Key=Value) that Points points record otherwise;
// Source and Recorded are the first such point and its value.
type NotApplied struct {
	Key, Value, Recorded, Source string
	Points                       int
}

func (n NotApplied) String() string {
	more := ""
	if n.Points > 1 {
		more = fmt.Sprintf(" and %d more points", n.Points-1)
	}
	return fmt.Sprintf("%s=%s not applied: %s records %s %s%s (a value the file records wins)", n.Key, n.Value, n.Source, n.Key, n.Recorded, more)
}

// Formats a file can have.
const (
	FormatCSV          = "csv"
	FormatInferenceX   = "inferencex"
	FormatAIPerf       = "aiperf"
	FormatBenchServing = "sglang-bench-serving"
)

// Limits on what a reader accepts.
const (
	MaxFileBytes = 64 << 20
	MaxPoints    = 100_000
)

// DeploymentKeys are the deployment columns a CSV may carry: specsim
// predict's flags with '-' written '_'.
var DeploymentKeys = []string{
	"model", "precision", "gpu", "topology", "nvlink_domain_gpus", "gpus_per_node", "conc",
	"workload", "isl", "osl", "cached", "range_ratio", "agentx",
	"spec", "steps", "al", "thinking", "method",
	"max_running", "cuda_graph_max_bs", "chunk", "mem_fraction",
	"draft_dtype", "kv_dtype", "engine", "sched_overhead_ms", "spec_overhead_ms",
	"moe_skew", "requests", "seed",
}

// MetricKeys are the metrics a point may carry, named as predict's JSON
// output names them (nested keys joined with '_'), with their units.
var MetricKeys = map[string]string{
	"tput_per_gpu":        "tok/s/GPU, input + output (cached input counted)",
	"output_tput_per_gpu": "tok/s/GPU, output only",
	"interactivity":       "tok/s/user (1000 / median TPOT in ms)",
	"tpot_ms":             "ms, median",
	"tpot_ms_p90":         "ms, p90",
	"ttft_ms":             "ms, median",
	"ttft_ms_p90":         "ms, p90",
	"e2el_s_p50":          "s, median",
	"e2el_s_p90":          "s, p90",
	"al":                  "tokens per verify step, bonus included (measured accept length)",
	"decode_batch_mean":   "requests running per decode iteration, whole instance (from engine logs)",
	MetricTputTotal:       "tok/s, whole deployment, input + output (divided by the topology's GPUs)",
	MetricOutputTotal:     "tok/s, whole deployment, output only (divided by the topology's GPUs)",
}

// SortedMetricKeys lists MetricKeys in a fixed order for output.
func SortedMetricKeys() []string {
	order := []string{"tput_per_gpu", "output_tput_per_gpu", "interactivity", "tpot_ms", "tpot_ms_p90", "ttft_ms", "ttft_ms_p90", "e2el_s_p50", "e2el_s_p90", "al", "decode_batch_mean", MetricTputTotal, MetricOutputTotal}
	if len(order) != len(MetricKeys) {
		panic("measured: metric order out of date")
	}
	return order
}

// ReadFile reads one result file of any supported format.
func ReadFile(path string) (*Set, error) {
	f, st, err := regular.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if st.Size() > MaxFileBytes {
		return nil, fmt.Errorf("%s: larger than %d MiB; split it", path, MaxFileBytes>>20)
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxFileBytes+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(data) > MaxFileBytes {
		return nil, fmt.Errorf("%s: larger than %d MiB; split it", path, MaxFileBytes>>20)
	}
	return Parse(path, data)
}

// Parse detects the format of data (named name in messages) and reads it.
func Parse(name string, data []byte) (*Set, error) {
	data = bytes.TrimPrefix(data, []byte("\ufeff")) // the byte-order mark Excel writes
	trim := bytes.TrimSpace(data)
	if len(trim) == 0 {
		return nil, fmt.Errorf("%s: empty file", name)
	}
	var (
		s   *Set
		err error
	)
	switch trim[0] {
	case '[', '{':
		s, err = parseJSON(name, trim)
	default:
		s, err = parseCSV(name, data)
	}
	if err != nil {
		return nil, err
	}
	if len(s.Points) > MaxPoints {
		return nil, fmt.Errorf("%s: more than %d points", name, MaxPoints)
	}
	for i := range s.Points {
		if err := checkMetrics(&s.Points[i]); err != nil {
			return nil, fmt.Errorf("%s: %w", s.Points[i].Source, err)
		}
	}
	return s, nil
}

// plausible bounds each measured figure (inclusive): far outside what any
// deployment serves, so that a figure outside is a broken file (a 1e308
// throughput, a TPOT of nanoseconds), not a fast or slow run. The bounds
// are generous by orders of magnitude: a B200 serves some 10^4 tok/s/GPU.
var plausible = map[string][2]float64{
	"tput_per_gpu":        {1e-3, 1e6},
	"output_tput_per_gpu": {1e-3, 1e6},
	MetricTputTotal:       {1e-3, 1e9},
	MetricOutputTotal:     {1e-3, 1e9},
	"interactivity":       {1e-3, 1e5},
	"tpot_ms":             {1e-2, 1e5},
	"tpot_ms_p90":         {1e-2, 1e5},
	"ttft_ms":             {1e-2, 1e8},
	"ttft_ms_p90":         {1e-2, 1e8},
	"e2el_s_p50":          {1e-5, 1e6},
	"e2el_s_p90":          {1e-5, 1e6},
	"al":                  {1, 64}, // the bonus token counts: at least 1
	"decode_batch_mean":   {1e-3, 1 << 20},
}

// checkMetrics rejects non-finite, non-positive or implausible figures
// (plausible), a negative draft length, and latencies that disagree by
// orders of magnitude, the sign of seconds read as milliseconds or the
// reverse.
func checkMetrics(p *Point) error {
	if v, ok := p.Deployment["steps"]; ok {
		if n, err := strconv.Atoi(strings.TrimSpace(v)); err != nil || n < 0 {
			return fmt.Errorf("steps %q: want the draft length, 0 (no speculation) or a positive integer", v)
		}
	}
	keys := make([]string, 0, len(p.Metrics))
	for k := range p.Metrics {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v := p.Metrics[k]
		if _, ok := MetricKeys[k]; !ok {
			return fmt.Errorf("unknown metric %q (known: %s)", k, strings.Join(SortedMetricKeys(), ", "))
		}
		if math.IsNaN(v) || math.IsInf(v, 0) || v <= 0 {
			return fmt.Errorf("%s = %g: want a positive finite number", k, v)
		}
		if b := plausible[k]; v < b[0] || v > b[1] {
			return fmt.Errorf("%s = %g: not a plausible measurement (%s; want %g to %g)", k, v, MetricKeys[k], b[0], b[1])
		}
	}
	m := p.Metrics
	// Interactivity is 1000/TPOT(ms) by both InferenceX's and predict's
	// definition.
	if tp, ok := m["tpot_ms"]; ok {
		if it, ok := m["interactivity"]; ok {
			if r := it * tp / 1000; r < 0.8 || r > 1.25 {
				return fmt.Errorf("interactivity %g tok/s/user and median TPOT %g ms disagree (interactivity x TPOT = %.3g s, want about 1): a unit mismatch between seconds and milliseconds?", it, tp, it*tp/1000)
			}
		}
	}
	// E2EL >= TTFT, and a request's latency is within a factor of the
	// output length of its TPOT: a factor of ~1000 off is a unit mismatch.
	if e2el, ok := m["e2el_s_p50"]; ok {
		if ttft, ok := m["ttft_ms"]; ok && ttft/1000 > 20*e2el {
			return fmt.Errorf("median TTFT %g ms is %.0fx the median E2EL %g s: a unit mismatch between seconds and milliseconds?", ttft, ttft/1000/e2el, e2el)
		}
		if osl, err := atof(p.Deployment["osl"]); err == nil && osl > 1 {
			if tp, ok := m["tpot_ms"]; ok {
				r := e2el / (tp / 1000 * (osl - 1))
				if r > 100 || r < 0.01 {
					return fmt.Errorf("median E2EL %g s and median TPOT %g ms over %g output tokens differ by %.3gx: a unit mismatch between seconds and milliseconds?", e2el, tp, osl, r)
				}
			}
		}
	}
	return nil
}

// ReadFiles reads several files into one set.
func ReadFiles(paths []string) (*Set, error) {
	all := &Set{}
	var read []string
	stats := map[string]os.FileInfo{}
	for _, p := range paths {
		// A file read twice (named twice, or through a link) would weigh
		// its points twice in the medians and the fit, and leave one in
		// when calibrate's leave-one-out leaves its twin out.
		if st, err := os.Stat(p); err == nil {
			for _, q := range read {
				if os.SameFile(stats[q], st) {
					return nil, fmt.Errorf("%s: the same file as %s, given twice: its points would count twice", p, q)
				}
			}
			read, stats[p] = append(read, p), st
		}
		s, err := ReadFile(p)
		if err != nil {
			return nil, err
		}
		all.Points = append(all.Points, s.Points...)
		all.Skips = append(all.Skips, s.Skips...)
		if len(all.Points) > MaxPoints {
			return nil, fmt.Errorf("more than %d points in all", MaxPoints)
		}
	}
	if len(all.Points) == 0 && len(all.Skips) == 0 {
		return nil, errors.New("no measured points")
	}
	return all, nil
}

// SetDefaults fills deployment keys a point does not carry from kv (keys
// as DeploymentKeys): what a result file leaves out (AIPerf and
// bench_serving record no GPU or topology; InferenceX rows no draft
// length). steps and al are not given to points whose spec is none. A key
// that is not a deployment key is an [*Error] on "Deployment.KEY". A point
// that records a key with another value (compared without case) keeps it,
// and the default is listed in s.NotApplied.
func (s *Set) SetDefaults(kv map[string]string) error {
	for _, k := range slices.Sorted(maps.Keys(kv)) {
		if !isDeploymentKey(k) {
			return &Error{Field: "Deployment." + k, Value: kv[k], Reason: "not a deployment key (known: " + strings.Join(DeploymentKeys, ", ") + ")"}
		}
	}
	for i := range s.Points {
		d := s.Points[i].Deployment
		for _, k := range slices.Sorted(maps.Keys(kv)) {
			v := kv[k]
			if (k == "steps" || k == "al") && d["spec"] == "none" {
				continue // speculation settings apply to speculative points only
			}
			rec, ok := d[k]
			switch {
			case !ok:
				d[k] = v
			case !strings.EqualFold(rec, v):
				notApplied(s, k, v, rec, s.Points[i].Source)
			}
		}
	}
	return nil
}

func notApplied(s *Set, k, v, rec, src string) {
	for i := range s.NotApplied {
		if s.NotApplied[i].Key == k {
			s.NotApplied[i].Points++
			return
		}
	}
	s.NotApplied = append(s.NotApplied, NotApplied{Key: k, Value: v, Recorded: rec, Source: src, Points: 1})
}

func isDeploymentKey(k string) bool {
	for _, d := range DeploymentKeys {
		if d == k {
			return true
		}
	}
	return false
}

// Error is an argument that cannot be used as given: Field names it, a
// deployment key after a dot ("Deployment.colour"), Value what it held and
// Reason what is wrong. A command maps Field to its own flag.
type Error struct {
	Field, Value, Reason string
}

func (e *Error) Error() string {
	if e.Value == "" {
		return e.Field + ": " + e.Reason
	}
	return fmt.Sprintf("%s %s: %s", e.Field, e.Value, e.Reason)
}
