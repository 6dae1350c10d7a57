// Package kernels prices one operation on one GPU: dense and grouped (MoE)
// GEMMs, attention for decode, verify and prefill, Gated DeltaNet state
// updates, norms, lm_head with sampling, collectives and kernel launches.
//
// A throughput prediction is only as good as its per-op costs, and the
// datasheet roofline max(bytes/bandwidth, flops/peak) is optimistic for the
// small, latency-dominated kernels of a decode step. So every op is priced as
// a roofline whose bandwidth and compute efficiencies and whose fixed
// per-kernel time are fitted to kernels measured on a real GPU (the H200
// tables embedded under data/h200). Where a measured table covers a shape the
// measured latency is interpolated instead (multilinearly, in log space, in
// the ratio of measured to fitted roofline, so the roofline's shape holds
// between measured points); a shape the table lacks borrows that ratio from
// the nearest measured shape. GPUs without a table reuse the H200-fitted
// efficiencies scaled by their datasheet figures. Each Cost says which it
// used in its Source: "measured-interpolated", "roofline" or
// "roofline-carried-over".
//
// MoE is priced two ways: MoEFused (the default) for an engine's fused
// routed-expert kernels, and MoETorchGrouped for the PyTorch grouped-GEMM
// path the H200 collector measures and "specsim kernels validate" scores.
//
// The GPU catalog and the MoE runner backend table are embedded data files
// with a source for every figure. A [Catalog] is a value ([DefaultCatalog],
// or [LoadCatalogFile] for the embedded one merged with a file, so that a new
// GPU needs no code change); it carries the [Calibrations] its GPUs are
// priced with, fitted from the embedded measured tables when first used. The
// package keeps no mutable state of its own.
//
// The package imports nothing from the rest of the project.
package kernels
