package hub

import (
	"context"
	"os"

	"github.com/specsim/specsim/audit"
)

// Audit fetches a Hub checkpoint's configs, index and shard headers into a
// temporary directory and audits it there. The report names the hf://
// reference; BytesRead counts the bytes fetched over HTTP.
func Audit(ctx context.Context, c *Client, ref Ref, cfg audit.Config) (*audit.Report, Stats, error) {
	dir, err := os.MkdirTemp("", "specsim-hub-")
	if err != nil {
		return nil, Stats{}, err
	}
	defer os.RemoveAll(dir)
	st, err := c.Fetch(ctx, ref, dir)
	if err != nil {
		return nil, st, err
	}
	r, err := audit.Run(dir, cfg)
	if err != nil {
		return nil, st, err
	}
	r.Dir = ref.String()
	r.BytesRead = st.Bytes
	return r, st, nil
}
