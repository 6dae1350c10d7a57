package safetensors

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// MaxIndexSize bounds model.safetensors.index.json; the largest real ones
// (hundreds of thousands of per-expert tensors) are tens of megabytes.
const MaxIndexSize = 256 << 20

// IndexFile is the conventional name of a sharded checkpoint's index.
const IndexFile = "model.safetensors.index.json"

// Index is a parsed model.safetensors.index.json.
type Index struct {
	Path string
	// TotalSize is metadata.total_size: the sum of tensor data bytes over all
	// shards (not the file sizes). HasTotalSize is false when it is absent.
	TotalSize    int64
	HasTotalSize bool
	// WeightMap maps tensor name to shard file name.
	WeightMap map[string]string
	// Metadata holds the other metadata entries, rendered as strings.
	Metadata map[string]string
}

// ReadIndex reads and parses an index file, bounded by MaxIndexSize. Errors
// name the file.
func ReadIndex(path string) (*Index, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxIndexSize+1))
	if err != nil {
		return nil, &Error{Path: path, Err: err}
	}
	if len(data) > MaxIndexSize {
		return nil, &Error{Path: path, Err: fmt.Errorf("index is larger than %d bytes", MaxIndexSize)}
	}
	idx, err := ParseIndex(data)
	if err != nil {
		return nil, &Error{Path: path, Err: err}
	}
	idx.Path = path
	return idx, nil
}

// ParseIndex parses the JSON of an index file.
func ParseIndex(data []byte) (*Index, error) {
	var raw struct {
		Metadata  map[string]json.RawMessage `json:"metadata"`
		WeightMap map[string]string          `json:"weight_map"`
	}
	if err := json.Unmarshal(data, &raw); err != nil {
		return nil, fmt.Errorf("not a safetensors index: %w", err)
	}
	if raw.WeightMap == nil {
		return nil, errors.New(`no "weight_map" object`)
	}
	idx := &Index{WeightMap: raw.WeightMap, Metadata: map[string]string{}}
	for k, v := range raw.Metadata {
		if k == "total_size" {
			n, err := parseSize(v)
			if err != nil {
				return nil, fmt.Errorf("metadata.total_size: %w", err)
			}
			idx.TotalSize, idx.HasTotalSize = n, true
			continue
		}
		var s string
		if json.Unmarshal(v, &s) == nil {
			idx.Metadata[k] = s
		} else {
			idx.Metadata[k] = string(v)
		}
	}
	return idx, nil
}

// parseSize accepts a JSON integer or a string holding one (some exporters
// write total_size as a string or a float with a zero fraction).
func parseSize(v json.RawMessage) (int64, error) {
	var s string
	if json.Unmarshal(v, &s) == nil {
		v = json.RawMessage(s)
	}
	var f json.Number
	if err := json.Unmarshal(v, &f); err != nil {
		return 0, fmt.Errorf("%s is not a number", v)
	}
	if n, err := f.Int64(); err == nil && n >= 0 {
		return n, nil
	}
	x, err := f.Float64()
	if err != nil || x < 0 || x != float64(int64(x)) {
		return 0, fmt.Errorf("%s is not a non-negative whole number of bytes", f)
	}
	return int64(x), nil
}

// Shards returns the distinct shard names of the weight map in sorted order.
func (idx *Index) Shards() []string {
	seen := map[string]bool{}
	var out []string
	for _, s := range idx.WeightMap {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	slices.Sort(out)
	return out
}

// LocalShard reports whether a shard name from a weight map stays inside the
// checkpoint directory: relative, no "..", no volume, no backslash tricks.
func LocalShard(name string) bool {
	if name == "" || strings.ContainsRune(name, '\\') || strings.ContainsRune(name, 0) {
		return false
	}
	return filepath.IsLocal(name) && filepath.Clean(name) != "."
}
