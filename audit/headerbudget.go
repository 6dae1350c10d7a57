package audit

import (
	"encoding/binary"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/specsim/specsim/audit/safetensors"
	"github.com/specsim/specsim/internal/regular"
)

// MaxCheckpointHeaderBytes bounds the shard-header bytes one audit parses,
// all shards together. Each header may be up to safetensors.MaxHeaderSize
// (the reference implementation's 100 MB), and parsing holds about ten bytes
// of memory per header byte; without a total, hard links to one large header
// multiply both. The largest public MoE checkpoints carry a few tens of
// megabytes of headers in all.
const MaxCheckpointHeaderBytes = 128 << 20

// checkHeaderBytes reads the 8-byte length prefix of every shard (nothing
// else) and refuses the checkpoint before any header is parsed when the
// lengths add up past MaxCheckpointHeaderBytes. Files it cannot read are
// left to the header reader, which reports them properly.
func checkHeaderBytes(dir string, names []string) error {
	var total uint64
	type big struct {
		name string
		n    uint64
	}
	var largest []big
	for i, name := range names {
		f, _, err := regular.Open(filepath.Join(dir, name))
		if err != nil {
			continue
		}
		var prefix [8]byte
		_, err = io.ReadFull(f, prefix[:])
		f.Close()
		if err != nil {
			continue
		}
		n := binary.LittleEndian.Uint64(prefix[:])
		if n > safetensors.MaxHeaderSize {
			continue // refused on its own by ReadHeader
		}
		total += n
		if len(largest) < 3 {
			largest = append(largest, big{name, n})
		}
		if total > MaxCheckpointHeaderBytes {
			parts := make([]string, len(largest))
			for i, b := range largest {
				parts[i] = fmt.Sprintf("%s %d", b.name, b.n)
			}
			return fmt.Errorf("shard headers add up to more than %d bytes, the most one audit parses (%d bytes in the first %d shards: %s, ...); hard links or copies of one header count each time",
				MaxCheckpointHeaderBytes, total, i+1, strings.Join(parts, ", "))
		}
	}
	return nil
}

// examples counts items and keeps the first few for a finding's message, so
// that a checkpoint with millions of duplicated names does not build
// millions of strings to print three.
type examples struct {
	n     int
	first []string
}

func (e *examples) add(format string, args ...any) {
	e.n++
	if len(e.first) < 3 {
		x := fmt.Sprintf(format, args...)
		if len(x) > 200 {
			x = fmt.Sprintf("%s... (%d bytes)", strings.ToValidUTF8(x[:160], ""), len(x))
		}
		e.first = append(e.first, x)
	}
}

func (e *examples) String() string {
	if e.n <= len(e.first) {
		return strings.Join(e.first, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(e.first, ", "), e.n-len(e.first))
}
