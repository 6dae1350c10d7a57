package main

import (
	"context"
	"strings"

	"github.com/specsim/specsim/audit"
	"github.com/specsim/specsim/audit/hub"
)

// auditSource audits a checkpoint directory or an hf://ORG/MODEL[@REV]
// reference (configs, index and shard headers over HTTP range requests;
// HF_TOKEN and HF_ENDPOINT as huggingface_hub reads them).
func auditSource(src string, c audit.Config) (*audit.Report, error) {
	if !strings.HasPrefix(src, "hf://") {
		return audit.Run(src, c)
	}
	ref, err := hub.ParseRef(src)
	if err != nil {
		return nil, err
	}
	r, _, err := hub.Audit(context.Background(), hub.FromEnv(), ref, c)
	return r, err
}
