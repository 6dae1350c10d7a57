// Package checkpointtest writes safetensors checkpoints for tests: real
// tensor names, shapes and dtypes, with the data left as a sparse hole
// (os.File.Truncate), so a checkpoint of hundreds of gigabytes costs a few
// megabytes of headers on disk. It also writes deliberately broken files.
//
// Tests of other packages use it too (the throughput simulator reads model
// descriptions from generated checkpoints), so it is an ordinary package
// rather than a _test.go file.
package checkpointtest

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
)

// Tensor is one tensor to write.
type Tensor struct {
	Name  string
	DType string
	Shape []int64
}

// Bits gives the element width of the dtypes this package writes. It is
// kept separate from audit/safetensors on purpose: fixtures must not share
// the code they test.
var Bits = map[string]int{
	"BOOL": 8, "U8": 8, "I8": 8, "F8_E4M3": 8, "F8_E5M2": 8, "F8_E8M0": 8,
	"F4": 4, "F6_E2M3": 6, "F6_E3M2": 6,
	"I16": 16, "U16": 16, "F16": 16, "BF16": 16,
	"I32": 32, "U32": 32, "F32": 32,
	"I64": 64, "U64": 64, "F64": 64, "C64": 64,
}

// Bytes is the stored size of the tensor: elements * bits / 8.
func (t Tensor) Bytes() int64 {
	n := int64(1)
	for _, d := range t.Shape {
		n *= d
	}
	return n * int64(Bits[t.DType]) / 8
}

// WriteFile writes a valid safetensors file holding the tensors in the order
// given, with data as a hole. It returns the data size in bytes.
func WriteFile(path string, tensors []Tensor, metadata map[string]string) (int64, error) {
	header, dataLen := Header(tensors, metadata)
	return dataLen, WriteRaw(path, header, dataLen)
}

// Header builds the JSON header for the tensors laid out back to back, and
// the data length it implies.
func Header(tensors []Tensor, metadata map[string]string) ([]byte, int64) {
	buf := make([]byte, 0, 64+len(tensors)*128)
	buf = append(buf, '{')
	if metadata != nil {
		m, _ := json.Marshal(metadata)
		buf = append(buf, `"__metadata__":`...)
		buf = append(buf, m...)
	}
	var off int64
	for i, t := range tensors {
		if i > 0 || metadata != nil {
			buf = append(buf, ',')
		}
		buf = appendJSONString(buf, t.Name)
		buf = append(buf, `:{"dtype":`...)
		buf = appendJSONString(buf, t.DType)
		buf = append(buf, `,"shape":[`...)
		for j, d := range t.Shape {
			if j > 0 {
				buf = append(buf, ',')
			}
			buf = strconv.AppendInt(buf, d, 10)
		}
		end := off + t.Bytes()
		buf = append(buf, `],"data_offsets":[`...)
		buf = strconv.AppendInt(buf, off, 10)
		buf = append(buf, ',')
		buf = strconv.AppendInt(buf, end, 10)
		buf = append(buf, "]}"...)
		off = end
	}
	buf = append(buf, '}')
	return buf, off
}

// appendJSONString appends s as a JSON string (strconv.Quote writes \x
// escapes, which JSON does not have, for control characters).
func appendJSONString(buf []byte, s string) []byte {
	b, _ := json.Marshal(s)
	return append(buf, b...)
}

// WriteRaw writes an 8-byte little-endian length, the header bytes as
// given, and dataLen bytes of hole. Corrupt variants use it directly.
func WriteRaw(path string, header []byte, dataLen int64) error {
	return WriteWithLength(path, uint64(len(header)), header, dataLen)
}

// WriteWithLength is WriteRaw with an arbitrary (possibly lying) length
// prefix.
func WriteWithLength(path string, length uint64, header []byte, dataLen int64) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	var prefix [8]byte
	binary.LittleEndian.PutUint64(prefix[:], length)
	if _, err := f.Write(prefix[:]); err != nil {
		f.Close()
		return err
	}
	if _, err := f.Write(header); err != nil {
		f.Close()
		return err
	}
	if err := f.Truncate(8 + int64(len(header)) + dataLen); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// Sharded writes shards named model-0000i-of-0000n.safetensors plus
// model.safetensors.index.json (total_size = sum of data bytes). It returns
// the weight map it wrote.
func Sharded(dir string, shards [][]Tensor) (map[string]string, error) {
	weightMap := map[string]string{}
	var total int64
	for i, ts := range shards {
		name := fmt.Sprintf("model-%05d-of-%05d.safetensors", i+1, len(shards))
		n, err := WriteFile(filepath.Join(dir, name), ts, map[string]string{"format": "pt"})
		if err != nil {
			return nil, err
		}
		total += n
		for _, t := range ts {
			weightMap[t.Name] = name
		}
	}
	return weightMap, WriteIndex(dir, total, weightMap)
}

// WriteIndex writes model.safetensors.index.json.
func WriteIndex(dir string, totalSize int64, weightMap map[string]string) error {
	type index struct {
		Metadata  map[string]int64  `json:"metadata"`
		WeightMap map[string]string `json:"weight_map"`
	}
	b, err := json.Marshal(index{Metadata: map[string]int64{"total_size": totalSize}, WeightMap: weightMap})
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "model.safetensors.index.json"), b, 0o644)
}

// Split cuts a tensor list into n shards of nearly equal count, keeping
// order.
func Split(ts []Tensor, n int) [][]Tensor {
	if n < 1 {
		n = 1
	}
	out := make([][]Tensor, 0, n)
	per := (len(ts) + n - 1) / n
	for i := 0; i < len(ts); i += per {
		out = append(out, ts[i:min(i+per, len(ts))])
	}
	return out
}

// TotalBytes sums the stored sizes.
func TotalBytes(ts []Tensor) int64 {
	var n int64
	for _, t := range ts {
		n += t.Bytes()
	}
	return n
}

// Names returns the sorted tensor names.
func Names(ts []Tensor) []string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = t.Name
	}
	sort.Strings(out)
	return out
}

// RemoveShards deletes the shard files of a checkpoint written by
// WriteCheckpoint, leaving configs and index: what a reviewer downloads.
func RemoveShards(dir string) error {
	shards, err := filepath.Glob(filepath.Join(dir, "*.safetensors"))
	if err != nil {
		return err
	}
	for _, s := range shards {
		if err := os.Remove(s); err != nil {
			return err
		}
	}
	return nil
}
