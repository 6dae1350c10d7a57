package audit

import (
	"fmt"
	"strings"

	"github.com/specsim/specsim/audit/model"
)

// The model description is package audit/model's; these names keep the
// audit's API.
type (
	ModelConfig = model.Config
	QuantConfig = model.QuantConfig
)

// MaxConfigSize bounds config.json and hf_quant_config.json.
const MaxConfigSize = model.MaxConfigSize

// LoadModelConfig is [model.Load].
func LoadModelConfig(dir string) (*ModelConfig, error) { return model.Load(dir) }

// ParseModelConfig is [model.Parse].
func ParseModelConfig(data []byte) (*ModelConfig, error) { return model.Parse(data) }

// ParseQuantConfig is [model.ParseQuant].
func ParseQuantConfig(data []byte) (*QuantConfig, error) { return model.ParseQuant(data) }

// Disagreements is [model.Disagreements].
func Disagreements(a, b *QuantConfig) []string { return model.Disagreements(a, b) }

// abbreviate lists the first n items and counts the rest.
func abbreviate(items []string, n int) string {
	if len(items) <= n {
		return strings.Join(items, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(items[:n], ", "), len(items)-n)
}
