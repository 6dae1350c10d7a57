package main

import (
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/specsim/specsim/audit/recipe"
	"github.com/specsim/specsim/simulate"
)

// recipePrediction is one variant's prediction.
type recipePrediction struct {
	Variant     string           `json:"variant"`
	Topology    string           `json:"topology"`
	Conc        int              `json:"conc"`
	Steps       int              `json:"steps"`
	GoldenAL    *float64         `json:"golden_al"`
	Read        []recipe.Setting `json:"read"`
	Unsupported []string         `json:"unsupported"`
	Result      *simulate.Result `json:"result"`
}

// predictRecipe predicts every selected variant of a recipe with qf's
// flags as defaults for what the recipe does not say.
func predictRecipe(arg string, qf *queryFlags, conc int, concSet, modelSet bool) ([]recipePrediction, error) {
	rc, err := recipe.Load(arg)
	if err != nil {
		return nil, err
	}
	if len(rc.Variants) > 64 {
		return nil, fmt.Errorf("%s: %d variants; pick one with FILE:selector", rc.File, len(rc.Variants))
	}
	set, err := qf.golden.load()
	if err != nil {
		return nil, err
	}
	rep := recipe.Check(rc, recipe.Options{Curves: goldenCurves{set}})
	var out []recipePrediction
	for vi, v := range rc.Variants {
		p, err := predictVariant(v, &rep.Variants[vi], qf, conc, concSet, modelSet)
		if err != nil {
			return nil, fmt.Errorf("%s:%s: %w", rc.File, v.Name, err)
		}
		out = append(out, *p)
	}
	return out, nil
}

// predictVariant predicts one variant from what it says
// (recipe.Variant.Settings), with qf's flags for what it does not.
func predictVariant(v *recipe.Variant, vr *recipe.VariantReport, qf *queryFlags, conc int, concSet, modelSet bool) (*recipePrediction, error) {
	o := recipe.SettingsOptions{Conc: conc, ConcGiven: concSet,
		KnownModel: func(name string) bool { _, err := simulate.ResolveModel(name); return err == nil }}
	if modelSet {
		o.Model = qf.q.Model
	}
	st, err := v.Settings(vr, o)
	var ue *recipe.UnknownModelError
	if errors.As(err, &ue) {
		return nil, fmt.Errorf("%w; pass --model", err)
	}
	if err != nil {
		return nil, err
	}
	q := *qf
	q.q.Model = st.Model
	setStr := func(to *string, v string) {
		if v != "" {
			*to = v
		}
	}
	setStr(&q.q.GPU, st.GPU)
	setStr(&q.q.Precision, st.Precision)
	setStr(&q.q.Engine, st.Engine)
	setStr(&q.q.KVDType, st.KVDType)
	setStr(&q.q.MambaSSMDType, st.MambaSSMDType)
	setStr(&q.q.MoEBackend, st.MoEBackend)
	setStr(&q.q.SpecMoEBackend, st.SpecMoEBackend)
	if st.Agentic {
		q.workload, q.isl, q.osl = "agentx", 0, 0
	}
	if st.MaxRunning > 0 {
		q.q.MaxRunning = st.MaxRunning
	}
	if st.GraphMaxBS > 0 {
		q.q.CUDAGraphMaxBS = st.GraphMaxBS
	}
	if st.MemFraction > 0 {
		q.q.MemFraction = st.MemFraction
	}
	if st.Chunk > 0 {
		q.q.Chunk = st.Chunk
	}
	q.q.AllReduceFusion = q.q.AllReduceFusion || st.AllReduceFusion
	q.q.SpecV2 = q.q.SpecV2 || st.SpecV2
	q.q.Server.PrefillDraft = q.q.Server.PrefillDraft || st.PrefillDraft
	q.q.Spec = "none"
	if st.Steps > 0 {
		q.q.Spec = "mtp"
	} else {
		q.steps = ""
	}
	par := func(l recipe.Layout) simulate.Parallel {
		return simulate.Parallel{TP: l.TP, EP: l.EP, PP: l.PP, DPAttention: l.DPAttention}
	}
	topo := simulate.Topology{Agg: par(st.Agg)}
	if st.Disagg {
		topo = simulate.Topology{Disagg: true, PrefillWorkers: st.Prefill.Workers, Prefill: par(st.Prefill),
			DecodeWorkers: st.Decode.Workers, Decode: par(st.Decode)}
	}
	res, err := q.resolve()
	if err != nil {
		return nil, err
	}
	if st.Steps > 0 {
		if pt, err := res.Target.At(st.Steps); err == nil {
			st.CheckAL(pt.AL, pt.Source)
		}
	}
	p := &recipePrediction{Variant: v.Name, Topology: topo.String(), Conc: st.Conc, Steps: st.Steps, GoldenAL: st.GoldenAL,
		Read: st.Read, Unsupported: st.Unsupported}
	if p.Result, err = simulate.Predict(res, topo, p.Conc, p.Steps); err != nil {
		return nil, err
	}
	return p, nil
}

func writeRecipePredictions(w io.Writer, file string, ps []recipePrediction) {
	for i, p := range ps {
		if i > 0 {
			fmt.Fprintln(w)
		}
		fmt.Fprintf(w, "%s: variant %s\nread from the recipe:\n", file, p.Variant)
		t := &table{header: []string{"setting", "value", "from"}}
		for _, s := range p.Read {
			t.add(s.Setting, s.Value, s.From)
		}
		t.write(w, formatText)
		if len(p.Unsupported) > 0 {
			fmt.Fprintln(w, "not modelled (listed, not applied):")
			for _, u := range p.Unsupported {
				fmt.Fprintln(w, "  - "+u)
			}
		}
		r := p.Result
		fmt.Fprintf(w, "prediction: %s conc %d k %d (AL %.2f, %s): %s tok/s/GPU, %s tok/s/user, TTFT p90 %s ms, TPOT p90 %s ms, E2EL p90 %s s\n",
			p.Topology, p.Conc, p.Steps, r.AL, r.Sim, sig3(r.TputPerGPU), sig3(r.Interactivity), sig3(r.TTFTp90ms), sig3(r.TPOTp90ms), sig3(r.E2EL.P90))
	}
}

func runPredictRecipe(fs *flag.FlagSet, arg string, qf *queryFlags, conc int, format format, stdout, stderr io.Writer) int {
	concSet, modelSet := false, false
	fs.Visit(func(f *flag.Flag) {
		concSet = concSet || f.Name == "conc"
		modelSet = modelSet || f.Name == "model"
	})
	ps, err := predictRecipe(arg, qf, conc, concSet, modelSet)
	if err != nil {
		fmt.Fprintln(stderr, "specsim predict --recipe:", flagError(err))
		return exitBadInput
	}
	if format == formatJSON {
		if err := writeJSON(stdout, map[string]any{"recipe": arg, "variants": ps}); err != nil {
			fmt.Fprintln(stderr, "specsim predict --recipe:", err)
			return exitBadInput
		}
		return exitOK
	}
	writeRecipePredictions(stdout, arg, ps)
	return exitOK
}
