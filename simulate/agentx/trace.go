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
)

// Session kinds within a trace.
const (
	KindRoot     uint8 = iota // the root's main agent chain (detect_agent_chains' main_index)
	KindSide                  // another agent chain among the root's top-level requests (AIPerf's flat chains)
	KindSubagent              // an agent chain of a subagent entry (its main chain or a nested one)
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
	Shared  int32 // prompt tokens shared with the session's previous request (or From's)
	// From is, on a session's first request, the session whose latest
	// request (started earlier) shares the longest prefix with it, and -1
	// otherwise or when none does.
	From int32
	// Start is the recorded start, in seconds from the trace's first request.
	Start float64
	// Gap is the recorded idle time between the end of the latest-ending
	// predecessor and this request's start (AIPerf's end-to-start delay,
	// weka_trace.py _end_to_start_delay_ms, clamped at 0), at most, on a
	// chain's first request after its spawning turn, the recorded offset
	// from the branch start. For a request with no predecessor it is the
	// offset from the tree's start.
	Gap float64
	// Preds are the requests whose completion this one waits for: the
	// session's previous request, the other chains of the same agent that
	// had finished when it started, on a spawned chain's first request its
	// spawning main turn (or, when the branch started while that turn was
	// in flight, what the turn waited for), and on the main turn that joins
	// a subagent or a flat chain, the last request of each of its chains.
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
	Model      string       `json:"model"`
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
	inner      int // index within its list: outer for the root, the inner index in a subagent
	model      string
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
		return flatReq{start: t, end: t + api, in: *r.In, out: *r.Out, hash: r.HashIDs, model: r.Model}, nil
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
				fr.outer, fr.inner = i, j
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
		fr.outer, fr.inner = i, i
		flat = append(flat, fr)
	}
	if len(flat) == 0 {
		return nil, fail(0, "no requests with tokens")
	}
	// Agent chains per scope (the root's top-level requests, and each
	// subagent entry's inner requests), as AIPerf splits them:
	// _split_off_preamble, then detect_agent_chains (chains.go); the
	// preamble rides the scope's main chain.
	nScopes := 1 + len(subs)
	scopeReqs := make([][]int, nScopes) // flat indices per scope
	for i := range flat {
		scopeReqs[flat[i].scope] = append(scopeReqs[flat[i].scope], i)
	}
	scopeChain := make([]int, len(flat)) // chain within its scope, 0 = main
	for sc, idx := range scopeReqs {
		if len(idx) == 0 {
			continue
		}
		cr := make([]chainReq, len(idx))
		for k, i := range idx {
			f := &flat[i]
			cr[k] = chainReq{outer: f.inner, t: f.start, end: f.end, out: f.out, hash: f.hash, model: f.model}
		}
		pre := splitOffPreamble(cr)
		rest := cr
		if pre >= 0 {
			rest = append(append([]chainReq(nil), cr[:pre]...), cr[pre+1:]...)
		}
		of, _, _, ok := detectAgentChains(rest, SeamMaxGapSeconds, SeamMinOverlapRatio)
		if !ok {
			if sc > 0 {
				o := subs[sc-1].outer
				return nil, fail(offs[o], "request %d (subagent): more than %d agent chains (or too much hash-id matching to detect them)", o, MaxChainsPerScope)
			}
			return nil, fail(0, "the top-level requests form more than %d agent chains (or too much hash-id matching to detect them)", MaxChainsPerScope)
		}
		for k, i := range idx {
			switch {
			case k == pre:
				scopeChain[i] = 0
			case pre >= 0 && k > pre:
				scopeChain[i] = of[k-1]
			default:
				scopeChain[i] = of[k]
			}
		}
	}
	// A subagent with no main-chain turn before it is dropped, as AIPerf
	// drops it (_dropped_subagent_indices: no parent turn can spawn it).
	var mainOuter []int // outer indices of the root's main chain, ascending
	for _, i := range scopeReqs[0] {
		if scopeChain[i] == 0 {
			mainOuter = append(mainOuter, flat[i].outer)
		}
	}
	sort.Ints(mainOuter)
	dropped := make([]bool, nScopes)
	for si, s := range subs {
		dropped[1+si] = len(mainOuter) == 0 || mainOuter[0] > s.outer
	}
	order := make([]int, 0, len(flat))
	for i := range flat {
		if !dropped[flat[i].scope] {
			order = append(order, i)
		}
	}
	if len(order) == 0 {
		return nil, fail(0, "no requests with tokens")
	}
	sort.SliceStable(order, func(a, b int) bool { return flat[order[a]].start < flat[order[b]].start })
	// Trace-wide session numbers in order of first request.
	tr := &Trace{Name: name}
	type scopeChainKey struct{ scope, chain int }
	session := map[scopeChainKey]int{}
	var lastOfChain []int // session -> flat index of its latest request so far
	shared := make([]int64, len(flat))
	from := make([]int32, len(flat))
	for _, fi := range order {
		f := &flat[fi]
		key := scopeChainKey{f.scope, scopeChain[fi]}
		c, ok := session[key]
		if !ok {
			c = len(tr.Sessions)
			session[key] = c
			kind := KindSubagent
			if f.scope == 0 {
				kind = KindSide
				if key.chain == 0 {
					kind = KindRoot
				}
			}
			tr.Sessions = append(tr.Sessions, kind)
			lastOfChain = append(lastOfChain, fi)
			// A new chain's prompt starts with whatever prefix it shares
			// with another chain's latest prompt: the server's radix cache
			// matches content, and the tree shares one cache-bust marker.
			from[fi] = -1
			bestL := 0
			for o, li := range lastOfChain[:c] {
				if l := lcp(flat[li].hash, f.hash); l > bestL {
					bestL, from[fi] = l, int32(o)
				}
			}
			if from[fi] >= 0 {
				prev := &flat[lastOfChain[from[fi]]]
				shared[fi] = min(int64(bestL)*blockSize, prev.in, f.in)
			}
		} else {
			prev := &flat[lastOfChain[c]]
			shared[fi] = min(int64(lcp(prev.hash, f.hash))*blockSize, prev.in, f.in)
			from[fi] = -1
		}
		lastOfChain[c] = fi
		f.chain = c
	}
	pos := make([]int, len(flat)) // flat index -> position in order
	for p, fi := range order {
		pos[fi] = p
	}
	// Spawn and join anchors on the root's main chain (weka_trace.py
	// _reconstruct_serial): a subagent spawns from the last main turn before
	// its entry in the file and joins the first later main turn that starts
	// at or after its recorded end (_sa_end_seconds); a detected worker chain
	// of the root ("flat" chain) spawns from the last main turn before its
	// first request (the first main turn if none) and joins the first later
	// main turn at or after its last request's end. No join: background.
	var mainPos []int // positions in order of the main chain's turns
	for p, fi := range order {
		if flat[fi].scope == 0 && scopeChain[fi] == 0 {
			mainPos = append(mainPos, p)
		}
	}
	mainFlat := func(k int) *flatReq { return &flat[order[mainPos[k]]] }
	spawnBefore := func(outer int) int { // last main turn with outer index < outer, or -1
		k := sort.Search(len(mainPos), func(k int) bool { return mainFlat(k).outer >= outer })
		if k == 0 {
			return -1
		}
		return mainPos[k-1]
	}
	joinAfter := func(outer int, end float64) int { // position, or -1
		for k := range mainPos {
			if m := mainFlat(k); m.outer > outer && m.start+1e-6 >= end {
				return mainPos[k]
			}
		}
		return -1
	}
	// A spawn branch is the group of chains with the same spawning turn and
	// join turn (subagents and flat chains grouped apart). The branch
	// orchestrator (timing/branch_orchestrator.py) dispatches it when the
	// spawning turn completes, each child's first request at its recorded
	// offset from the branch start (the earliest subagent entry's t, or the
	// earliest first request of the flat chains); a branch that starts
	// before the spawning turn's recorded end is dispatched when that turn
	// is issued instead (on_credit_issued), at offsets from its start.
	type spawnInfo struct {
		turn        int     // spawning main turn's position
		branchStart float64 // recorded
	}
	firstSpawn := map[int]spawnInfo{} // session -> its spawn
	joins := map[int][]int{}          // main turn position -> chain ends it waits for
	chainLast := map[int]int{}        // session -> position of its last request
	chainFirst := map[int]int{}
	for p, fi := range order {
		c := flat[fi].chain
		if _, ok := chainFirst[c]; !ok {
			chainFirst[c] = p
		}
		chainLast[c] = p
	}
	type branchKey struct{ flat, spawn, join int }
	branchStart := map[branchKey]float64{}
	type member struct {
		key    branchKey
		chains []int
		start  float64
	}
	var members []member
	for si, s := range subs {
		if dropped[1+si] || s.n == 0 {
			continue
		}
		m := member{key: branchKey{0, spawnBefore(s.outer), joinAfter(s.outer, s.end)}, start: s.start}
		seen := map[int]bool{}
		for k := s.first; k < s.first+s.n; k++ {
			if c := flat[k].chain; !seen[c] {
				seen[c] = true
				m.chains = append(m.chains, c)
			}
		}
		members = append(members, m)
	}
	for c, kind := range tr.Sessions {
		if kind != KindSide {
			continue
		}
		first := &flat[order[chainFirst[c]]]
		a := spawnBefore(first.outer)
		if a < 0 && len(mainPos) > 0 {
			a = mainPos[0]
		}
		end := 0.0
		for p := chainFirst[c]; p <= chainLast[c]; p++ {
			if g := &flat[order[p]]; g.chain == c {
				end = max(end, g.end)
			}
		}
		members = append(members, member{key: branchKey{1, a, joinAfter(first.outer, end)}, chains: []int{c}, start: first.start})
	}
	for _, m := range members {
		if b, ok := branchStart[m.key]; !ok || m.start < b {
			branchStart[m.key] = m.start
		}
	}
	for _, m := range members {
		for _, c := range m.chains {
			firstSpawn[c] = spawnInfo{turn: m.key.spawn, branchStart: branchStart[m.key]}
			if m.key.join >= 0 {
				joins[m.key.join] = append(joins[m.key.join], chainLast[c])
			}
		}
	}
	nChains := len(tr.Sessions)
	t0 := flat[order[0]].start
	tr.Requests = make([]TraceRequest, len(order))
	lastInChain := make([]int, nChains)
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
		gapCap := math.Inf(1)
		if sp, ok := firstSpawn[f.chain]; ok && own < 0 && sp.turn >= 0 && sp.turn < p {
			a := &flat[order[sp.turn]]
			if sp.branchStart < a.end && a.end > a.start {
				// Dispatched with the spawning turn: wait for what it waited for.
				for _, q := range tr.Requests[sp.turn].Preds {
					add(int(q))
				}
			} else {
				add(sp.turn)
				gapCap = max(0, f.start-sp.branchStart)
			}
		}
		for _, q := range joins[p] { // SPAWN_JOIN
			if q < p {
				add(q)
			}
		}
		tq := &tr.Requests[p]
		tq.Session = int32(f.chain)
		tq.In, tq.Out, tq.Shared, tq.From = int32(f.in), int32(f.out), int32(shared[fi]), from[fi]
		tq.Start = f.start - t0
		latestEnd := -1.0
		for _, q := range preds {
			latestEnd = max(latestEnd, flat[order[q]].end)
		}
		sort.Slice(preds, func(a, b int) bool { return preds[a] < preds[b] })
		tq.Preds = preds
		if latestEnd >= 0 {
			tq.Gap = min(max(0, f.start-latestEnd), gapCap)
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
