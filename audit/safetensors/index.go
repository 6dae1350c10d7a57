package safetensors

import (
	"errors"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"slices"
	"strconv"
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
	f, err := OpenRegular(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, &Error{Path: path, Err: err}
	}
	if st.Size() > MaxIndexSize {
		return nil, &Error{Path: path, Err: fmt.Errorf("index is %d bytes, larger than the %d-byte limit", st.Size(), MaxIndexSize)}
	}
	// Read what stat promised, plus a byte to notice a file that grew.
	data := make([]byte, st.Size()+1)
	n, err := io.ReadFull(f, data)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return nil, &Error{Path: path, Err: err}
	}
	if n > int(st.Size()) {
		return nil, &Error{Path: path, Err: errors.New("file changed while being read")}
	}
	data = data[:n]
	idx, err := ParseIndex(data)
	if err != nil {
		return nil, &Error{Path: path, Err: err}
	}
	idx.Path = path
	return idx, nil
}

// ParseIndex parses the JSON of an index file: {"metadata": {...},
// "weight_map": {"tensor": "shard file", ...}}. Other top-level keys are
// ignored. A tensor listed twice is an error (loaders would pick one
// silently).
func ParseIndex(data []byte) (*Index, error) {
	s := &scanner{b: data}
	idx := &Index{Metadata: map[string]string{}}
	err := s.object(func(k string) error {
		switch k {
		case "weight_map":
			if idx.WeightMap != nil {
				return errors.New(`"weight_map" appears twice`)
			}
			idx.WeightMap = make(map[string]string, len(data)/96)
			shards := map[string]string{} // a few hundred distinct names: share them
			return s.object(func(name string) error {
				shard, err := s.internedStr(shards)
				if err != nil {
					return fmt.Errorf("weight_map[%q]: %w", name, err)
				}
				if _, dup := idx.WeightMap[name]; dup {
					return fmt.Errorf("weight_map lists %q twice", name)
				}
				idx.WeightMap[name] = shard
				return nil
			})
		case "metadata":
			if s.peek() == 'n' && s.literal("null") {
				return nil
			}
			return s.object(func(mk string) error {
				start := s.i
				if mk == "total_size" {
					n, err := parseSize(s)
					if err != nil {
						return fmt.Errorf("metadata.total_size: %w", err)
					}
					idx.TotalSize, idx.HasTotalSize = n, true
					return nil
				}
				if s.peek() == '"' {
					v, err := s.str()
					idx.Metadata[mk] = v
					return err
				}
				if err := s.skip(0); err != nil {
					return err
				}
				idx.Metadata[mk] = strings.TrimSpace(string(s.b[start:s.i]))
				return nil
			})
		}
		return s.skip(0)
	})
	if err == nil {
		err = s.end()
	}
	if err != nil {
		return nil, fmt.Errorf("not a safetensors index: %w", err)
	}
	if idx.WeightMap == nil {
		return nil, errors.New(`no "weight_map" object`)
	}
	return idx, nil
}

// parseSize accepts a JSON integer, or a string or float holding a whole
// number (exporters write total_size all three ways).
func parseSize(s *scanner) (int64, error) {
	var raw string
	if s.peek() == '"' {
		v, err := s.str()
		if err != nil {
			return 0, err
		}
		raw = strings.TrimSpace(v)
	} else {
		b, err := s.number()
		if err != nil {
			return 0, err
		}
		raw = string(b)
	}
	if n, err := strconv.ParseInt(raw, 10, 64); err == nil && n >= 0 {
		return n, nil
	}
	x, err := strconv.ParseFloat(raw, 64)
	if err != nil || x < 0 || x != math.Trunc(x) || x > math.MaxInt64/2 {
		return 0, fmt.Errorf("%s is not a non-negative whole number of bytes", raw)
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
