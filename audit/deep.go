package audit

import (
	"path/filepath"

	"github.com/specsim/specsim/audit/deep"
)

// deepTensors lists where the value test (package audit/deep) reads: the
// draft's tensors, or with all every tensor of the checkpoint, each with its
// shard's path joined to the checkpoint directory.
func (r *Report) deepTensors(all bool) []deep.Tensor {
	var tensors []deep.Tensor
	add := func(ts []Tensor) {
		for _, t := range ts {
			tensors = append(tensors, deep.Tensor{Path: filepath.Join(r.Checkpoint.Dir, t.Shard), Name: t.Name,
				DType: t.DType, Shape: t.Shape, Begin: t.Begin, End: t.End})
		}
	}
	if all {
		add(r.Checkpoint.Tensors)
	} else if r.Draft != nil {
		for _, m := range r.Draft.Modules {
			add(m.Tensors)
		}
	}
	return tensors
}

// Deep runs the value test (package audit/deep) on the draft's tensors,
// or with all on every tensor, and merges its findings into the report.
func (r *Report) Deep(all bool, opt deep.Options) (*deep.Report, error) {
	rep, err := deep.Audit(r.deepTensors(all), opt)
	if err != nil {
		return nil, err
	}
	r.addFindings(rep.Findings)
	return rep, nil
}

// addFindings merges findings of another audit into the report, keeping
// the order most serious first.
func (r *Report) addFindings(fs []Finding) {
	r.Findings = append(r.Findings, fs...)
	sortFindings(r.Findings)
}
