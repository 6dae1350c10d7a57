package audit

import (
	"container/heap"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/specsim/specsim/audit/model"
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
	// IndexOnly is set when no shard the index names is present: Tensors
	// then come from the weight map with inferred dtypes and shapes.
	IndexOnly bool
	// MissingShards are the shards the index names that are absent from a
	// partly downloaded checkpoint; their tensors are in Tensors as
	// index-only mode infers them (InferredTensors of them).
	MissingShards   []string
	InferredTensors int
}

// CorruptError is an unreadable or corrupt input: the audit cannot go on
// and the command exits 2. It names the file.
type CorruptError struct {
	Path string
	Err  error
}

func (e *CorruptError) Error() string {
	if p := filepath.Clean(e.Path); p == "." || mentions(e.Err.Error(), p) {
		return e.Err.Error()
	}
	return e.Path + ": " + e.Err.Error()
}

// mentions reports whether msg names path as a path of its own, not as a
// part of a word: a directory "index" is not named by
// "model.safetensors.index.json".
func mentions(msg, path string) bool {
	for i := 0; ; {
		j := strings.Index(msg[i:], path)
		if j < 0 {
			return false
		}
		start, end := i+j, i+j+len(path)
		before := start == 0 || strings.ContainsRune(" \t\"'(", rune(msg[start-1]))
		after := end == len(msg) || strings.ContainsRune(":/ \"'),", rune(msg[end]))
		if before && after {
			return true
		}
		i = start + 1
	}
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
	links := newLinkGuard(dir)
	var cfg *ModelConfig
	configOK := links.allow(cp, "config.json")
	quantOK := links.allow(cp, "hf_quant_config.json")
	switch {
	case configOK && quantOK:
		cfg, err = LoadModelConfig(dir)
	case configOK:
		cfg, err = model.LoadWithoutHFQuant(dir)
	default:
		err = fs.ErrNotExist
	}
	switch {
	case errors.Is(err, fs.ErrNotExist): // config.json; a missing hf_quant_config.json is no error
		cp.Config = &ModelConfig{Dir: dir}
		cp.add(Finding{Code: "config-missing", Severity: SeverityWarning,
			Message: fmt.Sprintf("%s has no config.json: architecture, MTP flags and quantization are unknown, so only tensors are audited", dir)})
	case err != nil:
		return nil, &CorruptError{Path: dir, Err: err}
	default:
		cp.Config = cfg
		read := []string{"config.json"}
		if quantOK {
			read = append(read, "hf_quant_config.json")
		}
		for _, name := range read {
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
	onDisk = links.filter(cp, onDisk)

	indexPath := filepath.Join(dir, safetensors.IndexFile)
	_, statErr := os.Stat(indexPath)
	hasIndex := statErr == nil && links.allow(cp, safetensors.IndexFile)
	if !hasIndex && len(onDisk) == 0 {
		msg := "no *.safetensors files and no " + safetensors.IndexFile
		for _, f := range cp.Findings {
			if f.Code == "symlink-outside-dir" {
				msg += "; " + f.Message
			}
		}
		return nil, &CorruptError{Path: dir, Err: errors.New(msg)}
	}
	if len(onDisk) > MaxShards {
		return nil, &CorruptError{Path: dir, Err: fmt.Errorf("holds %d shard files, more than %d", len(onDisk), MaxShards)}
	}
	// The index of a large MoE checkpoint is tens of megabytes of JSON, as
	// much work as all shard headers together: read the headers of the
	// files on disk while it is parsed.
	if err := checkHeaderBytes(dir, onDisk); err != nil {
		return nil, &CorruptError{Path: dir, Err: err}
	}
	fromDisk := make(chan []shard, 1)
	go func() { fromDisk <- readShards(dir, onDisk) }()
	shardNames := onDisk
	if hasIndex {
		idx, err := safetensors.ReadIndex(indexPath)
		if err != nil {
			<-fromDisk
			return nil, &CorruptError{Path: indexPath, Err: err}
		}
		cp.Index = idx
		if st, err := os.Stat(indexPath); err == nil {
			cp.BytesRead += st.Size()
		}
		shardNames = nil
		for _, s := range idx.Shards() {
			if !safetensors.LocalShard(s) {
				cp.add(Finding{Code: "shard-outside-dir", Severity: SeverityError,
					Message: fmt.Sprintf("%s maps tensors to %q, which leaves the checkpoint directory; it was not opened. Use plain file names inside %s", safetensors.IndexFile, s, dir)})
				continue
			}
			shardNames = append(shardNames, filepath.Clean(s))
		}
		if len(shardNames) > MaxShards {
			<-fromDisk
			return nil, &CorruptError{Path: indexPath, Err: fmt.Errorf("names %d shard files, more than %d", len(shardNames), MaxShards)}
		}
		if len(onDisk) == 0 && len(shardNames) > 0 && noneExist(dir, shardNames) {
			<-fromDisk
			return cp.fromIndexOnly(len(shardNames)), nil
		}
		indexed := map[string]bool{}
		for _, s := range shardNames {
			indexed[s] = true
		}
		for _, f := range onDisk {
			if !indexed[f] {
				shardNames = append(shardNames, f)
				cp.add(Finding{Code: "shard-unindexed", Severity: SeverityWarning,
					Message: fmt.Sprintf("%s is in the directory but not in %s; vLLM and SGLang load only the files the index names, so its tensors are ignored. Add them to weight_map or remove the file", f, safetensors.IndexFile)})
			}
		}
	}
	shards := <-fromDisk
	read := map[string]bool{}
	for _, sh := range shards {
		read[sh.name] = true
	}
	var rest []string // indexed shards in subdirectories or missing
	for _, s := range shardNames {
		if !read[s] {
			rest = append(rest, s)
		}
	}
	allowed := links.filter(cp, rest)
	if err := checkHeaderBytes(dir, append(append([]string(nil), onDisk...), allowed...)); err != nil {
		return nil, &CorruptError{Path: dir, Err: err}
	}
	shards = append(shards, readShards(dir, allowed)...)
	// An indexed shard the link guard refused is not read: its tensors
	// are inferred like an absent shard's.
	if cp.Index != nil && len(allowed) < len(rest) {
		ok := map[string]bool{}
		for _, s := range allowed {
			ok[s] = true
		}
		for _, s := range rest {
			if !ok[s] {
				shards = append(shards, shard{name: s, err: fs.ErrNotExist})
			}
		}
	}
	if err := cp.collect(shards); err != nil {
		return nil, err
	}
	cp.crossCheck()
	return cp, nil
}

func (cp *Checkpoint) add(f Finding) { cp.Findings = append(cp.Findings, f) }

// noneExist reports whether no shard file of the list is present.
func noneExist(dir string, names []string) bool {
	for _, n := range names {
		if _, err := os.Lstat(filepath.Join(dir, n)); err == nil {
			return false
		}
	}
	return true
}

// fromIndexOnly fills the checkpoint from its index alone.
func (cp *Checkpoint) fromIndexOnly(shards int) *Checkpoint {
	cp.IndexOnly = true
	ts, unsized := inferredTensors(cp.Index, cp.Config)
	slices.SortStableFunc(ts, func(a, b Tensor) int { return strings.Compare(a.Name, b.Name) })
	cp.Tensors = ts
	cp.add(indexOnlyFinding(cp.Index, shards, unsized))
	return cp
}

// shard is one shard file's header and its tensors sorted by name.
type shard struct {
	name    string
	header  *safetensors.Header
	tensors []Tensor
	err     error
}

// readShards reads headers concurrently (ReadHeader returns each shard's
// tensors sorted by name); I/O and parsing dominate, so a few readers per
// core keep the disk and the cores busy.
func readShards(dir string, names []string) []shard {
	out := make([]shard, len(names))
	workers := min(len(names), 4*runtime.GOMAXPROCS(0))
	next := make(chan int)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				sh := shard{name: names[i]}
				sh.header, sh.err = safetensors.ReadHeader(filepath.Join(dir, names[i]))
				if sh.err == nil {
					sh.tensors = make([]Tensor, len(sh.header.Tensors))
					for j, t := range sh.header.Tensors {
						sh.tensors[j] = Tensor{Tensor: t, Shard: names[i]}
					}
				}
				out[i] = sh
			}
		}()
	}
	for i := range names {
		next <- i
	}
	close(next)
	wg.Wait()
	return out
}

// collect turns shard results into the checkpoint's headers and its
// tensors, merged into one name-sorted list.
func (cp *Checkpoint) collect(shards []shard) error {
	slices.SortFunc(shards, func(a, b shard) int { return strings.Compare(a.name, b.name) })
	var lists [][]Tensor
	n := 0
	for _, sh := range shards {
		if sh.err != nil {
			if errors.Is(sh.err, fs.ErrNotExist) && cp.Index != nil {
				cp.MissingShards = append(cp.MissingShards, sh.name)
				continue
			}
			return &CorruptError{Path: filepath.Join(cp.Dir, sh.name), Err: sh.err}
		}
		cp.Shards = append(cp.Shards, sh.header)
		cp.BytesRead += sh.header.BytesRead
		lists = append(lists, sh.tensors)
		n += len(sh.tensors)
	}
	if len(cp.MissingShards) > 0 {
		inferred := cp.inferMissing()
		lists = append(lists, inferred)
		n += len(inferred)
	}
	cp.Tensors = mergeSorted(lists, n)
	return nil
}

// inferMissing infers the tensors the index maps to absent shards as
// index-only mode does (inferredTensors: names from the weight map, dtypes
// and shapes from the names, scale companions and config.json), so a
// partly downloaded checkpoint keeps its draft, scales and sizes, and adds
// one finding for all absent shards.
func (cp *Checkpoint) inferMissing() []Tensor {
	missing := map[string]bool{}
	for _, s := range cp.MissingShards {
		missing[s] = true
	}
	all, unsized := inferredTensors(cp.Index, cp.Config)
	var out []Tensor
	for _, t := range all {
		if missing[t.Shard] || missing[filepath.Clean(t.Shard)] {
			t.Shard = filepath.Clean(t.Shard)
			out = append(out, t)
		}
	}
	slices.SortStableFunc(out, func(a, b Tensor) int { return strings.Compare(a.Name, b.Name) })
	cp.InferredTensors = len(out)
	nUnsized := 0
	for _, name := range unsized {
		if e, ok := cp.Index.Shard(name); ok && missing[filepath.Clean(e)] {
			nUnsized++
		}
	}
	msg := fmt.Sprintf("%d of the %d shard files %s names are absent or not read (%s): their %d tensors are inferred from the weight map and config.json as in index-only mode (dtypes, shapes and memory of those tensors are inferred, not read). Finish the download to audit their headers",
		len(cp.MissingShards), len(cp.Index.Shards()), safetensors.IndexFile, abbreviate(cp.MissingShards, 3), len(out))
	if nUnsized > 0 {
		msg += fmt.Sprintf("; %d of them have names the architecture does not explain and are left out of the sizes", nUnsized)
	}
	cp.add(Finding{Code: "shard-missing", Severity: SeverityError, Message: msg})
	return out
}

// mergeSorted merges name-sorted lists (a k-way merge: n log k
// comparisons instead of sorting n tensors again).
func mergeSorted(lists [][]Tensor, n int) []Tensor {
	out := make([]Tensor, 0, n)
	h := make(mergeHeap, 0, len(lists))
	for _, l := range lists {
		if len(l) > 0 {
			h = append(h, l)
		}
	}
	heap.Init(&h)
	for h.Len() > 0 {
		out = append(out, h[0][0])
		if h[0] = h[0][1:]; len(h[0]) == 0 {
			heap.Pop(&h)
		} else {
			heap.Fix(&h, 0)
		}
	}
	return out
}

type mergeHeap [][]Tensor

func (h mergeHeap) Len() int           { return len(h) }
func (h mergeHeap) Less(i, j int) bool { return h[i][0].Name < h[j][0].Name }
func (h mergeHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *mergeHeap) Push(x any)        { *h = append(*h, x.([]Tensor)) }
func (h *mergeHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// crossCheck compares the index with the shard headers and flags unknown
// dtypes and duplicated names. Tensors are sorted by name, so duplicates are
// adjacent and every index lookup is a single map probe.
func (cp *Checkpoint) crossCheck() {
	var dup, unknown examples
	unknownDTypes := map[string]bool{}
	var dataBytes int64
	for i, t := range cp.Tensors {
		dataBytes += t.Bytes()
		if i > 0 && cp.Tensors[i-1].Name == t.Name {
			dup.add("%s (%s and %s)", t.Name, cp.Tensors[i-1].Shard, t.Shard)
		}
		if !t.KnownDType() {
			unknown.add("%s", t.Name)
			if len(unknownDTypes) < 16 {
				unknownDTypes[t.DType] = true
			}
		}
	}
	if dup.n > 0 {
		cp.add(Finding{Code: "tensor-duplicate", Severity: SeverityError,
			Message: fmt.Sprintf("%d tensors appear more than once across shard headers; which copy loads depends on file order: %s", dup.n, &dup)})
	}
	if unknown.n > 0 {
		ds := make([]string, 0, len(unknownDTypes))
		for d := range unknownDTypes {
			ds = append(ds, d)
		}
		slices.Sort(ds)
		cp.add(Finding{Code: "dtype-unknown", Severity: SeverityWarning,
			Message: fmt.Sprintf("%d tensors use dtypes the safetensors format does not define (%s), so their sizes cannot be checked: %s", unknown.n, strings.Join(ds, ", "), &unknown)})
	}
	if cp.Index == nil {
		return
	}
	// Both lists are sorted by name: walk them together.
	var wrong, extra, missing examples
	entries := cp.Index.Entries
	j := 0
	for i, t := range cp.Tensors {
		for j < len(entries) && entries[j].Name < t.Name {
			missing.add("%s (index: %s)", entries[j].Name, entries[j].Shard)
			j++
		}
		switch {
		case j < len(entries) && entries[j].Name == t.Name:
			if shard := entries[j].Shard; shard != t.Shard && filepath.Clean(shard) != t.Shard {
				wrong.add("%s (index: %s, header: %s)", t.Name, shard, t.Shard)
			}
			if i+1 == len(cp.Tensors) || cp.Tensors[i+1].Name != t.Name {
				j++
			}
		default:
			extra.add("%s (%s)", t.Name, t.Shard)
		}
	}
	for ; j < len(entries); j++ {
		missing.add("%s (index: %s)", entries[j].Name, entries[j].Shard)
	}
	if missing.n > 0 {
		cp.add(Finding{Code: "tensor-missing", Severity: SeverityError,
			Message: fmt.Sprintf("%d tensors listed in %s are in no readable shard header: %s", missing.n, safetensors.IndexFile, &missing)})
	}
	if wrong.n > 0 {
		cp.add(Finding{Code: "tensor-wrong-shard", Severity: SeverityError,
			Message: fmt.Sprintf("%d tensors sit in a different shard than %s says; loaders that trust the index will not find them: %s", wrong.n, safetensors.IndexFile, &wrong)})
	}
	if extra.n > 0 {
		cp.add(Finding{Code: "tensor-unindexed", Severity: SeverityWarning,
			Message: fmt.Sprintf("%d tensors are in shard headers but not in %s's weight_map: %s", extra.n, safetensors.IndexFile, &extra)})
	}
	if cp.Index.HasTotalSize && cp.Index.TotalSize != dataBytes && len(cp.MissingShards) == 0 {
		cp.add(Finding{Code: "total-size-mismatch", Severity: SeverityWarning,
			Message: fmt.Sprintf("%s metadata.total_size is %d bytes but the shard headers hold %d bytes of tensor data (difference %+d)", safetensors.IndexFile, cp.Index.TotalSize, dataBytes, dataBytes-cp.Index.TotalSize)})
	}
}
