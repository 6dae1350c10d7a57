package main

import (
	"errors"
	"fmt"

	"github.com/specsim/specsim/simulate"
	"github.com/specsim/specsim/simulate/acceptance"
	"github.com/specsim/specsim/simulate/chart"
)

// queryFlagNames maps the fields of simulate.Query to the flags that set
// them (addQueryFlags).
var queryFlagNames = map[string]string{
	"Model": "--model", "Precision": "--precision", "GPU": "--gpu", "Topology": "--topology",
	"GPUsPerNode": "--gpus-per-node", "Workload": "--workload", "ISL": "--isl", "OSL": "--osl",
	"Cached": "--cached", "RangeRatio": "--range-ratio", "AgentX": "--agentx", "Spec": "--spec",
	"Thinking": "--thinking", "AL": "--al", "Method": "--method", "Histogram": "--histogram",
	"MaxRunning": "--max-running", "CUDAGraphMaxBS": "--cuda-graph-max-bs", "Chunk": "--chunk",
	"MemFraction": "--mem-fraction", "DraftDType": "--draft-dtype", "KVDType": "--kv-dtype",
	"Engine": "--engine", "SchedOverhead": "--sched-overhead-ms", "SpecOverhead": "--spec-overhead-ms",
	"MoESkew": "--moe-skew", "Requests": "--requests", "Seed": "--seed", "Calibration": "--calibration",
	"MambaSSMDType": "--mamba-ssm-dtype", "KernelTables": "--kernel-table", "AllReduceFusion": "--enable-flashinfer-allreduce-fusion",
	"SpecV2": "--spec-v2", "MoEBackend": "--moe-runner-backend", "SpecMoEBackend": "--speculative-moe-runner-backend",
	"AgentXTrace": "--agentx-trace", "Conc": "--conc", "Steps": "--steps",
	// The server flags (--prefill-max-running, --hicache-*, ...) name
	// themselves in ServerConfig's errors.
	"Server": "server flags",
}

// plotFlagError names --plot in a chart's refusal of its file name.
func plotFlagError(err error) error {
	var fe *chart.FormatError
	if errors.As(err, &fe) {
		return fmt.Errorf("--plot %w", err)
	}
	return err
}

// flagError restates a library error about a setting in terms of the flag
// that sets it: acceptance.Error fields are the flag names without "--",
// simulate.Error fields are Query field names. An error without a value is
// about a missing setting, and says to pass the flag.
func flagError(err error) error {
	var field, value, reason string
	var ae *acceptance.Error
	var se *simulate.Error
	switch {
	case errors.As(err, &ae):
		field, value, reason = "--"+ae.Field, ae.Value, ae.Reason
	case errors.As(err, &se):
		field, value, reason = se.Field, se.Value, se.Reason
		if f, ok := queryFlagNames[se.Field]; ok {
			field = f
		}
	default:
		return err
	}
	if value == "" {
		// A setting that is needed and missing.
		return fmt.Errorf("%s: %s; pass %s", field, reason, field)
	}
	return fmt.Errorf("%s %s: %s", field, value, reason)
}
