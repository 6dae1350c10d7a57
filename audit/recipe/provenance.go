package recipe

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
)

// Codes of the checks reviewers otherwise make by hand: is what runs the
// engine and the checkpoint the recipe claims?
const (
	CodeEngineUnknown       = "engine-unknown"
	CodeDraftNotServed      = "draft-checkpoint-not-served"
	CodeDraftDummyWeights   = "draft-dummy-weights"
	CodeDraftDTypeOverride  = "draft-dtype-override"
	CodeArchOverride        = "model-override-architecture"
	CodeConfigOverride      = "model-override-config"
	CodeImageNotUpstream    = "image-not-upstream"
	CodeEngineModified      = "engine-modified"
	CodeEngineMountOverride = "engine-source-mounted"
)

// knownEngines are the engine names srt-slurm and InferenceX accept
// (normaliseEngine folds their spellings).
var knownEngines = []string{EngineSGLang, EngineVLLM, EngineTRTLLM, EngineATOM, EngineTileRT}

// upstreamImages are the registries and organisations the engines publish
// their images under: SGLang lmsysorg/sglang, vLLM vllm/vllm-openai,
// TensorRT-LLM and Dynamo nvcr.io/nvidia, ROCm builds rocm/.
var upstreamImages = []string{
	"lmsysorg/", "docker.io/lmsysorg/", "vllm/", "docker.io/vllm/",
	"nvcr.io/nvidia/", "rocm/", "docker.io/rocm/",
}

// modifyKeys are recipe keys that run code or change files in the
// container before the engine starts.
var modifyKeys = []string{"setup_script", "setup_scripts", "setup", "pre_launch", "pre_launch_script", "prologue", "patch", "patches", "install_script", "sglang_src_dir", "vllm_src_dir", "pip_install"}

// engineSourcePaths are container paths whose replacement swaps engine
// code for the pinned image's.
var engineSourcePaths = []string{"sglang", "vllm", "tensorrt_llm", "site-packages", "dist-packages", "sgl-workspace", "flashinfer", "dynamo"}

// archOverrideKeys change which model class (and so which MTP class) the
// engine builds; configOverrideKeys change shapes or quantization.
var (
	archOverrideKeys   = []string{"architectures", "model_type"}
	configOverrideKeys = []string{"quantization_config", "num_hidden_layers", "num_nextn_predict_layers", "mtp_num_hidden_layers",
		"num_experts", "n_routed_experts", "num_experts_per_tok", "hidden_size", "intermediate_size", "moe_intermediate_size",
		"torch_dtype", "dtype", "text_config", "vocab_size", "tie_word_embeddings"}
)

func (c *checker) checkProvenance() {
	c.checkEngineKnown()
	c.checkImage()
	c.checkModifications()
	for _, r := range c.v.Roles {
		c.checkOverrides(r)
		if r.Spec != nil {
			c.checkDraftCheckpoint(r)
		}
	}
}

func (c *checker) checkEngineKnown() {
	seen := map[string]bool{}
	var bad []string
	for _, e := range append([]string{c.v.Engine}, roleEngines(c.v)...) {
		if e != "" && !slices.Contains(knownEngines, e) && !seen[e] {
			seen[e] = true
			bad = append(bad, e)
		}
	}
	for _, e := range bad {
		c.add(CodeEngineUnknown, SeverityError,
			"engine %q is not one srt-slurm runs (%s, with their dynamo-/-disagg spellings), so no role's arguments were read and no speculative check ran: fix the engine name", e, strings.Join(knownEngines, ", "))
	}
}

func roleEngines(v *Variant) []string {
	var out []string
	for _, r := range v.Roles {
		out = append(out, r.Engine)
	}
	return out
}

// images lists the container references a recipe pins, with where.
func (c *checker) images() [][2]string {
	var out [][2]string
	for _, p := range [][]string{{"model", "container"}, {"identity", "container", "image"}, {"container", "image"}, {"container"}} {
		if s := c.v.tree.Get(p...).String(); s != "" {
			out = append(out, [2]string{strings.Join(p, "."), s})
		}
	}
	return out
}

func (c *checker) checkImage() {
	seen := map[string]bool{}
	for _, im := range c.images() {
		at, ref := im[0], strings.TrimSpace(im[1])
		if seen[ref] {
			continue
		}
		seen[ref] = true
		l := strings.ToLower(ref)
		// An srt-slurm alias ("dynamo-sglang") or a squashfs file names no
		// registry; the alias table lives with the cluster (InferenceX's
		// master config maps its aliases to upstream images).
		switch {
		case !strings.Contains(l, "/") || strings.HasSuffix(l, ".sqsh"):
		default:
			upstream := false
			for _, p := range upstreamImages {
				if strings.HasPrefix(l, p) {
					upstream = true
				}
			}
			if !upstream {
				c.add(CodeImageNotUpstream, SeverityWarning,
					"%s is %q, outside the engines' upstream organisations (%s): a private build may carry patches that change what the engine loads or how it accepts drafts; pin an upstream image or document the build",
					at, ref, strings.Join(upstreamImages, ", "))
			}
		}
	}
}

// checkModifications flags setup scripts, patches and mounts that change
// the engine inside the pinned image.
func (c *checker) checkModifications() {
	var walk func(v *Value, path []string)
	walk = func(v *Value, path []string) {
		if v == nil || v.Kind != Map || len(path) > 6 {
			return
		}
		for _, k := range v.Keys {
			child := v.Fields[k]
			at := strings.Join(append(append([]string{}, path...), k), ".")
			lk := strings.ToLower(k)
			switch {
			case slices.Contains(modifyKeys, lk) && child != nil && child.Kind != Null && !(child.Kind == Scalar && strings.TrimSpace(child.Str) == ""):
				c.add(CodeEngineModified, SeverityWarning,
					"%s runs before the engine starts (%s): it can patch or reinstall the engine, so the pinned image is not necessarily what runs; show what it changes or drop it", at, preview(child))
			case lk == "extra_mount" || lk == "container_mounts" || lk == "mounts":
				for _, m := range mountTargets(child) {
					lm := strings.ToLower(m)
					for _, p := range engineSourcePaths {
						if strings.Contains(lm, p) {
							c.add(CodeEngineMountOverride, SeverityError,
								"%s mounts %q over engine code inside the container: the engine that runs is not the pinned image's; drop the mount or pin an image with the change", at, m)
							break
						}
					}
				}
			case child != nil && child.Kind == Map && k != "environment" && !strings.HasSuffix(lk, "_environment") && lk != "env":
				walk(child, append(path, k))
			}
		}
	}
	walk(c.v.tree, nil)
}

// mountTargets are the "host:container" entries of a mount list.
func mountTargets(v *Value) []string {
	var out []string
	if v == nil {
		return nil
	}
	add := func(s string) {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	switch v.Kind {
	case Scalar:
		for _, s := range strings.Split(v.Str, ",") {
			add(s)
		}
	case List:
		for _, it := range v.Items {
			add(it.String())
		}
	}
	return out
}

func preview(v *Value) string {
	switch v.Kind {
	case Scalar:
		s := v.Str
		if len(s) > 80 {
			s = s[:80] + "..."
		}
		return fmt.Sprintf("%q", s)
	case List:
		return fmt.Sprintf("%d entries", len(v.Items))
	}
	return fmt.Sprintf("%d keys", len(v.Keys))
}

// overrideFlags are the engine flags that rewrite config.json at load.
var overrideFlags = []string{"json-model-override-args", "hf-overrides", "hf_overrides", "json_model_override_args"}

func (c *checker) checkOverrides(r *Role) {
	for _, f := range overrideFlags {
		v := r.Args.Get(f)
		if v == nil || v.Kind == Null {
			continue
		}
		at := r.ArgsAt + "." + f
		keys, err := overrideKeys(v)
		if err != nil {
			c.add(CodeConfigOverride, SeverityWarning, "%s is not a JSON object (%v); the engine refuses it or ignores it: fix it", at, err)
			continue
		}
		var arch, cfg []string
		for _, k := range keys {
			switch {
			case slices.Contains(archOverrideKeys, k):
				arch = append(arch, k)
			case slices.Contains(configOverrideKeys, k):
				cfg = append(cfg, k)
			}
		}
		if len(arch) > 0 {
			c.add(CodeArchOverride, SeverityError,
				"%s overrides %s: the engine builds a different model class than the checkpoint's config.json names (and with it a different MTP head and quantization rule), so the checkpoint audit does not describe what runs: drop the override", at, strings.Join(arch, ", "))
		}
		if len(cfg) > 0 {
			c.add(CodeConfigOverride, SeverityWarning,
				"%s overrides %s of config.json: shapes, layer counts or quantization differ from the shipped checkpoint, so audit the overridden configuration, not the release", at, strings.Join(cfg, ", "))
		}
	}
}

// overrideKeys are the top-level keys of a JSON (or YAML map) override.
func overrideKeys(v *Value) ([]string, error) {
	if v.Kind == Map {
		return append([]string(nil), v.Keys...), nil
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal([]byte(v.String()), &m); err != nil {
		return nil, err
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys, nil
}

// draftPathKeys are where each engine names a separate draft checkpoint.
var draftPathKeys = map[string][]string{
	EngineSGLang: {"speculative-draft-model-path", "speculative-draft-model"},
	EngineATOM:   {"draft-model"},
}

// checkDraftCheckpoint: the draft an MTP recipe loads should be the served
// checkpoint's own head; a separate path, a dummy load format or a dtype
// override means the audited head is not what runs.
func (c *checker) checkDraftCheckpoint(r *Role) {
	s := r.Spec
	algo := strings.ToUpper(s.Algorithm)
	native := algo == "NEXTN" || algo == "MTP" || strings.HasSuffix(algo, "MTP") || algo == "EAGLE" && s.DraftModel == ""
	path, at := s.DraftModel, ""
	for _, k := range draftPathKeys[r.Engine] {
		if v := r.Args.Get(k).String(); v != "" {
			path, at = v, r.ArgsAt+"."+k
		}
	}
	if at == "" && s.DraftModel != "" {
		at = r.ArgsAt + " draft model"
	}
	if path != "" && native && !c.servedPath(path) {
		c.add(CodeDraftNotServed, SeverityWarning,
			"%s is %q, not the served checkpoint (%s): the %s draft loads from another checkpoint, so audit that one's MTP head (specsim audit), not the release's",
			at, path, strings.Join(c.v.ModelNames, ", "), s.Algorithm)
	}
	if lf := r.Args.Get("speculative-draft-load-format").String(); strings.EqualFold(lf, "dummy") {
		c.add(CodeDraftDummyWeights, SeverityError,
			"%s.speculative-draft-load-format is dummy: the draft runs with random weights; remove it", r.ArgsAt)
	}
	var overrides []string
	collect := func(prefix string, v *Value) {
		if v == nil || v.Kind != Map {
			return
		}
		for _, k := range v.Keys {
			lk := strings.ToLower(k)
			if strings.Contains(lk, "dtype") || strings.Contains(lk, "kv_cache") || strings.Contains(lk, "kv-cache") {
				overrides = append(overrides, prefix+k+"="+v.Fields[k].String())
			}
		}
	}
	if r.Args != nil {
		for _, k := range r.Args.Keys {
			lk := strings.ToLower(k)
			if strings.HasPrefix(lk, "speculative-") && (strings.Contains(lk, "dtype") || strings.Contains(lk, "kv-cache")) {
				overrides = append(overrides, k+"="+r.Args.Fields[k].String())
			}
		}
	}
	collect("speculative-config.", r.Args.Get("speculative-config"))
	collect("speculative_config.", r.Args.Get("speculative_config"))
	if len(overrides) > 0 {
		c.add(CodeDraftDTypeOverride, SeverityWarning,
			"%s sets the draft's own %s: the draft runs at a precision other than the target's settings and the shipped checkpoint imply; AgentX reviewers expect the draft served as shipped: remove it or justify it",
			r.ArgsAt, strings.Join(overrides, ", "))
	}
}

// servedPath reports whether a draft path names the served checkpoint:
// a model name or path the recipe gives, or srt-slurm's /model mount.
func (c *checker) servedPath(p string) bool {
	n := strings.TrimRight(strings.TrimSpace(p), "/")
	if n == "/model" || n == "" {
		return true
	}
	for _, m := range c.v.ModelNames {
		if strings.EqualFold(strings.TrimRight(m, "/"), n) {
			return true
		}
	}
	if mp := c.v.tree.Get("model", "path").String(); strings.EqualFold(strings.TrimRight(mp, "/"), n) {
		return true
	}
	return false
}
