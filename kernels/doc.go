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
// measured latency is interpolated instead, and GPUs without a table reuse
// the H200-fitted efficiencies scaled by their datasheet figures; each Cost
// says which of the three it used in its Source.
//
// The GPU catalog and the MoE runner backend table are embedded data files
// with a source for every figure, and the catalog can be overridden from a
// file (LoadCatalogFile) so that a new GPU needs no code change.
//
// The package imports nothing from the rest of the project.
package kernels
