package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/specsim/specsim/audit"
)

func init() {
	register(&command{
		name:    "audit",
		summary: "audit a checkpoint's MTP draft: shipped vs effective precision, exclude coverage, memory per rank",
		run:     runAudit,
	})
}

const auditHelp = `
Usage: specsim audit DIR|hf://ORG/MODEL[@REV] [flags]

Audits a checkpoint directory from config.json, hf_quant_config.json,
model.safetensors.index.json and the safetensors headers only (no weight is
read, nothing is written). Reports the MTP draft head (tensors, parameters,
bytes, shipped precision, scale tensors), the precision the engine will
serve it at, exclude-pattern coverage under vLLM's and SGLang's matching,
and weight memory per GPU rank in GiB (SGLang's "GB" is GiB) for each TP.
A directory with configs and the index but no shards (what a reviewer
downloads) is audited from the weight map, dtypes and shapes inferred.
hf://ORG/MODEL[@REV] reads the configs, the index and each shard's header
from the Hugging Face Hub with HTTP range requests (token from HF_TOKEN,
endpoint from HF_ENDPOINT), bounded as local reads are.

Exit status: 0 no error findings, 1 error findings, 2 unreadable or corrupt
input (the message names the file) or a usage error.

Example:
  specsim audit /models/Qwen3.5-397B-A17B-NVFP4 --engine sglang --tp 1,2,4 --format markdown
  specsim audit /models/DeepSeek-V3.1-NVFP4 --tp 8 --ep 8 --env SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE=1
  HF_TOKEN=... specsim audit hf://nvidia/Qwen3.5-397B-A17B-NVFP4 --tp 1,2,4
`

type envFlag map[string]string

func (e envFlag) String() string { return "" }

func (e envFlag) Set(s string) error {
	k, v, ok := strings.Cut(s, "=")
	if !ok || k == "" {
		return fmt.Errorf("want NAME=VALUE, got %q", s)
	}
	e[k] = v
	return nil
}

// maxTPSizes bounds the memory table (each size is one row per layout).
const maxTPSizes = 64

func parseTPList(s string) ([]int, error) {
	if strings.TrimSpace(s) == "" {
		return nil, fmt.Errorf("--tp %q: no sizes", s)
	}
	fields := strings.Split(s, ",")
	if len(fields) > maxTPSizes {
		return nil, fmt.Errorf("--tp: %d sizes, more than %d", len(fields), maxTPSizes)
	}
	out := make([]int, 0, len(fields))
	for _, f := range fields {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 || n > 4096 {
			return nil, fmt.Errorf("--tp %q: want comma-separated sizes from 1 to 4096", s)
		}
		if slices.Contains(out, n) {
			return nil, fmt.Errorf("--tp %q: %d given twice (each size is one memory row)", s, n)
		}
		out = append(out, n)
	}
	return out, nil
}

func runAudit(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("audit", auditHelp+deepHelp, stderr)
	engine := fs.String("engine", "sglang", "serving engine whose loading rules apply: sglang|vllm")
	tpList := fs.String("tp", "1,2,4,8", "tensor-parallel sizes to size memory for, comma-separated")
	ep := fs.Int("ep", 1, "expert-parallel size (SGLang --ep-size; 1 = experts split by TP)")
	dp := fs.Int("dp", 1, "data-parallel attention groups (attention TP = tp/dp)")
	dpLMHead := fs.Bool("dp-lm-head", false, "SGLang --enable-dp-lm-head: lm_head split over the attention TP group")
	logPath := fs.String("log", "", "engine log whose weight-load lines to compare with the model")
	draftQuant := fs.String("draft-quantization", "", "SGLang --speculative-draft-model-quantization (unquant, fp8, nvfp4_online, ...)")
	moeBackend := fs.String("moe-backend", "", "the draft's MoE runner backend, SGLang --speculative-moe-runner-backend (default: inherits --moe-runner-backend)")
	targetMoE := fs.String("moe-runner-backend", "", "the target's MoE runner backend, SGLang --moe-runner-backend (default: the engine's, \"auto\"); the draft inherits it")
	env := envFlag{}
	fs.Var(env, "env", "engine environment variable NAME=VALUE (repeatable), e.g. SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE=1")
	ff := addFormatFlags(fs)
	deepOpt := addDeepFlags(fs)
	pos, err := parseFlags(fs, args)
	if err != nil {
		return usageExit(err)
	}
	format, err := ff.resolve()
	if err != nil {
		fmt.Fprintln(stderr, "specsim audit:", err)
		return exitBadInput
	}
	stdout = textOut(stdout, format)
	if len(pos) != 1 {
		fmt.Fprintln(stderr, "specsim audit: want exactly one checkpoint directory or hf://ORG/MODEL[@REV] (see --help)")
		return exitBadInput
	}
	tps, err := parseTPList(*tpList)
	if err != nil {
		fmt.Fprintln(stderr, "specsim audit:", err)
		return exitBadInput
	}
	e := strings.ToLower(*engine)
	if e != audit.EngineSGLang && e != audit.EngineVLLM {
		fmt.Fprintf(stderr, "specsim audit: --engine %q: want %s\n", *engine, joinQuoted(audit.Engines()))
		return exitBadInput
	}
	cfg := audit.Config{
		Options: audit.Options{Engine: e, DraftQuantization: *draftQuant, Env: env, MoEBackend: *moeBackend, TargetMoEBackend: *targetMoE},
		TP:      tps, EP: *ep, DP: *dp, DPLMHead: *dpLMHead, LogPath: *logPath,
	}
	if err := cfg.Validate(); err != nil {
		fmt.Fprintln(stderr, "specsim audit:", flagError(err))
		return exitBadInput
	}
	var progress *time.Timer
	if format != formatJSON {
		// Large checkpoints on network storage can take a while: say so.
		progress = time.AfterFunc(2*time.Second, func() {
			fmt.Fprintf(stderr, "specsim audit: reading configs, index and shard headers of %s...\n", pos[0])
		})
	}
	if strings.HasPrefix(pos[0], "hf://") && (deepOpt.on || deepOpt.all) {
		fmt.Fprintln(stderr, "specsim audit: --deep reads weight values, which an hf:// audit does not download: audit a local copy")
		return exitBadInput
	}
	r, err := auditSource(pos[0], cfg)
	if progress != nil {
		progress.Stop()
	}
	if err != nil {
		var ce *audit.CorruptError
		if errors.As(err, &ce) {
			fmt.Fprintln(stderr, "specsim audit: unreadable or corrupt input:", err)
		} else {
			fmt.Fprintln(stderr, "specsim audit:", err)
		}
		return exitBadInput
	}
	deepRep, code := deepOpt.run(r, format == formatJSON, stderr)
	if code != exitOK {
		return code
	}
	switch format {
	case formatJSON:
		if err := writeJSON(stdout, withDeep(r, deepRep)); err != nil {
			fmt.Fprintln(stderr, "specsim audit:", err)
			return exitBadInput
		}
	case formatMarkdown:
		writeAuditMarkdown(stdout, r)
		writeDeepMarkdown(stdout, deepRep)
		fmt.Fprintf(stdout, "Command: `%s`\n", commandLine(fs, pos[0]))
	case formatCSV:
		writeAuditText(stdout, r)
		writeDeepText(stdout, deepRep)
		findingsCSV(r.Findings).write(stdout, format)
	default:
		writeAuditText(stdout, r)
		writeDeepText(stdout, deepRep)
	}
	if audit.HasErrors(r.Findings) {
		return exitFindings
	}
	return exitOK
}

// commandLine reproduces the invocation for the evidence block.
func commandLine(fs *flag.FlagSet, dir string) string {
	parts := []string{"specsim", "audit", dir}
	fs.Visit(func(f *flag.Flag) {
		switch f.Name {
		case "json", "format":
			return
		case "env":
			return
		}
		parts = append(parts, "--"+f.Name+"="+f.Value.String())
	})
	if e, ok := fs.Lookup("env").Value.(envFlag); ok {
		for k, v := range e {
			parts = append(parts, "--env="+k+"="+v)
		}
	}
	return strings.Join(parts, " ")
}

func gib(b int64) string { return fmt.Sprintf("%.2f GiB", float64(b)/(1<<30)) }

func humanParams(n int64) string {
	switch {
	case n >= 1e9:
		return fmt.Sprintf("%.3f B", float64(n)/1e9)
	case n >= 1e6:
		return fmt.Sprintf("%.2f M", float64(n)/1e6)
	}
	return strconv.FormatInt(n, 10)
}

func writeAuditText(w io.Writer, r *audit.Report) {
	cp := r.Checkpoint
	fmt.Fprintf(w, "checkpoint  %s\n", r.Dir)
	if r.IndexOnly {
		fmt.Fprintf(w, "tensors     %d in the weight map, no shard file present; %s of data (inferred); %d bytes read (configs, index)\n", r.Tensors, gib(r.DataBytes), r.BytesRead)
	} else if n := len(cp.MissingShards); n > 0 {
		fmt.Fprintf(w, "tensors     %d: %d in %d shard files read, %d of %d absent shard files inferred from the index; %s of data (partly inferred); %d bytes read (configs, index, shard headers)\n",
			r.Tensors, r.Tensors-r.InferredTensors, r.Shards, r.InferredTensors, n, gib(r.DataBytes), r.BytesRead)
	} else {
		fmt.Fprintf(w, "tensors     %d in %d shard files, %s of data; %d bytes read (configs, index, shard headers)\n", r.Tensors, r.Shards, gib(r.DataBytes), r.BytesRead)
	}
	q := "none"
	if cp.Config.Quant != nil {
		q = fmt.Sprintf("%s (%s, exclude list %d patterns)", cp.Config.Quant.Algo, cp.Config.Quant.Method, len(cp.Config.Quant.Exclude))
	}
	fmt.Fprintf(w, "model       %s, family %s, quantization %s\n", strings.Join(cp.Config.Architectures, ","), r.Family, q)
	fmt.Fprintln(w)
	m := r.MTP
	if !m.Present {
		fmt.Fprintln(w, "MTP draft   none ships in the weight map")
	} else {
		d := r.Draft
		fmt.Fprintf(w, "MTP draft   %s, %d layer(s), prefix %q\n", d.Kind, d.Layers, d.Prefix)
		fmt.Fprintf(w, "  tensors   %d (%d scale tensors)\n", m.TensorCount, m.ScaleTensorCount)
		fmt.Fprintf(w, "  params    %s (%d)\n", humanParams(m.ParamCount), m.ParamCount)
		fmt.Fprintf(w, "  bytes     %d (%s)\n", m.Bytes, gib(m.Bytes))
		fmt.Fprintf(w, "  shipped   %s\n", shippedLabel(m))
		fmt.Fprintf(w, "  effective %s under %s: %s\n", m.EffectiveDType, r.Engine, r.Effective.Reason)
		if r.Effective.Backend != "" || r.Effective.BackendNote != "" {
			fmt.Fprintf(w, "  MoE       %s: %s\n", r.Effective.Backend, r.Effective.BackendNote)
		}
	}
	fmt.Fprintln(w)
	if len(r.Memory) > 0 {
		fmt.Fprintf(w, "Weight memory per rank (%s, most loaded rank)\n", r.Engine)
		memoryTable(r).write(w, formatText)
		fmt.Fprintln(w)
	}
	if len(r.Log) > 0 {
		fmt.Fprintln(w, "Load log")
		logTable(r).write(w, formatText)
		fmt.Fprintln(w)
	}
	fmt.Fprintln(w, "Findings")
	if len(r.Findings) == 0 {
		fmt.Fprintln(w, "  none")
		return
	}
	for _, f := range r.Findings {
		fmt.Fprintf(w, "  %-7s %s: %s\n", f.Severity, f.Code, f.Message)
	}
}

func yesNoWord(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// shippedLabel is the shipped precision, marked when it was inferred from
// names and configs rather than read from shard headers.
func shippedLabel(m audit.MTPReport) string {
	if m.ShippedInferred {
		return m.ShippedDType + " (inferred from the weight map and configs: its shard header was not read)"
	}
	return m.ShippedDType
}

func memoryTable(r *audit.Report) *table {
	t := &table{header: []string{">tp", ">ep", ">dp", ">draft floor GiB", ">draft footprint GiB", ">draft bytes", ">model GiB", ">draft if BF16 GiB", ">if FP8 GiB", ">if NVFP4 GiB"}}
	cf := map[int]audit.Counterfactual{}
	for _, c := range r.Counterfactual {
		cf[c.TP] = c
	}
	for _, m := range r.Memory {
		c := cf[m.TP]
		t.add(strconv.Itoa(m.TP), strconv.Itoa(m.EP), strconv.Itoa(m.DP), fmt.Sprintf("%.3f", m.MTPFloorGiB), fmt.Sprintf("%.3f", m.MTPGiB), strconv.FormatInt(m.MTPBytes, 10),
			fmt.Sprintf("%.2f", m.ModelGiB), fmt.Sprintf("%.3f", c.BF16GiB), fmt.Sprintf("%.3f", c.FP8GiB), fmt.Sprintf("%.3f", c.NVFP4GiB))
		t.addCSV(strconv.Itoa(m.TP), strconv.Itoa(m.EP), strconv.Itoa(m.DP), num(m.MTPFloorGiB), num(m.MTPGiB), strconv.FormatInt(m.MTPBytes, 10),
			num(m.ModelGiB), num(c.BF16GiB), num(c.FP8GiB), num(c.NVFP4GiB))
	}
	return t
}

// findingsCSV is the findings as one CSV table, the JSON's fields as
// columns: severity, code, location (empty for the whole input), message.
func findingsCSV(fs []audit.Finding) *table {
	t := &table{header: []string{"severity", "code", "location", "message"}}
	for _, f := range fs {
		t.add(string(f.Severity), f.Code, f.Location, f.Message)
	}
	return t
}

func logTable(r *audit.Report) *table {
	t := &table{header: []string{">line", "engine", "what", ">logged GiB", ">tp", "supports", ">floor GiB", ">footprint GiB", "consistent", ">outside %"}}
	for _, l := range r.Log {
		t.add(strconv.Itoa(l.Line), l.Engine, l.What, fmt.Sprintf("%.2f", l.LoggedGiB), strconv.Itoa(l.TP), l.Precision,
			fmt.Sprintf("%.2f", l.FloorGiB), fmt.Sprintf("%.2f", l.ModeledGiB), yesNoWord(l.Consistent), fmt.Sprintf("%.2f", 100*l.RelError))
		t.addCSV(strconv.Itoa(l.Line), l.Engine, l.What, num(l.LoggedGiB), strconv.Itoa(l.TP), l.Precision,
			num(l.FloorGiB), num(l.ModeledGiB), strconv.FormatBool(l.Consistent), num(100*l.RelError))
	}
	return t
}

func writeAuditMarkdown(w io.Writer, r *audit.Report) {
	m := r.MTP
	fmt.Fprintf(w, "#### Draft-model precision evidence: `%s`\n\n", filepath.Base(filepath.Clean(r.Dir)))
	fmt.Fprintln(w, "| | |")
	fmt.Fprintln(w, "|---|---|")
	if m.Present {
		fmt.Fprintf(w, "| MTP head | present: %s, %d layer(s), prefix `%s` |\n", r.Draft.Kind, r.Draft.Layers, r.Draft.Prefix)
	} else {
		fmt.Fprintln(w, "| MTP head | none in the weight map |")
	}
	fmt.Fprintf(w, "| shipped draft precision | %s |\n", shippedLabel(m))
	fmt.Fprintf(w, "| effective draft precision (%s) | %s — %s |\n", r.Engine, m.EffectiveDType, strings.ReplaceAll(r.Effective.Reason, "|", `\|`))
	fmt.Fprintf(w, "| MTP tensors | %d |\n", m.TensorCount)
	fmt.Fprintf(w, "| MTP scale tensors | %d |\n", m.ScaleTensorCount)
	fmt.Fprintf(w, "| MTP parameters | %d |\n", m.ParamCount)
	fmt.Fprintf(w, "| MTP bytes | %d (%s) |\n", m.Bytes, gib(m.Bytes))
	if r.Effective.Backend != "" {
		fmt.Fprintf(w, "| draft MoE backend | %s (fell back: %v) |\n", r.Effective.Backend, r.Effective.FellBack)
	}
	fmt.Fprintln(w)
	if len(r.Memory) > 0 {
		fmt.Fprintf(w, "Weight memory per rank under %s (GiB = 2^30 bytes, as the engine logs it):\n\n", r.Engine)
		memoryTable(r).write(w, formatMarkdown)
		fmt.Fprintln(w)
	}
	if len(r.Log) > 0 {
		logTable(r).write(w, formatMarkdown)
		fmt.Fprintln(w)
	}
	if len(r.Findings) > 0 {
		fmt.Fprintln(w, "Findings:")
		fmt.Fprintln(w)
		for _, f := range r.Findings {
			fmt.Fprintf(w, "- **%s** `%s`: %s\n", f.Severity, f.Code, f.Message)
		}
		fmt.Fprintln(w)
	}
}
