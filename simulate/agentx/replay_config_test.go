package agentx

import (
	"errors"
	"testing"
)

// TestConfigErrorKeys: each number out of range is a ConfigError on the
// AgentX key that sets it, with the value held.
func TestConfigErrorKeys(t *testing.T) {
	for _, tt := range []struct {
		edit       func(*Config)
		key, value string
	}{
		{func(c *Config) { c.Conc = 0 }, "conc", "0"},
		{func(c *Config) { c.Duration = 1e12 }, "duration", "1e+12"},
		{func(c *Config) { c.StartMin, c.StartMax = 0.8, 0.5 }, "start-min", "0.8"},
		{func(c *Config) { c.StartMax = 1.5 }, "start-max", "1.5"},
		{func(c *Config) { c.WarmupPerLane = -1 }, "warmup-per-lane", "-1"},
		{func(c *Config) { c.SystemIdleCap = -2 }, "system-idle-cap", "-2"},
		{func(c *Config) { c.MaxContext = -3 }, "max-context", "-3"},
		{func(c *Config) { c.MaxTraces = -4 }, "max-traces", "-4"},
	} {
		c := DefaultConfig(4)
		tt.edit(&c)
		var ce *ConfigError
		if err := c.Validate(); !errors.As(err, &ce) || ce.Key != tt.key || ce.Value != tt.value {
			t.Errorf("%s: %v, want a ConfigError on %s %s", tt.key, err, tt.key, tt.value)
		}
	}
	if c := DefaultConfig(4); c.Validate() != nil {
		t.Errorf("default config refused: %v", c.Validate())
	}
}
