// Package hub reads what an audit needs of a Hugging Face Hub checkpoint
// without downloading its weights: config.json, hf_quant_config.json, the
// safetensors index and each shard's length prefix and JSON header, fetched
// with HTTP range requests (as alvarobartt/hf-mem does:
// src/hf_mem/safetensors/fetch.py reads the first bytes, the 8-byte
// little-endian header length, and a second range when the header is
// longer). The files land in a local directory, each shard as a sparse
// file of its real size holding only its header, so the local audit reads
// them with exactly the bounds it applies to a checkpoint on disk.
package hub

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/specsim/specsim/audit/safetensors"
)

// Ref names a Hub repository at a revision.
type Ref struct {
	Repo string // "ORG/MODEL"
	Rev  string // branch, tag or commit; "main" when not given
}

func (r Ref) String() string { return "hf://" + r.Repo + "@" + r.Rev }

var (
	repoPart = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,95}$`)
	revPart  = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._/-]{0,255}$`)
)

// ParseRef parses hf://ORG/MODEL[@REV].
func ParseRef(s string) (Ref, error) {
	rest, ok := strings.CutPrefix(s, "hf://")
	if !ok {
		return Ref{}, fmt.Errorf("%q is not an hf://ORG/MODEL[@REV] reference", s)
	}
	repo, rev, hasRev := strings.Cut(rest, "@")
	if !hasRev {
		rev = "main"
	}
	parts := strings.Split(repo, "/")
	if len(parts) != 2 || !repoPart.MatchString(parts[0]) || !repoPart.MatchString(parts[1]) {
		return Ref{}, fmt.Errorf("%q: want hf://ORG/MODEL[@REV] with letters, digits, '.', '_' and '-' in ORG and MODEL", s)
	}
	if !revPart.MatchString(rev) || strings.Contains(rev, "..") {
		return Ref{}, fmt.Errorf("%q: revision %q is not a branch, tag or commit name", s, rev)
	}
	return Ref{Repo: repo, Rev: rev}, nil
}

// Client fetches from a Hub endpoint.
type Client struct {
	// Endpoint is the Hub's base URL (HF_ENDPOINT, default
	// https://huggingface.co).
	Endpoint string
	// Token is sent as a bearer token (HF_TOKEN); "" for public repos.
	Token   string
	HTTP    *http.Client
	Workers int // concurrent shard requests
}

// FromEnv is a client configured the way huggingface_hub reads its
// environment: HF_ENDPOINT and HF_TOKEN.
func FromEnv() *Client {
	ep := strings.TrimRight(os.Getenv("HF_ENDPOINT"), "/")
	if ep == "" {
		ep = "https://huggingface.co"
	}
	return &Client{Endpoint: ep, Token: os.Getenv("HF_TOKEN"), HTTP: &http.Client{Timeout: 2 * time.Minute}, Workers: 8}
}

// firstRange is the first request's size: most headers fit (hf-mem reads
// 100 kB first).
const firstRange = 100_000

// MaxConfigSize bounds config.json and hf_quant_config.json, as local reads
// are bounded.
const MaxConfigSize = 64 << 20

// Stats count what was fetched.
type Stats struct {
	Requests int
	Bytes    int64 // response bytes read
	Shards   int
}

// ErrNotFound is a file the repository does not have.
var ErrNotFound = errors.New("not found")

// Fetch writes config.json, hf_quant_config.json (when present), the index
// and the header of every shard it names into dir.
func (c *Client) Fetch(ctx context.Context, ref Ref, dir string) (Stats, error) {
	var st Stats
	var mu sync.Mutex
	count := func(n int64) {
		mu.Lock()
		st.Requests++
		st.Bytes += n
		mu.Unlock()
	}
	get := func(name string, limit int64) ([]byte, error) {
		b, err := c.getAll(ctx, ref, name, limit)
		count(int64(len(b)))
		return b, err
	}
	cfg, err := get("config.json", MaxConfigSize)
	if err != nil {
		return st, err
	}
	if err := os.WriteFile(filepath.Join(dir, "config.json"), cfg, 0o600); err != nil {
		return st, err
	}
	switch q, err := get("hf_quant_config.json", MaxConfigSize); {
	case errors.Is(err, ErrNotFound):
	case err != nil:
		return st, err
	default:
		if err := os.WriteFile(filepath.Join(dir, "hf_quant_config.json"), q, 0o600); err != nil {
			return st, err
		}
	}
	var shards []string
	switch idx, err := get(safetensors.IndexFile, safetensors.MaxIndexSize); {
	case errors.Is(err, ErrNotFound):
		shards = []string{"model.safetensors"}
	case err != nil:
		return st, err
	default:
		path := filepath.Join(dir, safetensors.IndexFile)
		if err := os.WriteFile(path, idx, 0o600); err != nil {
			return st, err
		}
		ix, err := safetensors.ReadIndex(path)
		if err != nil {
			return st, fmt.Errorf("%s: %w", ref, err)
		}
		for _, s := range ix.Shards() {
			if safetensors.LocalShard(s) { // others: the audit reports them and reads none
				shards = append(shards, filepath.Clean(s))
			}
		}
	}
	if len(shards) > 100_000 {
		return st, fmt.Errorf("%s names %d shards, more than 100000", ref, len(shards))
	}
	workers := max(1, min(c.Workers, len(shards)))
	next := make(chan string)
	errs := make(chan error, len(shards))
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for s := range next {
				n, reqs, err := c.shardHeader(ctx, ref, s, filepath.Join(dir, s))
				mu.Lock()
				st.Requests += reqs
				st.Bytes += n
				if err == nil {
					st.Shards++
				}
				mu.Unlock()
				if err != nil && !errors.Is(err, ErrNotFound) {
					errs <- err
				}
			}
		}()
	}
	for _, s := range shards {
		next <- s
	}
	close(next)
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		return st, err
	}
	return st, nil
}

func (c *Client) fileURL(ref Ref, name string) string {
	return c.Endpoint + "/" + ref.Repo + "/resolve/" + url.PathEscape(ref.Rev) + "/" + url.PathEscape(name)
}

func (c *Client) request(ctx context.Context, ref Ref, name, rng string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.fileURL(ref, name), nil)
	if err != nil {
		return nil, err
	}
	if c.Token != "" {
		// net/http drops Authorization when a redirect leaves the host.
		req.Header.Set("Authorization", "Bearer "+c.Token)
	}
	if rng != "" {
		req.Header.Set("Range", rng)
	}
	resp, err := c.HTTP.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%s/%s: %w", ref, name, err)
	}
	switch resp.StatusCode {
	case http.StatusOK, http.StatusPartialContent:
		return resp, nil
	}
	resp.Body.Close()
	switch resp.StatusCode {
	case http.StatusNotFound:
		return nil, fmt.Errorf("%s/%s: %w", ref, name, ErrNotFound)
	case http.StatusUnauthorized, http.StatusForbidden:
		return nil, fmt.Errorf("%s/%s: HTTP %d: the repository is gated or private; set HF_TOKEN to a token with access", ref, name, resp.StatusCode)
	}
	return nil, fmt.Errorf("%s/%s: HTTP %d", ref, name, resp.StatusCode)
}

// getAll reads a whole small file, refusing one over limit bytes.
func (c *Client) getAll(ctx context.Context, ref Ref, name string, limit int64) ([]byte, error) {
	resp, err := c.request(ctx, ref, name, "")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	if err != nil {
		return b, fmt.Errorf("%s/%s: %w", ref, name, err)
	}
	if int64(len(b)) > limit {
		return b[:limit], fmt.Errorf("%s/%s: larger than %d bytes", ref, name, limit)
	}
	return b, nil
}

// readRange reads bytes [from, to] of a file and its total size from
// Content-Range (or Content-Length when the server ignores ranges: then
// only the first to+1 bytes are read).
func (c *Client) readRange(ctx context.Context, ref Ref, name string, from, to int64) ([]byte, int64, error) {
	resp, err := c.request(ctx, ref, name, fmt.Sprintf("bytes=%d-%d", from, to))
	if err != nil {
		return nil, 0, err
	}
	defer resp.Body.Close()
	total := int64(-1)
	skip := int64(0)
	if resp.StatusCode == http.StatusPartialContent {
		cr := resp.Header.Get("Content-Range")
		if i := strings.LastIndexByte(cr, '/'); i >= 0 {
			total, _ = strconv.ParseInt(cr[i+1:], 10, 64)
		}
		if !strings.HasPrefix(cr, fmt.Sprintf("bytes %d-", from)) {
			return nil, 0, fmt.Errorf("%s/%s: server answered range %q for bytes %d-%d", ref, name, cr, from, to)
		}
	} else {
		total, skip = resp.ContentLength, from
	}
	if total < 0 {
		return nil, 0, fmt.Errorf("%s/%s: the server gives no file size (Content-Range or Content-Length)", ref, name)
	}
	if skip > 0 {
		if _, err := io.CopyN(io.Discard, resp.Body, skip); err != nil {
			return nil, 0, fmt.Errorf("%s/%s: %w", ref, name, err)
		}
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, to-from+1))
	if err != nil {
		return nil, 0, fmt.Errorf("%s/%s: %w", ref, name, err)
	}
	return b, total, nil
}

// maxShardSize bounds the size a server may claim for one shard (the
// sparse local file is created at that size).
const maxShardSize = 1 << 44

// shardHeader fetches a shard's length prefix and header and writes them
// into a sparse file of the shard's real size.
func (c *Client) shardHeader(ctx context.Context, ref Ref, name, path string) (read int64, reqs int, err error) {
	first, total, err := c.readRange(ctx, ref, name, 0, firstRange-1)
	reqs++
	read += int64(len(first))
	if err != nil {
		return read, reqs, err
	}
	if total > maxShardSize {
		return read, reqs, fmt.Errorf("%s/%s: the server claims %d bytes, more than %d", ref, name, total, int64(maxShardSize))
	}
	data := first
	if len(first) >= 8 {
		n := binary.LittleEndian.Uint64(first[:8])
		if n > safetensors.MaxHeaderSize {
			// Leave it to the header reader to name the problem.
			n = 0
		}
		if need := int64(8 + n); need > int64(len(first)) && need <= total {
			rest, _, err := c.readRange(ctx, ref, name, int64(len(first)), need-1)
			reqs++
			read += int64(len(rest))
			if err != nil {
				return read, reqs, err
			}
			data = append(data, rest...)
		}
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return read, reqs, err
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		return read, reqs, err
	}
	defer f.Close()
	if _, err := f.Write(data); err != nil {
		return read, reqs, err
	}
	if total > int64(len(data)) {
		if err := f.Truncate(total); err != nil {
			return read, reqs, fmt.Errorf("%s/%s: sparse copy of %d bytes: %w", ref, name, total, err)
		}
	}
	return read, reqs, nil
}
