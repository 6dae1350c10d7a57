package kernels

import (
	"bytes"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"math"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"
)

// GPU is one accelerator's datasheet figures. Rates are dense (no
// sparsity); NVLink bandwidth is per direction per GPU.
type GPU struct {
	Name             string            // "h200", "gb300", ...
	Arch             string            // "hopper", "blackwell" ("" if unknown)
	HBMBytes         float64           // bytes of device memory
	HBMBandwidth     float64           // bytes/s
	Peak             map[DType]float64 // dense FLOP/s per dtype
	NVLinkBandwidth  float64           // bytes/s per direction per GPU
	NVLinkDomain     int               // GPUs reachable over NVLink (8 HGX, 72 NVL72)
	GPUsPerNode      int               // GPUs of one host (8 HGX, 4 per NVL72 compute tray)
	NetworkBandwidth float64           // bytes/s per GPU beyond the NVLink domain
	Sources          []string          // "field: source" for every figure

	// cal is the calibration set of the catalog the GPU came from (nil for
	// a GPU built by hand: default efficiencies).
	cal *Calibrations
}

// NoFP4 is why NVFP4 (W4A4) weights cannot run on g, "" where they can:
// they need FP4 tensor cores, which Hopper lacks.
func (g *GPU) NoFP4() string {
	if g.Peak[NVFP4] > 0 {
		return ""
	}
	return g.Name + " has no FP4 tensor cores: NVFP4 weights need Blackwell (B200, B300, GB200, GB300); use fp8"
}

// ComputeRate is the dense FLOP/s a GEMM with weights of type dt runs at, and
// the dtype whose rate it is. A format without tensor-core support on this GPU
// (NVFP4 or INT4 on Hopper) is dequantized and runs at the BF16 rate, as
// weight-only kernels do.
func (g *GPU) ComputeRate(dt DType) (float64, DType) {
	if dt == FP16 {
		dt = BF16
	}
	if r := g.Peak[dt]; r > 0 {
		return r, dt
	}
	if dt == FP32 {
		// No FP32 entry: TF32-free CUDA-core rate is about 1/15 of BF16 on
		// Hopper and Blackwell.
		return g.Peak[BF16] / 15, FP32
	}
	return g.Peak[BF16], BF16
}

// activationDType is what the activations of a GEMM with dt weights are
// stored in: the weight format where the GPU computes in it natively (FP8
// W8A8, NVFP4 W4A4 on Blackwell), BF16 otherwise.
func (g *GPU) activationDType(dt DType) DType {
	switch dt {
	case FP8, INT8, NVFP4:
		if g.Peak[dt] > 0 {
			return dt
		}
	}
	return BF16
}

//go:embed data/gpus.yaml
var embeddedCatalog []byte

// Catalog is a set of GPUs by lower-case name and alias, with the
// [Calibrations] their costs are fitted with: the GPUs [Catalog.Lookup]
// returns carry them to [NewCoster]. A catalog is a value: nothing of it is
// shared with another catalog.
type Catalog struct {
	gpus    map[string]*GPU
	aliases map[string]string
	cal     *Calibrations
}

type catalogFile struct {
	GPUs []catalogEntry `yaml:"gpus"`
}

type catalogEntry struct {
	Name          string             `yaml:"name"`
	Arch          string             `yaml:"arch"`
	Aliases       []string           `yaml:"aliases"`
	HBMGB         float64            `yaml:"hbm_gb"`
	HBMTBPerS     float64            `yaml:"hbm_tb_per_s"`
	TFLOPS        map[string]float64 `yaml:"tflops"`
	NVLinkGBPerS  float64            `yaml:"nvlink_gb_per_s"`
	NVLinkDomain  int                `yaml:"nvlink_domain"`
	GPUsPerNode   int                `yaml:"gpus_per_node"`
	NetworkGBPerS float64            `yaml:"network_gb_per_s"`
	Sources       map[string]string  `yaml:"sources"`
}

// Limits that keep a hostile catalog file from costing memory or time.
const (
	maxCatalogBytes = 1 << 20
	maxCatalogGPUs  = 256
)

// ParseCatalog reads a catalog in the schema of the embedded data/gpus.yaml.
// filename is used in error messages only.
func ParseCatalog(filename string, data []byte) (*Catalog, error) {
	if len(data) > maxCatalogBytes {
		return nil, fmt.Errorf("%s: catalog is %d bytes, limit %d", filename, len(data), maxCatalogBytes)
	}
	var f catalogFile
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&f); err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("%s: %v", filename, err)
	}
	if len(f.GPUs) == 0 {
		return nil, fmt.Errorf("%s: no gpus (want a \"gpus:\" list as in kernels/data/gpus.yaml)", filename)
	}
	if len(f.GPUs) > maxCatalogGPUs {
		return nil, fmt.Errorf("%s: %d GPUs, limit %d", filename, len(f.GPUs), maxCatalogGPUs)
	}
	c := newCatalog()
	for i, e := range f.GPUs {
		g, err := e.gpu()
		if err != nil {
			return nil, fmt.Errorf("%s: gpus[%d] (%q): %v", filename, i, e.Name, err)
		}
		if _, dup := c.gpus[g.Name]; dup {
			return nil, fmt.Errorf("%s: gpus[%d]: duplicate name %q", filename, i, g.Name)
		}
		c.gpus[g.Name] = g
		for _, a := range e.Aliases {
			c.aliases[strings.ToLower(strings.TrimSpace(a))] = g.Name
		}
	}
	return c, nil
}

func positiveFinite(v float64) bool { return v > 0 && !math.IsInf(v, 0) && !math.IsNaN(v) }

func (e catalogEntry) gpu() (*GPU, error) {
	name := strings.ToLower(strings.TrimSpace(e.Name))
	if name == "" {
		return nil, errors.New("missing name")
	}
	for field, v := range map[string]float64{
		"hbm_gb": e.HBMGB, "hbm_tb_per_s": e.HBMTBPerS, "nvlink_gb_per_s": e.NVLinkGBPerS,
		"network_gb_per_s": e.NetworkGBPerS,
	} {
		if !positiveFinite(v) {
			return nil, fmt.Errorf("%s must be a positive number, got %v", field, v)
		}
	}
	if e.NVLinkDomain < 1 || e.NVLinkDomain > 1<<16 {
		return nil, fmt.Errorf("nvlink_domain must be 1..65536, got %d", e.NVLinkDomain)
	}
	if e.GPUsPerNode == 0 {
		// Older catalogs: a node is the NVLink domain (HGX).
		e.GPUsPerNode = e.NVLinkDomain
	}
	if e.GPUsPerNode < 1 || e.GPUsPerNode > e.NVLinkDomain {
		return nil, fmt.Errorf("gpus_per_node must be 1..nvlink_domain (%d), got %d", e.NVLinkDomain, e.GPUsPerNode)
	}
	g := &GPU{
		Name:             name,
		Arch:             strings.ToLower(strings.TrimSpace(e.Arch)),
		HBMBytes:         e.HBMGB * 1e9,
		HBMBandwidth:     e.HBMTBPerS * 1e12,
		Peak:             map[DType]float64{},
		NVLinkBandwidth:  e.NVLinkGBPerS * 1e9,
		NVLinkDomain:     e.NVLinkDomain,
		GPUsPerNode:      e.GPUsPerNode,
		NetworkBandwidth: e.NetworkGBPerS * 1e9,
	}
	for k, v := range e.TFLOPS {
		dt, err := ParseDType(k)
		if err != nil {
			return nil, fmt.Errorf("tflops: %v", err)
		}
		if !positiveFinite(v) {
			return nil, fmt.Errorf("tflops.%s must be a positive number, got %v", k, v)
		}
		g.Peak[dt] = v * 1e12
	}
	if g.Peak[BF16] == 0 {
		return nil, errors.New("tflops.bf16 is required (the fallback rate of every other format)")
	}
	keys := make([]string, 0, len(e.Sources))
	for k := range e.Sources {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		g.Sources = append(g.Sources, k+": "+e.Sources[k])
	}
	return g, nil
}

func newCatalog() *Catalog {
	c := &Catalog{gpus: map[string]*GPU{}, aliases: map[string]string{}}
	c.cal = newCalibrations(c)
	return c
}

// Lookup finds a GPU by name or alias, case-insensitively. The result is a
// copy the caller may change; it is priced with the catalog's calibrations.
func (c *Catalog) Lookup(name string) (*GPU, error) {
	key := strings.ToLower(strings.TrimSpace(name))
	if canon, ok := c.aliases[key]; ok {
		key = canon
	}
	g, ok := c.gpus[key]
	if !ok {
		return nil, fmt.Errorf("unknown GPU %q: known GPUs are %s", name, strings.Join(c.Names(), ", "))
	}
	g = g.clone()
	g.cal = c.cal
	return g, nil
}

// Sibling finds another GPU of the catalog g came from (for a GPU built by
// hand, of the embedded catalog).
func (g *GPU) Sibling(name string) (*GPU, error) {
	if g.cal == nil {
		return DefaultCatalog().Lookup(name)
	}
	return g.cal.cat.Lookup(name)
}

// Calibrations is the catalog's calibration set.
func (c *Catalog) Calibrations() *Calibrations { return c.cal }

// Names lists the catalog's GPUs, sorted.
func (c *Catalog) Names() []string {
	names := make([]string, 0, len(c.gpus))
	for n := range c.gpus {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Merged is a new catalog with c's GPUs and o's; an entry of o replaces
// c's of the same name. Its calibrations are fitted afresh (a GPU's figures
// may have changed).
func (c *Catalog) Merged(o *Catalog) *Catalog {
	m := newCatalog()
	for _, from := range []*Catalog{c, o} {
		for n, g := range from.gpus {
			m.gpus[n] = g
		}
		for a, n := range from.aliases {
			m.aliases[a] = n
		}
	}
	return m
}

func (g *GPU) clone() *GPU {
	c := *g
	c.Peak = make(map[DType]float64, len(g.Peak))
	for k, v := range g.Peak {
		c.Peak[k] = v
	}
	c.Sources = append([]string(nil), g.Sources...)
	return &c
}

// DefaultCatalog is the embedded catalog, data/gpus.yaml, as a new value
// (with calibrations of its own, fitted when first used).
func DefaultCatalog() *Catalog {
	c, err := ParseCatalog("kernels/data/gpus.yaml", embeddedCatalog)
	if err != nil {
		panic("kernels: embedded GPU catalog: " + err.Error())
	}
	return c
}

// LoadCatalogFile is the embedded catalog merged with a catalog file: its
// entries replace embedded GPUs of the same name and add new ones.
func LoadCatalogFile(path string) (*Catalog, error) {
	data, err := readRegular(path, maxCatalogBytes)
	if err != nil {
		return nil, err
	}
	c, err := ParseCatalog(path, data)
	if err != nil {
		return nil, err
	}
	return DefaultCatalog().Merged(c), nil
}
