package deep

import (
	"fmt"
	"hash/fnv"
	"io"
	"os"
	"sync/atomic"

	"github.com/specsim/specsim/audit/safetensors"
)

// Sampling geometry. A tensor is viewed as batch x rows x cols matrices
// (cols = the last, input dimension; rows = the one before; batch = the
// rest, e.g. experts). The unit of reading is tileRows rows (128 when the
// tensor's share of the budget affords enough whole tiles, so that 128x128
// block scales can be recognised; else 1) by up to readWidth aligned
// columns, i.e. up to four side-by-side 128x128 tiles, one pread per row.
// Every grid group (16, 32, 64, 128) divides the aligned 128-wide tiles,
// so blocks never straddle a quantizer's group boundary.
const (
	segWidth  = 128
	readWidth = 4 * segWidth
	tileRows  = 128
	minTiles  = 8 // whole tiles only if at least this many units fit the share
	// Units per tensor at the default budget (scaled with the budget): a
	// million values per tensor is ample evidence, and bounds the time.
	maxTiles     = 8
	maxSegments  = 1024
	minSegments  = 4 // fewer than this is not worth reading
	maxOpenFiles = 64
)

type plan struct {
	t        *Tensor
	st       *storage
	batch    int64
	rows     int64 // per matrix
	cols     int64
	width    int64 // values per row read (a multiple of segWidth up to readWidth, or cols if smaller)
	tile     int64 // width of one tile: segWidth, or cols if smaller
	height   int64 // rows per unit
	rowUnits int64 // units along rows per matrix
	colUnits int64 // units along columns
	units    []int64
}

func (p *plan) unitBytes() int64 { return p.height * p.width * int64(p.st.size) }
func (p *plan) bytes() int64     { return int64(len(p.units)) * p.unitBytes() }

// newPlan lays out the tensor and picks how many units to read within
// share bytes, spread deterministically over the tensor.
func newPlan(t *Tensor, st *storage, share, budget int64) *plan {
	p := &plan{t: t, st: st, batch: 1, rows: 1, cols: 1}
	switch n := len(t.Shape); {
	case n >= 2:
		p.rows, p.cols = t.Shape[n-2], t.Shape[n-1]
		for _, d := range t.Shape[:n-2] {
			p.batch *= d
		}
	case n == 1:
		p.cols = t.Shape[0]
	}
	if p.batch == 0 || p.rows == 0 || p.cols == 0 {
		return p
	}
	p.tile = min(p.cols, segWidth)
	p.width = p.tile
	for k := int64(readWidth / segWidth); k > 1; k-- { // widest read that tiles the row
		if p.cols/segWidth%k == 0 && p.cols >= k*segWidth {
			p.width = k * segWidth
			break
		}
	}
	p.colUnits = p.cols / p.width
	p.height = 1
	rowBytes := p.width * int64(st.size)
	if p.rows >= tileRows && share >= minTiles*tileRows*rowBytes {
		p.height = tileRows
	}
	if p.height == 1 && share < minSegments*p.unitBytes() {
		p.width = p.tile // a small share: narrow reads, more positions
		p.colUnits = p.cols / p.width
	}
	p.rowUnits = p.rows / p.height
	total := p.batch * p.rowUnits * p.colUnits
	n := min(total, share/p.unitBytes())
	scale := max(1, budget/DefaultBudget)
	if p.height == tileRows {
		n = min(n, maxTiles*scale)
	} else {
		n = min(n, maxSegments*scale)
	}
	if n < min(total, minSegments) {
		return p
	}
	p.units = stratified(t.Name, total, n)
	return p
}

// stratified picks n of total unit indices, one in each of n equal strata,
// at a position inside the stratum drawn from a hash of the tensor name:
// deterministic, spread over the whole tensor, and not aliased with the
// tensor's structure (every expert, every column tile).
func stratified(name string, total, n int64) []int64 {
	h := fnv.New64a()
	io.WriteString(h, name)
	state := h.Sum64()
	out := make([]int64, 0, n)
	for i := range n {
		lo := int64(float64(total) * float64(i) / float64(n))
		hi := int64(float64(total) * float64(i+1) / float64(n))
		hi = min(max(hi, lo+1), total)
		state = state*6364136223846793005 + 1442695040888963407
		out = append(out, lo+int64((state>>11)%uint64(hi-lo)))
	}
	return out
}

// rowOffset is the absolute file offset of the first element read in row
// r (0-based within the tile) of unit u.
func (p *plan) rowOffset(u, r int64) int64 {
	ct := u % p.colUnits
	rt := (u / p.colUnits) % p.rowUnits
	b := u / (p.colUnits * p.rowUnits)
	row := b*p.rows + rt*p.height + r
	return p.t.Begin + (row*p.cols+ct*p.width)*int64(p.st.size)
}

// A budgetReader reads with pread, counts every byte it reads, and refuses
// to read past its limit. Siblings share the count and the limit but not
// file handles. It keeps at most maxOpenFiles files open.
type budgetReader struct {
	limit int64
	used  *atomic.Int64 // bytes read by this reader and its siblings
	read  int64         // bytes read by this reader
	files map[string]*os.File
	sizes map[string]int64
}

func newBudgetReader(limit int64) *budgetReader {
	return &budgetReader{limit: limit, used: new(atomic.Int64), files: map[string]*os.File{}, sizes: map[string]int64{}}
}

func (r *budgetReader) sibling() *budgetReader {
	return &budgetReader{limit: r.limit, used: r.used, files: map[string]*os.File{}, sizes: map[string]int64{}}
}

func (r *budgetReader) open(path string) (*os.File, error) {
	if f, ok := r.files[path]; ok {
		return f, nil
	}
	if len(r.files) >= maxOpenFiles {
		r.Close()
	}
	// Opening a FIFO or a device could block or read without end.
	f, err := safetensors.OpenRegular(path)
	if err != nil {
		return nil, err
	}
	info, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	r.files[path], r.sizes[path] = f, info.Size()
	return f, nil
}

// fileSize is the size of an opened (or openable) file.
func (r *budgetReader) fileSize(path string) (int64, error) {
	if _, err := r.open(path); err != nil {
		return 0, err
	}
	return r.sizes[path], nil
}

func (r *budgetReader) readAt(path string, buf []byte, off int64) error {
	f, err := r.open(path)
	if err != nil {
		return err
	}
	if r.used.Add(int64(len(buf))) > r.limit {
		r.used.Add(-int64(len(buf)))
		return fmt.Errorf("%s: read of %d bytes at %d would exceed the %d-byte budget", path, len(buf), off, r.limit)
	}
	n, err := f.ReadAt(buf, off)
	r.used.Add(int64(n - len(buf)))
	r.read += int64(n)
	if err != nil {
		return fmt.Errorf("%s: reading %d bytes at offset %d: %w", path, len(buf), off, err)
	}
	return nil
}

func (r *budgetReader) Close() {
	for p, f := range r.files {
		f.Close()
		delete(r.files, p)
	}
}
