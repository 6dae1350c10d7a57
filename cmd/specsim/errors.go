package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/specsim/specsim/audit"
	"github.com/specsim/specsim/audit/measured"
	"github.com/specsim/specsim/golden"
	"github.com/specsim/specsim/kernels"
	"github.com/specsim/specsim/simulate"
	"github.com/specsim/specsim/simulate/acceptance"
	"github.com/specsim/specsim/simulate/chart"
)

// queryFlagNames maps the fields of simulate.Query to the flags that set
// them (addQueryFlags).
var queryFlagNames = map[string]string{
	"Model": "--model", "Precision": "--precision", "GPU": "--gpu", "Topology": "--topology",
	"GPUsPerNode": "--nvlink-domain-gpus", "Workload": "--workload", "ISL": "--isl", "OSL": "--osl",
	"Cached": "--cached", "RangeRatio": "--range-ratio", "AgentX": "--agentx", "Spec": "--spec",
	"Thinking": "--thinking", "AL": "--al", "Method": "--method", "Histogram": "--histogram",
	"MaxRunning": "--max-running", "CUDAGraphMaxBS": "--cuda-graph-max-bs", "Chunk": "--chunk",
	"MemFraction": "--mem-fraction", "DraftDType": "--draft-dtype", "KVDType": "--kv-dtype",
	"Engine": "--engine", "SchedOverhead": "--sched-overhead-ms", "SpecOverhead": "--spec-overhead-ms",
	"MoESkew": "--moe-skew", "Requests": "--requests", "Seed": "--seed", "Calibration": "--calibration",
	"MambaSSMDType": "--mamba-ssm-dtype", "KernelTables": "--kernel-table", "AllReduceFusion": "--enable-flashinfer-allreduce-fusion", "NoAllReduceFusion": "--enforce-disable-flashinfer-allreduce-fusion",
	"SpecV2": "--spec-v2", "MoEBackend": "--moe-runner-backend", "SpecMoEBackend": "--speculative-moe-runner-backend",
	"AgentXTrace": "--agentx-trace", "Conc": "--conc", "Steps": "--steps",
	// Set by predict --recipe from the model the recipe serves.
	"GoldenModel": "--recipe (its served model's golden curve)",
	// The server flags (--prefill-max-running, --hicache-*, ...) name
	// themselves in ServerConfig's errors.
	"Server": "server flags",
	// Not Query fields: CalibrateOptions' and Compare's, and a measured
	// deployment's keys ("Deployment.gpu"), which --set supplies.
	"Sim": "--sim", "Params": "--params", "Deployment": "--set",
}

// The fields of the other packages' setting errors, and their flags.
var (
	goldenFlagNames   = map[string]string{"DraftModel": "--draft-model"}
	kernelsFlagNames  = map[string]string{"GPU": "--gpu", "Engine": "--engine"}
	auditFlagNames    = map[string]string{"DraftQuantization": "--draft-quantization", "TP": "--tp", "EP": "--ep", "DP": "--dp", "Engine": "--engine"}
	measuredFlagNames = map[string]string{"Deployment": "--set"}
)

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
// simulate.Error fields are Query field names, the other packages' Error
// fields are mapped by their own tables. The packages' errors are looked
// for before simulate's, which may wrap one (a --kernel-table measured on
// another GPU). A field "Field.key" is the key of a key=value flag,
// restated as "--flag key=value". An error without a value is about a
// missing setting, and says to pass the flag.
func flagError(err error) error {
	var field, value, reason string
	var ae *acceptance.Error
	var ge *golden.Error
	var ke *kernels.Error
	var aue *audit.Error
	var me *measured.Error
	var se *simulate.Error
	switch {
	case errors.As(err, &ae):
		field, value, reason = "--"+ae.Field, ae.Value, ae.Reason
	case errors.As(err, &ge):
		field, value, reason = flagName(goldenFlagNames, ge.Field), ge.Value, ge.Reason
	case errors.As(err, &ke):
		field, value, reason = flagName(kernelsFlagNames, ke.Field), ke.Value, ke.Reason
	case errors.As(err, &aue):
		field, value, reason = flagName(auditFlagNames, aue.Field), aue.Value, aue.Reason
	case errors.As(err, &me):
		field, value, reason = flagName(measuredFlagNames, me.Field), me.Value, me.Reason
	case errors.As(err, &se):
		field, value, reason = flagName(queryFlagNames, se.Field), se.Value, se.Reason
	default:
		return err
	}
	flag, key, pair := strings.Cut(field, ".")
	switch {
	case pair && value == "":
		return fmt.Errorf("%s %s: %s; pass %s %s=...", flag, key, reason, flag, key)
	case pair:
		return fmt.Errorf("%s %s=%s: %s", flag, key, value, reason)
	case value == "":
		// A setting that is needed and missing.
		return fmt.Errorf("%s: %s; pass %s", field, reason, field)
	}
	return fmt.Errorf("%s %s: %s", field, value, reason)
}

// flagName is the flag of a field in names, keeping a ".key" suffix:
// "AgentX.duration" is "--agentx.duration". An unmapped field stays as is.
func flagName(names map[string]string, field string) string {
	head, key, pair := strings.Cut(field, ".")
	f, ok := names[head]
	switch {
	case !ok:
		return field
	case pair:
		return f + "." + key
	}
	return f
}

// setFlagSkips restates why measured points were skipped where a
// deployment key is missing, as the --set that supplies it.
func setFlagSkips(skips []simulate.Skipped) {
	for i, s := range skips {
		var se *simulate.Error
		if errors.As(s.Err, &se) && strings.HasPrefix(se.Field, "Deployment.") {
			skips[i].Reason = flagError(s.Err).Error()
		}
	}
}
