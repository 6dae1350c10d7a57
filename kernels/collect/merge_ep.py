#!/usr/bin/env python3
"""Merge collect_moe_ep.py's raw output (ep_run/) into kernels/data/h200/moe_triton_ep8.csv (NOTES.md, round 5).

One row per token count for the EP8 shard of Qwen3.5-397B-A17B (64 local experts of 512, full inter 1024,
block FP8, SGLang v0.5.14's default config), in moe_triton.csv's columns plus `ep`. kernels_us is the
busiest of the 8 EP ranks, because the layer's all-reduce waits for it:
  busiest(M) = rank_mean(M) + slope(M) * (touched_busiest(M) - touched_mean(M))
rank_mean: the 8 ranks' kernels_us averaged (each over up to 32 rotated routings); touched_*: distinct
local experts per call, the mean over ranks and the mean over routings of the busiest rank's count
(columns of moe_triton_ep.csv); slope: us per touched expert, the least-squares fit of the per-routing,
per-rank timings of moe_triton_ep_sets.csv at the nearest measured token count (16..256; 16 below it).
Usage: merge_ep.py RAW_DIR OUT_DIR
"""
import csv
import sys


def main(raw, out):
    hdr = [l for l in open(f"{raw}/moe_triton_ep.csv") if l.startswith("#")]
    rows = list(csv.DictReader(l for l in open(f"{raw}/moe_triton_ep.csv") if not l.startswith("#")))
    sets = list(csv.DictReader(open(f"{raw}/moe_triton_ep_sets.csv")))
    slope = {}
    for m in sorted({int(r["tokens"]) for r in sets}):
        v = [(int(r["touched"]), float(r["kernels_us"])) for r in sets if int(r["tokens"]) == m]
        mx = sum(a for a, _ in v) / len(v)
        my = sum(b for _, b in v) / len(v)
        den = sum((a - mx) ** 2 for a, _ in v)
        slope[m] = sum((a - mx) * (b - my) for a, b in v) / den if den else 0.0
    with open(f"{out}/moe_triton_ep8.csv", "w") as f:
        for l in hdr:
            if l.startswith("# method:"):
                l = l.rstrip("\n") + "; merged by kernels/collect/merge_ep.py: kernels_us = the busiest of 8 EP ranks (its docstring)\n"
            f.write(l)
        f.write("# kernels_us: busiest of 8 ranks, derived from per-rank measurements (kernels/collect/merge_ep.py)\n")
        f.write("kernel,dtype,tokens,experts,topk,hidden,inter,ep,config,kernels_us,align_us,block_m,rank_mean_us,touched_mean,touched_busiest,slope_us_per_expert\n")
        for m in sorted({int(r["tokens"]) for r in rows}):
            ep = [r for r in rows if r["shard"] == "ep8" and int(r["tokens"]) == m]
            mean = sum(float(r["kernels_us"]) for r in ep) / len(ep)
            align = sum(float(r["align_us"]) for r in ep) / len(ep)
            tm, tb = float(ep[0]["touched_mean"]), float(ep[0]["touched_max_rank_mean"])
            s = slope[min(slope, key=lambda k: abs(k - m))] if m >= min(slope) else slope[min(slope)]
            busiest = mean + s * (tb - tm)
            cfg = ep[0]["config"]
            bm = cfg.split("BLOCK_SIZE_M=")[1].split(";")[0]
            f.write(f"sglang_v0.5.14_fused_moe_triton,fp8,{m},{ep[0]['experts_local']},{ep[0]['topk']},{ep[0]['hidden']},{ep[0]['inter']},8,{cfg},{busiest:.3f},{align:.3f},{bm},{mean:.3f},{tm:.2f},{tb:.2f},{s:.3f}\n")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
