// Package deep checks that weights stored as BF16 (or F16/F32) really hold
// values of that precision. A dtype is a container: a draft head can be
// quantized to NVFP4, FP8 or INT4, dequantized, and written back as BF16,
// and every header-only check still says "BF16". Such values sit on a
// low-precision grid: every block of 16, 32 or 128 consecutive values is
// q*s for a handful of levels q and one scale s, up to the final rounding
// to BF16. Genuine BF16 weights almost never do, and the package says how
// unlikely it would be, from the number of codes against grid points.
//
// How unlikely: model a genuine value's code as equally likely to be any
// code within one grid gap around it (a density smooth on that scale).
// For a fixed anchor (the level the block maximum sits on) the feasible
// scales span at most one code of the maximum, so each grid point is within
// rounding of at most 3 codes and a value hits with probability at most
// 3*ulp/gap. For BF16 (ulp/|v| <= 2^-7) on the NVFP4 grid (smallest
// relative gap 1/4) that is 0.094, so 16 nonzero values land on the grid by
// accident with probability at most 7 * 0.094^15 = 3e-15 (7 anchors); 128
// values on the E4M3 grid (gap 1/16) at most 8 * 0.375^127 = 1e-53. Over a
// tensor, P(k of its blocks on the grid) <= (sum of block bounds)^k / k!.
// Quantized values are on their grid with certainty, so no tensor is
// called genuine that was quantized to a tested grid.
//
// Reads are bounded: a deterministic, stratified sample of whole blocks
// (aligned 128-wide row segments, or whole 128x128 tiles) read with pread,
// never a whole shard, within a global byte budget that is split across
// the tensors under test. Every byte read is counted where it is read.
package deep

import (
	"fmt"
	"math"
	"regexp"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/specsim/specsim/audit/finding"
)

// Tensor locates one tensor's data: the file, the safetensors dtype and
// shape, and the absolute byte range [Begin, End) in the file.
type Tensor struct {
	Path       string
	Name       string
	DType      string
	Shape      []int64
	Begin, End int64
}

// DefaultBudget is the default total of bytes read (64 MiB).
const DefaultBudget = 64 << 20

// Options tune a deep audit.
type Options struct {
	// Budget caps the bytes read over all tensors (DefaultBudget if 0).
	Budget int64
	// Progress, if set, is called after each tensor (for stderr progress).
	Progress func(done, total int, name string)
}

// Verdicts. The quantized verdict strings come from the grid labels.
const (
	VerdictInconclusive = "inconclusive (too few distinct values, e.g. zeros)"
	VerdictWeak         = "inconclusive (values fit a coarse grid, but too weakly to tell)"
)

// GenuineVerdict is the verdict for values that sit on no tested grid.
func GenuineVerdict(dtype string) string { return "genuine " + dtype }

// Report is the outcome of a deep audit.
type Report struct {
	BytesRead   int64          `json:"bytes_read"`
	BudgetBytes int64          `json:"budget_bytes"`
	Tensors     []TensorResult `json:"tensors"`
	Modules     []ModuleResult `json:"modules"`
	Findings    []Finding      `json:"findings"`
}

// TensorResult is the verdict on one tensor with its evidence.
type TensorResult struct {
	Name    string `json:"name"`
	DType   string `json:"dtype"`
	Verdict string `json:"verdict"`
	// Grid is the stable key of the grid the values sit on ("nvfp4",
	// "fp8_e4m3", "int4", ...), or "none" (genuine) or "" (inconclusive).
	Grid string `json:"grid"`
	// ClosestGrid, for a genuine verdict, is the grid that held the most
	// blocks (OnGridFraction is that grid's fraction).
	ClosestGrid string `json:"closest_grid,omitempty"`
	// Detail names the scale structure found (e.g. "per-tensor scale").
	Detail string `json:"detail,omitempty"`
	// GroupSize is the number of consecutive values sharing one scale in
	// the grid test reported.
	GroupSize int `json:"group_size,omitempty"`
	// BlocksTested counts the informative blocks (two or more distinct
	// nonzero magnitudes) tested against the reported grid.
	BlocksTested int `json:"blocks_tested"`
	// OnGridFraction is the fraction of those blocks on the grid; for a
	// genuine verdict, the largest fraction over all grids tested.
	OnGridFraction float64 `json:"on_grid_fraction"`
	// MedianResidualULP is the median distance of values to the nearest
	// grid point, in units of the storage format's code spacing (at most
	// 0.5 on the grid, many units off it).
	MedianResidualULP float64 `json:"median_residual_ulp"`
	// FalseAlarmLog10 bounds log10 of the probability that genuine values
	// would put this many blocks on the grid (quantized verdicts only).
	FalseAlarmLog10 float64 `json:"false_alarm_log10,omitempty"`
	ValuesTested    int64   `json:"values_tested"`
	// DistinctValues counts distinct nonzero magnitudes seen, up to 256.
	DistinctValues int   `json:"distinct_values"`
	BytesRead      int64 `json:"bytes_read"`
}

// Quantized reports whether the verdict says the values sit on a
// lower-precision grid.
func (t *TensorResult) Quantized() bool { return t.Grid != "" && t.Grid != "none" }

// ModuleResult folds the tensors of one module (name without its last
// component, per-expert indices collapsed to "*").
type ModuleResult struct {
	Name    string   `json:"name"`
	Verdict string   `json:"verdict"`
	Grid    string   `json:"grid"`
	Tensors []string `json:"tensors"`
}

// Finding is the shared type of package audit/finding; its Location is the
// tensor.
type Finding = finding.Finding

// FindingQuantized is the code of the finding for draft values on a
// lower-precision grid.
const FindingQuantized = "draft-values-quantized"

// FindingInconclusive is the code of the warning that every tensor tested
// came out inconclusive, so that the test says nothing either way.
const FindingInconclusive = "deep-inconclusive"

// Audit runs the value test on the given tensors within the budget.
// Tensors stored in dtypes other than BF16, F16 and F32 are skipped (their
// precision is in the header), and so are quantization scales and tensors
// too narrow for one block. Errors name the file and tensor.
func Audit(tensors []Tensor, opt Options) (*Report, error) {
	budget := opt.Budget
	if budget <= 0 {
		budget = DefaultBudget
	}
	rep := &Report{BudgetBytes: budget}
	r := newBudgetReader(budget)
	defer r.Close() // only used to check files; workers read with their own

	type job struct {
		t     *Tensor
		st    *storage
		index int // in tensors
	}
	var jobs []job
	for i := range tensors {
		t := &tensors[i]
		st, err := storageFor(t.DType)
		if err != nil || !worthTesting(t) {
			continue
		}
		if err := validate(t, st, r); err != nil {
			return nil, err
		}
		jobs = append(jobs, job{t, st, i})
	}
	// Smallest first, each taking an equal part of what is left, so that
	// small tensors' unused shares go to the large ones.
	slices.SortStableFunc(jobs, func(a, b job) int {
		return cmpInt64(a.t.End-a.t.Begin, b.t.End-b.t.Begin)
	})
	plans := make([]*plan, len(jobs))
	left := budget
	for i, j := range jobs {
		plans[i] = newPlan(j.t, j.st, left/int64(len(jobs)-i), budget)
		left -= plans[i].bytes()
	}
	results, err := runPlans(plans, r, opt.Progress)
	if err != nil {
		return nil, err
	}
	byInput := make([]*TensorResult, len(tensors))
	for i, j := range jobs {
		byInput[j.index] = results[i]
	}
	for _, res := range byInput {
		if res != nil {
			rep.Tensors = append(rep.Tensors, *res)
			rep.BytesRead += res.BytesRead
		}
	}
	rep.Modules = modules(rep.Tensors)
	for _, m := range rep.Modules {
		if m.Grid == "" || m.Grid == "none" {
			continue
		}
		rep.Findings = append(rep.Findings, quantizedFinding(m, rep.Tensors))
	}
	if f, ok := inconclusiveFinding(rep.Tensors); ok {
		rep.Findings = append(rep.Findings, f)
	}
	return rep, nil
}

// inconclusiveFinding warns when tensors were tested and none got a
// verdict: without it, a report of "N tensors tested" and no finding reads
// as a pass.
func inconclusiveFinding(ts []TensorResult) (Finding, bool) {
	few, weak := 0, 0
	for _, t := range ts {
		switch t.Verdict {
		case VerdictInconclusive:
			few++
		case VerdictWeak:
			weak++
		default:
			return Finding{}, false
		}
	}
	if len(ts) == 0 {
		return Finding{}, false
	}
	return Finding{
		Code:     FindingInconclusive,
		Severity: finding.Warning,
		Message: fmt.Sprintf("the deep value test concluded nothing: all %d tensors tested are inconclusive (%d with fewer than %d distinct nonzero magnitudes or %d informative blocks, as all-zero or constant placeholder weights have; %d fit a coarse grid too weakly to tell). "+
			"This is not a pass: the values neither confirm nor refute the stored precision. Run --deep on the real weights (a checkpoint written with zero or dummy weights holds no evidence)",
			len(ts), few, minDistinct, minBlocks, weak),
	}, true
}

// runPlans runs the plans on up to four goroutines, each reading with its
// own file handles under the shared budget.
func runPlans(plans []*plan, check *budgetReader, progress func(int, int, string)) ([]*TensorResult, error) {
	results := make([]*TensorResult, len(plans))
	var mu sync.Mutex
	var firstErr error
	next, done := 0, 0
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), 4, max(len(plans), 1)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := check.sibling()
			defer r.Close()
			w := newWorker(r)
			for {
				mu.Lock()
				if next == len(plans) || firstErr != nil {
					mu.Unlock()
					return
				}
				i, p := next, plans[next]
				next++
				mu.Unlock()
				res, err := w.runPlanSafely(p)
				mu.Lock()
				if err != nil && firstErr == nil {
					firstErr = err
				}
				if err == nil {
					results[i] = res
					done++
					if progress != nil {
						progress(done, len(plans), p.t.Name)
					}
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return results, firstErr
}

// runPlanSafely turns a panic in a worker goroutine (which the command's
// recover cannot see) into an error naming the tensor.
func (w *worker) runPlanSafely(p *plan) (res *TensorResult, err error) {
	defer func() {
		if v := recover(); v != nil {
			res, err = nil, fmt.Errorf("%s: tensor %s: internal error: %v", p.t.Path, p.t.Name, v)
		}
	}()
	return w.runPlan(p)
}

func cmpInt64(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// worthTesting leaves out tensors that cannot hold one 16-value block along
// their last dimension, and the scales of quantized weights (".weight_scale",
// ".input_scale", ...), which are metadata rather than weights.
func worthTesting(t *Tensor) bool {
	if len(t.Shape) == 0 || t.Shape[len(t.Shape)-1] < 16 {
		return false
	}
	last := t.Name[strings.LastIndexByte(t.Name, '.')+1:]
	return !strings.Contains(last, "scale")
}

// validate checks the tensor's byte range against its shape and the file.
func validate(t *Tensor, st *storage, r *budgetReader) error {
	n := int64(1)
	for _, d := range t.Shape {
		if d < 0 || (d > 0 && n > math.MaxInt64/8/d) {
			return fmt.Errorf("%s: tensor %s: bad shape %v", t.Path, t.Name, t.Shape)
		}
		n *= d
	}
	if t.Begin < 0 || t.End-t.Begin != n*int64(st.size) {
		return fmt.Errorf("%s: tensor %s: byte range [%d, %d) does not hold %d %s values", t.Path, t.Name, t.Begin, t.End, n, t.DType)
	}
	size, err := r.fileSize(t.Path)
	if err != nil {
		return fmt.Errorf("tensor %s: %w", t.Name, err)
	}
	if t.End > size {
		return fmt.Errorf("%s: tensor %s ends at byte %d, past the end of the file (%d bytes)", t.Path, t.Name, t.End, size)
	}
	return nil
}

// gridStats accumulates one grid's evidence over a tensor.
type gridStats struct {
	g                   *grid
	informative, onGrid int
	untestable          int // blocks too dense on this grid's scale to test
	// planned is the number of blocks the plan reads for this grid: once
	// more than half are tested and none was on the grid, the rest of the
	// tensor is not tested against it.
	planned int
	// chances counts blocks by their log chance bound, rounded up to the
	// next multiple of chanceStep (a histogram: no exp per block).
	chances []int64
	// used is one past the highest bucket counted since the last reset, so
	// that reset clears only what was touched; chances grows to the
	// highest bucket ever counted (allocating and clearing all 4000 for
	// every grid made a small audit cost milliseconds).
	used      int
	residuals []float64
	scales    []scaleRec
}

type scaleRec struct {
	lo, hi float64
	tile   int // which 128x128 tile of the sample the block came from
}

const (
	maxResiduals = 16
	maxDistinct  = 256
	maxScales    = 4096
)

// groupSizes are the group sizes of the grids, each twice the one before,
// so that block summaries are built by merging halves.
var groupSizes = func() []int {
	var gs []int
	for _, g := range grids {
		if !slices.Contains(gs, g.group) {
			gs = append(gs, g.group)
		}
	}
	slices.Sort(gs)
	for i := 1; i < len(gs); i++ {
		if gs[i] != 2*gs[i-1] {
			panic("deep: grid group sizes must double")
		}
	}
	return gs
}()

// A worker holds the buffers and statistics one goroutine reuses from
// tensor to tensor, so that auditing hundreds of tensors does not churn
// the heap.
type worker struct {
	r        *budgetReader
	stats    []*gridStats
	rowBuf   []byte
	elems    []elem
	sums     map[int][]summary
	f        fitter
	scratch  []float64
	distinct map[float64]struct{}
}

func newWorker(r *budgetReader) *worker {
	w := &worker{r: r, sums: map[int][]summary{}, distinct: map[float64]struct{}{}}
	for _, g := range grids {
		w.stats = append(w.stats, &gridStats{g: g})
	}
	return w
}

func (w *worker) runPlan(p *plan) (*TensorResult, error) {
	res := &TensorResult{Name: p.t.Name, DType: p.t.DType}
	for _, s := range w.stats {
		s.reset()
		if p.tile > 0 && int(p.tile)%s.g.group == 0 {
			s.planned = len(p.units) * int(p.height*p.width) / s.g.group
		}
	}
	stats, sums, distinct, r := w.stats, w.sums, w.distinct, w.r
	clear(distinct)
	w.rowBuf = slices.Grow(w.rowBuf[:0], int(p.width)*p.st.size)[:p.width*int64(p.st.size)]
	w.elems = slices.Grow(w.elems[:0], int(p.width))[:p.width]
	rowBuf, elems := w.rowBuf, w.elems
	before := r.read
	tilesPerUnit := 0
	if len(p.units) > 0 {
		tilesPerUnit = int(p.width / p.tile)
	}
	for ui, u := range p.units {
		if ui > 0 && allSettled(stats) {
			break // every grid is already ruled out: the rest is not read
		}
		for row := range p.height {
			if err := r.readAt(p.t.Path, rowBuf, p.rowOffset(u, row)); err != nil {
				return nil, fmt.Errorf("tensor %s: %w", p.t.Name, err)
			}
			if !p.st.decodeElems(rowBuf, elems) {
				continue
			}
			res.ValuesTested += int64(len(elems))
			for _, e := range elems {
				if len(distinct) >= maxDistinct {
					break
				}
				if e.v != 0 {
					distinct[math.Abs(e.v)] = struct{}{}
				}
			}
			for k, g := range groupSizes {
				ss := sums[g][:0]
				switch {
				case int(p.tile)%g != 0:
				case k == 0:
					for b := 0; b < len(elems); b += g {
						ss = append(ss, summarize(elems[b:b+g]))
					}
				default:
					half := sums[groupSizes[k-1]]
					for i := 0; i+1 < len(half); i += 2 {
						b := i * g / 2
						ss = append(ss, merge(elems[b:b+g], half[i], half[i+1], g/2))
					}
				}
				sums[g] = ss
			}
			for _, s := range stats {
				ss := sums[s.g.group]
				for i := range ss {
					b := i * s.g.group
					tile := ui*tilesPerUnit + b/int(p.tile)
					s.add(&w.f, elems[b:b+s.g.group], &ss[i], tile, &w.scratch)
				}
			}
		}
	}
	res.BytesRead = r.read - before
	res.DistinctValues = len(distinct)
	decide(res, stats, p)
	return res, nil
}

// settled reports whether more than half the planned blocks were tested
// and none was on the grid: genuine values, as far as this grid goes.
func (s *gridStats) settled() bool { return s.onGrid == 0 && 2*s.informative > s.planned }

// allSettled reports whether every grid that the plan tests is settled.
func allSettled(stats []*gridStats) bool {
	for _, s := range stats {
		if s.planned > 0 && !s.settled() {
			return false
		}
	}
	return true
}

func (s *gridStats) reset() {
	s.informative, s.onGrid, s.untestable, s.planned = 0, 0, 0, 0
	clear(s.chances[:s.used])
	s.used = 0
	s.residuals, s.scales = s.residuals[:0], s.scales[:0]
}

func (s *gridStats) add(f *fitter, block []elem, sum *summary, tile int, scratch *[]float64) {
	if s.settled() {
		return
	}
	ft := f.test(s.g, block, sum)
	if ft.untestable {
		s.untestable++
	}
	if !ft.informative {
		return
	}
	s.informative++
	s.addChance(ft.logChance)
	scale := 0.0
	if ft.onGrid {
		s.onGrid++
		scale = (ft.scaleLo + ft.scaleHi) / 2
		if len(s.scales) < maxScales {
			s.scales = append(s.scales, scaleRec{ft.scaleLo, ft.scaleHi, tile})
		}
	}
	if len(s.residuals) < maxResiduals {
		if scale == 0 { // off the grid: measure against the top anchor
			scale = s.g.referenceScale(block)
		}
		if scale > 0 {
			s.residuals = append(s.residuals, s.g.residual(block, scale, scratch))
		}
	}
}

// referenceScale is the scale a quantizer would pick for the block: the
// largest magnitude on the top anchor (the span for asymmetric grids).
func (g *grid) referenceScale(block []elem) float64 {
	lo, hi, amax := math.Inf(1), math.Inf(-1), 0.0
	for _, e := range block {
		lo, hi, amax = min(lo, e.v), max(hi, e.v), max(amax, math.Abs(e.v))
	}
	top := g.anchors[len(g.anchors)-1]
	if g.asym {
		return (hi - lo) / top
	}
	return amax / top
}

// Chance histogram: bucket i holds blocks with log chance bound in
// (-(i+1)*chanceStep, -i*chanceStep]; the last bucket takes everything
// lower. Reading a block as its bucket's upper edge keeps the sum an
// upper bound, at most exp(chanceStep) times the exact one.
const (
	chanceStep    = 0.5
	chanceBuckets = 4000 // down to log chance -2000 (1e-868)
)

func (s *gridStats) addChance(l float64) {
	i := chanceBuckets - 1
	if l > -chanceStep*(chanceBuckets-1) {
		i = int(-l / chanceStep)
	}
	if i >= len(s.chances) {
		// grown on demand: most tensors touch a few dozen buckets
		s.chances = append(s.chances, make([]int64, i+1-len(s.chances))...)
	}
	s.chances[i]++
	s.used = max(s.used, i+1)
}

// logSumChance is the log of the (upper-bounded) sum of chance bounds.
func (s *gridStats) logSumChance() float64 {
	top := -1
	for i, c := range s.chances[:s.used] {
		if c > 0 {
			top = i
			break
		}
	}
	if top < 0 {
		return math.Inf(-1)
	}
	sum := 0.0 // in units of exp(-top*chanceStep)
	for i := top; i < s.used; i++ {
		if c := s.chances[i]; c > 0 {
			sum += float64(c) * math.Exp(-float64(i-top)*chanceStep)
		}
	}
	return -float64(top)*chanceStep + math.Log(sum)
}

// Thresholds of the verdict.
const (
	minBlocks      = 4     // informative blocks needed for any verdict
	minDistinct    = 8     // distinct nonzero magnitudes needed
	onGridMajority = 0.5   // fraction on a grid that, without strong evidence, makes a verdict inconclusive
	wholeTensor    = 0.99  // fraction below which a quantized verdict says "partly"
	fractionSlack  = 0.005 // grids this close to the best fraction compete on cost
	maxFalseAlarm  = -9.0  // log10 bound needed to call a grid
)

// falseAlarmLog10 bounds log10 P(at least k of the blocks land on the grid
// by chance) by e_k(p) <= (sum p)^k / k!, where p are the blocks' chance
// bounds and e_k the elementary symmetric polynomial (the sum over all
// k-sets of blocks).
func (s *gridStats) falseAlarmLog10() float64 {
	k := float64(s.onGrid)
	if k == 0 {
		return 0
	}
	lgk, _ := math.Lgamma(k + 1)
	logSum := s.logSumChance()
	v := (k*logSum - lgk) / math.Ln10
	if math.IsInf(v, -1) || v < -1e6 {
		v = -1e6
	}
	return min(0, v)
}

func decide(res *TensorResult, stats []*gridStats, p *plan) {
	// Grids whose on-grid blocks are too many to be chance are candidates
	// (also when they hold only part of the tensor); among those close to
	// the best fraction, the cheapest format wins, then the strongest
	// evidence.
	var cands []*gridStats
	weak := false
	maxInformative, bestFrac := 0, 0.0
	for _, s := range stats {
		maxInformative = max(maxInformative, s.informative)
		if s.informative < minBlocks || s.onGrid == 0 {
			continue
		}
		if s.falseAlarmLog10() > maxFalseAlarm {
			weak = weak || s.fraction() >= onGridMajority
			continue
		}
		cands = append(cands, s)
		bestFrac = max(bestFrac, s.fraction())
	}
	var best *gridStats
	for _, s := range cands {
		if s.fraction() < bestFrac-fractionSlack {
			continue
		}
		if best == nil || s.g.bits < best.g.bits || (s.g.bits == best.g.bits && s.falseAlarmLog10() < best.falseAlarmLog10()) {
			best = s
		}
	}
	switch {
	case res.DistinctValues < minDistinct || maxInformative < minBlocks:
		// Few distinct values fit some grid whatever their origin.
		res.Verdict = VerdictInconclusive
	case best != nil:
		res.Verdict, res.Grid, res.GroupSize = best.g.label, best.g.code, best.g.group
		res.FalseAlarmLog10 = best.falseAlarmLog10()
		res.Detail = scaleDetail(best, p)
		switch res.Detail { // the scales tell the MX formats apart
		case detailMXFP8:
			res.Verdict, res.Grid = "values on an MXFP8 grid", "mxfp8"
		case detailMXFP4:
			res.Verdict, res.Grid = "values on an MXFP4 grid", "mxfp4"
		case detailFP4Other:
			res.Verdict, res.Grid = "values on an FP4 (E2M1) grid", "fp4"
		}
		fill(res, best)
		if res.OnGridFraction < wholeTensor {
			res.Verdict += fmt.Sprintf(" (partly: %.0f%% of blocks)", math.Floor(100*res.OnGridFraction))
		}
	case weak:
		res.Verdict = VerdictWeak
	default:
		res.Verdict, res.Grid = GenuineVerdict(res.DType), "none"
		closest := stats[0]
		for _, s := range stats {
			if s.informative >= minBlocks && s.fraction() > closest.fraction() {
				closest = s
			}
		}
		res.ClosestGrid = closest.g.code
		fill(res, closest)
		var untested []string
		for _, s := range stats {
			if s.untestable > s.informative && !slices.Contains(untested, s.g.code) {
				untested = append(untested, s.g.code)
			}
		}
		if len(untested) > 0 {
			res.Detail = "not testable against " + strings.Join(untested, ", ") + ": values too dense on that grid's scale"
		}
	}
}

func (s *gridStats) fraction() float64 {
	if s.informative == 0 {
		return 0
	}
	return float64(s.onGrid) / float64(s.informative)
}

func fill(res *TensorResult, s *gridStats) {
	res.BlocksTested = s.informative
	res.OnGridFraction = s.fraction()
	res.MedianResidualULP = median(s.residuals)
}

func median(x []float64) float64 {
	if len(x) == 0 {
		return 0
	}
	y := slices.Clone(x)
	slices.Sort(y)
	return y[len(y)/2]
}

var expertIndex = regexp.MustCompile(`\.(experts?|local_experts)\.\d+\.`)

// ModuleOf names the module a tensor belongs to: its name without the last
// component, with per-expert indices collapsed ("experts.*").
func ModuleOf(name string) string {
	m := expertIndex.ReplaceAllString(name, ".$1.*.")
	if i := strings.LastIndexByte(m, '.'); i > 0 {
		return m[:i]
	}
	return m
}

// modules folds tensor verdicts: a module is quantized if any of its
// tensors is (the strongest evidence wins), genuine if any is genuine and
// none quantized, otherwise inconclusive.
func modules(ts []TensorResult) []ModuleResult {
	byName := map[string]*ModuleResult{}
	strength := map[string]float64{}
	var order []string
	for _, t := range ts {
		name := ModuleOf(t.Name)
		m, ok := byName[name]
		if !ok {
			m = &ModuleResult{Name: name, Verdict: VerdictInconclusive}
			byName[name] = m
			order = append(order, name)
		}
		m.Tensors = append(m.Tensors, t.Name)
		switch {
		case t.Quantized():
			if m.Grid == "" || m.Grid == "none" || t.FalseAlarmLog10 < strength[name] {
				m.Verdict, m.Grid, strength[name] = t.Verdict, t.Grid, t.FalseAlarmLog10
			}
		case t.Grid == "none" && m.Grid == "":
			m.Verdict, m.Grid = t.Verdict, t.Grid
		}
	}
	sort.Strings(order)
	out := make([]ModuleResult, 0, len(order))
	for _, n := range order {
		out = append(out, *byName[n])
	}
	return out
}

func quantizedFinding(m ModuleResult, ts []TensorResult) Finding {
	var worst *TensorResult
	for i := range ts {
		t := &ts[i]
		if ModuleOf(t.Name) == m.Name && t.Grid == m.Grid && (worst == nil || t.FalseAlarmLog10 < worst.FalseAlarmLog10) {
			worst = t
		}
	}
	return Finding{
		Code:     FindingQuantized,
		Severity: finding.Error,
		Location: worst.Name,
		Message: fmt.Sprintf("draft module %s is stored as %s but %s: %d of %d blocks of %s on the grid, median residual %.2f code steps, false-alarm probability %s. "+
			"The draft was quantized (or upcast from a quantized release) and written back as %s, so its real precision is that grid's, not %s. "+
			"Ship the draft's original high-precision weights, or keep the quantized tensors in their own format so that the header says what the engine will serve",
			m.Name, worst.DType, lowerFirst(worst.Verdict), int(math.Round(worst.OnGridFraction*float64(worst.BlocksTested))), worst.BlocksTested,
			worst.Name, worst.MedianResidualULP, FormatProbability(worst.FalseAlarmLog10), worst.DType, worst.DType),
	}
}

func lowerFirst(s string) string {
	return "its " + strings.Replace(s, "values on", "values sit on", 1)
}

// FormatProbability writes a log10 probability bound as "< 1e-40".
func FormatProbability(log10 float64) string {
	if log10 >= -1 {
		return fmt.Sprintf("<= %.2g", math.Pow(10, log10))
	}
	return "< 1e" + strconv.Itoa(int(math.Floor(log10+1e-9))+1)
}
