package kernels

import (
	"bytes"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"
)

// Backend is one engine's MoE runner: the expert-weight formats it accepts
// and its speed relative to the engine's fastest fused kernel.
type Backend struct {
	Name       string
	Engine     string // "sglang", "vllm", "trtllm"
	DTypes     []DType
	Efficiency float64 // (0, 1]: kernel time is divided by it
	Notes      string
	Source     string
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
		Engine   string            `yaml:"engine"`
		Source   string            `yaml:"source"`
		Fallback map[string]string `yaml:"fallback"`
		Backends []struct {
			Name       string   `yaml:"name"`
			DTypes     []string `yaml:"dtypes"`
			Efficiency float64  `yaml:"efficiency"`
			Notes      string   `yaml:"notes"`
		} `yaml:"backends"`
	} `yaml:"engines"`
}

type backendTable struct {
	backends []Backend
	fallback map[string]map[DType]string // engine -> dtype -> backend name
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
	t := &backendTable{fallback: map[string]map[DType]string{}}
	for _, e := range f.Engines {
		engine := strings.ToLower(e.Engine)
		fb := map[DType]string{}
		for k, v := range e.Fallback {
			dt, err := ParseDType(k)
			if err != nil {
				return nil, fmt.Errorf("%s: engine %s: fallback: %v", name, engine, err)
			}
			fb[dt] = v
		}
		t.fallback[engine] = fb
		for _, b := range e.Backends {
			if !(b.Efficiency > 0 && b.Efficiency <= 1) {
				return nil, fmt.Errorf("%s: %s/%s: efficiency %v outside (0, 1]", name, engine, b.Name, b.Efficiency)
			}
			be := Backend{Name: b.Name, Engine: engine, Efficiency: b.Efficiency, Notes: b.Notes, Source: e.Source}
			for _, d := range b.DTypes {
				dt, err := ParseDType(d)
				if err != nil {
					return nil, fmt.Errorf("%s: %s/%s: %v", name, engine, b.Name, err)
				}
				be.DTypes = append(be.DTypes, dt)
			}
			t.backends = append(t.backends, be)
		}
		for dt, n := range fb {
			if _, ok := t.find(engine, n); !ok {
				return nil, fmt.Errorf("%s: engine %s: fallback for %s names unknown backend %q", name, engine, dt, n)
			}
			if b, _ := t.find(engine, n); !b.Accepts(dt) {
				return nil, fmt.Errorf("%s: engine %s: fallback backend %q does not accept %s", name, engine, n, dt)
			}
		}
	}
	return t, nil
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
		out[i] = b
	}
	return out
}

// BackendFor resolves the backend an engine runs experts stored in dt on
// when name is requested ("" or "auto" asks for the engine's choice). If
// the named backend does not accept dt the engine falls back (an
// unquantized BF16 draft next to an NVFP4 target lands on Triton in SGLang
// and vLLM) and fellBack is true.
func BackendFor(engine, name string, dt DType) (b Backend, fellBack bool, err error) {
	engine = strings.ToLower(strings.TrimSpace(engine))
	if engine == "tensorrt-llm" || engine == "trt-llm" || engine == "tensorrt_llm" {
		engine = "trtllm"
	}
	fb, ok := backends.fallback[engine]
	if !ok {
		engines := make([]string, 0, len(backends.fallback))
		for e := range backends.fallback {
			engines = append(engines, e)
		}
		sort.Strings(engines)
		return Backend{}, false, fmt.Errorf("unknown engine %q: want %s", engine, strings.Join(engines, ", "))
	}
	name = strings.ToLower(strings.TrimSpace(name))
	if name == "" || name == "auto" {
		// The engine's pick: its most efficient backend for the format.
		var best Backend
		for _, c := range backends.backends {
			if c.Engine == engine && c.Accepts(dt) && c.Efficiency > best.Efficiency {
				best = c
			}
		}
		if best.Name == "" {
			return Backend{}, false, fmt.Errorf("engine %s has no MoE backend for %s", engine, dt)
		}
		return best, false, nil
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
	if want.Accepts(dt) {
		return want, false, nil
	}
	fbName, ok := fb[dt]
	if dt == FP16 && !ok {
		fbName, ok = fb[BF16]
	}
	if !ok {
		return Backend{}, false, fmt.Errorf("engine %s: backend %s does not accept %s and the engine has no fallback for it", engine, name, dt)
	}
	b, _ = backends.find(engine, fbName)
	return b, true, nil
}
