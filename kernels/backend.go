package kernels

import (
	"bytes"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"
)

// Backend is one engine's MoE runner: the expert-weight formats it accepts
// and its speed relative to the engine's fastest fused kernel.
type Backend struct {
	Name       string
	Engine     string // "sglang", "vllm", "trtllm"
	DTypes     []DType
	Efficiency float64  // (0, 1]: kernel time is divided by it
	Arch       []string // GPU architectures it runs on; empty = all
	Notes      string
	Source     string
}

// RunsOn reports whether the backend runs on a GPU architecture ("" =
// unknown, assumed yes).
func (b Backend) RunsOn(arch string) bool {
	return arch == "" || len(b.Arch) == 0 || slices.Contains(b.Arch, arch)
}

// Accepts reports whether the backend runs experts stored in dt.
func (b Backend) Accepts(dt DType) bool {
	if dt == FP16 && slices.Contains(b.DTypes, BF16) {
		return true
	}
	return slices.Contains(b.DTypes, dt)
}

// Scale prices a MoE cost on this backend (the cost model's MoE is the
// fastest kernel's).
func (b Backend) Scale(c Cost) Cost {
	if b.Efficiency > 0 {
		c.Seconds /= b.Efficiency
	}
	return c
}

//go:embed data/backends.yaml
var embeddedBackends []byte

type backendFile struct {
	Engines []struct {
		Engine    string            `yaml:"engine"`
		Source    string            `yaml:"source"`
		Default   string            `yaml:"default"`
		Auto      map[string]string `yaml:"auto"`
		AutoRules []struct {
			Archs        []string `yaml:"archs"`
			GPUArch      string   `yaml:"gpu_arch"`
			Quantization []string `yaml:"quantization"`
			Backend      string   `yaml:"backend"`
		} `yaml:"auto_rules"`
		Fallback map[string]string `yaml:"fallback"`
		Backends []struct {
			Name       string   `yaml:"name"`
			DTypes     []string `yaml:"dtypes"`
			Efficiency float64  `yaml:"efficiency"`
			Arch       []string `yaml:"arch"`
			Notes      string   `yaml:"notes"`
		} `yaml:"backends"`
	} `yaml:"engines"`
}

type backendTable struct {
	backends []Backend
	fallback map[string]map[DType]string // engine -> dtype -> backend name
	auto     map[string]map[DType]string // engine -> dtype -> what "auto" runs
	defaults map[string]string           // engine -> value of an unset backend flag
	rules    map[string][]autoRule
	sources  map[string]string
}

// autoRule is one model-specific resolution of an unset backend.
type autoRule struct {
	archs, quant []string
	gpuArch      string
	backend      string
}

var backends = mustParseBackends("kernels/data/backends.yaml", embeddedBackends)

func mustParseBackends(name string, data []byte) *backendTable {
	t, err := parseBackends(name, data)
	if err != nil {
		panic("kernels: embedded backend table: " + err.Error())
	}
	return t
}

func parseBackends(name string, data []byte) (*backendTable, error) {
	var f backendFile
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&f); err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("%s: %v", name, err)
	}
	t := &backendTable{fallback: map[string]map[DType]string{}, auto: map[string]map[DType]string{},
		defaults: map[string]string{}, rules: map[string][]autoRule{}, sources: map[string]string{}}
	for _, e := range f.Engines {
		engine := strings.ToLower(e.Engine)
		fb, err := dtypeMap(e.Fallback)
		if err != nil {
			return nil, fmt.Errorf("%s: engine %s: fallback: %v", name, engine, err)
		}
		au, err := dtypeMap(e.Auto)
		if err != nil {
			return nil, fmt.Errorf("%s: engine %s: auto: %v", name, engine, err)
		}
		t.fallback[engine], t.auto[engine], t.sources[engine] = fb, au, e.Source
		t.defaults[engine] = strings.ToLower(strings.TrimSpace(e.Default))
		if t.defaults[engine] == "" {
			t.defaults[engine] = "auto"
		}
		for _, r := range e.AutoRules {
			t.rules[engine] = append(t.rules[engine], autoRule{archs: r.Archs, quant: r.Quantization, gpuArch: r.GPUArch, backend: r.Backend})
		}
		for _, b := range e.Backends {
			if !(b.Efficiency > 0 && b.Efficiency <= 1) {
				return nil, fmt.Errorf("%s: %s/%s: efficiency %v outside (0, 1]", name, engine, b.Name, b.Efficiency)
			}
			be := Backend{Name: b.Name, Engine: engine, Efficiency: b.Efficiency, Arch: b.Arch, Notes: b.Notes, Source: e.Source}
			for _, d := range b.DTypes {
				dt, err := ParseDType(d)
				if err != nil {
					return nil, fmt.Errorf("%s: %s/%s: %v", name, engine, b.Name, err)
				}
				be.DTypes = append(be.DTypes, dt)
			}
			t.backends = append(t.backends, be)
		}
		for what, m := range map[string]map[DType]string{"fallback": fb, "auto": au} {
			for dt, n := range m {
				b, ok := t.find(engine, n)
				if !ok {
					return nil, fmt.Errorf("%s: engine %s: %s for %s names unknown backend %q", name, engine, what, dt, n)
				}
				if !b.Accepts(dt) {
					return nil, fmt.Errorf("%s: engine %s: %s backend %q does not accept %s", name, engine, what, n, dt)
				}
			}
		}
		if d := t.defaults[engine]; d != "auto" {
			if _, ok := t.find(engine, d); !ok {
				return nil, fmt.Errorf("%s: engine %s: default names unknown backend %q", name, engine, d)
			}
		}
		for _, r := range t.rules[engine] {
			if _, ok := t.find(engine, r.backend); !ok {
				return nil, fmt.Errorf("%s: engine %s: auto rule names unknown backend %q", name, engine, r.backend)
			}
		}
	}
	return t, nil
}

func dtypeMap(m map[string]string) (map[DType]string, error) {
	out := map[DType]string{}
	for k, v := range m {
		dt, err := ParseDType(k)
		if err != nil {
			return nil, err
		}
		out[dt] = strings.ToLower(strings.TrimSpace(v))
	}
	return out, nil
}

func (t *backendTable) find(engine, name string) (Backend, bool) {
	for _, b := range t.backends {
		if b.Engine == engine && b.Name == name {
			return b, true
		}
	}
	return Backend{}, false
}

// Backends lists every engine's MoE runner backends.
func Backends() []Backend {
	out := make([]Backend, len(backends.backends))
	for i, b := range backends.backends {
		b.DTypes = slices.Clone(b.DTypes)
		b.Arch = slices.Clone(b.Arch)
		out[i] = b
	}
	return out
}

// BackendFor resolves the backend an engine runs experts stored in dt on
// when name is requested ("" or "auto" asks for the engine's choice), on
// any GPU. If the named backend does not accept dt the engine falls back
// (SGLang runs unquantized BF16 experts asked onto flashinfer_cutedsl on
// Triton) and fellBack is true. A launch's flags, with the draft's
// inheritance, go through ResolveTargetMoE and ResolveDraftMoE.
func BackendFor(engine, name string, dt DType) (b Backend, fellBack bool, err error) {
	return BackendForArch(engine, name, dt, "")
}

// BackendForArch is BackendFor on a GPU architecture (GPU.Arch): backends
// that do not run there (TensorRT-LLM-generated kernels are
// Blackwell-only) are not chosen by "auto", and a named one falls back.
func BackendForArch(engine, name string, dt DType, arch string) (b Backend, fellBack bool, err error) {
	engine = normEngine(engine)
	fb, ok := backends.fallback[engine]
	if !ok {
		return Backend{}, false, unknownEngine(engine)
	}
	auto := func() (Backend, error) {
		n, ok := backends.auto[engine][dt]
		if dt == FP16 && !ok {
			n, ok = backends.auto[engine][BF16]
		}
		if ok {
			if b, found := backends.find(engine, n); found && b.RunsOn(arch) {
				return b, nil
			}
		}
		var best Backend
		for _, c := range backends.backends {
			if c.Engine == engine && c.Accepts(dt) && c.RunsOn(arch) && c.Efficiency > best.Efficiency {
				best = c
			}
		}
		if best.Name == "" {
			return Backend{}, fmt.Errorf("engine %s has no MoE backend for %s", engine, dt)
		}
		return best, nil
	}
	name = strings.ToLower(strings.TrimSpace(name))
	if name == "" || name == "auto" {
		b, err := auto()
		return b, false, err
	}
	want, ok := backends.find(engine, name)
	if !ok {
		var names []string
		for _, c := range backends.backends {
			if c.Engine == engine {
				names = append(names, c.Name)
			}
		}
		return Backend{}, false, fmt.Errorf("engine %s has no MoE backend %q: want %s", engine, name, strings.Join(names, ", "))
	}
	if want.Accepts(dt) && want.RunsOn(arch) {
		return want, false, nil
	}
	fbName, ok := fb[dt]
	if dt == FP16 && !ok {
		fbName, ok = fb[BF16]
	}
	if ok {
		if b, _ = backends.find(engine, fbName); b.RunsOn(arch) {
			return b, true, nil
		}
	}
	if b, err := auto(); err == nil {
		return b, true, nil
	}
	return Backend{}, false, fmt.Errorf("engine %s: backend %s does not run %s on %s and the engine has no fallback for it", engine, name, dt, orUnknown(arch))
}

func orUnknown(arch string) string {
	if arch == "" {
		return "this GPU"
	}
	return arch
}
