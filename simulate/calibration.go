package simulate

import (
	"bytes"
	"errors"
	"fmt"
	"github.com/specsim/specsim/internal/regular"
	"io"
	"math"
	"strings"

	"gopkg.in/yaml.v3"
)

// CalParams are the few parameters a calibration from end-to-end runs may
// move, per GPU and engine. They apply on top of whatever the cost model
// computes (its own fixed costs per GPU family and engine included), as
// shifts and scales, never as per-point knobs:
//
//   - LayerFixedUS adds time per decoder layer and forward (target and draft
//     layers alike), the cost model's layerGap;
//   - HostOverheadMS adds host time per engine iteration (decode, verify or
//     prefill forward) that the GPU waits for;
//   - MemScale multiplies the HBM bandwidth every kernel is priced with
//     (its achieved bandwidth, efficiency included), so memory-bound time
//     divides by it (kernels.Coster.Scaled);
//   - ComputeScale multiplies the tensor-core peaks likewise.
//
// The zero value of the shifts and 1 for the scales leave the model as it
// is; a scale of 0 reads as 1.
type CalParams struct {
	LayerFixedUS   float64 `yaml:"layer_fixed_us" json:"layer_fixed_us"`
	HostOverheadMS float64 `yaml:"host_overhead_ms" json:"host_overhead_ms"`
	MemScale       float64 `yaml:"mem_efficiency_scale" json:"mem_efficiency_scale"`
	ComputeScale   float64 `yaml:"compute_efficiency_scale" json:"compute_efficiency_scale"`
}

// CalParamNames are the names of the parameters, in the order Vector uses.
var CalParamNames = []string{"layer_fixed_us", "host_overhead_ms", "mem_efficiency_scale", "compute_efficiency_scale"}

// Identity is the calibration that changes nothing.
func Identity() CalParams { return CalParams{MemScale: 1, ComputeScale: 1} }

func orOne(v float64) float64 {
	if v == 0 {
		return 1
	}
	return v
}

// Vector is p in fitting coordinates: the two shifts as they are and the
// natural logarithms of the two scales.
func (p CalParams) Vector() [4]float64 {
	return [4]float64{p.LayerFixedUS, p.HostOverheadMS, math.Log(orOne(p.MemScale)), math.Log(orOne(p.ComputeScale))}
}

// FromVector is the inverse of Vector.
func FromVector(v [4]float64) CalParams {
	return CalParams{LayerFixedUS: v[0], HostOverheadMS: v[1], MemScale: math.Exp(v[2]), ComputeScale: math.Exp(v[3])}
}

// Limits of each parameter (fitting coordinates): a fit that runs into one
// says so instead of returning an absurd value.
var calLimits = [4][2]float64{
	{-layerGap * 1e6, 200},            // us per layer: the total per-layer gap stays >= 0
	{-defaultSchedOverhead * 1e3, 20}, // ms per iteration: down to none of the model's default host time
	{math.Log(0.25), math.Log(4)},     // memory efficiency x0.25..x4
	{math.Log(0.25), math.Log(4)},     // compute efficiency x0.25..x4
}

// Validate checks that every parameter is finite and inside its limits.
func (p CalParams) Validate() error {
	// The scales are factors (fitted as logs): a negative one has no log,
	// and 0 reads as "not given" (orOne).
	for i, x := range []float64{p.MemScale, p.ComputeScale} {
		if x < 0 {
			lo, hi := math.Exp(calLimits[2+i][0]), math.Exp(calLimits[2+i][1])
			return fmt.Errorf("%s %g: want a positive factor, %g..%g", CalParamNames[2+i], x, lo, hi)
		}
	}
	v := p.Vector()
	for i, x := range v {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return fmt.Errorf("%s: not a finite number", CalParamNames[i])
		}
		if x < calLimits[i][0]-1e-9 || x > calLimits[i][1]+1e-9 {
			lo, hi := calLimits[i][0], calLimits[i][1]
			if i >= 2 {
				lo, hi = math.Exp(lo), math.Exp(hi)
				x = math.Exp(x)
			}
			return fmt.Errorf("%s %g: want %g..%g", CalParamNames[i], x, lo, hi)
		}
	}
	return nil
}

// apply moves engine e's fixed costs and efficiencies; nil does nothing.
func (p *CalParams) apply(e *Engine) {
	if p == nil {
		return
	}
	e.LayerGap = math.Max(0, e.LayerGap+p.LayerFixedUS*1e-6)
	e.SchedOverhead = math.Max(0, e.SchedOverhead+p.HostOverheadMS*1e-3)
	if p.MemScale != 1 || p.ComputeScale != 1 {
		e.Coster = e.Coster.Scaled(orOne(p.MemScale), orOne(p.ComputeScale))
	}
}

// String is the parameters as one line, for output.
func (p CalParams) String() string {
	return fmt.Sprintf("layer_fixed_us %+.2f, host_overhead_ms %+.3f, mem_efficiency_scale %.3f, compute_efficiency_scale %.3f",
		p.LayerFixedUS, p.HostOverheadMS, orOne(p.MemScale), orOne(p.ComputeScale))
}

// CalEntry is the calibration of one GPU and engine, with how well it fits.
type CalEntry struct {
	GPU    string    `yaml:"gpu" json:"gpu"`
	Engine string    `yaml:"engine" json:"engine"`
	Params CalParams `yaml:"params" json:"params"`
	// Fitted names the parameters the data determined; the others stayed at
	// their identity value.
	Fitted []string `yaml:"fitted" json:"fitted"`
	Points int      `yaml:"points" json:"points"`
	// Errors are median |relative error| per metric: before (the model
	// alone), in-sample (after, on the points fitted) and leave-one-out
	// (each point predicted by a fit without it).
	Before      map[string]float64 `yaml:"before" json:"before"`
	InSample    map[string]float64 `yaml:"in_sample" json:"in_sample"`
	LeaveOneOut map[string]float64 `yaml:"leave_one_out" json:"leave_one_out"`
	// Band is the relative half-width of the uncertainty band predictions
	// made with this calibration carry: the 80th percentile of the
	// leave-one-out |relative error|, per metric class.
	Band BandWidths `yaml:"band" json:"band"`
}

// CalibrationFile is what specsim calibrate writes and --calibration reads.
type CalibrationFile struct {
	Version int        `yaml:"version" json:"version"`
	Command string     `yaml:"command,omitempty" json:"command,omitempty"`
	Sim     string     `yaml:"sim" json:"sim"` // the simulation the fit used: mean-field or event
	Entries []CalEntry `yaml:"entries" json:"entries"`
	Path    string     `yaml:"-" json:"path,omitempty"`
	// Warnings are the fit's caveats (CalGroupReport.Warnings, prefixed
	// by GPU/engine), written as comments in the header.
	Warnings []string `yaml:"-" json:"warnings,omitempty"`
}

// maxCalibrationBytes bounds a calibration file read.
const maxCalibrationBytes = 1 << 20

// LoadCalibration reads and checks a calibration file. Its errors are an
// [*Error] on the Query field "Calibration", the path as its value.
func LoadCalibration(path string) (*CalibrationFile, error) {
	bad := func(err error) error {
		return &Error{Field: "Calibration", Value: path, Reason: err.Error(), Err: err}
	}
	f, _, err := regular.Open(path)
	if err != nil {
		return nil, bad(err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxCalibrationBytes+1))
	if err != nil {
		return nil, bad(err)
	}
	if len(data) > maxCalibrationBytes {
		return nil, bad(fmt.Errorf("larger than %d bytes", maxCalibrationBytes))
	}
	c, err := ParseCalibration(data)
	if err != nil {
		return nil, bad(err)
	}
	c.Path = path
	return c, nil
}

// ParseCalibration decodes a calibration file's bytes.
func ParseCalibration(data []byte) (*CalibrationFile, error) {
	var c CalibrationFile
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&c); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, errors.New("empty file")
		}
		return nil, err
	}
	if c.Version != 1 {
		return nil, fmt.Errorf("version %d: want 1 (a file written by specsim calibrate)", c.Version)
	}
	if len(c.Entries) == 0 {
		return nil, errors.New("no entries")
	}
	seen := map[string]bool{}
	for i := range c.Entries {
		e := &c.Entries[i]
		e.GPU, e.Engine = strings.ToLower(e.GPU), strings.ToLower(orDefault(e.Engine, "sglang"))
		if e.GPU == "" {
			return nil, fmt.Errorf("entry %d: no gpu", i+1)
		}
		key := e.GPU + "/" + e.Engine
		if seen[key] {
			return nil, fmt.Errorf("entry %d: a second entry for %s", i+1, key)
		}
		seen[key] = true
		if err := e.Params.Validate(); err != nil {
			return nil, fmt.Errorf("entry %d (%s): %w", i+1, key, err)
		}
		for _, b := range []float64{e.Band.Throughput, e.Band.Latency} {
			if !(b >= 0 && b < 10) {
				return nil, fmt.Errorf("entry %d (%s): band %g: want 0..10 (a relative half-width)", i+1, key, b)
			}
		}
	}
	return &c, nil
}

// For returns the entry for a GPU (catalog name) and engine; a file without
// one is an [*Error] on "Calibration".
func (c *CalibrationFile) For(gpu, engine string) (*CalEntry, error) {
	engine = strings.ToLower(orDefault(engine, "sglang"))
	var have []string
	for i := range c.Entries {
		e := &c.Entries[i]
		if e.GPU == strings.ToLower(gpu) && e.Engine == engine {
			return e, nil
		}
		have = append(have, e.GPU+"/"+e.Engine)
	}
	return nil, &Error{Field: "Calibration", Value: c.Path, Reason: fmt.Sprintf("no entry for %s/%s (it has %s)", gpu, engine, strings.Join(have, ", "))}
}

// Marshal renders the file as YAML.
func (c *CalibrationFile) Marshal() ([]byte, error) {
	var b bytes.Buffer
	b.WriteString("# specsim calibration: parameters applied on top of the cost model per GPU and engine\n")
	b.WriteString("# (specsim predict|sweep|bestk|compare --calibration FILE). Errors are median |relative error|.\n")
	for _, w := range c.Warnings {
		b.WriteString("# WARNING: " + strings.ReplaceAll(w, "\n", " ") + "\n")
	}
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(c); err != nil {
		return nil, err
	}
	return b.Bytes(), enc.Close()
}

// WithCalibration is a copy of r whose engines apply p (nil: none); it
// shares the model and workload but not the memoized engines.
func (r *Resolved) WithCalibration(p *CalParams) *Resolved {
	c := *r
	c.Engine.Calibration = p
	c.engines, c.shared = nil, nil
	return &c
}
