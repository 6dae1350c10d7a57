package acceptance

import (
	"fmt"

	"github.com/specsim/specsim/golden"
)

// ForCurve builds the sampler of a method for draft length k of a golden
// curve: the engine methods target AL(k) as published (what a recipe sets),
// chain draws from the curve's distribution at k (from its consistent
// projection where the curve is inconsistent). Empirical needs a histogram
// and is refused here.
func ForCurve(method string, c *golden.Curve, k int, seed uint64) (Sampler, error) {
	cfg := Config{Method: method, K: k, Seed: seed}
	switch method {
	case Empirical:
		return nil, fmt.Errorf("%s draws from a histogram, not a golden curve", method)
	case Chain:
		d, err := c.Distribution(k)
		if err != nil {
			return nil, err
		}
		cfg.Dist = d
	default:
		al, err := c.At(k)
		if err != nil {
			return nil, err
		}
		if k == 0 {
			return nil, fmt.Errorf("draft length k=0: no speculation to sample")
		}
		cfg.TargetAL = al
	}
	return New(cfg)
}
