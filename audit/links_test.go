package audit

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/specsim/specsim/audit/checkpointtest"
)

// Links that leave the checkpoint directory were followed without a word
// (issue 14, item 12); links inside it, and a hub cache's links into its
// blobs folder, are followed.
func TestSymlinksOutsideDir(t *testing.T) {
	root := t.TempDir()
	outside := filepath.Join(root, "secret.txt")
	if err := os.WriteFile(outside, []byte("password=hunter2 and more text"), 0o600); err != nil {
		t.Fatal(err)
	}
	d := checkpointtest.Dense{Hidden: 64, Inter: 128, Layers: 2, Heads: 4, KVHeads: 2, Vocab: 256}
	dir := filepath.Join(root, "ckpt")
	if err := checkpointtest.WriteCheckpoint(dir, d.Tensors(), 1, d.Config(), nil); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(dir, "extra.safetensors")); err != nil {
		t.Skip("no symlinks:", err)
	}
	// a link inside the directory is fine
	if err := os.Symlink("model.safetensors", filepath.Join(dir, "alias.safetensors")); err != nil {
		t.Fatal(err)
	}
	cp, err := ReadCheckpoint(dir)
	if err != nil {
		t.Fatal(err)
	}
	var found []string
	for _, f := range cp.Findings {
		if f.Code == "symlink-outside-dir" {
			found = append(found, f.Message)
		}
	}
	if len(found) != 1 || !strings.Contains(found[0], "extra.safetensors is a symbolic link to "+outside) {
		t.Fatalf("findings %v, want one for extra.safetensors", found)
	}
	for _, sh := range cp.Shards {
		if strings.Contains(sh.Path, "extra") {
			t.Errorf("the outside link was read: %s", sh.Path)
		}
	}
	if len(cp.Shards) != 2 {
		t.Errorf("%d shards read, want model and its in-directory alias", len(cp.Shards))
	}
}

func TestSymlinksHubCache(t *testing.T) {
	root := t.TempDir()
	repo := filepath.Join(root, "models--org--m")
	snap := filepath.Join(repo, "snapshots", "abc123")
	blobs := filepath.Join(repo, "blobs")
	d := checkpointtest.Dense{Hidden: 64, Inter: 128, Layers: 2, Heads: 4, KVHeads: 2, Vocab: 256}
	if err := checkpointtest.WriteCheckpoint(blobs, d.Tensors(), 1, d.Config(), nil); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(snap, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"config.json", "model.safetensors"} {
		if err := os.Symlink(filepath.Join("..", "..", "blobs", n), filepath.Join(snap, n)); err != nil {
			t.Skip("no symlinks:", err)
		}
	}
	cp, err := ReadCheckpoint(snap)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range cp.Findings {
		if f.Code == "symlink-outside-dir" || f.Code == "config-missing" {
			t.Errorf("hub cache layout: %s: %s", f.Code, f.Message)
		}
	}
	if len(cp.Shards) != 1 {
		t.Errorf("%d shards", len(cp.Shards))
	}
}

// A link out of the directory refuses that file only: with
// hf_quant_config.json linked out, config.json was dropped too (the audit
// said the checkpoint had no config.json and printed an empty model).
func TestConfigLinkOutsideRefusesThatFileOnly(t *testing.T) {
	d := checkpointtest.Dense{Hidden: 64, Inter: 128, Layers: 2, Heads: 4, KVHeads: 2, Vocab: 256}
	for _, tc := range []struct {
		link           string
		wantArch       string // "" when config.json must be unread
		wantRefused    int
		wantConfigGone bool
	}{
		{"hf_quant_config.json", "LlamaForCausalLM", 1, false},
		{"config.json", "", 1, true},
	} {
		t.Run(tc.link, func(t *testing.T) {
			root := t.TempDir()
			outside := filepath.Join(root, "outside.json")
			outsideBody := []byte(`{"quantization": {"quant_algo": "FP8"}, "padding": "` + strings.Repeat("x", 5000) + `"}`)
			if err := os.WriteFile(outside, outsideBody, 0o600); err != nil {
				t.Fatal(err)
			}
			dir := filepath.Join(root, "ckpt")
			config := d.Config()
			if err := checkpointtest.WriteCheckpoint(dir, d.Tensors(), 1, config, nil); err != nil {
				t.Fatal(err)
			}
			_ = os.Remove(filepath.Join(dir, tc.link))
			if err := os.Symlink(outside, filepath.Join(dir, tc.link)); err != nil {
				t.Skip("no symlinks:", err)
			}
			cp, err := ReadCheckpoint(dir)
			if err != nil {
				t.Fatal(err)
			}
			var refused, missing int
			for _, f := range cp.Findings {
				switch f.Code {
				case "symlink-outside-dir":
					refused++
				case "config-missing":
					missing++
				}
			}
			if refused != tc.wantRefused || (missing == 1) != tc.wantConfigGone {
				t.Errorf("symlink-outside-dir %d, config-missing %d; want %d and %v", refused, missing, tc.wantRefused, tc.wantConfigGone)
			}
			if got := strings.Join(cp.Config.Architectures, ","); got != tc.wantArch {
				t.Errorf("architectures %q, want %q", got, tc.wantArch)
			}
			if cp.Config.QuantAlgo != "" {
				t.Errorf("quantization %q read through the refused link", cp.Config.QuantAlgo)
			}
			if !tc.wantConfigGone {
				shard, err := os.ReadFile(filepath.Join(dir, "model.safetensors"))
				if err != nil || len(shard) < 8 {
					t.Fatal("shard:", err)
				}
				// config.json, the shard's 8-byte length and its header;
				// nothing of the outside file
				want := int64(len(config)) + 8 + int64(binary.LittleEndian.Uint64(shard[:8]))
				if cp.BytesRead != want {
					t.Errorf("bytes read %d, want %d (the outside file holds %d)", cp.BytesRead, want, len(outsideBody))
				}
			}
		})
	}
}
