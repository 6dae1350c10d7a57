package audit

import (
	"slices"
	"strings"
)

// The engines allocate parameters through PyTorch's CUDA caching allocator,
// and SGLang's "mem usage" is the drop in free device memory
// (torch.cuda.mem_get_info), so the logged figure counts allocator
// segments, not tensor bytes. The allocator (c10/cuda/CUDACachingAllocator)
// rounds requests to 512 bytes, serves requests of at most 1 MiB from 2 MiB
// segments, requests under 10 MiB from 20 MiB segments, and gives larger
// requests their own segment rounded up to 2 MiB.
//
// Measured on an H200 (torch 2.11): allocating the Qwen3.5-397B draft's
// parameters for one rank moved mem_get_info by 16.0879 / 8.0762 / 4.0840 /
// 2.0801 GiB at TP 1/2/4/8 against 16.0743 / 8.0704 / 4.0704 / 2.0704 GiB
// of tensor bytes; this model gives the measured overhead at TP 2, 4 and 8
// exactly and 4 MiB less at TP 1 (the first allocations of the process).
const (
	allocMinBlock     = 512
	allocSmallSize    = 1 << 20
	allocSmallBuffer  = 2 << 20
	allocMinLargeSize = 10 << 20
	allocLargeBuffer  = 20 << 20
	allocRoundLarge   = 2 << 20
)

func roundUp(n, to int64) int64 { return (n + to - 1) / to * to }

// allocatorFootprint is the device memory the caching allocator reserves
// for allocations of the given sizes, made in order into an empty cache.
func allocatorFootprint(sizes []int64) int64 {
	var total int64
	var small, mid []int64 // free bytes left in each open segment
	fit := func(free []int64, n, segment int64) []int64 {
		for i := range free {
			if free[i] >= n {
				free[i] -= n
				return free
			}
		}
		total += segment
		return append(free, segment-n)
	}
	for _, n := range sizes {
		if n <= 0 {
			continue
		}
		n = roundUp(n, allocMinBlock)
		switch {
		case n <= allocSmallSize:
			small = fit(small, n, allocSmallBuffer)
		case n < allocMinLargeSize:
			mid = fit(mid, n, allocLargeBuffer)
		default:
			total += roundUp(n, allocRoundLarge)
		}
	}
	return total
}

// engineParam names the parameter an engine stores a checkpoint module in:
// per-expert matrices become the fused w13 (gate and up) and w2 (down) of
// their FusedMoE layer, q/k/v one qkv_proj, gate/up one gate_up_proj.
func engineParam(module string) string {
	parent, last := splitName(module)
	if i := strings.Index(module, ".experts."); i >= 0 {
		base := EnginePrefix(module)
		if base != module || strings.HasSuffix(parent, ".experts") {
			if strings.Contains(last, "down") || last == "w2" {
				return base + ".w2"
			}
			return base + ".w13"
		}
	}
	switch last {
	case "q_proj", "k_proj", "v_proj":
		return parent + ".qkv_proj"
	case "gate_proj", "up_proj":
		return parent + ".gate_up_proj"
	case "in_proj_qkv", "in_proj_z":
		return parent + ".in_proj_qkvz"
	case "in_proj_a", "in_proj_b":
		return parent + ".in_proj_ba"
	}
	return module
}

// paramSizes turns per-parameter byte counts into allocation sizes in a
// stable order.
func paramSizes(byParam map[string]float64) []int64 {
	names := make([]string, 0, len(byParam))
	for k := range byParam {
		names = append(names, k)
	}
	slices.Sort(names)
	out := make([]int64, len(names))
	for i, k := range names {
		out[i] = int64(byParam[k] + 0.5)
	}
	return out
}
