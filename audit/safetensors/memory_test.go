package safetensors

import (
	"encoding/binary"
	"fmt"
	"runtime"
	"strings"
	"testing"
)

// denseHeader is the header with the most tensors per byte: short names,
// empty tensors.
func denseHeader(n int) []byte {
	var b strings.Builder
	b.WriteByte('{')
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"t%07d":{"dtype":"U8","shape":[0],"data_offsets":[0,0]}`, i)
	}
	b.WriteByte('}')
	h := b.String()
	return append(binary.LittleEndian.AppendUint64(nil, uint64(len(h))), h...)
}

// The parser allocates a bounded number of bytes per header byte (the
// checkpoint-wide header cap then bounds an audit's memory): measured 3.45
// for the densest header, where each ~60-byte entry becomes a Tensor
// (88 bytes with its slice headers), its name and its shape.
func TestParseMemoryPerHeaderByte(t *testing.T) {
	buf := denseHeader(100_000)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	h, err := ParseHeader(buf, int64(len(buf)))
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	perByte := float64(after.TotalAlloc-before.TotalAlloc) / float64(len(buf))
	t.Logf("%d tensors, %d header bytes, %.2f bytes allocated per header byte", len(h.Tensors), len(buf), perByte)
	if perByte > 5 {
		t.Errorf("%.2f bytes allocated per header byte, want at most 5", perByte)
	}
}
