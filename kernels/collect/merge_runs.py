#!/usr/bin/env python3
"""Merge the device runs' CSVs into kernels/data/h200/{ops.csv,ops_heldout.csv}.

usage: merge_runs.py RUN1_DIR RUN2_DIR OUT_DIR
ops.csv      = run 1's rows, with run 1's moe rows replaced by run 2's (fused-activation MoE) when
               run 2 has them, plus run 2's dense attention pass; sorted by op and shape.
ops_heldout  = run 2's two held-out sets (seed 20261202, 160 shapes; seed 7321, 300 shapes), minus
               any shape that also appears in ops.csv.
Header: run 2's '#' lines, with run 1's clocks and date kept as extra lines.
"""
import csv
import os
import sys

OPS_ORDER = ["copy", "gemm", "moe", "attention", "gdn", "rmsnorm", "lm_head"]


def read(path):
    head, rows = [], []
    if not os.path.exists(path):
        return head, rows, None
    lines = open(path).read().splitlines()
    head = [l for l in lines if l.startswith("#")]
    body = [l for l in lines if not l.startswith("#")]
    cols = body[0].split(",")
    for l in body[1:]:
        rows.append(dict(zip(cols, l.split(","))))
    return head, rows, cols


def shape_key(r):
    return tuple(r[c] for c in COLS[:-1])


def sort_key(r):
    def num(c):
        return int(r[c]) if r[c] else -1
    if r["op"] == "attention":
        dims = ("heads", "kv_heads", "head_dim", "q_len", "batch", "kv_len")
    elif r["op"] == "gdn":
        dims = ("heads", "kv_heads", "head_dim", "q_len", "batch")
    elif r["op"] == "moe":
        dims = ("hidden", "experts", "topk", "inter", "tokens")
    elif r["op"] in ("gemm", "lm_head"):
        dims = ("n", "k", "m")
    elif r["op"] == "rmsnorm":
        dims = ("hidden", "tokens")
    else:
        dims = ("n",)
    return (OPS_ORDER.index(r["op"]), r["dtype"]) + tuple(num(c) for c in dims)


def write(path, head, rows):
    with open(path, "w") as f:
        for h in head:
            f.write(h + "\n")
        f.write(",".join(COLS) + "\n")
        for r in sorted(rows, key=sort_key):
            f.write(",".join(r[c] for c in COLS) + "\n")


def main():
    global COLS
    run1, run2, out = sys.argv[1:4]
    h1, r1, COLS = read(os.path.join(run1, "ops.csv"))
    h2, r2, _ = read(os.path.join(run2, "ops.csv"))
    have_moe2 = any(r["op"] == "moe" for r in r2)
    rows = [r for r in r1 if not (have_moe2 and r["op"] == "moe")] + r2
    seen = {}
    for r in rows:
        seen[shape_key(r)] = r
    rows = list(seen.values())
    pick = lambda h, p: [l for l in h if l.startswith(p)]
    head = [l for l in h2 if not l.startswith(("# clocks", "# date"))]
    head += [l.replace("# clocks:", "# clocks:") + " [run 2]" for l in pick(h2, "# clocks")]
    head += [l.replace("# clocks:", "# clocks_run1:") for l in pick(h1, "# clocks")]
    head += pick(h2, "# date")
    head += [l.replace("# date:", "# date_run1:") for l in pick(h1, "# date")]
    head.append("# runs: run 1 = copy, gemm, attention (B 1..256 pow2 x q 1,2,4,8), gdn, rmsnorm, lm_head"
                + ("" if have_moe2 else ", moe") + "; run 2 = " + ("moe (fused activation), " if have_moe2 else "")
                + "attention dense pass (B 3..192, q 3,6); see kernels/collect/NOTES.md")
    write(os.path.join(out, "ops.csv"), head, rows)
    grid = set(seen)
    held, hhead = [], []
    for name in ("ops_heldout_a.csv", "ops_heldout.csv"):
        hh, hr, _ = read(os.path.join(run2, name))
        held += [r for r in hr if shape_key(r) not in grid]
        hhead = hh or hhead
    hhead = [l for l in hhead if not l.startswith("# method")] + [
        pick(h2, "# method")[0] + "; held-out random off-grid shapes, seeds 20261202 (160) and 7321 (300), none in ops.csv"]
    write(os.path.join(out, "ops_heldout.csv"), hhead, held)
    print(f"ops.csv {len(rows)} rows (moe from run {'2' if have_moe2 else '1'}), ops_heldout.csv {len(held)} rows")


if __name__ == "__main__":
    main()
