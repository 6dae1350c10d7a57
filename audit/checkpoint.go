package audit

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/specsim/specsim/audit/safetensors"
)

// MaxShards bounds how many shard files one checkpoint may name.
const MaxShards = 100_000

// Tensor is one tensor of the checkpoint and the shard file holding it.
type Tensor struct {
	safetensors.Tensor
	Shard string // file name relative to the checkpoint directory
}

// Checkpoint is everything audit reads from a directory: configs, the index
// (nil for a single-file or unindexed checkpoint) and every shard header.
type Checkpoint struct {
	Dir       string
	Config    *ModelConfig
	Index     *safetensors.Index
	Shards    []*safetensors.Header
	Tensors   []Tensor // sorted by name
	BytesRead int64    // bytes read: configs, index and shard headers
	Findings  []Finding
}

// CorruptError is an unreadable or corrupt input: the audit cannot go on
// and the command exits 2. It names the file.
type CorruptError struct {
	Path string
	Err  error
}

func (e *CorruptError) Error() string {
	if strings.Contains(e.Err.Error(), e.Path) {
		return e.Err.Error()
	}
	return e.Path + ": " + e.Err.Error()
}

func (e *CorruptError) Unwrap() error { return e.Err }

// ReadCheckpoint reads configs, index and shard headers of dir. It returns a
// *CorruptError for input it cannot read (bad JSON, a corrupt shard header);
// problems it can describe and go on from (index entries that disagree with
// the headers, unindexed shard files) become findings.
func ReadCheckpoint(dir string) (*Checkpoint, error) {
	st, err := os.Stat(dir)
	if err != nil {
		return nil, &CorruptError{Path: dir, Err: err}
	}
	if !st.IsDir() {
		return nil, &CorruptError{Path: dir, Err: errors.New("not a directory")}
	}
	cp := &Checkpoint{Dir: dir}
	cfg, err := LoadModelConfig(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist): // config.json; a missing hf_quant_config.json is no error
		cp.Config = &ModelConfig{Dir: dir}
		cp.add(Finding{Code: "config_missing", Severity: SeverityWarning,
			Message: fmt.Sprintf("%s has no config.json: architecture, MTP flags and quantization are unknown, so only tensors are audited", dir)})
	case err != nil:
		return nil, &CorruptError{Path: dir, Err: err}
	default:
		cp.Config = cfg
		for _, name := range []string{"config.json", "hf_quant_config.json"} {
			if st, err := os.Stat(filepath.Join(dir, name)); err == nil {
				cp.BytesRead += st.Size()
			}
		}
	}

	onDisk, err := filepath.Glob(filepath.Join(dir, "*.safetensors"))
	if err != nil {
		return nil, &CorruptError{Path: dir, Err: err}
	}
	for i := range onDisk {
		onDisk[i] = filepath.Base(onDisk[i])
	}
	slices.Sort(onDisk)

	indexPath := filepath.Join(dir, safetensors.IndexFile)
	var shardNames []string
	if _, err := os.Stat(indexPath); err == nil {
		idx, err := safetensors.ReadIndex(indexPath)
		if err != nil {
			return nil, &CorruptError{Path: indexPath, Err: err}
		}
		cp.Index = idx
		if st, err := os.Stat(indexPath); err == nil {
			cp.BytesRead += st.Size()
		}
		for _, s := range idx.Shards() {
			if !safetensors.LocalShard(s) {
				cp.add(Finding{Code: "shard_outside_dir", Severity: SeverityError,
					Message: fmt.Sprintf("%s maps tensors to %q, which leaves the checkpoint directory; it was not opened. Use plain file names inside %s", safetensors.IndexFile, s, dir)})
				continue
			}
			shardNames = append(shardNames, s)
		}
		indexed := map[string]bool{}
		for _, s := range shardNames {
			indexed[filepath.Clean(s)] = true
		}
		for _, f := range onDisk {
			if !indexed[f] {
				shardNames = append(shardNames, f)
				cp.add(Finding{Code: "shard_unindexed", Severity: SeverityWarning,
					Message: fmt.Sprintf("%s is in the directory but not in %s; vLLM and SGLang load only the files the index names, so its tensors are ignored. Add them to weight_map or remove the file", f, safetensors.IndexFile)})
			}
		}
	} else {
		if len(onDisk) == 0 {
			return nil, &CorruptError{Path: dir, Err: errors.New("no *.safetensors files and no " + safetensors.IndexFile)}
		}
		shardNames = onDisk
	}
	if len(shardNames) > MaxShards {
		return nil, &CorruptError{Path: indexPath, Err: fmt.Errorf("names %d shard files, more than %d", len(shardNames), MaxShards)}
	}
	if err := cp.readShards(shardNames); err != nil {
		return nil, err
	}
	cp.crossCheck()
	return cp, nil
}

func (cp *Checkpoint) add(f Finding) { cp.Findings = append(cp.Findings, f) }

// readShards reads the headers concurrently; I/O dominates, so a few
// readers per core keep the disk busy.
func (cp *Checkpoint) readShards(names []string) error {
	headers := make([]*safetensors.Header, len(names))
	errs := make([]error, len(names))
	workers := min(len(names), 4*runtime.GOMAXPROCS(0))
	next := make(chan int)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				headers[i], errs[i] = safetensors.ReadHeader(filepath.Join(cp.Dir, names[i]))
			}
		}()
	}
	for i := range names {
		next <- i
	}
	close(next)
	wg.Wait()
	for i, err := range errs {
		if err == nil {
			continue
		}
		path := filepath.Join(cp.Dir, names[i])
		if errors.Is(err, fs.ErrNotExist) && cp.Index != nil {
			cp.add(Finding{Code: "shard_missing", Severity: SeverityError,
				Message: fmt.Sprintf("%s names shard %s, which does not exist", safetensors.IndexFile, names[i])})
			continue
		}
		return &CorruptError{Path: path, Err: err}
	}
	n := 0
	for _, h := range headers {
		if h == nil {
			continue
		}
		cp.Shards = append(cp.Shards, h)
		cp.BytesRead += h.BytesRead
		n += len(h.Tensors)
	}
	cp.Tensors = make([]Tensor, 0, n)
	for i, h := range headers {
		if h == nil {
			continue
		}
		for _, t := range h.Tensors {
			cp.Tensors = append(cp.Tensors, Tensor{Tensor: t, Shard: names[i]})
		}
	}
	slices.SortFunc(cp.Tensors, func(a, b Tensor) int { return strings.Compare(a.Name, b.Name) })
	return nil
}

// crossCheck compares the index with the shard headers and flags unknown
// dtypes and duplicated names. Tensors are sorted by name, so duplicates are
// adjacent and every index lookup is a single map probe.
func (cp *Checkpoint) crossCheck() {
	var dup, unknown []string
	unknownDTypes := map[string]bool{}
	var dataBytes int64
	for i, t := range cp.Tensors {
		dataBytes += t.Bytes()
		if i > 0 && cp.Tensors[i-1].Name == t.Name {
			dup = append(dup, fmt.Sprintf("%s (%s and %s)", t.Name, cp.Tensors[i-1].Shard, t.Shard))
		}
		if !t.KnownDType() {
			unknown = append(unknown, t.Name)
			unknownDTypes[t.DType] = true
		}
	}
	if len(dup) > 0 {
		cp.add(Finding{Code: "tensor_duplicate", Severity: SeverityError,
			Message: fmt.Sprintf("%d tensors appear more than once across shard headers; which copy loads depends on file order: %s", len(dup), abbreviate(dup, 3))})
	}
	if len(unknown) > 0 {
		ds := make([]string, 0, len(unknownDTypes))
		for d := range unknownDTypes {
			ds = append(ds, d)
		}
		slices.Sort(ds)
		cp.add(Finding{Code: "dtype_unknown", Severity: SeverityWarning,
			Message: fmt.Sprintf("%d tensors use dtypes the safetensors format does not define (%s), so their sizes cannot be checked: %s", len(unknown), strings.Join(ds, ", "), abbreviate(unknown, 3))})
	}
	if cp.Index == nil {
		return
	}
	var wrong, extra []string
	found := 0
	for i, t := range cp.Tensors {
		shard, ok := cp.Index.WeightMap[t.Name]
		switch {
		case !ok:
			extra = append(extra, fmt.Sprintf("%s (%s)", t.Name, t.Shard))
		case shard != t.Shard && filepath.Clean(shard) != filepath.Clean(t.Shard):
			wrong = append(wrong, fmt.Sprintf("%s (index: %s, header: %s)", t.Name, shard, t.Shard))
		}
		if ok && (i == 0 || cp.Tensors[i-1].Name != t.Name) {
			found++
		}
	}
	if found < len(cp.Index.WeightMap) {
		var missing []string
		have := make(map[string]bool, len(cp.Tensors))
		for _, t := range cp.Tensors {
			have[t.Name] = true
		}
		for name, shard := range cp.Index.WeightMap {
			if !have[name] {
				missing = append(missing, fmt.Sprintf("%s (index: %s)", name, shard))
			}
		}
		slices.Sort(missing)
		cp.add(Finding{Code: "tensor_missing", Severity: SeverityError,
			Message: fmt.Sprintf("%d tensors listed in %s are in no readable shard header: %s", len(missing), safetensors.IndexFile, abbreviate(missing, 3))})
	}
	if len(wrong) > 0 {
		cp.add(Finding{Code: "tensor_wrong_shard", Severity: SeverityError,
			Message: fmt.Sprintf("%d tensors sit in a different shard than %s says; loaders that trust the index will not find them: %s", len(wrong), safetensors.IndexFile, abbreviate(wrong, 3))})
	}
	if len(extra) > 0 {
		cp.add(Finding{Code: "tensor_unindexed", Severity: SeverityWarning,
			Message: fmt.Sprintf("%d tensors are in shard headers but not in %s's weight_map: %s", len(extra), safetensors.IndexFile, abbreviate(extra, 3))})
	}
	if cp.Index.HasTotalSize && cp.Index.TotalSize != dataBytes {
		cp.add(Finding{Code: "total_size_mismatch", Severity: SeverityWarning,
			Message: fmt.Sprintf("%s metadata.total_size is %d bytes but the shard headers hold %d bytes of tensor data (difference %+d)", safetensors.IndexFile, cp.Index.TotalSize, dataBytes, dataBytes-cp.Index.TotalSize)})
	}
}
