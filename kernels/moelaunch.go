package kernels

import (
	"fmt"
	"slices"
	"sort"
	"strings"
)

// MoELaunch is what one engine launch says about its MoE runners: the
// flags as written ("" = not set) and the facts the engine's automatic
// choice depends on.
type MoELaunch struct {
	Engine string
	// Backend is --moe-runner-backend (SGLang), the MoE backend flag of
	// the others.
	Backend string
	// SpecBackend is SGLang's --speculative-moe-runner-backend; unset, the
	// draft inherits the target's resolved backend
	// (arg_groups/overrides.py _speculative_moe_runner_default).
	SpecBackend string
	// A2A is --moe-a2a-backend ("" = none).
	A2A string
	// Architecture is config.json's architectures[0].
	Architecture string
	// Quantization is the engine's name for the checkpoint's quantization
	// (quant_config.get_name(): modelopt_fp4, fp8, ...; "" = none).
	Quantization string
	// GPUArch is GPU.Arch ("" = unknown: model-specific resolutions that
	// need a GPU family are not applied).
	GPUArch string
}

// MoEChoice is the backend one model's MoE runs on and why.
type MoEChoice struct {
	// Requested is the backend value the MoE layer sees once the engine
	// has resolved its flags ("auto" or a backend name).
	Requested string
	// Origin says where Requested came from.
	Origin   string
	Backend  Backend
	FellBack bool
}

// CanonicalEngine is the name engine (in any case; "tensorrt-llm",
// "trt-llm" and "tensorrt_llm" for trtllm) goes by in [Engines].
func CanonicalEngine(engine string) string { return normEngine(engine) }

func normEngine(engine string) string {
	engine = strings.ToLower(strings.TrimSpace(engine))
	if engine == "tensorrt-llm" || engine == "trt-llm" || engine == "tensorrt_llm" {
		engine = "trtllm"
	}
	return engine
}

// DefaultBackend is the value an engine's MoE backend flag takes when a
// launch does not set it (SGLang: "auto").
func DefaultBackend(engine string) (string, error) {
	engine = normEngine(engine)
	d, ok := backends.defaults[engine]
	if !ok {
		return "", unknownEngine(engine)
	}
	return d, nil
}

// Engines are the engines whose MoE backends the package prices, sorted.
func Engines() []string {
	engines := make([]string, 0, len(backends.fallback))
	for e := range backends.fallback {
		engines = append(engines, e)
	}
	sort.Strings(engines)
	return engines
}

// knownEngine is nil for an engine (already normalized) the package
// prices, else the error naming the engines it does.
func knownEngine(engine string) error {
	if _, ok := backends.fallback[engine]; ok {
		return nil
	}
	return unknownEngine(engine)
}

func unknownEngine(engine string) error {
	return fmt.Errorf("unknown engine %q: want %s", engine, strings.Join(Engines(), ", "))
}

// CheckEngine reports an [Error] with Field "Engine" unless engine (in any
// case; "tensorrt-llm" and "trt-llm" are trtllm) is one of [Engines].
func CheckEngine(engine string) error {
	if _, ok := backends.fallback[normEngine(engine)]; !ok {
		return &Error{Field: "Engine", Value: engine, Reason: "unknown engine: want " + strings.Join(Engines(), ", ")}
	}
	return nil
}

// CheckBackendName reports an error unless name is "auto" or a MoE backend
// the engine has.
func CheckBackendName(engine, name string) error {
	engine = normEngine(engine)
	if err := knownEngine(engine); err != nil {
		return err
	}
	name = strings.ToLower(strings.TrimSpace(name))
	if name == "auto" {
		return nil
	}
	if _, ok := backends.find(engine, name); ok {
		return nil
	}
	names := []string{"auto"}
	for _, c := range backends.backends {
		if c.Engine == engine {
			names = append(names, c.Name)
		}
	}
	return fmt.Errorf("engine %s has no MoE backend %q: want %s", engine, name, strings.Join(names, ", "))
}

// targetRequest is the backend value the target's MoE layers see: the
// flag, or the engine's default after its model-specific resolution.
func targetRequest(l MoELaunch) (name, origin string, err error) {
	engine := normEngine(l.Engine)
	if err := knownEngine(engine); err != nil {
		return "", "", err
	}
	name = strings.ToLower(strings.TrimSpace(l.Backend))
	if name != "" {
		if err := CheckBackendName(engine, name); err != nil {
			return "", "", fmt.Errorf("--moe-runner-backend: %w", err)
		}
		if name != "auto" {
			return name, "--moe-runner-backend", nil
		}
	} else {
		if name, err = DefaultBackend(engine); err != nil {
			return "", "", err
		}
	}
	origin = "engine default (" + name + ")"
	if name != "auto" {
		return name, origin, nil
	}
	a2a := strings.ToLower(strings.TrimSpace(l.A2A))
	if a2a != "" && a2a != "none" {
		return name, origin, nil
	}
	quant := strings.ToLower(strings.TrimSpace(l.Quantization))
	if quant == "" {
		quant = "none"
	}
	for _, r := range backends.rules[engine] {
		if slices.Contains(r.archs, l.Architecture) && (r.gpuArch == "" || r.gpuArch == l.GPUArch) && slices.Contains(r.quant, quant) {
			return r.backend, fmt.Sprintf("auto resolved to %s for %s (%s) on %s", r.backend, l.Architecture, quant, r.gpuArch), nil
		}
	}
	return name, origin, nil
}

// ResolveTargetMoE is the backend the target's experts, stored in dt, run
// on.
func ResolveTargetMoE(l MoELaunch, dt DType) (MoEChoice, error) {
	name, origin, err := targetRequest(l)
	if err != nil {
		return MoEChoice{}, err
	}
	b, fell, err := BackendForArch(l.Engine, name, dt, l.GPUArch)
	if err != nil {
		return MoEChoice{}, err
	}
	return MoEChoice{Requested: name, Origin: origin, Backend: b, FellBack: fell}, nil
}

// ResolveDraftMoE is the backend a speculative draft's experts, stored in
// dt, run on: --speculative-moe-runner-backend when set, else the
// target's resolved backend; a backend that does not take dt falls back
// (SGLang's unquantized MoE: Triton unless flashinfer_trtllm,
// flashinfer_trtllm_routed, flashinfer_cutlass or triton_kernel).
func ResolveDraftMoE(l MoELaunch, dt DType) (MoEChoice, error) {
	var name, origin string
	if err := knownEngine(normEngine(l.Engine)); err != nil {
		return MoEChoice{}, err
	}
	if s := strings.ToLower(strings.TrimSpace(l.SpecBackend)); s != "" {
		if err := CheckBackendName(l.Engine, s); err != nil {
			return MoEChoice{}, fmt.Errorf("--speculative-moe-runner-backend: %w", err)
		}
		name, origin = s, "--speculative-moe-runner-backend"
	} else {
		t, o, err := targetRequest(l)
		if err != nil {
			return MoEChoice{}, err
		}
		name, origin = t, "inherited from the target: "+o
	}
	b, fell, err := BackendForArch(l.Engine, name, dt, l.GPUArch)
	if err != nil {
		return MoEChoice{}, err
	}
	return MoEChoice{Requested: name, Origin: origin, Backend: b, FellBack: fell}, nil
}
