package audit

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Hard links to one large header multiplied the memory an audit took
// (issue 14, item 6: eight links to an 87 MB header used 8.4 GB). The total
// is refused from the length prefixes alone, before any header is parsed.
func TestHeaderBytesAcrossCheckpoint(t *testing.T) {
	dir := t.TempDir()
	first := filepath.Join(dir, "model-00001.safetensors")
	// a 50,000,000-byte header claimed, 16 bytes written: the prefix is all
	// the check reads
	data := binary.LittleEndian.AppendUint64(nil, 50_000_000)
	data = append(data, []byte(`{"a":{"dtype":"U8`)...)
	if err := os.WriteFile(first, data, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"model-00002.safetensors", "model-00003.safetensors"} {
		if err := os.Link(first, filepath.Join(dir, n)); err != nil {
			t.Skip("no hard links:", err)
		}
	}
	_, err := ReadCheckpoint(dir)
	// 3 x 50,000,000 = 150,000,000 > 134,217,728
	if err == nil || !strings.Contains(err.Error(), "more than 134217728 bytes") || !strings.Contains(err.Error(), "150000000 bytes in the first 3 shards") {
		t.Errorf("ReadCheckpoint = %v, want the total refused with its arithmetic", err)
	}
	// two of them (100,000,000 bytes) pass the total and fail on their own
	// truncated headers instead
	os.Remove(filepath.Join(dir, "model-00003.safetensors"))
	if _, err := ReadCheckpoint(dir); err == nil || strings.Contains(err.Error(), "add up to") {
		t.Errorf("two shards: %v, want the truncated header reported", err)
	}
}

func TestExamplesBounded(t *testing.T) {
	var e examples
	for i := 0; i < 1_000_000; i++ {
		e.add("%d", i)
	}
	e.add("%s", strings.Repeat("x", 1<<20))
	if len(e.first) != 3 || e.String() != "0, 1, 2 and 999998 more" {
		t.Errorf("%d kept, %q", len(e.first), e.String())
	}
	var long examples
	long.add("%s", strings.Repeat("y", 1<<20))
	if s := long.String(); len(s) > 220 || !strings.HasSuffix(s, "(1048576 bytes)") {
		t.Errorf("long example %d bytes: %.80q", len(s), s)
	}
}
