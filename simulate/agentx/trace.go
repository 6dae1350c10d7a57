package agentx

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/specsim/specsim/internal/regular"
	"io"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Bounds on what a trace file may hold; beyond them parsing stops with an
// error naming the file and line rather than allocating without limit.
const (
	MaxTraceFileBytes  = 256 << 20 // the public corpus's largest file is about 4 MB
	MaxRequestsPerFile = 200_000   // requests and subagent requests together
	MaxCorpusRequests  = 5_000_000
	MaxCorpusFiles     = 100_000
	maxHashIDs         = 1 << 17 // 8M tokens of 64-token blocks
	maxTokens          = 1 << 24
	maxSeconds         = 1e8
	// chainWindow bounds the chains a request is matched against (the
	// public traces have at most a handful per agent).
	chainWindow = 32
)

// Session kinds within a trace.
const (
	KindRoot     uint8 = iota // the root conversation's main context chain
	KindSide                  // another context chain of the root agent (side calls)
	KindSubagent              // a context chain of a spawned subagent
)

// Trace is one recorded session tree reduced to what the replay needs.
// Requests are in recorded start order; every predecessor index is smaller
// than its dependant's.
type Trace struct {
	Name     string
	Sessions []uint8 // kind of each session (context chain)
	Requests []TraceRequest
}

// TraceRequest is one recorded request of a Trace.
type TraceRequest struct {
	Session int32 // index into Trace.Sessions
	In, Out int32 // prompt and output tokens
	Shared  int32 // prompt tokens shared with the session's previous request
	// Start is the recorded start, in seconds from the trace's first request.
	Start float64
	// Gap is the recorded idle time between the end of the latest-ending
	// predecessor and this request's start (AIPerf's end-to-start delay,
	// weka_trace.py _end_to_start_delay_ms, clamped at 0). For a request with
	// no predecessor it is the offset from the tree's start.
	Gap float64
	// Preds are the requests whose completion this one waits for: the
	// session's previous request, the other chains of the same agent that
	// had finished when it started, a subagent's spawning parent turn, and
	// for the parent turn after a subagent, every chain of that subagent.
	Preds []int32
}

// RootTurns counts the requests of the root's main chain.
func (t *Trace) RootTurns() int {
	n := 0
	for i := range t.Requests {
		if t.Sessions[t.Requests[i].Session] == KindRoot {
			n++
		}
	}
	return n
}

// PeakContext is the largest prompt plus output of any request: AIPerf's
// --max-context-length drops traces above it (_trace_peak_context_length).
func (t *Trace) PeakContext() int {
	p := 0
	for i := range t.Requests {
		p = max(p, int(t.Requests[i].In+t.Requests[i].Out))
	}
	return p
}

// ParseError is a trace file that cannot be read.
type ParseError struct {
	File string
	Line int // 1-based; 0 when unknown
	Col  int
	Msg  string
}

func (e *ParseError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d:%d: %s", e.File, e.Line, e.Col, e.Msg)
	}
	return fmt.Sprintf("%s: %s", e.File, e.Msg)
}

// rawRequest is one entry of a kv-cache-tester trace's "requests" list: a
// normal request ("type": "n" or "s") or a subagent entry ("type":
// "subagent") with its own inner requests.
type rawRequest struct {
	T          *float64     `json:"t"`
	Type       string       `json:"type"`
	In         *int64       `json:"in"`
	Out        *int64       `json:"out"`
	HashIDs    []int64      `json:"hash_ids"`
	APITime    *float64     `json:"api_time"`
	DurationMS *float64     `json:"duration_ms"`
	Requests   []rawRequest `json:"requests"`
}

// LoadTraces reads a trace file or a directory of them (*.json, in name
// order), keeping at most maxFiles (0 = all; AIPerf's --num-dataset-entries
// takes the first entries the same way).
func LoadTraces(path string, maxFiles int) ([]*Trace, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	files := []string{path}
	if st.IsDir() {
		ents, err := os.ReadDir(path)
		if err != nil {
			return nil, err
		}
		files = files[:0]
		for _, e := range ents {
			if !e.IsDir() && strings.HasSuffix(e.Name(), ".json") {
				files = append(files, filepath.Join(path, e.Name()))
			}
		}
		sort.Strings(files)
		if len(files) == 0 {
			return nil, fmt.Errorf("%s: no *.json trace files", path)
		}
		if len(files) > MaxCorpusFiles {
			return nil, fmt.Errorf("%s: %d trace files, more than the %d allowed", path, len(files), MaxCorpusFiles)
		}
	}
	if maxFiles > 0 && len(files) > maxFiles {
		files = files[:maxFiles]
	}
	var out []*Trace
	total := 0
	for _, f := range files {
		t, err := readTraceFile(f)
		if err != nil {
			return nil, err
		}
		total += len(t.Requests)
		if total > MaxCorpusRequests {
			return nil, fmt.Errorf("%s: the corpus passes %d requests", f, MaxCorpusRequests)
		}
		out = append(out, t)
	}
	return out, nil
}

func readTraceFile(name string) (*Trace, error) {
	f, _, err := regular.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxTraceFileBytes+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if len(data) > MaxTraceFileBytes {
		return nil, &ParseError{File: name, Msg: fmt.Sprintf("larger than %d MiB", MaxTraceFileBytes>>20)}
	}
	base := strings.TrimSuffix(filepath.Base(name), ".json")
	return ParseTrace(name, base, data)
}

// ParseTrace reads one kv-cache-tester trace (the format AIPerf's
// weka_trace loader reads) from data; file names it in errors.
func ParseTrace(file, name string, data []byte) (*Trace, error) {
	fail := func(off int64, format string, a ...any) error {
		line, col := lineCol(data, off)
		return &ParseError{File: file, Line: line, Col: col, Msg: fmt.Sprintf(format, a...)}
	}
	jsonErr := func(err error, off int64) error {
		var se *json.SyntaxError
		var te *json.UnmarshalTypeError
		switch {
		case errors.As(err, &se):
			off = se.Offset
		case errors.As(err, &te):
			off = te.Offset
			return fail(off, "field %q: %s is not a %s", te.Field, te.Value, te.Type)
		case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
			return fail(int64(len(data)), "truncated: the JSON ends early")
		}
		return fail(off, "%v", err)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	tok, err := dec.Token()
	if err != nil {
		return nil, jsonErr(err, dec.InputOffset())
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, fail(0, "want a JSON object with a \"requests\" list")
	}
	blockSize := int64(BlockSize)
	var reqs []rawRequest
	var offs []int64
	sawRequests := false
	count := 0
	for dec.More() {
		keyOff := dec.InputOffset()
		tok, err := dec.Token()
		if err != nil {
			return nil, jsonErr(err, keyOff)
		}
		key, _ := tok.(string)
		switch key {
		case "block_size":
			var bs float64
			if err := dec.Decode(&bs); err != nil {
				return nil, jsonErr(err, keyOff)
			}
			if bs != math.Trunc(bs) || bs < 1 || bs > 1<<16 {
				return nil, fail(keyOff, "block_size %g: want a whole number of tokens in 1..65536", bs)
			}
			blockSize = int64(bs)
		case "requests":
			sawRequests = true
			if tok, err := dec.Token(); err != nil {
				return nil, jsonErr(err, keyOff)
			} else if d, ok := tok.(json.Delim); !ok || d != '[' {
				return nil, fail(keyOff, "\"requests\" is not a list")
			}
			for dec.More() {
				off := skipSpace(data, dec.InputOffset())
				var r rawRequest
				if err := dec.Decode(&r); err != nil {
					return nil, jsonErr(err, off)
				}
				reqs = append(reqs, r)
				offs = append(offs, off)
				if count += 1 + len(r.Requests); count > MaxRequestsPerFile {
					return nil, fail(off, "more than %d requests in one trace", MaxRequestsPerFile)
				}
			}
			if _, err := dec.Token(); err != nil {
				return nil, jsonErr(err, dec.InputOffset())
			}
		default:
			var skip json.RawMessage
			if err := dec.Decode(&skip); err != nil {
				return nil, jsonErr(err, keyOff)
			}
		}
	}
	if _, err := dec.Token(); err != nil {
		return nil, jsonErr(err, dec.InputOffset())
	}
	if end := dec.InputOffset(); skipSpace(data, end) < int64(len(data)) {
		return nil, fail(skipSpace(data, end), "data after the trace object")
	}
	if !sawRequests {
		return nil, fail(0, "no \"requests\" list")
	}
	if len(reqs) == 0 {
		return nil, fail(0, "\"requests\" is empty")
	}
	return buildTrace(name, reqs, offs, blockSize, fail)
}

// skipSpace moves off past JSON whitespace and a list separator.
func skipSpace(data []byte, off int64) int64 {
	for off < int64(len(data)) {
		switch data[off] {
		case ' ', '\t', '\n', '\r', ',':
			off++
			continue
		}
		break
	}
	return off
}

// lineCol turns a byte offset into a 1-based line and column.
func lineCol(data []byte, off int64) (int, int) {
	off = max(0, min(off, int64(len(data))))
	line := 1 + bytes.Count(data[:off], []byte{'\n'})
	col := int(off) - bytes.LastIndexByte(data[:off], '\n')
	return line, col
}

// flatReq is a request placed on the root trace's timeline.
type flatReq struct {
	start, end float64
	in, out    int64
	hash       []int64
	scope      int // 0 = root agent, 1+i = subagent entry i
	chain      int // trace-wide chain (session) index
	outer      int // index of the entry in the root list
}

func buildTrace(name string, reqs []rawRequest, offs []int64, blockSize int64, fail func(int64, string, ...any) error) (*Trace, error) {
	var flat []flatReq
	type subagent struct {
		start, end float64
		first, n   int // range in flat
		outer      int
	}
	var subs []subagent
	checkReq := func(r *rawRequest, off int64, where string, base float64) (flatReq, error) {
		if r.T == nil {
			return flatReq{}, fail(off, "%s: no \"t\"", where)
		}
		t := *r.T
		if !(t >= 0 && t <= maxSeconds) {
			return flatReq{}, fail(off, "%s: t %g s: want 0..%g", where, t, maxSeconds)
		}
		if r.In == nil || r.Out == nil {
			return flatReq{}, fail(off, "%s: want \"in\" and \"out\" token counts", where)
		}
		if *r.In < 1 || *r.In > maxTokens || *r.Out < 0 || *r.Out > maxTokens {
			return flatReq{}, fail(off, "%s: in %d, out %d tokens: want 1..%d and 0..%d", where, *r.In, *r.Out, maxTokens, maxTokens)
		}
		if len(r.HashIDs) > maxHashIDs {
			return flatReq{}, fail(off, "%s: %d hash_ids, more than %d", where, len(r.HashIDs), maxHashIDs)
		}
		api := 0.0
		if r.APITime != nil {
			if !(*r.APITime >= 0 && *r.APITime <= maxSeconds) {
				return flatReq{}, fail(off, "%s: api_time %g s: want 0..%g", where, *r.APITime, maxSeconds)
			}
			api = *r.APITime
		}
		if t < base-1e-6 { // a subagent's inner t before its spawn is relative (weka_trace.py _subagent_request_absolute_t)
			t += base
		}
		return flatReq{start: t, end: t + api, in: *r.In, out: *r.Out, hash: r.HashIDs}, nil
	}
	prevT := -1.0
	for i := range reqs {
		r := &reqs[i]
		where := fmt.Sprintf("request %d", i)
		if r.T == nil {
			return nil, fail(offs[i], "%s: no \"t\"", where)
		}
		if *r.T < prevT {
			return nil, fail(offs[i], "%s: t %g s is before the previous request's %g s (negative gap)", where, *r.T, prevT)
		}
		prevT = *r.T
		if r.Type == "subagent" {
			t := *r.T
			if !(t >= 0 && t <= maxSeconds) {
				return nil, fail(offs[i], "%s: t %g s: want 0..%g", where, t, maxSeconds)
			}
			s := subagent{start: t, end: t, first: len(flat), outer: i}
			for j := range r.Requests {
				in := &r.Requests[j]
				if in.Type == "subagent" {
					return nil, fail(offs[i], "%s, subagent request %d: nested subagents are not supported", where, j)
				}
				fr, err := checkReq(in, offs[i], fmt.Sprintf("%s, subagent request %d", where, j), t)
				if err != nil {
					return nil, err
				}
				fr.scope = 1 + len(subs)
				fr.outer = i
				flat = append(flat, fr)
				s.end = max(s.end, fr.end)
			}
			if r.DurationMS != nil && *r.DurationMS >= 0 && *r.DurationMS <= maxSeconds*1e3 {
				s.end = t + *r.DurationMS/1e3 // weka_trace.py _sa_end_seconds
			}
			s.n = len(flat) - s.first
			subs = append(subs, s)
			continue
		}
		fr, err := checkReq(r, offs[i], where, 0)
		if err != nil {
			return nil, err
		}
		fr.outer = i
		flat = append(flat, fr)
	}
	if len(flat) == 0 {
		return nil, fail(0, "no requests with tokens")
	}
	// Context chains per agent scope: a request continues the chain whose
	// latest prompt shares the longest hash-id prefix with it (AIPerf runs
	// the same hash-id LCP chain detection; weka_trace.py
	// _expand_subagent_to_child_plans).
	order := make([]int, len(flat))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return flat[order[a]].start < flat[order[b]].start })
	tr := &Trace{Name: name}
	type chainState struct {
		last  int // flat index
		scope int
	}
	var chains []chainState
	shared := make([]int64, len(flat))
	for _, fi := range order {
		f := &flat[fi]
		best, bestL := -1, 0
		for c := len(chains) - 1; c >= 0 && c >= len(chains)-chainWindow; c-- {
			if chains[c].scope != f.scope {
				continue
			}
			if l := lcp(flat[chains[c].last].hash, f.hash); l > bestL {
				best, bestL = c, l
			}
		}
		if best < 0 {
			kind := KindSubagent
			if f.scope == 0 {
				kind = KindSide
				if len(tr.Sessions) == 0 {
					kind = KindRoot
				}
			}
			best = len(chains)
			chains = append(chains, chainState{last: fi, scope: f.scope})
			tr.Sessions = append(tr.Sessions, kind)
		} else {
			prev := &flat[chains[best].last]
			shared[fi] = min(int64(bestL)*blockSize, prev.in, f.in)
			chains[best].last = fi
		}
		f.chain = best
	}
	pos := make([]int, len(flat)) // flat index -> position in order
	for p, fi := range order {
		pos[fi] = p
	}
	// Root requests' positions (in start order) for spawn and join anchors.
	var rootPos []int
	for p, fi := range order {
		if flat[fi].scope == 0 {
			rootPos = append(rootPos, p)
		}
	}
	rootStart := func(i int) float64 { return flat[order[rootPos[i]]].start }
	spawnOf := make([]int, len(subs)) // position of the spawning root turn, or -1
	joins := map[int][]int{}          // root position -> subagent chain ends it waits for
	for si, s := range subs {
		i := sort.Search(len(rootPos), func(i int) bool { return rootStart(i) > s.start+1e-9 })
		spawnOf[si] = -1
		if i > 0 {
			spawnOf[si] = rootPos[i-1]
		}
		j := sort.Search(len(rootPos), func(i int) bool { return rootStart(i) >= s.end-1e-9 })
		if j == len(rootPos) || s.n == 0 {
			continue // a background subagent: nothing joins it
		}
		lastOf := map[int]int{}
		for k := s.first; k < s.first+s.n; k++ {
			if cur, ok := lastOf[flat[k].chain]; !ok || pos[k] > cur {
				lastOf[flat[k].chain] = pos[k]
			}
		}
		for _, q := range lastOf {
			joins[rootPos[j]] = append(joins[rootPos[j]], q)
		}
	}
	t0 := flat[order[0]].start
	tr.Requests = make([]TraceRequest, len(order))
	lastInChain := make([]int, len(chains))
	for i := range lastInChain {
		lastInChain[i] = -1
	}
	var recent []int // chains by most recent use, newest last
	const frontierChains = 64
	for p, fi := range order {
		f := &flat[fi]
		var preds []int32
		add := func(q int) {
			for _, x := range preds {
				if int(x) == q {
					return
				}
			}
			preds = append(preds, int32(q))
		}
		own := lastInChain[f.chain]
		if own >= 0 {
			add(own)
		}
		// Cross-chain frontier within the agent: the latest request of each
		// other recent chain, if it had ended when this one started and
		// ended after this chain's previous request began.
		since := -1.0
		if own >= 0 {
			since = flat[order[own]].start
		}
		for k := len(recent) - 1; k >= 0 && k >= len(recent)-frontierChains; k-- {
			c := recent[k]
			q := lastInChain[c]
			if c == f.chain || q < 0 {
				continue
			}
			g := &flat[order[q]]
			if g.scope == f.scope && g.end <= f.start+1e-9 && g.end > since {
				add(q)
			}
		}
		if f.scope > 0 && own < 0 {
			// A subagent chain's first request waits on the parent turn that
			// spawned it: the last root request that started by the spawn.
			if a := spawnOf[f.scope-1]; a >= 0 && a < p {
				add(a)
			}
		}
		for _, q := range joins[p] { // SPAWN_JOIN
			if q < p {
				add(q)
			}
		}
		tq := &tr.Requests[p]
		tq.Session = int32(f.chain)
		tq.In, tq.Out, tq.Shared = int32(f.in), int32(f.out), int32(shared[fi])
		tq.Start = f.start - t0
		latestEnd := -1.0
		for _, q := range preds {
			latestEnd = max(latestEnd, flat[order[q]].end)
		}
		sort.Slice(preds, func(a, b int) bool { return preds[a] < preds[b] })
		tq.Preds = preds
		if latestEnd >= 0 {
			tq.Gap = max(0, f.start-latestEnd)
		} else {
			tq.Gap = f.start - t0
		}
		lastInChain[f.chain] = p
		for k, c := range recent {
			if c == f.chain {
				recent = append(recent[:k], recent[k+1:]...)
				break
			}
		}
		recent = append(recent, f.chain)
		if len(recent) > frontierChains {
			recent = recent[1:]
		}
	}
	return tr, nil
}

func lcp(a, b []int64) int {
	n := min(len(a), len(b))
	i := 0
	for i < n && a[i] == b[i] {
		i++
	}
	return i
}
