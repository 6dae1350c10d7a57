package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/specsim/specsim/audit/checkpointtest"
)

// In --format markdown two plain lines in a row are one paragraph (logs'
// and sample's header lines ran together), and a plain line right after a
// table is one more row of it (sample's warnings; audit --deep's command
// line ran into the note above it).
func TestMarkdownBlocksOfLogsSampleAudit(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "ckpt")
	d := checkpointtest.Dense{Hidden: 64, Inter: 128, Layers: 2, Heads: 4, KVHeads: 2, Vocab: 256}
	mtp := []checkpointtest.Tensor{{Name: "mtp.fc.weight", DType: "BF16", Shape: []int64{64, 128}}}
	if err := checkpointtest.WriteCheckpoint(dir, append(d.Tensors(), mtp...), 1, d.Config(), nil); err != nil {
		t.Fatal(err)
	}
	logs := filepath.Join("..", "..", "audit", "enginelog", "testdata", "sglang_dp.log")
	for _, c := range []struct {
		args []string
		want []string // paragraphs the output must hold, each a line of its own
	}{
		{[]string{"logs", logs}, []string{"4 decode samples from 7 lines in 1 file(s); engines: sglang",
			"generation throughput summed over ranks: 1700.00 tok/s; running requests summed over ranks: 45.00",
			"accept length (tokens per verify step, bonus included) over 4 logged intervals:"}},
		{[]string{"sample", "--model", "qwen3.5", "--thinking", "off", "--steps", "8", "--method", "chain", "--iterations", "100"},
			[]string{"target AL      4.7100  (golden qwen3.5-397b-a17b-nvfp4 thinking off k=8)",
				"warning: qwen3.5-397b-a17b-nvfp4 thinking off k=8: AL drops from 4.73 at k=7 to 4.71 at k=8"}},
		{[]string{"audit", dir, "--deep", "--tp", "1"}, []string{"Command: `specsim audit " + dir + " --deep=true --tp=1`"}},
	} {
		code, out, errs := runCLI(append(c.args, "--format", "markdown")...)
		if code == exitBadInput {
			t.Fatalf("%v: exit %d %s", c.args, code, errs)
		}
		lines := strings.Split(out, "\n")
		plain := func(l string) bool { return l != "" && !strings.HasPrefix(l, "|") && !strings.HasPrefix(l, "- ") }
		for i := 1; i < len(lines); i++ {
			if plain(lines[i-1]) && plain(lines[i]) && !strings.HasPrefix(lines[i-1], "A block is") && !strings.HasPrefix(lines[i-1], "scale puts") {
				t.Errorf("%v: lines %d and %d are one paragraph:\n%s\n%s", c.args[0], i, i+1, lines[i-1], lines[i])
			}
			if strings.HasPrefix(lines[i-1], "|") && plain(lines[i]) {
				t.Errorf("%v: line %d is a row of the table above it: %s", c.args[0], i+1, lines[i])
			}
		}
		for _, w := range c.want {
			if !strings.Contains(out, "\n\n"+w+"\n") && !strings.HasPrefix(out, w+"\n\n") {
				t.Errorf("%v: no paragraph %q in\n%s", c.args[0], w, out)
			}
		}
	}
}
