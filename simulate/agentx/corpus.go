package agentx

import (
	"bufio"
	"bytes"
	"compress/gzip"
	_ "embed"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"sync"
)

// The default corpus: the public kv-cache-tester traces reduced to what the
// replay needs (see data/NOTICE and the README section "AgentX workload").
//
//go:embed data/kv-cache-tester.agx.gz
var defaultCorpus []byte

// DefaultCorpusName names the embedded corpus in reports.
const DefaultCorpusName = "kv-cache-tester@94f6046 (public WEKA Claude-Code traces, compact)"

const corpusMagic = "specsim-agentx-corpus v2\n"

var (
	defaultOnce   sync.Once
	defaultTraces []*Trace
	defaultErr    error
)

// DefaultTraces returns the embedded corpus, decoded once.
func DefaultTraces() ([]*Trace, error) {
	defaultOnce.Do(func() {
		defaultTraces, defaultErr = DecodeCorpus(bytes.NewReader(defaultCorpus))
	})
	return defaultTraces, defaultErr
}

// EncodeCorpus writes traces in the compact form: gzip over unsigned
// varints, milliseconds for times.
func EncodeCorpus(w io.Writer, traces []*Trace) error {
	zw, err := gzip.NewWriterLevel(w, gzip.BestCompression)
	if err != nil {
		return err
	}
	bw := bufio.NewWriter(zw)
	var buf [binary.MaxVarintLen64]byte
	put := func(v uint64) { bw.Write(buf[:binary.PutUvarint(buf[:], v)]) }
	ms := func(s float64) uint64 { return uint64(math.Round(max(s, 0) * 1e3)) }
	bw.WriteString(corpusMagic)
	put(uint64(len(traces)))
	for _, t := range traces {
		put(uint64(len(t.Name)))
		bw.WriteString(t.Name)
		put(uint64(len(t.Sessions)))
		bw.Write(t.Sessions)
		put(uint64(len(t.Requests)))
		prevStart := uint64(0)
		for p, r := range t.Requests {
			put(uint64(r.Session))
			put(uint64(r.In))
			put(uint64(r.Out))
			put(uint64(r.Shared))
			put(uint64(r.From + 1))
			st := max(ms(r.Start), prevStart)
			put(st - prevStart)
			prevStart = st
			put(ms(r.Gap))
			put(uint64(len(r.Preds)))
			for _, q := range r.Preds {
				put(uint64(p - int(q)))
			}
		}
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	return zw.Close()
}

// DecodeCorpus reads the compact form, bounded like the JSON parser.
func DecodeCorpus(r io.Reader) ([]*Trace, error) {
	zr, err := gzip.NewReader(r)
	if err != nil {
		return nil, fmt.Errorf("agentx corpus: %w", err)
	}
	br := bufio.NewReader(io.LimitReader(zr, 1<<30))
	magic := make([]byte, len(corpusMagic))
	if _, err := io.ReadFull(br, magic); err != nil || string(magic) != corpusMagic {
		return nil, errors.New("agentx corpus: not a specsim agentx corpus (bad header)")
	}
	var derr error
	get := func(limit uint64, what string) uint64 {
		if derr != nil {
			return 0
		}
		v, err := binary.ReadUvarint(br)
		if err != nil {
			derr = fmt.Errorf("agentx corpus: truncated reading %s", what)
			return 0
		}
		if v > limit {
			derr = fmt.Errorf("agentx corpus: %s %d exceeds %d", what, v, limit)
			return 0
		}
		return v
	}
	nt := get(MaxCorpusFiles, "trace count")
	var out []*Trace
	total := 0
	for range nt {
		t := &Trace{}
		name := make([]byte, get(4096, "name length"))
		if derr == nil {
			if _, err := io.ReadFull(br, name); err != nil {
				derr = errors.New("agentx corpus: truncated name")
			}
		}
		t.Name = string(name)
		t.Sessions = make([]uint8, get(MaxRequestsPerFile, "session count"))
		if derr == nil {
			if _, err := io.ReadFull(br, t.Sessions); err != nil {
				derr = errors.New("agentx corpus: truncated sessions")
			}
		}
		n := int(get(MaxRequestsPerFile, "request count"))
		if total += n; total > MaxCorpusRequests {
			return nil, fmt.Errorf("agentx corpus: more than %d requests", MaxCorpusRequests)
		}
		if derr != nil {
			return nil, derr
		}
		t.Requests = make([]TraceRequest, n)
		start := uint64(0)
		for p := range t.Requests {
			q := &t.Requests[p]
			q.Session = int32(get(uint64(max(len(t.Sessions)-1, 0)), "session"))
			q.In = int32(get(maxTokens, "in"))
			q.Out = int32(get(maxTokens, "out"))
			q.Shared = int32(get(uint64(q.In), "shared"))
			q.From = int32(get(uint64(len(t.Sessions)), "shared-from session")) - 1
			start += get(maxSeconds*1e3, "start")
			q.Start = float64(start) / 1e3
			q.Gap = float64(get(maxSeconds*1e3, "gap")) / 1e3
			np := get(uint64(p), "predecessor count")
			for range np {
				d := get(uint64(p), "predecessor")
				if d == 0 && derr == nil {
					derr = errors.New("agentx corpus: a request depends on itself")
				}
				q.Preds = append(q.Preds, int32(p-int(d)))
			}
			if derr != nil {
				return nil, derr
			}
		}
		if len(t.Sessions) == 0 || n == 0 {
			return nil, fmt.Errorf("agentx corpus: trace %q is empty", t.Name)
		}
		out = append(out, t)
	}
	if derr != nil {
		return nil, derr
	}
	// Read to the end so that gzip checks its length and checksum.
	if n, err := io.Copy(io.Discard, br); err != nil || n > 0 {
		return nil, errors.New("agentx corpus: truncated or trailing data")
	}
	return out, nil
}
