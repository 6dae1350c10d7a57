package kernels

import (
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// AIConfigurator (github.com/ai-dynamo/aiconfigurator) keeps measured
// kernel databases per system, framework and version,
// src/aiconfigurator/systems/data/<system>/<framework>/<version>/<op>_perf.txt.
// Every file is a CSV written by collector/helper.py: log_perf: the columns
// framework,version,device,op_name,kernel_source, then the op's own
// columns in the order of the collector's item dict, latency in
// milliseconds per call (collector/sglang/collect_gemm.py, collect_moe.py,
// collect_attn.py, collect_gdn.py, collector/network/collect_all_reduce.py;
// the headers are pinned in tests/unit/sdk/database/). Optional power and
// power_limit columns may follow. ReadAICTable reads the ops this project
// prices:
//
//	gemm                 gemm_dtype,m,n,k,latency
//	moe                  moe_dtype,num_tokens,hidden_size,inter_size,topk,num_experts,moe_tp_size,moe_ep_size,distribution,latency
//	generation_attention batch_size,isl,num_heads,num_key_value_heads,head_dim,beam_width,attn_dtype,kv_cache_dtype,step,window_size,latency
//	gdn                  phase,batch_size,seq_len,num_tokens,d_model,d_conv,num_k_heads,head_k_dim,num_v_heads,head_v_dim,model_name,latency
//	all_reduce           allreduce_dtype,num_gpus,message_size,latency
//
// MoE sizes are the whole layer's (inter_size and num_experts before the
// moe_tp_size / moe_ep_size split); message_size counts elements. Rows this
// project has no op for (context attention, the causal convolutions, MLA,
// block-scaled FP8 GEMMs, sliding windows) are counted and skipped.

// AICImport is what one or more AIConfigurator files give.
type AICImport struct {
	Ops     *OpTable         // gemm and decode-attention rows, latency in us
	Engine  *EngineTables    // fused MoE and GDN rows
	Colls   *CollectiveTable // all-reduce rows
	Devices []string         // distinct device column values
	Rows    int              // rows used
	Skipped map[string]int   // rows left out, by reason
}

// aicDTypes maps AIConfigurator's dtype names to this project's.
var aicDTypes = map[string]DType{
	"bfloat16": BF16, "float16": FP16, "fp16": FP16, "bf16": BF16,
	"fp8": FP8, "float8": FP8, "nvfp4": NVFP4, "int8_wo": INT8, "int8": INT8, "int4_wo": INT4,
}

// ParseAICTables reads AIConfigurator database files (name and bytes
// each) into one import, with every file's errors naming it and the line.
func ParseAICTables(files map[string][]byte) (*AICImport, error) {
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	imp := &AICImport{Ops: &OpTable{Name: strings.Join(names, ",")}, Engine: &EngineTables{Source: strings.Join(names, ",")},
		Colls: &CollectiveTable{Name: strings.Join(names, ",")}, Skipped: map[string]int{}}
	devices := map[string]bool{}
	for _, n := range names {
		if err := imp.parse(n, files[n], devices); err != nil {
			return nil, err
		}
	}
	for d := range devices {
		imp.Devices = append(imp.Devices, d)
	}
	sort.Strings(imp.Devices)
	if imp.Rows == 0 {
		return nil, fmt.Errorf("%s: no row of an op this project prices (gemm, moe, generation_attention, gdn, all_reduce); skipped: %s", imp.Ops.Name, imp.skippedText())
	}
	return imp, nil
}

func (imp *AICImport) skippedText() string {
	if len(imp.Skipped) == 0 {
		return "none"
	}
	var parts []string
	for k, v := range imp.Skipped {
		parts = append(parts, fmt.Sprintf("%d %s", v, k))
	}
	sort.Strings(parts)
	return strings.Join(parts, ", ")
}

// SkippedText lists the rows left out by reason ("none" when none were).
func (imp *AICImport) SkippedText() string { return imp.skippedText() }

func (imp *AICImport) parse(name string, data []byte, devices map[string]bool) error {
	_, rows, err := readCSV(name, data)
	if err != nil {
		return err
	}
	if err := rows.require(name, ": not an AIConfigurator database (want framework,version,device,op_name,kernel_source,<op columns>,latency)",
		"framework", "version", "device", "op_name", "kernel_source", "latency"); err != nil {
		return err
	}
	// Within one file a MoE layer may be measured under several routing
	// distributions; uniform rows win, else the file's first distribution.
	type moeRow struct {
		r    MoEKernelRow
		dist string
	}
	var moes []moeRow
	for {
		ok, err := rows.next()
		if err != nil {
			return err
		}
		if !ok {
			break
		}
		line, cell := rows.line, rows.cell
		bad := func(col string, why string) error {
			return fmt.Errorf("%s:%d: column %s: %s, got %q", name, line, col, why, cell(col))
		}
		lat, err := strconv.ParseFloat(cell("latency"), 64)
		if err != nil || !positiveFinite(lat) {
			return bad("latency", "want a positive number of milliseconds")
		}
		us := lat * 1000
		dim := func(col string) (int, error) {
			v, err := parseDim(cell(col))
			if err != nil || v <= 0 {
				return 0, bad(col, "want a positive whole number")
			}
			return v, nil
		}
		dims := func(cols ...string) ([]int, error) {
			out := make([]int, len(cols))
			for i, c := range cols {
				v, err := dim(c)
				if err != nil {
					return nil, err
				}
				out[i] = v
			}
			return out, nil
		}
		dtypeOf := func(col string) (DType, bool) {
			d, ok := aicDTypes[strings.ToLower(cell(col))]
			return d, ok
		}
		devices[cell("device")] = true
		op := strings.ToLower(cell("op_name"))
		switch op {
		case "gemm":
			dt, ok := dtypeOf("gemm_dtype")
			if !ok {
				imp.Skipped["gemm "+cell("gemm_dtype")]++
				continue
			}
			v, err := dims("m", "n", "k")
			if err != nil {
				return err
			}
			imp.Ops.Rows = append(imp.Ops.Rows, OpRow{Op: "gemm", DType: dt, M: v[0], N: v[1], K: v[2], LatencyUS: us, Line: line})
		case "generation_attention":
			if w := cell("window_size"); w != "" && w != "0" && w != "-1" {
				imp.Skipped["sliding-window attention"]++
				continue
			}
			dt, ok := dtypeOf("kv_cache_dtype")
			if !ok {
				imp.Skipped["attention kv "+cell("kv_cache_dtype")]++
				continue
			}
			v, err := dims("batch_size", "isl", "num_heads", "num_key_value_heads", "head_dim")
			if err != nil {
				return err
			}
			step, err := parseDim(cell("step"))
			if err != nil {
				return bad("step", "want a whole number")
			}
			// collect_attn.py: generation rows have isl = 1 new token and step = the cached length
			imp.Ops.Rows = append(imp.Ops.Rows, OpRow{Op: "attention", DType: dt, Batch: v[0], QLen: v[1], KVLen: step + v[1],
				Heads: v[2], KVHeads: v[3], HeadDim: v[4], LatencyUS: us, Line: line})
		case "moe":
			dt, ok := dtypeOf("moe_dtype")
			if strings.EqualFold(cell("moe_dtype"), "fp8_block") {
				dt, ok = FP8, true
			}
			if !ok {
				imp.Skipped["moe "+cell("moe_dtype")]++
				continue
			}
			v, err := dims("num_tokens", "hidden_size", "inter_size", "topk", "num_experts", "moe_tp_size", "moe_ep_size")
			if err != nil {
				return err
			}
			if v[2]%v[5] != 0 || v[4]%v[6] != 0 {
				return fmt.Errorf("%s:%d: inter_size %d / moe_tp_size %d or num_experts %d / moe_ep_size %d is not whole", name, line, v[2], v[5], v[4], v[6])
			}
			local := v[4] / v[6]
			if v[3] > v[4] {
				return fmt.Errorf("%s:%d: topk %d exceeds num_experts %d", name, line, v[3], v[4])
			}
			var se *ShapeError
			if err := (MoEShape{Tokens: v[0], Experts: local, TopK: v[3], Hidden: v[1], Inter: v[2] / v[5], EP: v[6]}).Validate(); errors.As(err, &se) {
				return fmt.Errorf("%s:%d: moe_ep_size %d: %s", name, line, v[6], se.Reason)
			}
			// An EP rank's row: its local experts, the layer's top-k over all
			// of them, the whole batch's tokens (MoEShape with EP).
			moes = append(moes, moeRow{MoEKernelRow{Kernel: cell("kernel_source"), DType: dt, Tokens: v[0], Hidden: v[1], Inter: v[2] / v[5],
				TopK: v[3], Experts: local, EP: v[6], LatencyUS: us, Line: line}, strings.ToLower(cell("distribution"))})
			continue // counted once the distribution is picked
		case "gdn":
			ks := cell("kernel_source")
			var mode GDNMode
			switch {
			case strings.EqualFold(cell("phase"), "context") && strings.Contains(ks, "chunk_gated_delta_rule"):
				mode = GDNPrefill
			case strings.EqualFold(cell("phase"), "generation") && strings.Contains(ks, "gated_delta_rule"):
				mode = GDNDecode
			default:
				imp.Skipped["gdn "+ks]++
				continue
			}
			v, err := dims("batch_size", "seq_len", "num_k_heads", "head_k_dim", "num_v_heads", "head_v_dim")
			if err != nil {
				return err
			}
			if v[3] != v[5] {
				imp.Skipped["gdn with head_k_dim != head_v_dim"]++
				continue
			}
			q := v[1]
			if mode == GDNDecode {
				q = 1
			}
			// AIConfigurator's GDN collector keeps SGLang's default FP32 state.
			imp.Engine.GDN = append(imp.Engine.GDN, GDNRow{Kernel: ks, Mode: mode, StateDType: FP32, Batch: v[0], QLen: q,
				Heads: v[4], KVHeads: v[2], HeadDim: v[3], GraphUS: us, Line: line})
		case "all_reduce":
			dt, ok := dtypeOf("allreduce_dtype")
			if !ok {
				imp.Skipped["all_reduce "+cell("allreduce_dtype")]++
				continue
			}
			v, err := dims("num_gpus", "message_size")
			if err != nil {
				return err
			}
			if v[0] < 2 || v[0] > 1<<16 {
				return bad("num_gpus", "want 2..65536")
			}
			imp.Colls.Rows = append(imp.Colls.Rows, CollectiveRow{Op: AllReduce, DType: dt, GPUs: v[0], Bytes: float64(v[1]) * dt.Bytes(), LatencyUS: us, Line: line})
		default:
			imp.Skipped[op]++
			continue
		}
		imp.Rows++
	}
	// MoE rows: per layer, uniform routing if measured, else the first distribution seen
	pick := map[moeKey]string{}
	for _, m := range moes {
		k := m.r.key()
		if cur, ok := pick[k]; !ok || (m.dist == "uniform" && cur != "uniform") {
			pick[k] = m.dist
		}
	}
	for _, m := range moes {
		if pick[m.r.key()] != m.dist {
			imp.Skipped["moe rows of a second routing distribution"]++
			continue
		}
		imp.Engine.FusedMoE = append(imp.Engine.FusedMoE, m.r)
		imp.Rows++
	}
	return nil
}

// CheckDevice reports an [*Error] on "GPU" when the files were measured on
// a device other than the GPU (catalog name, e.g. "b200" for "NVIDIA B200").
func (imp *AICImport) CheckDevice(gpu string) error {
	want := normalizeName(gpu)
	for _, d := range imp.Devices {
		n := normalizeName(d)
		if !strings.Contains(n, want) || (strings.HasPrefix(want, "b") && strings.Contains(n, "g"+want)) {
			return &Error{Field: "GPU", Value: gpu, Reason: fmt.Sprintf("%s was measured on %q", imp.Ops.Name, d)}
		}
	}
	return nil
}

// Error is an argument of a call that cannot be used as given: Field names
// the argument ("GPU"), Value what it held and Reason what is wrong. A
// command maps Field to its own flag.
type Error struct {
	Field, Value, Reason string
}

func (e *Error) Error() string {
	if e.Value == "" {
		return e.Field + ": " + e.Reason
	}
	return fmt.Sprintf("%s %s: %s", e.Field, e.Value, e.Reason)
}

// CosterFromAIC prices ops on g from an import: its GEMM and attention rows
// (and all-reduce rows) calibrate the roofline and interpolate as a
// measured table does (NewCosterFromTables); its MoE and GDN rows are
// engine tables, replacing g's own lines of the same shape.
func CosterFromAIC(g *GPU, imp *AICImport) *Coster {
	var c *Coster
	var ops *OpTable
	var colls *CollectiveTable
	if len(imp.Ops.Rows) > 0 {
		ops = imp.Ops
	}
	if len(imp.Colls.Rows) > 0 {
		colls = imp.Colls
	}
	if ops != nil || colls != nil {
		c = NewCosterFromTables(g, ops, colls)
		c.note = "AIConfigurator tables " + imp.Ops.Name + " (interpolated in the measured grid; elsewhere the roofline fitted on them)"
	} else {
		c = NewCoster(g)
	}
	return c.WithEngineTables(imp.Engine)
}

// Bounds on what --kernel-table may read.
const (
	maxAICFiles     = 32
	maxAICFileBytes = maxTableBytes
)

// ReadAICFiles reads AIConfigurator database files from disk (regular
// files of at most 32 MiB, at most 32 of them) and parses them.
func ReadAICFiles(paths []string) (*AICImport, error) {
	if len(paths) > maxAICFiles {
		return nil, fmt.Errorf("%d kernel tables, at most %d", len(paths), maxAICFiles)
	}
	files := map[string][]byte{}
	for _, p := range paths {
		b, err := readRegular(p, maxAICFileBytes)
		if err != nil {
			return nil, err
		}
		files[p] = b
	}
	return ParseAICTables(files)
}
