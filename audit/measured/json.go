package measured

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Whole-deployment throughputs, as AIPerf and bench_serving report them;
// compare divides them by the topology's GPUs.
const (
	MetricTputTotal   = "tput_total"
	MetricOutputTotal = "output_tput_total"
)

type record struct {
	src string
	obj map[string]any
}

// parseJSON reads one JSON value (an object or a list of objects) or JSON
// lines (one object per line, as bench_serving appends them).
func parseJSON(name string, data []byte) (*Set, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var recs []record
	lineAt := func(off int64) int { return 1 + bytes.Count(data[:min(int(off), len(data))], []byte{'\n'}) }
	for n := 0; ; n++ {
		start := dec.InputOffset()
		var v any
		err := dec.Decode(&v)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			if errors.Is(err, io.ErrUnexpectedEOF) {
				return nil, fmt.Errorf("%s: truncated JSON (the file ends inside a value)", name)
			}
			return nil, fmt.Errorf("%s:%d: not valid JSON: %v", name, lineAt(start), err)
		}
		switch t := v.(type) {
		case map[string]any:
			src := name
			if n > 0 || dec.More() {
				src = fmt.Sprintf("%s:%d", name, lineAt(start)+countLeadingNewlines(data[start:]))
			}
			recs = append(recs, record{src, t})
		case []any:
			if n > 0 {
				return nil, fmt.Errorf("%s: a list after other JSON values", name)
			}
			for i, e := range t {
				src := fmt.Sprintf("%s[%d]", name, i)
				o, ok := e.(map[string]any)
				if !ok {
					return nil, fmt.Errorf("%s: want an object, found %s", src, kind(e))
				}
				recs = append(recs, record{src, o})
			}
		default:
			return nil, fmt.Errorf("%s: want a JSON object or a list of objects, found %s", name, kind(v))
		}
		if len(recs) > MaxPoints {
			return nil, fmt.Errorf("%s: more than %d records", name, MaxPoints)
		}
	}
	s := &Set{}
	recognized := 0
	for _, r := range recs {
		var (
			p   *Point
			err error
		)
		switch {
		case isAIPerf(r.obj):
			p, err = readAIPerf(r)
		case isInferenceX(r.obj):
			p, err = readInferenceX(r)
		case isBenchServing(r.obj):
			p, err = readBenchServing(r)
		default:
			s.Skips = append(s.Skips, Skip{r.src, "not a result record this reader knows (InferenceX row, AIPerf profile_export_aiperf.json, bench_serving result)"})
			continue
		}
		recognized++
		var skip *skipError
		switch {
		case errors.As(err, &skip):
			s.Skips = append(s.Skips, Skip{r.src, skip.reason})
		case err != nil:
			return nil, fmt.Errorf("%s: %w", r.src, err)
		default:
			s.Points = append(s.Points, *p)
		}
	}
	if recognized == 0 {
		return nil, fmt.Errorf("%s: not a result file this tool reads: want InferenceX result rows (agg_*.json), AIPerf profile_export_aiperf.json or SGLang bench_serving JSON lines", name)
	}
	return s, nil
}

func countLeadingNewlines(b []byte) int {
	n := 0
	for _, c := range b {
		switch c {
		case '\n':
			n++
		case ' ', '\t', '\r':
		default:
			return n
		}
	}
	return n
}

func kind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "a boolean"
	case json.Number:
		return "a number"
	case string:
		return "a string"
	case []any:
		return "a list"
	}
	return "an object"
}

// skipError marks a record that was recognized but cannot be compared.
type skipError struct{ reason string }

func (e *skipError) Error() string { return e.reason }

func skipf(format string, a ...any) error { return &skipError{fmt.Sprintf(format, a...)} }

// num reads a numeric field (a JSON number, or a string holding one, as
// InferenceX rows sometimes carry); ok is false when the key is absent or
// null.
func num(o map[string]any, key string) (float64, bool, error) {
	v, ok := o[key]
	if !ok || v == nil {
		return 0, false, nil
	}
	var f float64
	var err error
	switch t := v.(type) {
	case json.Number:
		f, err = t.Float64()
	case string:
		f, err = strconv.ParseFloat(strings.TrimSpace(t), 64)
	default:
		return 0, false, fmt.Errorf("%s: want a number, found %s", key, kind(v))
	}
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, false, fmt.Errorf("%s: %v is not a finite number", key, v)
	}
	return f, true, nil
}

func str(o map[string]any, key string) string {
	switch t := o[key].(type) {
	case string:
		return strings.TrimSpace(t)
	case json.Number:
		return t.String()
	case bool:
		return strconv.FormatBool(t)
	}
	return ""
}

func obj(o map[string]any, keys ...string) map[string]any {
	for _, k := range keys {
		n, ok := o[k].(map[string]any)
		if !ok {
			return nil
		}
		o = n
	}
	return o
}

func truthy(s string) bool {
	switch strings.ToLower(s) {
	case "true", "1", "yes", "on":
		return true
	}
	return false
}

// engineOf maps a framework or backend name to predict's --engine.
func engineOf(s string) string {
	s = strings.ToLower(s)
	switch {
	case strings.Contains(s, "sglang"):
		return "sglang"
	case strings.Contains(s, "vllm"):
		return "vllm"
	case strings.Contains(s, "trt"):
		return "trtllm"
	}
	return s
}

// --- InferenceX -----------------------------------------------------------

// isInferenceX recognizes the rows utils/process_result.py (fixed
// sequence lengths) and utils/agentic/aggregation/process_agentic_result.py
// (build_agg, agentic coding) write.
func isInferenceX(o map[string]any) bool {
	_, tput := o["tput_per_gpu"]
	_, hw := o["hw"]
	_, rm := o["request_metrics"]
	return tput || (hw && rm)
}

// readInferenceX reads one InferenceX result row. In the fixed-length rows
// of SemiAnalysisAI/InferenceX utils/process_result.py every latency is in
// SECONDS: the script takes bench_serving's *_ms keys, drops the "_ms" and
// divides by 1000 (median_ttft, p90_tpot, median_e2el, ...), and adds
// *_intvty = 1000 / *_tpot_ms (tokens/s per user). tput_per_gpu divides
// total_token_throughput by all GPUs; output_tput_per_gpu divides output
// throughput by the decode GPUs only in multinode (disaggregated) rows, so
// it is rescaled here to predict's definition (all GPUs).
func readInferenceX(r record) (*Point, error) {
	o := r.obj
	p := &Point{Source: r.src, Format: FormatInferenceX, Deployment: map[string]string{}, Metrics: map[string]float64{}}
	d := p.Deployment
	if hw := str(o, "hw"); hw != "" {
		gpu, _, _ := strings.Cut(strings.ToLower(hw), "-")
		gpu, _, _ = strings.Cut(gpu, "_")
		d["gpu"] = gpu
	}
	if m := str(o, "model"); m != "" {
		d["model"] = m
	}
	if v := str(o, "precision"); v != "" {
		d["precision"] = strings.ToLower(v)
	}
	if v := str(o, "framework"); v != "" {
		d["engine"] = engineOf(v)
	}
	switch sd := strings.ToLower(str(o, "spec_decoding")); sd {
	case "", "none", "off", "false":
		d["spec"] = "none"
	case "mtp":
		d["spec"] = "mtp"
	default:
		return nil, skipf("spec_decoding %q: specsim models MTP (NEXTN/EAGLE chain drafts of the model's own MTP head) and none", sd)
	}
	conc, ok, err := num(o, "conc")
	if err != nil {
		return nil, err
	}
	if ok {
		d["conc"] = strconv.Itoa(int(conc))
	}
	agentic := str(o, "scenario_type") == "agentic-coding"
	if agentic {
		d["workload"] = "agentx"
	} else {
		for _, k := range []string{"isl", "osl"} {
			v, ok, err := num(o, k)
			if err != nil {
				return nil, err
			}
			if ok {
				d[k] = strconv.Itoa(int(v))
			}
		}
	}
	if strings.ToLower(str(o, "kv_offloading")) != "" && strings.ToLower(str(o, "kv_offloading")) != "none" {
		return nil, skipf("kv_offloading %s: host-memory KV offload is not modelled", str(o, "kv_offloading"))
	}
	topo, gpus, decodeGPUs, err := inferenceXTopology(o)
	if err != nil {
		return nil, err
	}
	d["topology"] = topo
	set := func(key string, v float64, ok bool, err error) error {
		if err != nil {
			return err
		}
		if ok {
			p.Metrics[key] = v
		}
		return nil
	}
	if agentic {
		pg := obj(o, "request_metrics", "throughput", "per_gpu")
		if pg == nil {
			return nil, skipf("agentic row without request_metrics.throughput.per_gpu")
		}
		v, ok, err := num(pg, "total_tput_tps")
		if err := set("tput_per_gpu", v, ok, err); err != nil {
			return nil, err
		}
		v, ok, err = num(pg, "output_tput_tps")
		if err := set("output_tput_per_gpu", v, ok, err); err != nil {
			return nil, err
		}
		// request_metrics.py compute_latency_stats: per-request TTFT, E2EL
		// and ITL (= TPOT) converted to SECONDS (_ms_to_s), nested as
		// latency.<metric>.<stat>; intvty is 1/ITL in tokens/s.
		lat := obj(o, "request_metrics", "latency")
		for _, f := range []struct {
			metric, stat, key string
			scale             float64
		}{
			{"ttft", "p50", "ttft_ms", 1000}, {"ttft", "p90", "ttft_ms_p90", 1000},
			{"tpot", "p50", "tpot_ms", 1000}, {"tpot", "p90", "tpot_ms_p90", 1000},
			{"e2el", "p50", "e2el_s_p50", 1}, {"e2el", "p90", "e2el_s_p90", 1},
			{"intvty", "p50", "interactivity", 1},
		} {
			m := obj(lat, f.metric)
			if m == nil {
				continue
			}
			for _, stat := range []string{f.stat, "median"} {
				v, ok, err := num(m, stat)
				if err != nil {
					return nil, fmt.Errorf("request_metrics.latency.%s.%w", f.metric, err)
				}
				if ok {
					p.Metrics[f.key] = v * f.scale
					break
				}
				if f.stat != "p50" {
					break
				}
			}
		}
	} else {
		v, ok, err := num(o, "tput_per_gpu")
		if err := set("tput_per_gpu", v, ok, err); err != nil {
			return nil, err
		}
		v, ok, err = num(o, "output_tput_per_gpu")
		if err != nil {
			return nil, err
		}
		if ok && gpus > 0 {
			// process_result.py: multinode rows divide output by decode GPUs.
			p.Metrics["output_tput_per_gpu"] = v * float64(decodeGPUs) / float64(gpus)
		}
		// Seconds in the row; predict's keys take ms for TTFT/TPOT.
		for _, f := range []struct {
			row, key string
			scale    float64
		}{
			{"median_ttft", "ttft_ms", 1000}, {"p90_ttft", "ttft_ms_p90", 1000},
			{"median_tpot", "tpot_ms", 1000}, {"p90_tpot", "tpot_ms_p90", 1000},
			{"median_e2el", "e2el_s_p50", 1}, {"p90_e2el", "e2el_s_p90", 1},
			{"median_intvty", "interactivity", 1},
		} {
			if _, msKey := o[f.row+"_ms"]; msKey {
				return nil, fmt.Errorf("%s_ms next to InferenceX row fields: a bench_serving result mixed into an InferenceX row? (process_result.py writes %s in seconds)", f.row, f.row)
			}
			v, ok, err := num(o, f.row)
			if err := set(f.key, v*f.scale, ok, err); err != nil {
				return nil, err
			}
		}
	}
	if len(p.Metrics) == 0 {
		return nil, skipf("no metric this tool compares (tput_per_gpu, median_tpot, ...)")
	}
	return p, nil
}

// inferenceXTopology builds predict's --topology from a row's parallelism
// fields, with the GPU count and the decode GPUs (all GPUs when
// aggregated).
func inferenceXTopology(o map[string]any) (topo string, gpus, decodeGPUs int, err error) {
	spec := func(prefix string) (string, int, error) {
		tp, okTP, err := num(o, prefix+"tp")
		if err != nil {
			return "", 0, err
		}
		if !okTP || tp < 1 || tp > 1024 {
			return "", 0, skipf("no usable %stp field", prefix)
		}
		ep, okEP, err := num(o, prefix+"ep")
		if err != nil {
			return "", 0, err
		}
		pp, okPP, err := num(o, prefix+"pp")
		if err != nil {
			return "", 0, err
		}
		for _, k := range []string{"dcp_size", "pcp_size"} {
			if v, ok, _ := num(o, prefix+k); ok && v > 1 {
				return "", 0, skipf("%s%s %g: context parallelism is not modelled", prefix, k, v)
			}
		}
		dp := truthy(str(o, prefix+"dp_attention"))
		t, n := int(tp), int(tp)
		var s string
		switch {
		case dp:
			s = fmt.Sprintf("dep%d", t)
		case okEP && ep > 1:
			s = fmt.Sprintf("tp%dep%d", t, int(ep))
		default:
			s = fmt.Sprintf("tp%d", t)
		}
		if okPP && pp > 1 {
			s += fmt.Sprintf("pp%d", int(pp))
			n *= int(pp)
		}
		return s, n, nil
	}
	multinode := truthy(str(o, "is_multinode"))
	if !multinode {
		s, n, err := spec("")
		if err != nil {
			return "", 0, 0, err
		}
		return "agg:" + s, n, n, nil
	}
	pw, _, err := num(o, "prefill_num_workers")
	if err != nil {
		return "", 0, 0, err
	}
	dw, _, err := num(o, "decode_num_workers")
	if err != nil {
		return "", 0, 0, err
	}
	ps, pn, err := spec("prefill_")
	if err != nil {
		return "", 0, 0, err
	}
	if dw <= 0 {
		if pw != 1 {
			return "", 0, 0, skipf("multinode aggregated row with %g workers: specsim models one aggregated instance", pw)
		}
		return "agg:" + ps, pn, pn, nil
	}
	ds, dn, err := spec("decode_")
	if err != nil {
		return "", 0, 0, err
	}
	if pw < 1 || pw > 64 || dw > 64 {
		return "", 0, 0, skipf("worker counts %g prefill / %g decode out of range", pw, dw)
	}
	gpus = int(pw)*pn + int(dw)*dn
	return fmt.Sprintf("disagg:%dx%s+%dx%s", int(pw), ps, int(dw), ds), gpus, int(dw) * dn, nil
}

// --- AIPerf ---------------------------------------------------------------

var aiperfMetrics = []string{"time_to_first_token", "request_latency", "inter_token_latency", "output_token_throughput"}

// isAIPerf recognizes profile_export_aiperf.json: metric objects carrying a
// "unit" at the top level (ai-dynamo/aiperf docs "Working with Profile
// Export Files", Aggregated Statistics JSON).
func isAIPerf(o map[string]any) bool {
	for _, k := range aiperfMetrics {
		if m, ok := o[k].(map[string]any); ok {
			if _, ok := m["unit"]; ok {
				return true
			}
		}
	}
	return false
}

// msFactor converts an AIPerf latency unit to milliseconds.
func msFactor(unit string) (float64, error) {
	switch strings.ToLower(unit) {
	case "ms":
		return 1, nil
	case "s", "sec", "seconds":
		return 1000, nil
	case "us":
		return 1e-3, nil
	case "ns":
		return 1e-6, nil
	}
	return 0, fmt.Errorf("unit %q: want ms, s, us or ns", unit)
}

// readAIPerf reads profile_export_aiperf.json: time_to_first_token,
// inter_token_latency (per request (latency - TTFT)/(OSL - 1), the TPOT of
// bench_serving) and request_latency with their stated units (ms in every
// version read), output_token_throughput in tokens/sec for the whole
// deployment, and the concurrency and lengths from input_config.
func readAIPerf(r record) (*Point, error) {
	o := r.obj
	p := &Point{Source: r.src, Format: FormatAIPerf, Deployment: map[string]string{}, Metrics: map[string]float64{}}
	if b, ok := o["was_cancelled"].(bool); ok && b {
		return nil, skipf("the AIPerf run was cancelled before it finished")
	}
	lat := func(metric, stat, key string, toS bool) error {
		m := obj(o, metric)
		if m == nil {
			return nil
		}
		v, ok, err := num(m, stat)
		if err != nil || !ok {
			return err
		}
		f, err := msFactor(str(m, "unit"))
		if err != nil {
			return fmt.Errorf("%s: %w", metric, err)
		}
		v *= f
		if toS {
			v /= 1000
		}
		p.Metrics[key] = v
		return nil
	}
	for _, l := range []struct {
		metric, stat, key string
		toS               bool
	}{
		{"time_to_first_token", "p50", "ttft_ms", false}, {"time_to_first_token", "p90", "ttft_ms_p90", false},
		{"inter_token_latency", "p50", "tpot_ms", false}, {"inter_token_latency", "p90", "tpot_ms_p90", false},
		{"request_latency", "p50", "e2el_s_p50", true}, {"request_latency", "p90", "e2el_s_p90", true},
	} {
		if err := lat(l.metric, l.stat, l.key, l.toS); err != nil {
			return nil, err
		}
	}
	for _, t := range []struct{ metric, key string }{{"output_token_throughput", MetricOutputTotal}, {"total_token_throughput", MetricTputTotal}} {
		m := obj(o, t.metric)
		if m == nil {
			continue
		}
		if u := strings.ToLower(str(m, "unit")); u != "tokens/sec" && u != "tokens/s" && u != "tok/s" {
			return nil, fmt.Errorf("%s: unit %q: want tokens/sec", t.metric, str(m, "unit"))
		}
		v, ok, err := num(m, "avg")
		if err != nil {
			return nil, fmt.Errorf("%s: %w", t.metric, err)
		}
		if ok {
			p.Metrics[t.key] = v
		}
	}
	cfg := obj(o, "input_config")
	// The served model AIPerf sent requests to (aiperf
	// src/aiperf/common/config/endpoint_config.py EndpointConfig.model_names).
	// Several names are a multi-model run: not one deployment.
	if ep := obj(cfg, "endpoint"); ep != nil {
		if names, ok := ep["model_names"].([]any); ok {
			var ms []string
			for _, n := range names {
				if s, ok := n.(string); ok && s != "" && !slices.Contains(ms, s) {
					ms = append(ms, s)
				}
			}
			switch {
			case len(ms) == 1:
				p.Deployment["model"] = ms[0]
			case len(ms) > 1:
				return nil, skipf("input_config.endpoint.model_names lists %d models (%s): a point is one deployment of one model", len(ms), strings.Join(ms, ", "))
			}
		}
	}
	if lg := obj(cfg, "loadgen"); lg != nil {
		if c, ok, err := num(lg, "concurrency"); err != nil {
			return nil, fmt.Errorf("input_config.loadgen.%w", err)
		} else if ok {
			p.Deployment["conc"] = strconv.Itoa(int(c))
		}
	}
	for _, l := range []struct{ field, key string }{{"input_tokens", "isl"}, {"output_tokens", "osl"}} {
		if m := obj(cfg, "input", "prompt", l.field); m != nil {
			if v, ok, err := num(m, "mean"); err != nil {
				return nil, fmt.Errorf("input_config.input.prompt.%s.%w", l.field, err)
			} else if ok {
				p.Deployment[l.key] = strconv.Itoa(int(v))
			}
		}
	}
	if len(p.Metrics) == 0 {
		return nil, skipf("no latency or throughput metric in this AIPerf export")
	}
	return p, nil
}

// --- bench_serving ----------------------------------------------------------

// isBenchServing recognizes the result dict SGLang's
// python/sglang/bench_serving.py (function benchmark) appends as one JSON
// line per run, and the vLLM-style benchmark_serving.py result InferenceX
// runs (utils/bench_serving/benchmark_serving.py: *_e2el_ms naming).
func isBenchServing(o map[string]any) bool {
	_, out := o["output_throughput"]
	_, ttft := o["median_ttft_ms"]
	_, e2e := o["median_e2e_latency_ms"]
	_, e2el := o["median_e2el_ms"]
	return out && (ttft || e2e || e2el)
}

// readBenchServing reads one bench_serving result: every latency key ends
// in _ms and is in milliseconds; output_throughput and total_throughput
// (vLLM: total_token_throughput) are tokens/s for the whole deployment;
// max_concurrency, random_input_len/random_output_len/random_range_ratio
// describe the load; accept_length (SGLang, speculative runs) is the
// measured acceptance length.
func readBenchServing(r record) (*Point, error) {
	o := r.obj
	p := &Point{Source: r.src, Format: FormatBenchServing, Deployment: map[string]string{}, Metrics: map[string]float64{}}
	d := p.Deployment
	if b := str(o, "backend"); b != "" {
		d["engine"] = engineOf(b)
	}
	if c, ok, err := num(o, "max_concurrency"); err != nil {
		return nil, err
	} else if ok {
		d["conc"] = strconv.Itoa(int(c))
	}
	ds := strings.ToLower(str(o, "dataset_name"))
	if ds == "" || strings.HasPrefix(ds, "random") {
		for _, l := range []struct{ field, key string }{{"random_input_len", "isl"}, {"random_output_len", "osl"}} {
			if v, ok, err := num(o, l.field); err != nil {
				return nil, err
			} else if ok && v > 0 {
				d[l.key] = strconv.Itoa(int(v))
			}
		}
		if v, ok, err := num(o, "random_range_ratio"); err != nil {
			return nil, err
		} else if ok {
			d["range_ratio"] = strconv.FormatFloat(v, 'g', -1, 64)
		}
	} else {
		return nil, skipf("dataset %q: only the random dataset's fixed lengths map onto a specsim workload", ds)
	}
	for _, f := range []struct {
		keys  []string
		key   string
		scale float64
	}{
		{[]string{"median_ttft_ms"}, "ttft_ms", 1}, {[]string{"p90_ttft_ms"}, "ttft_ms_p90", 1},
		{[]string{"median_tpot_ms"}, "tpot_ms", 1}, {[]string{"p90_tpot_ms"}, "tpot_ms_p90", 1},
		{[]string{"median_e2e_latency_ms", "median_e2el_ms"}, "e2el_s_p50", 1e-3},
		{[]string{"p90_e2e_latency_ms", "p90_e2el_ms"}, "e2el_s_p90", 1e-3},
		{[]string{"output_throughput"}, MetricOutputTotal, 1},
		{[]string{"total_throughput", "total_token_throughput"}, MetricTputTotal, 1},
		{[]string{"accept_length"}, "al", 1},
	} {
		for _, k := range f.keys {
			v, ok, err := num(o, k)
			if err != nil {
				return nil, err
			}
			if ok {
				if f.key == "al" && v <= 0 {
					break // bench_serving writes no accept length as null or 0
				}
				p.Metrics[f.key] = v * f.scale
				break
			}
		}
	}
	if _, ok := p.Metrics[MetricTputTotal]; !ok {
		in, okIn, err := num(o, "input_throughput")
		if err != nil {
			return nil, err
		}
		if out, okOut := p.Metrics[MetricOutputTotal]; okIn && okOut {
			p.Metrics[MetricTputTotal] = in + out
		}
	}
	if tp, ok := p.Metrics["tpot_ms"]; ok && tp > 0 {
		p.Metrics["interactivity"] = 1000 / tp
	}
	return p, nil
}
