package audit

import (
	"slices"
	"strconv"
	"strings"
)

// Validate refuses options no engine run can have: an unknown engine, then
// whatever [Options.Check] refuses (a draft quantization SGLang's parser
// rejects, or any with another engine; a MoE backend the engine's backend
// table does not list).
func (o Options) Validate() error {
	if !slices.Contains(Engines(), o.Engine) {
		return &Error{Field: "Engine", Value: strconv.Quote(o.Engine), Reason: "want " + strings.Join(Engines(), " or ")}
	}
	return o.Check()
}
