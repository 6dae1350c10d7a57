package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/specsim/specsim/internal/regular"

	"github.com/specsim/specsim/kernels"
)

func init() {
	register(&command{
		name:    "kernels",
		summary: "price one op on one GPU (GEMM, MoE, attention, GDN, collectives), list GPUs, validate against measurements",
		run:     runKernels,
	})
}

const kernelsHelp = `usage: specsim kernels <predict|validate|gpus|efficiencies|backends> [flags]

  predict       latency of one op (shape flags) or of every row of a CSV (--input)
  validate      fit on part of the measured table, report the error on the rest
  gpus          the GPU catalog (datasheet figures and their sources)
  efficiencies  the fitted (or carried-over) efficiencies each op class is priced with
  backends      MoE runner backends per engine: accepted weight formats, fallbacks

Run "specsim kernels <sub> --help" for flags.

Examples:
  specsim kernels predict --gpu h200 --op gemm --dtype fp8 --m 64 --n 7168 --k 2048
  specsim kernels validate --gpu h200
  specsim kernels backends --engine sglang --gpu gb300`

func runKernels(args []string, stdout, stderr io.Writer) int {
	return subcommands("kernels", kernelsHelp, map[string]func([]string, io.Writer, io.Writer) int{
		"predict":      runKernelsPredict,
		"validate":     runKernelsValidate,
		"gpus":         runKernelsGPUs,
		"backends":     runKernelsBackends,
		"efficiencies": runKernelsEfficiencies,
	}, args, stdout, stderr)
}

// gpuCatalogFlag is --gpu-catalog FILE: a YAML file in the schema of
// kernels/data/gpus.yaml whose GPUs replace or extend the embedded catalog.
// Other commands that take --gpu add it with addGPUCatalogFlag and call
// load() after parsing.
type gpuCatalogFlag struct{ path string }

func addGPUCatalogFlag(fs *flag.FlagSet) *gpuCatalogFlag {
	f := &gpuCatalogFlag{}
	fs.StringVar(&f.path, "gpu-catalog", "", "YAML `FILE` of GPUs (schema of kernels/data/gpus.yaml) replacing or adding to the built-in catalog")
	return f
}

// load returns the embedded catalog, merged with --gpu-catalog's file.
func (f *gpuCatalogFlag) load() (*kernels.Catalog, error) {
	if f.path == "" {
		return kernels.DefaultCatalog(), nil
	}
	return kernels.LoadCatalogFile(f.path)
}

// lookup loads the catalog and finds a GPU in it.
func (f *gpuCatalogFlag) lookup(name string) (*kernels.GPU, *kernels.Catalog, error) {
	c, err := f.load()
	if err != nil {
		return nil, nil, err
	}
	g, err := c.Lookup(name)
	return g, c, err
}

// shapeFlags are the CSV columns as flags.
type shapeFlags struct {
	row                      kernels.OpRow
	dtype                    string
	gpus                     int
	bytes                    float64
	collective               string
	moeKernel                string
	skew                     float64
	ep                       int
	prefill, mla, noIntermed bool
	gdnMode, stateDType      string
	dims                     []dimFlag // the dimension flags, in flag order
}

type dimFlag struct {
	name string
	p    *int
}

// maxShapeDim bounds every shape flag: 2^27 = 134,217,728 is the bound the
// audit puts on max_position_embeddings (audit/model/bounds.go), the largest
// dimension a model config may carry; a token count, width or head count
// beyond it prices no real forward. --n of copy counts bytes instead, up to
// kernels' table bound of 2^40.
const maxShapeDim = 1 << 27

// checkDims rejects shape flags out of bounds; head counts that do not
// group are the kernels package's ShapeError.
func (s *shapeFlags) checkDims(op string) error {
	for _, d := range s.dims {
		limit := maxShapeDim
		if d.name == "n" && op == "copy" {
			limit = 1 << 40
		}
		if *d.p < 0 || *d.p > limit {
			return fmt.Errorf("--%s %d: want 0..%d", d.name, *d.p, limit)
		}
	}
	// The tokens of one forward are bounded as one dimension is.
	if r := s.row; int64(r.Batch)*int64(r.QLen) > maxShapeDim {
		return fmt.Errorf("--batch %d x --q-len %d = %d tokens in one forward: want at most %d", r.Batch, r.QLen, int64(r.Batch)*int64(r.QLen), maxShapeDim)
	}
	return nil
}

func addShapeFlags(fs *flag.FlagSet) *shapeFlags {
	s := &shapeFlags{}
	r := &s.row
	fs.StringVar(&s.dtype, "dtype", "bf16", "weight dtype (GEMM, MoE, lm_head) or KV-cache dtype (attention): bf16|fp8|nvfp4|int8|int4")
	for _, d := range []struct {
		name string
		p    *int
		help string
	}{
		{"m", &r.M, "GEMM rows (tokens)"}, {"n", &r.N, "GEMM output features (lm_head: vocab; copy: bytes)"},
		{"k", &r.K, "GEMM input features"}, {"tokens", &r.Tokens, "MoE / rmsnorm tokens"},
		{"experts", &r.Experts, "MoE experts on this GPU"}, {"topk", &r.TopK, "experts per token"},
		{"hidden", &r.Hidden, "hidden size"}, {"inter", &r.Inter, "MoE expert intermediate size (per GPU shard)"},
		{"batch", &r.Batch, "sequences"}, {"q-len", &r.QLen, "new tokens per sequence (1 decode, k+1 verify)"},
		{"kv-len", &r.KVLen, "cached tokens per sequence (including the new ones)"}, {"heads", &r.Heads, "query heads (GDN: value heads)"},
		{"kv-heads", &r.KVHeads, "KV heads (GDN: key heads)"}, {"head-dim", &r.HeadDim, "head dimension"},
	} {
		fs.IntVar(d.p, d.name, 0, d.help)
		s.dims = append(s.dims, dimFlag{d.name, d.p})
	}
	fs.IntVar(&s.gpus, "gpus", 0, "collective: GPUs taking part")
	fs.Float64Var(&s.bytes, "bytes", 0, "collective: per-GPU message in bytes")
	fs.StringVar(&s.collective, "collective", "allreduce", "collective: allreduce|allgather|reducescatter|alltoall")
	fs.Float64Var(&s.skew, "skew", 0, "MoE: Zipf exponent of expert popularity (0 uniform)")
	fs.IntVar(&s.ep, "ep", 1, "MoE: expert-parallel size; above 1 the shape is one EP rank: --experts its own, --topk the layer's over experts x ep, --tokens the whole batch")
	fs.StringVar(&s.moeKernel, "moe-kernel", string(kernels.MoETorchGrouped), "MoE: torch-grouped (the measured H200 reference path), fused (an engine's fused kernels, what simulate prices) or triton (SGLang's Triton fused MoE, from moe_triton.csv where measured)")
	fs.BoolVar(&s.prefill, "prefill", false, "attention: causal prefill over q-len new tokens")
	fs.BoolVar(&s.mla, "mla", false, "attention: MLA latent KV (head-dim = kv_lora_rank + rope dim)")
	fs.BoolVar(&s.noIntermed, "no-intermediate", false, "gdn: the reference recurrent kernel without per-token states (the pre-mode pricing of a prefill chunk)")
	fs.StringVar(&s.gdnMode, "mode", "", "gdn: prefill|verify|decode (default from --q-len: 1 decode, 2-16 verify, longer prefill)")
	fs.StringVar(&s.stateDType, "state-dtype", "fp32", "gdn: recurrent state dtype, fp32|bf16 (SGLang --mamba-ssm-dtype)")
	return s
}

type kernelPrediction struct {
	GPU       string  `json:"gpu"`
	Op        string  `json:"op"`
	MoEKernel string  `json:"moe_kernel,omitempty"`
	DType     string  `json:"dtype,omitempty"`
	LatencyUS float64 `json:"latency_us"`
	Source    string  `json:"source"`
	Bound     string  `json:"bound"`
	Bytes     float64 `json:"bytes"`
	FLOPs     float64 `json:"flops"`
	Note      string  `json:"note,omitempty"`
	// gdn: the mode, the engine kernel measured, its state dtype and eager wall time
	Mode       string  `json:"mode,omitempty"`
	Kernel     string  `json:"kernel,omitempty"`
	StateDType string  `json:"state_dtype,omitempty"`
	EagerUS    float64 `json:"eager_us,omitempty"`
}

type rowPrediction struct {
	Row        int     `json:"row"`
	Op         string  `json:"op"`
	LatencyUS  float64 `json:"latency_us"`
	Source     string  `json:"source"`
	Bound      string  `json:"bound"`
	MeasuredUS float64 `json:"measured_us,omitempty"`
}

const kernelsPredictHelp = `specsim kernels predict: the latency of one op on one GPU.

Prices the op with the measured table of that GPU where one covers the shape
("measured-interpolated"; "measured-extrapolated" outside an engine kernel
table's measured range), else the roofline with efficiencies fitted to the
measurements ("roofline"), or, for GPUs without tables, the H200-fitted
efficiencies carried over by datasheet ratios ("roofline-carried-over").
Latency in microseconds; bytes moved and FLOPs alongside.

Ops: gemm (--m --n --k), moe (--tokens --experts --topk --hidden --inter;
--moe-kernel torch-grouped prices the PyTorch path the H200 table measured,
fused an engine's fused kernels; --ep N prices one rank of N-way expert
parallelism: --experts its own, --topk the layer's over experts x N,
--tokens the whole batch, bytes and FLOPs of its own picks, from a measured
table of that EP size where one exists; past that table's token range, e.g.
a prefill chunk beyond moe_triton_ep8.csv's 1-512 tokens, from the measured
line of the TP shard with the same expert work per rank, all experts at
--inter/N ("measured-tp-equivalent"), as the simulation prices it; uniform
routing only),
attention (--batch --q-len --kv-len --heads --kv-heads --head-dim), gdn
(--batch --q-len --heads --kv-heads --head-dim), rmsnorm (--tokens --hidden),
lm_head (--m tokens --n vocab --k hidden), copy (--n bytes), collective
(--collective allreduce --gpus --bytes).

With --input FILE.csv every row (columns op,dtype,m,n,k,tokens,experts,topk,
hidden,inter,batch,q_len,kv_len,heads,kv_heads,head_dim; empty cells allowed,
extra columns are not read and named on stderr; each cell bounded as its flag) is predicted; JSON
"predictions" in row order.

gdn --mode prefill|verify|decode picks the engine kernel (SGLang's chunked
prefill, MTP verify with intermediate states, decode; default from --q-len:
1 decode, 2-16 verify, longer prefill) and --state-dtype fp32|bf16 its state;
where the GPU has measured tables (the H200) both GPU time under a CUDA graph
and the eager wall time SGLang's eager prefill pays are shown.

--kernel-table FILE (repeatable) prices from AIConfigurator's measured kernel
databases (ai-dynamo/aiconfigurator systems/data/<gpu>/<framework>/<version>/
*_perf.txt: gemm, moe, generation_attention, gdn, all_reduce rows; latency in
ms) measured on the --gpu given.

Examples:
  specsim kernels predict --gpu h200 --op gdn --mode prefill --batch 1 --q-len 4096 --heads 16 --kv-heads 4 --head-dim 128
  specsim kernels predict --gpu h200 --op moe --moe-kernel triton --tokens 64 --experts 512 --topk 10 --hidden 4096 --inter 256
  specsim kernels predict --gpu h200 --op moe --moe-kernel triton --dtype fp8 --tokens 64 --experts 64 --topk 10 --hidden 4096 --inter 1024 --ep 8
  specsim kernels predict --gpu b200 --kernel-table moe_perf.txt --op moe --moe-kernel fused --tokens 16 --experts 512 --topk 10 --hidden 4096 --inter 256
  specsim kernels predict --gpu h200 --op gemm --dtype fp8 --m 64 --n 7168 --k 2048
  specsim kernels predict --gpu gb300 --op collective --collective allreduce --gpus 8 --bytes 1048576 --json
  specsim kernels predict --gpu h200 --input shapes.csv --json`

func runKernelsPredict(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("kernels predict", kernelsPredictHelp, stderr)
	gpuName := fs.String("gpu", "h200", "GPU name from the catalog (specsim kernels gpus)")
	op := fs.String("op", "", "gemm|moe|attention|gdn|rmsnorm|lm_head|copy|collective")
	input := fs.String("input", "", "CSV `FILE` of shapes to predict, one per row")
	tablePath := fs.String("table", "", "measured op CSV `FILE` to calibrate on instead of the embedded table")
	collPath := fs.String("collective-table", "", "measured collectives CSV `FILE` to calibrate collectives on (this build embeds no measured collective table)")
	var aicPaths pathList
	fs.Var(&aicPaths, "kernel-table", "AIConfigurator kernel database `FILE` (gemm_perf.txt, moe_perf.txt, generation_attention_perf.txt, gdn_perf.txt, custom_allreduce_perf.txt; repeatable) to price from")
	shape := addShapeFlags(fs)
	cat := addGPUCatalogFlag(fs)
	ff := addFormatFlags(fs)
	if _, err := parseFlags(fs, args); err != nil {
		return usageExit(err)
	}
	format, err := ff.resolve()
	if err != nil {
		fmt.Fprintln(stderr, "specsim kernels predict:", err)
		return exitBadInput
	}
	stdout = textOut(stdout, format)
	coster, err := kernelsCoster(*gpuName, cat, *tablePath, *collPath)
	if err != nil {
		fmt.Fprintln(stderr, "specsim kernels predict:", err)
		return exitBadInput
	}
	if len(aicPaths) > 0 {
		if *tablePath != "" || *collPath != "" {
			fmt.Fprintln(stderr, "specsim kernels predict: --kernel-table excludes --table and --collective-table")
			return exitBadInput
		}
		imp, err := kernels.ReadAICFiles(aicPaths)
		if err == nil {
			err = imp.CheckDevice(coster.GPU().Name)
		}
		if err != nil {
			fmt.Fprintln(stderr, "specsim kernels predict:", flagError(err))
			return exitBadInput
		}
		coster = kernels.CosterFromAIC(coster.GPU(), imp)
		fmt.Fprintf(stderr, "specsim kernels predict: %d rows from %s; skipped: %s\n", imp.Rows, strings.Join(aicPaths, ", "), imp.SkippedText())
	}
	if *input != "" {
		return predictFile(coster, *input, format, stdout, stderr)
	}
	if *op == "" {
		fmt.Fprintln(stderr, "specsim kernels predict: --op or --input is required")
		return exitBadInput
	}
	p, err := predictOne(coster, *op, shape)
	if err != nil {
		fmt.Fprintln(stderr, "specsim kernels predict:", err)
		return exitBadInput
	}
	if p.Source != kernels.SourceMeasured && p.Source != kernels.SourceExtrapolated && p.Note == "" {
		p.Note = coster.Calibration()
	}
	if format == formatJSON {
		if err := writeJSON(stdout, p); err != nil {
			return exitBadInput
		}
		return exitOK
	}
	t := &table{header: []string{"gpu", "op", "dtype", ">latency_us", "source", "bound", ">bytes_MB", ">GFLOP"}}
	opName := p.Op
	if p.MoEKernel != "" {
		opName += " (" + p.MoEKernel + ")"
	}
	if p.Mode != "" {
		t = &table{header: []string{"gpu", "op", "mode", "state", ">gpu_us (graph)", ">eager_us", "source", "kernel", ">bytes_MB"}}
		eager := "-"
		if p.EagerUS > 0 {
			eager = fmt.Sprintf("%.2f", p.EagerUS)
		}
		kern := p.Kernel
		if kern == "" {
			kern = "reference model"
		}
		t.add(p.GPU, opName, p.Mode, p.StateDType, fmt.Sprintf("%.2f", p.LatencyUS), eager, p.Source, kern, fmt.Sprintf("%.3f", p.Bytes/1e6))
	} else {
		t.add(p.GPU, opName, p.DType, fmt.Sprintf("%.2f", p.LatencyUS), p.Source, p.Bound,
			fmt.Sprintf("%.3f", p.Bytes/1e6), fmt.Sprintf("%.3f", p.FLOPs/1e9))
	}
	t.write(stdout, format)
	if p.Note != "" {
		fmt.Fprintln(stdout, "\nnote:", p.Note)
	}
	return exitOK
}

func kernelsCoster(name string, cat *gpuCatalogFlag, table, collTable string) (*kernels.Coster, error) {
	g, c, err := cat.lookup(name)
	if err != nil {
		return nil, err
	}
	if table == "" && collTable == "" {
		if err := c.Calibrations().Err(g.Name); err != nil {
			return nil, fmt.Errorf("embedded tables for %s: %v", g.Name, err)
		}
		return kernels.NewCoster(g), nil
	}
	ops, colls, err := readTables(table, collTable)
	if err != nil {
		return nil, err
	}
	return kernels.NewCosterFromTables(g, ops, colls), nil
}

func readTables(table, collTable string) (*kernels.OpTable, *kernels.CollectiveTable, error) {
	var ops *kernels.OpTable
	var colls *kernels.CollectiveTable
	if table != "" {
		data, err := readBounded(table)
		if err != nil {
			return nil, nil, err
		}
		if ops, err = kernels.ParseOpTable(table, data, true); err != nil {
			return nil, nil, err
		}
	}
	if collTable != "" {
		data, err := readBounded(collTable)
		if err != nil {
			return nil, nil, err
		}
		if colls, err = kernels.ParseCollectiveTable(collTable, data); err != nil {
			return nil, nil, err
		}
	}
	return ops, colls, nil
}

// readBounded reads a table file of at most kernels.MaxTableBytes.
func readBounded(path string) ([]byte, error) {
	return regular.ReadFile(path, kernels.MaxTableBytes)
}

func predictOne(c *kernels.Coster, op string, s *shapeFlags) (kernelPrediction, error) {
	dt, err := kernels.ParseDType(s.dtype)
	if err != nil {
		return kernelPrediction{}, fmt.Errorf("--dtype: %v", err)
	}
	if err := s.checkDims(strings.ToLower(op)); err != nil {
		return kernelPrediction{}, err
	}
	if s.ep < 1 || s.ep > 1<<16 {
		return kernelPrediction{}, fmt.Errorf("--ep %d: want 1..%d", s.ep, 1<<16)
	}
	if s.ep != 1 && !strings.EqualFold(op, "moe") {
		return kernelPrediction{}, fmt.Errorf("--ep %d: only --op moe takes an expert-parallel size", s.ep)
	}
	q := kernels.OpQuery{Row: s.row, Collective: s.collective, Bytes: s.bytes, GPUs: s.gpus,
		MoEKernel: kernels.MoEKernel(s.moeKernel), Skew: s.skew, EP: s.ep, Prefill: s.prefill, MLA: s.mla,
		Reference: s.noIntermed, GDNMode: kernels.GDNMode(s.gdnMode)}
	q.Row.Op, q.Row.DType = op, dt
	if q.StateDType, err = kernels.ParseDType(s.stateDType); err != nil {
		return kernelPrediction{}, fmt.Errorf("--state-dtype: %v", err)
	}
	if s.gdnMode != "" {
		if q.GDNMode, err = kernels.ParseGDNMode(s.gdnMode); err != nil {
			return kernelPrediction{}, fmt.Errorf("--mode: %v", err)
		}
	}
	r, err := c.PredictOp(q)
	if err != nil {
		return kernelPrediction{}, opFlagError(q.Row.Op, err)
	}
	return kernelPrediction{GPU: c.GPU().Name, Op: r.Op, DType: string(dt), MoEKernel: string(r.MoEKernel),
		LatencyUS: r.Seconds * 1e6, Source: r.Source, Bound: r.Bound, Bytes: r.Bytes, FLOPs: r.FLOPs, Note: r.Note,
		Mode: string(r.Mode), Kernel: r.Kernel, StateDType: string(r.StateDType), EagerUS: r.EagerSeconds * 1e6}, nil
}

// opQueryFlags names the flag that sets each field of kernels.OpQuery.
var opQueryFlags = map[string]string{
	"DType": "--dtype", "Collective": "--collective", "GPUs": "--gpus", "Bytes": "--bytes", "MoEKernel": "--moe-kernel",
	"Skew": "--skew", "EP": "--ep", "StateDType": "--state-dtype", "GDNMode": "--mode (with --no-intermediate)",
}

// shapeDimFlags names the flag that sets each dimension of an op's shape
// (kernels.ShapeError.Dims), where it is not the dimension's own name.
var shapeDimFlags = map[string]map[string]string{
	"gdn":     {"v_heads": "--heads", "k_dim": "--head-dim", "v_dim": "--head-dim", "kv_heads": "--kv-heads"},
	"lm_head": {"tokens": "--m", "vocab": "--n", "hidden": "--k"},
	"copy":    {"n": "--n"},
}

// opFlagError restates a kernels error in the flags of "kernels predict".
func opFlagError(op string, err error) error {
	var qe *kernels.QueryError
	var se *kernels.ShapeError
	switch {
	case errors.As(err, &qe):
		return fmt.Errorf("%s %s: %s", opQueryFlags[qe.Field], qe.Value, qe.Reason)
	case errors.As(err, &se):
		var flags []string
		for _, d := range se.Dims {
			f, ok := shapeDimFlags[se.Op][d]
			if !ok {
				f = "--" + strings.ReplaceAll(d, "_", "-")
			}
			if !slices.Contains(flags, f) {
				flags = append(flags, f)
			}
		}
		return fmt.Errorf("%v (%s)", err, strings.Join(flags, " "))
	}
	return err
}

// checkRowDims bounds an --input row's shape columns as checkDims bounds
// the flags.
func checkRowDims(r kernels.OpRow) error {
	for _, d := range []struct {
		col string
		v   int
	}{
		{"m", r.M}, {"n", r.N}, {"k", r.K}, {"tokens", r.Tokens}, {"experts", r.Experts}, {"topk", r.TopK},
		{"hidden", r.Hidden}, {"inter", r.Inter}, {"batch", r.Batch}, {"q_len", r.QLen}, {"kv_len", r.KVLen},
		{"heads", r.Heads}, {"kv_heads", r.KVHeads}, {"head_dim", r.HeadDim},
	} {
		limit := maxShapeDim
		if d.col == "n" && r.Op == "copy" {
			limit = 1 << 40
		}
		if d.v < 0 || d.v > limit {
			return fmt.Errorf("column %s: %d: want 0..%d", d.col, d.v, limit)
		}
	}
	if int64(r.Batch)*int64(r.QLen) > maxShapeDim {
		return fmt.Errorf("batch %d x q_len %d = %d tokens in one forward: want at most %d", r.Batch, r.QLen, int64(r.Batch)*int64(r.QLen), maxShapeDim)
	}
	return nil
}

func predictFile(c *kernels.Coster, path string, format format, stdout, stderr io.Writer) int {
	data, err := readBounded(path)
	if err != nil {
		fmt.Fprintln(stderr, "specsim kernels predict:", err)
		return exitBadInput
	}
	t, err := kernels.ParseOpTable(path, data, false)
	if err != nil {
		fmt.Fprintln(stderr, "specsim kernels predict:", err)
		return exitBadInput
	}
	if len(t.Ignored) > 0 {
		// A misspelt shape column (kv-len for kv_len) would read as 0.
		fmt.Fprintf(stderr, "specsim kernels predict: warning: %s: columns %s are not read (shape columns: op,dtype,m,n,k,tokens,experts,topk,hidden,inter,batch,q_len,kv_len,heads,kv_heads,head_dim; latency_us)\n", path, strings.Join(t.Ignored, ", "))
	}
	out := struct {
		GPU         string          `json:"gpu"`
		Calibration string          `json:"calibration"`
		Predictions []rowPrediction `json:"predictions"`
	}{GPU: c.GPU().Name, Calibration: c.Calibration(), Predictions: []rowPrediction{}}
	for i, r := range t.Rows {
		if err := checkRowDims(r); err != nil {
			fmt.Fprintf(stderr, "specsim kernels predict: %s:%d: %v\n", path, r.Line, err)
			return exitBadInput
		}
		var qe *kernels.QueryError
		if err := c.CheckDType(r.Op, r.DType); errors.As(err, &qe) {
			fmt.Fprintf(stderr, "specsim kernels predict: %s:%d: dtype %s: %s\n", path, r.Line, qe.Value, qe.Reason)
			return exitBadInput
		}
		cost, err := c.PredictRow(r)
		if err != nil {
			fmt.Fprintf(stderr, "specsim kernels predict: %s:%d: %v\n", path, r.Line, err)
			return exitBadInput
		}
		out.Predictions = append(out.Predictions, rowPrediction{Row: i + 1, Op: r.Op, LatencyUS: cost.Seconds * 1e6,
			Source: cost.Source, Bound: cost.Bound, MeasuredUS: r.LatencyUS})
	}
	if format == formatJSON {
		if err := writeJSON(stdout, out); err != nil {
			return exitBadInput
		}
		return exitOK
	}
	tb := &table{header: []string{">row", "op", ">latency_us", ">measured_us", "source", "bound"}}
	for _, p := range out.Predictions {
		meas := ""
		if p.MeasuredUS > 0 {
			meas = fmt.Sprintf("%.2f", p.MeasuredUS)
		}
		tb.add(strconv.Itoa(p.Row), p.Op, fmt.Sprintf("%.2f", p.LatencyUS), meas, p.Source, p.Bound)
	}
	tb.write(stdout, format)
	fmt.Fprintln(stdout, "\ncalibration:", out.Calibration)
	return exitOK
}

// pathList is a repeatable file flag.
type pathList []string

func (p *pathList) String() string { return strings.Join(*p, ",") }

func (p *pathList) Set(s string) error {
	if s == "" {
		return errors.New("empty path")
	}
	*p = append(*p, s)
	return nil
}

const kernelsValidateHelp = `specsim kernels validate: how well the cost model predicts measured shapes it was not fitted on.

Along every measured line of the GPU's table (a GEMM's (N, K) over M, a MoE
over tokens, attention over kv_len, GDN over batch, ...) the points at odd
positions are held out; efficiencies and interpolation are fitted on the rest
and the held-out latencies predicted. Errors are |predicted - measured| /
measured as fractions (0.1 = 10%). With a held-aside file (ops_heldout.csv
beside the table, or --heldout) the model fitted on the whole table is also
scored on it. --op collective validates the collective table (held-out sizes,
and each GPU count predicted from the others). Bars: 10% median for gemm,
moe and attention; 15% for collectives.

Examples:
  specsim kernels validate --gpu h200
  specsim kernels validate --gpu h200 --op collective --collective-table kernels/testdata/synthetic_collectives.csv --json
  specsim kernels validate --gpu h200 --table kernels/testdata/synthetic_ops.csv`

func runKernelsValidate(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("kernels validate", kernelsValidateHelp, stderr)
	gpuName := fs.String("gpu", "h200", "GPU whose measured table to validate")
	op := fs.String("op", "", "only this op (gemm, moe, attention, ...) or \"collective\"")
	tablePath := fs.String("table", "", "measured op CSV `FILE` instead of the embedded one")
	heldout := fs.String("heldout", "", "held-aside op CSV `FILE` instead of the embedded ops_heldout.csv")
	collPath := fs.String("collective-table", "", "measured collectives CSV `FILE` to validate (this build embeds none; --op collective needs it)")
	cat := addGPUCatalogFlag(fs)
	ff := addFormatFlags(fs)
	if _, err := parseFlags(fs, args); err != nil {
		return usageExit(err)
	}
	format, err := ff.resolve()
	if err != nil {
		fmt.Fprintln(stderr, "specsim kernels validate:", err)
		return exitBadInput
	}
	stdout = textOut(stdout, format)
	fail := func(err error) int {
		fmt.Fprintln(stderr, "specsim kernels validate:", err)
		return exitBadInput
	}
	g, _, err := cat.lookup(*gpuName)
	if err != nil {
		return fail(err)
	}
	ops, held, colls, err := kernels.MeasuredTables(g.Name)
	if err != nil {
		return fail(err)
	}
	if *tablePath != "" {
		held = nil
	}
	fileOps, fileColls, err := readTables(*tablePath, *collPath)
	if err != nil {
		return fail(err)
	}
	if fileOps != nil {
		ops = fileOps
	}
	if fileColls != nil {
		colls = fileColls
	}
	if *heldout != "" {
		h, _, err := readTables(*heldout, "")
		if err != nil {
			return fail(err)
		}
		held = h
	}
	if strings.EqualFold(*op, "collective") {
		if colls == nil {
			return fail(fmt.Errorf("no measured collective table for %s in this build (kernels/data/%s/collectives.csv); pass --collective-table FILE", g.Name, g.Name))
		}
		v, err := kernels.ValidateCollectives(g, colls)
		if err != nil {
			return fail(err)
		}
		return writeCollectiveValidation(v, format, stdout)
	}
	if ops == nil {
		return fail(fmt.Errorf("no measured op table for %s in this build (kernels/data/%s/ops.csv); pass --table FILE", g.Name, g.Name))
	}
	if *op != "" {
		ops, held = ops.Only(strings.ToLower(*op)), held.Only(strings.ToLower(*op))
		if len(ops.Rows) == 0 {
			return fail(fmt.Errorf("%s has no rows of op %q", ops.Name, *op))
		}
	}
	v, err := kernels.ValidateOps(g, ops, held)
	if err != nil {
		return fail(err)
	}
	if *tablePath == "" && (*op == "" || strings.EqualFold(*op, "gdn") || strings.EqualFold(*op, "moe")) {
		if v.EngineKernels, err = kernels.ValidateEmbeddedEngineTables(g.Name, strings.ToLower(*op)); err != nil {
			return fail(err)
		}
	}
	return writeOpValidation(v, format, stdout)
}

func pct(v float64) string { return fmt.Sprintf("%.1f", 100*v) }

func writeOpValidation(v *kernels.Validation, format format, stdout io.Writer) int {
	if format == formatJSON {
		if err := writeJSON(stdout, v); err != nil {
			return exitBadInput
		}
		return exitOK
	}
	t := &table{header: []string{"op", ">heldout", ">median_err_%", ">p90_err_%", ">max_err_%", ">roofline_only_median_%"}}
	for _, o := range v.Ops {
		t.add(o.Op, strconv.Itoa(o.Points), pct(o.MedianAbsErr), pct(o.P90AbsErr), pct(o.MaxAbsErr), pct(o.RooflineMedianAbsErr))
	}
	t.add("all", strconv.Itoa(v.HeldoutPoints), pct(v.MedianAbsErr), pct(v.P90AbsErr), "", "")
	fmt.Fprintf(stdout, "%s: fitted on %d rows of %s, predicting %d held-out rows\n\n", v.GPU, v.FitPoints, v.Table, v.HeldoutPoints)
	t.write(stdout, format)
	if iv := v.Independent; iv != nil {
		fmt.Fprintf(stdout, "\nheld-aside shapes (%s), model fitted on the whole table:\n\n", iv.Table)
		it := &table{header: []string{"op", ">points", ">median_err_%", ">p90_err_%", ">max_err_%"}}
		for _, o := range iv.Ops {
			it.add(o.Op, strconv.Itoa(o.Points), pct(o.MedianAbsErr), pct(o.P90AbsErr), pct(o.MaxAbsErr))
		}
		it.add("all", strconv.Itoa(iv.Points), pct(iv.MedianAbsErr), pct(iv.P90AbsErr), "")
		it.write(stdout, format)
	}
	if len(v.UnmeasuredShapes) > 0 {
		fmt.Fprintf(stdout, "\nshapes the table lacks (every 4th shape left out whole; off-table prediction):\n\n")
		ut := &table{header: []string{"op", ">points", ">median_err_%", ">p90_err_%", ">roofline_only_median_%"}}
		for _, o := range v.UnmeasuredShapes {
			ut.add(o.Op, strconv.Itoa(o.Points), pct(o.MedianAbsErr), pct(o.P90AbsErr), pct(o.RooflineMedianAbsErr))
		}
		ut.write(stdout, format)
	}
	if len(v.EngineKernels) > 0 {
		fmt.Fprintf(stdout, "\nengine kernels (SGLang's, measured on this GPU; odd-positions: inner points left out of each measured line; held-aside: a file never fitted on):\n\n")
		et := &table{header: []string{"table", "metric", "kind", ">points", ">median_err_%", ">p90_err_%", ">max_err_%"}}
		for _, e := range v.EngineKernels {
			et.add(e.Table, e.Metric, e.Kind, strconv.Itoa(e.Points), pct(e.MedianAbsErr), pct(e.P90AbsErr), pct(e.MaxAbsErr))
		}
		et.write(stdout, format)
	}
	fmt.Fprintf(stdout, "\nbar (held-out median <= %.0f%% for gemm, moe, attention; held-aside median <= %.0f%%, every op <= %.0f%%): %s\n",
		100*kernels.OpBar, 100*kernels.OpBar, 100*kernels.OpClassBar, passFail(v.MeetsBar))
	return exitOK
}

func passFail(ok bool) string {
	if ok {
		return "met"
	}
	return "NOT met"
}

func writeCollectiveValidation(v *kernels.CollectiveValidation, format format, stdout io.Writer) int {
	if format == formatJSON {
		if err := writeJSON(stdout, v); err != nil {
			return exitBadInput
		}
		return exitOK
	}
	fmt.Fprintf(stdout, "%s: collectives at %v GPUs, fitted on %d rows of %s, predicting %d held-out sizes\n\n", v.GPU, v.GPUCounts, v.FitPoints, v.Table, v.HeldoutPoints)
	t := &table{header: []string{"collective", ">heldout", ">median_err_%", ">p90_err_%", ">max_err_%", ">model_only_median_%"}}
	for _, o := range v.Ops {
		t.add(o.Op, strconv.Itoa(o.Points), pct(o.MedianAbsErr), pct(o.P90AbsErr), pct(o.MaxAbsErr), pct(o.RooflineMedianAbsErr))
	}
	t.add("all", strconv.Itoa(v.HeldoutPoints), pct(v.MedianAbsErr), pct(v.P90AbsErr), "", "")
	t.write(stdout, format)
	if len(v.CountHoldout) > 0 {
		fmt.Fprintln(stdout, "\neach GPU count predicted from the others:")
		ct := &table{header: []string{">gpus", ">points", ">median_err_%"}}
		for _, c := range v.CountHoldout {
			ct.add(strconv.Itoa(c.GPUs), strconv.Itoa(c.Points), pct(c.MedianAbsErr))
		}
		ct.write(stdout, format)
	}
	fmt.Fprintf(stdout, "\nbar (held-out median <= %.0f%%): %s\n", 100*kernels.CollectiveBar, passFail(v.MeetsBar))
	return exitOK
}

const kernelsGPUsHelp = `specsim kernels gpus: the GPU catalog the cost model prices with.

Dense rates in TFLOP/s, bandwidths in GB/s or TB/s (per direction for NVLink),
the NVLink domain size, and where each GPU's efficiencies come from. --json
adds every figure's source.

Example:
  specsim kernels gpus --gpu-catalog my-gpus.yaml --json`

type gpuJSON struct {
	Name            string             `json:"name"`
	Arch            string             `json:"arch"`
	HBMGB           float64            `json:"hbm_gb"`
	HBMTBPerS       float64            `json:"hbm_tb_per_s"`
	TFLOPS          map[string]float64 `json:"tflops"`
	NVLinkGBPerS    float64            `json:"nvlink_gb_per_s"`
	NVLinkDomain    int                `json:"nvlink_domain"`
	NetworkGBPerS   float64            `json:"network_gb_per_s"`
	Calibration     string             `json:"calibration"`
	CalibrationKind string             `json:"calibration_kind"`
	Sources         []string           `json:"sources"`
}

func runKernelsGPUs(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("kernels gpus", kernelsGPUsHelp, stderr)
	cat := addGPUCatalogFlag(fs)
	ff := addFormatFlags(fs)
	if _, err := parseFlags(fs, args); err != nil {
		return usageExit(err)
	}
	format, err := ff.resolve()
	var catalog *kernels.Catalog
	if err == nil {
		catalog, err = cat.load()
	}
	if err != nil {
		fmt.Fprintln(stderr, "specsim kernels gpus:", err)
		return exitBadInput
	}
	stdout = textOut(stdout, format)
	var list []gpuJSON
	for _, name := range catalog.Names() {
		g, _ := catalog.Lookup(name)
		j := gpuJSON{Name: g.Name, HBMGB: g.HBMBytes / 1e9, HBMTBPerS: g.HBMBandwidth / 1e12, TFLOPS: map[string]float64{},
			NVLinkGBPerS: g.NVLinkBandwidth / 1e9, NVLinkDomain: g.NVLinkDomain, NetworkGBPerS: g.NetworkBandwidth / 1e9, Arch: g.Arch,
			Sources: g.Sources}
		c := kernels.NewCoster(g)
		j.Calibration, j.CalibrationKind = c.Calibration(), c.CalibrationKind()
		for dt, v := range g.Peak {
			j.TFLOPS[string(dt)] = v / 1e12
		}
		list = append(list, j)
	}
	if format == formatJSON {
		if err := writeJSON(stdout, map[string]any{"gpus": list}); err != nil {
			return exitBadInput
		}
		return exitOK
	}
	t := &table{header: []string{"gpu", ">HBM_GB", ">HBM_TB/s", ">BF16_TF", ">FP8_TF", ">FP4_TF", ">NVLink_GB/s", ">domain", ">net_GB/s", "efficiencies"}}
	tf := func(m map[string]float64, k string) string {
		if v, ok := m[k]; ok {
			return strconv.FormatFloat(v, 'f', -1, 64)
		}
		return "-"
	}
	for _, j := range list {
		source := j.CalibrationKind
		t.add(j.Name, strconv.FormatFloat(j.HBMGB, 'f', -1, 64), strconv.FormatFloat(j.HBMTBPerS, 'f', -1, 64),
			tf(j.TFLOPS, "bf16"), tf(j.TFLOPS, "fp8"), tf(j.TFLOPS, "nvfp4"), strconv.FormatFloat(j.NVLinkGBPerS, 'f', -1, 64),
			strconv.Itoa(j.NVLinkDomain), strconv.FormatFloat(j.NetworkGBPerS, 'f', -1, 64), source)
	}
	t.write(stdout, format)
	return exitOK
}

const kernelsEfficienciesHelp = `specsim kernels efficiencies: what each op class is priced with on a GPU.

Every op costs Fixed + (tm^P + tc^P)^(1/P) with tm = bytes / (bandwidth x mem
[x (units + half_units) / units for attention and GDN]) and tc = flops /
(peak x compute). fitted_rows is how many measured rows the figures were
fitted on (0: a default, or borrowed from a measured dtype or GPU).

Example:
  specsim kernels efficiencies --gpu gb300`

func runKernelsEfficiencies(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("kernels efficiencies", kernelsEfficienciesHelp, stderr)
	gpuName := fs.String("gpu", "h200", "GPU name from the catalog")
	cat := addGPUCatalogFlag(fs)
	ff := addFormatFlags(fs)
	if _, err := parseFlags(fs, args); err != nil {
		return usageExit(err)
	}
	format, err := ff.resolve()
	var c *kernels.Coster
	if err == nil {
		c, err = kernelsCoster(*gpuName, cat, "", "")
	}
	if err != nil {
		fmt.Fprintln(stderr, "specsim kernels efficiencies:", err)
		return exitBadInput
	}
	stdout = textOut(stdout, format)
	effs := c.Efficiencies()
	if format == formatJSON {
		if err := writeJSON(stdout, map[string]any{"gpu": c.GPU().Name, "calibration": c.Calibration(), "efficiencies": effs}); err != nil {
			return exitBadInput
		}
		return exitOK
	}
	t := &table{header: []string{"class", "dtype", ">mem", ">compute", ">fixed_us", ">p", ">half_units", ">fitted_rows"}}
	for _, e := range effs {
		t.add(e.Class, string(e.DType), fmt.Sprintf("%.2f", e.Efficiency.Mem), fmt.Sprintf("%.2f", e.Efficiency.Compute),
			fmt.Sprintf("%.1f", e.Efficiency.Fixed*1e6), fmt.Sprintf("%.1f", e.Efficiency.P), fmt.Sprintf("%.2f", e.Efficiency.HalfUnits), strconv.Itoa(e.FittedRows))
	}
	fmt.Fprintf(stdout, "%s: %s\n\n", c.GPU().Name, c.Calibration())
	t.write(stdout, format)
	return exitOK
}

const kernelsBackendsHelp = `specsim kernels backends: MoE runner backends per engine.

Which expert-weight formats each backend accepts, the GPUs it runs on and its
relative efficiency (kernel time is divided by it). With --engine, what that
engine resolves its flags to: the backend the target's experts (--dtype) run
on and the one the speculative draft's experts (--draft-dtype, BF16 as the
MTP draft ships) run on, the draft inheriting the target's backend unless
--speculative-moe-runner-backend names one, a backend that does not take a
format or does not run on --gpu falling back as the engine does; then that
engine's full table with the chosen backends marked. SGLang's model-specific
auto rules apply when --architecture (and --quantization) name the model.

Examples:
  specsim kernels backends
  specsim kernels backends --engine sglang --gpu gb300
  specsim kernels backends --engine sglang --gpu gb300 --dtype nvfp4 --architecture Qwen3NextForCausalLM --quantization modelopt_fp4
  specsim kernels backends --engine sglang --backend flashinfer_cutedsl --dtype nvfp4 --gpu gb300`

func runKernelsBackends(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("kernels backends", kernelsBackendsHelp, stderr)
	engine := fs.String("engine", "", "resolve for this engine: sglang|vllm|trtllm")
	backend := fs.String("backend", "auto", "requested backend of the target (SGLang --moe-runner-backend; with --engine)")
	specBackend := fs.String("speculative-moe-runner-backend", "", "SGLang: requested backend of the draft (empty = inherits the target's; with --engine)")
	dtype := fs.String("dtype", "bf16", "target expert weight dtype (with --engine)")
	draftDType := fs.String("draft-dtype", "bf16", "draft expert weight dtype (with --engine)")
	arch := fs.String("architecture", "", "config.json architectures[0] of the model, for SGLang's model-specific auto rules (with --engine)")
	quant := fs.String("quantization", "", "the engine's name of the checkpoint's quantization (modelopt_fp4, fp8, ...; empty = none; with --architecture)")
	gpuName := fs.String("gpu", "", "resolve for this GPU's architecture (backends that do not run there are not chosen)")
	cat := addGPUCatalogFlag(fs)
	ff := addFormatFlags(fs)
	if _, err := parseFlags(fs, args); err != nil {
		return usageExit(err)
	}
	format, err := ff.resolve()
	if err != nil {
		fmt.Fprintln(stderr, "specsim kernels backends:", err)
		return exitBadInput
	}
	stdout = textOut(stdout, format)
	type backendJSON struct {
		Engine     string   `json:"engine"`
		Name       string   `json:"name"`
		DTypes     []string `json:"dtypes"`
		Efficiency float64  `json:"efficiency"`
		Arch       []string `json:"arch,omitempty"`
		Notes      string   `json:"notes"`
		Source     string   `json:"source"`
		ChosenFor  []string `json:"chosen_for,omitempty"`
	}
	type resolvedJSON struct {
		Role       string  `json:"role"`
		DType      string  `json:"dtype"`
		Requested  string  `json:"requested"`
		Origin     string  `json:"origin"`
		Backend    string  `json:"backend"`
		FellBack   bool    `json:"fell_back"`
		Efficiency float64 `json:"efficiency"`
	}
	conv := func(b kernels.Backend) backendJSON {
		j := backendJSON{Engine: b.Engine, Name: b.Name, Efficiency: b.Efficiency, Arch: b.Arch, Notes: b.Notes, Source: b.Source}
		for _, d := range b.DTypes {
			j.DTypes = append(j.DTypes, string(d))
		}
		return j
	}
	var list []backendJSON
	var resolved []resolvedJSON
	var gpuLabel, engineName string
	if *engine == "" {
		for _, b := range kernels.Backends() {
			list = append(list, conv(b))
		}
	} else {
		if err := kernels.CheckEngine(*engine); err != nil {
			fmt.Fprintln(stderr, "specsim kernels backends:", flagError(err))
			return exitBadInput
		}
		for _, b := range []struct{ flag, name string }{{"--backend", *backend}, {"--speculative-moe-runner-backend", *specBackend}} {
			if strings.TrimSpace(b.name) == "" {
				continue
			}
			if err := kernels.CheckBackendName(*engine, b.name); err != nil {
				fmt.Fprintf(stderr, "specsim kernels backends: %s %s: %v\n", b.flag, b.name, err)
				return exitBadInput
			}
		}
		l := kernels.MoELaunch{Engine: *engine, Backend: *backend, SpecBackend: *specBackend, Architecture: *arch, Quantization: *quant}
		var gpu *kernels.GPU
		if *gpuName != "" {
			g, _, err := cat.lookup(*gpuName)
			if err != nil {
				fmt.Fprintln(stderr, "specsim kernels backends:", err)
				return exitBadInput
			}
			gpu = g
			l.GPUArch = g.Arch
			gpuLabel = g.Name + " (" + g.Arch + ")"
		}
		for _, role := range []struct {
			name, flag, dtype string
			resolve           func(kernels.MoELaunch, kernels.DType) (kernels.MoEChoice, error)
		}{{"target", "--dtype", *dtype, kernels.ResolveTargetMoE}, {"draft", "--draft-dtype", *draftDType, kernels.ResolveDraftMoE}} {
			dt, err := kernels.ParseDType(role.dtype)
			if err != nil {
				fmt.Fprintf(stderr, "specsim kernels backends: %s: %v\n", role.flag, err)
				return exitBadInput
			}
			// As kernels predict (PredictOp) and predict: no engine runs
			// NVFP4 experts without FP4 tensor cores, so no backend is one.
			if gpu != nil && dt == kernels.NVFP4 && gpu.NoFP4() != "" {
				fmt.Fprintf(stderr, "specsim kernels backends: %s %s: %s\n", role.flag, role.dtype, gpu.NoFP4())
				return exitBadInput
			}
			c, err := role.resolve(l, dt)
			if err != nil {
				fmt.Fprintln(stderr, "specsim kernels backends:", err)
				return exitBadInput
			}
			engineName = c.Backend.Engine
			resolved = append(resolved, resolvedJSON{Role: role.name, DType: string(dt), Requested: c.Requested, Origin: c.Origin,
				Backend: c.Backend.Name, FellBack: c.FellBack, Efficiency: c.Backend.Efficiency})
		}
		for _, b := range kernels.Backends() {
			if b.Engine != engineName {
				continue
			}
			j := conv(b)
			for _, r := range resolved {
				if r.Backend == b.Name {
					j.ChosenFor = append(j.ChosenFor, r.Role)
				}
			}
			list = append(list, j)
		}
	}
	if format == formatJSON {
		out := map[string]any{"backends": list}
		if *engine != "" {
			out["engine"], out["gpu"], out["resolved"] = engineName, gpuLabel, resolved
		}
		if err := writeJSON(stdout, out); err != nil {
			return exitBadInput
		}
		return exitOK
	}
	if *engine != "" {
		where := "any GPU (no --gpu: backends are not filtered by architecture)"
		if gpuLabel != "" {
			where = gpuLabel
		}
		fmt.Fprintf(stdout, "%s MoE runner backends resolved on %s:\n\n", engineName, where)
		rt := &table{header: []string{"role", "experts", "requested", "runs", ">efficiency", "why"}}
		for _, r := range resolved {
			runs := r.Backend
			if r.FellBack {
				runs += " (fallback)"
			}
			rt.add(r.Role, r.DType, r.Requested, runs, fmt.Sprintf("%.2f", r.Efficiency), r.Origin)
		}
		rt.write(stdout, format)
		if *arch == "" && engineName == "sglang" {
			fmt.Fprintln(stdout, "\nno --architecture: SGLang's model-specific auto rules (flashinfer_trtllm for some MoE models on Blackwell) are not applied; specsim predict applies them from the model")
		}
		fmt.Fprintf(stdout, "\nevery %s backend (chosen: the roles running on it):\n\n", engineName)
	}
	t := &table{header: []string{"engine", "backend", "dtypes", ">efficiency", "runs_on", "chosen", "notes"}}
	for _, j := range list {
		on := strings.Join(j.Arch, ",")
		if on == "" {
			on = "all"
		}
		t.add(j.Engine, j.Name, strings.Join(j.DTypes, ","), fmt.Sprintf("%.2f", j.Efficiency), on, strings.Join(j.ChosenFor, ", "), j.Notes)
	}
	t.write(stdout, format)
	return exitOK
}
