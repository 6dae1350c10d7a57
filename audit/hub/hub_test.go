package hub

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/specsim/specsim/audit"
	"github.com/specsim/specsim/audit/checkpointtest"
)

const configs = "../../testdata/configs/"

// hubServer serves a checkpoint directory the way the Hub's resolve
// endpoint does (http.ServeContent honours Range with 206 and
// Content-Range), optionally requiring a bearer token, and counts the
// bytes it sends.
func hubServer(t *testing.T, dir, repo, token string) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	var sent atomic.Int64
	prefix := "/" + repo + "/resolve/main/"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if token != "" && r.Header.Get("Authorization") != "Bearer "+token {
			http.Error(w, "gated", http.StatusUnauthorized)
			return
		}
		name, ok := strings.CutPrefix(r.URL.Path, prefix)
		if !ok || strings.Contains(name, "..") {
			http.NotFound(w, r)
			return
		}
		f, err := os.Open(filepath.Join(dir, name))
		if err != nil {
			http.NotFound(w, r)
			return
		}
		defer f.Close()
		st, _ := f.Stat()
		cw := &countWriter{ResponseWriter: w, n: &sent}
		http.ServeContent(cw, r, name, st.ModTime(), f)
	}))
	t.Cleanup(srv.Close)
	return srv, &sent
}

type countWriter struct {
	http.ResponseWriter
	n *atomic.Int64
}

func (c *countWriter) Write(b []byte) (int, error) {
	c.n.Add(int64(len(b)))
	return c.ResponseWriter.Write(b)
}

// TestHubAuditMatchesLocal: auditing over HTTP range requests gives the
// local audit's report, while the server sends only configs, index and
// headers (far less than the shards' data).
func TestHubAuditMatchesLocal(t *testing.T) {
	const model = "nvidia--Qwen3.5-397B-A17B-NVFP4"
	dir := t.TempDir()
	if _, _, err := checkpointtest.WriteFromConfigs(dir, checkpointtest.Qwen35MoE, configs+model+"_config.json", configs+model+"_hf_quant_config.json",
		checkpointtest.Options{MainLayers: 2, Shards: 4}); err != nil {
		t.Fatal(err)
	}
	cfg := audit.Config{Options: audit.Options{Engine: "sglang"}, TP: []int{1, 4}}
	local, err := audit.Run(dir, cfg)
	if err != nil {
		t.Fatal(err)
	}
	srv, sent := hubServer(t, dir, "nvidia/Qwen3.5-397B-A17B-NVFP4", "secret")
	t.Setenv("HF_ENDPOINT", srv.URL)
	t.Setenv("HF_TOKEN", "secret")
	ref, err := ParseRef("hf://nvidia/Qwen3.5-397B-A17B-NVFP4")
	if err != nil {
		t.Fatal(err)
	}
	r, st, err := Audit(context.Background(), FromEnv(), ref, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if r.MTP != local.MTP || r.Tensors != local.Tensors || r.DataBytes != local.DataBytes || r.IndexOnly {
		t.Errorf("hub %+v (%d tensors), local %+v (%d)", r.MTP, r.Tensors, local.MTP, local.Tensors)
	}
	for i := range local.Memory {
		if r.Memory[i] != local.Memory[i] {
			t.Errorf("memory %d: hub %+v local %+v", i, r.Memory[i], local.Memory[i])
		}
	}
	if st.Shards != 4 || sent.Load() > local.BytesRead+int64(st.Requests)*firstRange || sent.Load() >= local.DataBytes/100 {
		t.Errorf("fetched %d shards, %d bytes sent in %d requests; local read %d bytes of %d data bytes", st.Shards, sent.Load(), st.Requests, local.BytesRead, local.DataBytes)
	}
	if r.Dir != "hf://nvidia/Qwen3.5-397B-A17B-NVFP4@main" {
		t.Errorf("dir %s", r.Dir)
	}

	// Without the token the gated repository says what to do.
	t.Setenv("HF_TOKEN", "")
	if _, _, err := Audit(context.Background(), FromEnv(), ref, cfg); err == nil || !strings.Contains(err.Error(), "HF_TOKEN") {
		t.Errorf("no token: %v", err)
	}
}

// TestHubHeaderBounds: a shard whose header is longer than the first range
// takes a second request; a length prefix over the format's limit is
// refused by the same reader the local audit uses.
func TestHubHeaderBounds(t *testing.T) {
	dir := t.TempDir()
	cfg := checkpointtest.Dense{Layers: 1, Hidden: 64, Inter: 128, Vocab: 256, Heads: 4, KVHeads: 2}
	if err := checkpointtest.WriteCheckpoint(dir, cfg.Tensors(), 2, cfg.Config(), nil); err != nil {
		t.Fatal(err)
	}
	// A long header: many metadata entries push it past firstRange.
	meta := map[string]string{}
	for i := range 4000 {
		meta[fmt.Sprintf("k%05d", i)] = strings.Repeat("v", 30)
	}
	shards, _ := filepath.Glob(filepath.Join(dir, "model-0000*.safetensors"))
	if _, err := checkpointtest.WriteFile(shards[0], cfg.Tensors()[:3], meta); err != nil {
		t.Fatal(err)
	}
	srv, _ := hubServer(t, dir, "o/m", "")
	c := &Client{Endpoint: srv.URL, HTTP: srv.Client(), Workers: 2}
	ref, _ := ParseRef("hf://o/m")
	out := t.TempDir()
	st, err := c.Fetch(context.Background(), ref, out)
	if err != nil {
		t.Fatal(err)
	}
	if st.Requests < 3+2+1 { // config, quant (404), index, 2 shards, 1 second range
		t.Errorf("requests %d", st.Requests)
	}
	cp, err := audit.ReadCheckpoint(out)
	if err != nil || len(cp.Tensors) != len(cfg.Tensors())-len(cfg.Tensors())+3+len(checkpointtest.Split(cfg.Tensors(), 2)[1]) {
		t.Errorf("long-header checkpoint: %v", err)
	}
	// Oversized length prefix.
	bad := filepath.Join(dir, shards[1][len(dir)+1:])
	if err := checkpointtest.WriteWithLength(bad, 200_000_000, []byte("{}"), 0); err != nil {
		t.Fatal(err)
	}
	out2 := t.TempDir()
	if _, err := c.Fetch(context.Background(), ref, out2); err != nil {
		t.Fatal(err)
	}
	if _, err := audit.ReadCheckpoint(out2); err == nil || !strings.Contains(err.Error(), filepath.Base(bad)) {
		t.Errorf("oversized header prefix: %v", err)
	}
}

func TestParseRef(t *testing.T) {
	for in, want := range map[string]string{
		"hf://nvidia/Qwen3.5-397B-A17B-NVFP4":         "hf://nvidia/Qwen3.5-397B-A17B-NVFP4@main",
		"hf://nvidia/Qwen3.5-397B-A17B-NVFP4@abc1234": "hf://nvidia/Qwen3.5-397B-A17B-NVFP4@abc1234",
	} {
		if r, err := ParseRef(in); err != nil || r.String() != want {
			t.Errorf("%s: %v %v", in, r, err)
		}
	}
	for _, bad := range []string{"nvidia/x", "hf://x", "hf://a/b/c", "hf://../b", "hf://a/b@..", "hf://a/b@"} {
		if _, err := ParseRef(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func FuzzParseRef(f *testing.F) {
	f.Add("hf://nvidia/Qwen3.5-397B-A17B-NVFP4@main")
	f.Add("hf://a/b@refs/pr/1")
	f.Fuzz(func(t *testing.T, s string) {
		r, err := ParseRef(s)
		if err == nil && (strings.Contains(r.Repo, "..") || strings.Count(r.Repo, "/") != 1 || strings.Contains(r.Rev, "..")) {
			t.Fatalf("accepted %q as %+v", s, r)
		}
	})
}
