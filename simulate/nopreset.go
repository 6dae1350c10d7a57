package simulate

import (
	"fmt"
	"os"
	"strings"

	"github.com/specsim/specsim/golden"
)

// presetHint adds to a failed model lookup what a user can do when the name
// has a golden curve but no preset (DeepSeek-V4, GLM-5.2, Kimi-K3,
// MiniMax-M3 ship curves, but no public config.json of theirs is in this
// repository to build a preset from): price it from a checkpoint directory
// and pass the golden AL as --al, which the hint spells out.
func presetHint(q Query, set *golden.Set, err error) error {
	if st, serr := os.Stat(q.Model); serr == nil && st.IsDir() {
		return err
	}
	if set == nil {
		return err
	}
	key, rerr := set.Resolve(q.Model)
	if rerr != nil {
		return err
	}
	th, terr := golden.ParseThinking(orDefault(q.Thinking, "on"))
	if terr != nil {
		return err
	}
	c, cerr := set.Curve(key, th)
	if cerr != nil {
		return err
	}
	var als []string
	for k := 1; k <= c.MaxK(); k++ {
		if al, err := c.At(k); err == nil {
			als = append(als, fmt.Sprintf("k=%d: --al %g", k, al))
		}
	}
	hint := fmt.Sprintf("%v. %q has a golden curve (%s, thinking %s) but no preset: pass --model DIR (a checkpoint directory with its config.json) and the AL for your draft length, %s (or: specsim golden lookup --model %s --thinking %s --steps K)",
		err, q.Model, key, th, strings.Join(als, ", "), q.Model, th)
	return fmt.Errorf("%s", hint)
}
