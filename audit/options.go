package audit

import (
	"fmt"
	"slices"
	"strings"
)

// Validate refuses options no engine run can have: an unknown engine, then
// whatever [Options.Check] refuses (a draft quantization SGLang's parser
// rejects, or any with another engine; a MoE backend the engine's backend
// table does not list).
func (o Options) Validate() error {
	if !slices.Contains(Engines(), o.Engine) {
		return fmt.Errorf("--engine %q: want %s", o.Engine, strings.Join(Engines(), " or "))
	}
	return o.Check()
}
