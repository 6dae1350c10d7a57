#!/usr/bin/env python3
"""SGLang v0.5.14's Triton fused MoE at the H200 Qwen3.5 recipe's real shard (TP8 EP8), and its
post-verify mamba state commit (issue 12, round 5; NOTES.md).

What the InferenceX H200 Qwen3.5 FP8 recipes run (--tp 8 --expert-parallel-size 8, moe runner auto ->
Triton for block-FP8 on Hopper): every rank holds 64 of the 512 experts at the full intermediate size
(moe_tp_size = 1), receives all tokens, and `layers/moe/token_dispatcher/standard.py:
StandardDispatcher.dispatch` maps the global top-10 ids to local ids, -1 for experts of other ranks
(local_expert_mapping). `moe_runner/triton_utils/fused_moe.py: _fused_moe_kernel_sequence` then runs with
filter_expert=True: blocks of the -1 bucket write zeros. Config: `fused_moe_triton_config.py:
try_get_optimal_moe_config(w1.shape, w2.shape, ...)` looks for E=64,N=1024,...,NVIDIA_H200,dtype=fp8_w8a8,
block_shape=[128, 128] (none at v0.5.14) -> default config. The project's moe_triton.csv timed instead the
TP shard (512 experts at inter/8) with the 2026-01-01 kernel file; this collector times both shards with
the v0.5.14 kernel file, every EP rank separately (load imbalance across ranks: the MoE all-reduce waits
for the slowest rank).

Kernels (sgl-project/sglang v0.5.14 = 49e384ce9d30, kept outside this repository, on PYTHONPATH):
invoke_fused_moe_kernel (gate_up, then down with the routing weight), act_and_mul_triton (filters -1
rows; CUDA SGLang runs sgl_kernel's silu_and_mul with the same filter), moe_sum_reduce_triton (CUDA SGLang:
sgl_kernel moe_sum_reduce). Stand-ins (not in the timed sum except the quantizer): moe_align_block_size
(torch, num_experts + 1 buckets as sgl_kernel does for EP, -1 bucket -> expert id -1; timed apart) and the
per-token-group FP8 quantizer (one-pass Triton kernel, inside the timed sequence as in SGLang).

Mamba commit: `layers/attention/mamba/mamba_state_scatter_triton.py: fused_mamba_state_scatter_with_mask`
and `fused_conv_window_scatter_with_mask`, as `hybrid_linear_attn_backend.py:
update_mamba_state_after_mtp_verify` calls them after every verify: all 45 GDN layers at once, bf16
temporal state [HV=8, V=128, K=128] per layer and request at TP8, conv state [1536, 3] with the
deduplicated overlapping window view of the intermediate conv cache (draft tokens 4).
"""
import argparse
import os
import sys
import time

import torch
import triton
import triton.language as tl

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import collect_ops  # noqa: E402

from sglang.srt.layers.moe.moe_runner.triton_utils import fused_moe_triton_config as cfgmod  # noqa: E402
from sglang.srt.layers.moe.moe_runner.triton_utils.fused_moe_triton_kernels import (  # noqa: E402
    act_and_mul_triton, invoke_fused_moe_kernel, moe_sum_reduce_triton)
from sglang.srt.layers.attention.mamba.mamba_state_scatter_triton import (  # noqa: E402
    fused_conv_window_scatter_with_mask, fused_mamba_state_scatter_with_mask)

E_ALL, TOPK, H, INTER, EP = 512, 10, 4096, 1024, 8
TOKENS = [1, 2, 4, 8, 12, 16, 24, 32, 40, 48, 64, 80, 96, 128, 160, 192, 256, 384, 512]
COLUMNS = ("kernel,shard,dtype,tokens,experts_local,topk,hidden,inter,rank,config,kernels_us,align_us,"
           "touched_mean,touched_max_rank_mean").split(",")


def log(*a):
    print(*a, file=sys.stderr, flush=True)


def moe_align(ids, block_m, num_experts):
    """sgl_kernel.moe_align_block_size(topk_ids, num_experts + 1, ...): buckets -1..num_experts-1, each
    padded to block_m; sentinel = numel; one expert id per block (-1 for the filtered bucket)."""
    flat = ids.view(-1).to(torch.int64) + 1
    nb = num_experts + 1
    numel = flat.numel()
    max_pad = numel * block_m if numel < nb else numel + nb * (block_m - 1)
    counts = torch.zeros(nb, device=flat.device, dtype=torch.int64).scatter_add_(0, flat, torch.ones_like(flat))
    padded = (counts + block_m - 1) // block_m * block_m
    ends = torch.cumsum(padded, 0)
    starts = ends - padded
    order = torch.sort(flat, stable=True).indices
    se = flat[order]
    first = torch.cumsum(counts, 0) - counts
    dest = starts[se] + torch.arange(numel, device=flat.device) - first[se]
    sorted_ids = torch.full((max_pad,), numel, device=flat.device, dtype=torch.int32)
    sorted_ids.scatter_(0, dest, order.to(torch.int32))
    nblk = triton.cdiv(max_pad, block_m)
    blk = torch.arange(nblk, device=flat.device, dtype=torch.int64) * block_m
    expert_ids = (torch.searchsorted(ends, blk, right=True).clamp_(max=nb - 1) - 1).to(torch.int32)
    return sorted_ids, expert_ids, ends[-1:].to(torch.int32)


def config_for(M, e_local, inter):
    w1 = (e_local, 2 * inter, H)
    w2 = (e_local, H, inter)
    cfg, (down, _) = cfgmod.try_get_optimal_moe_config(w1, w2, TOPK, "fp8_w8a8", M, block_shape=[128, 128],
                                                      return_down_config=True)
    name = cfgmod.get_config_file_name(e_local, inter, "fp8_w8a8", [128, 128])
    src = "default"
    root = os.path.join(os.path.dirname(cfgmod.__file__), "configs")
    for d in sorted(os.listdir(root), reverse=True):
        if os.path.exists(os.path.join(root, d, name)):
            src = "tuned:" + d
            break
    return dict(cfg), down, src


class Weights:
    """FP8 block-quantized expert weights: n experts x (gate_up [2I, H], down [H, I]), unit-ish scales."""

    def __init__(self, n, inter):
        g = torch.Generator(device="cuda").manual_seed(5)
        s = 0.02 / 64
        self.w1 = torch.empty(n, 2 * inter, H, device="cuda", dtype=torch.float8_e4m3fn)
        self.w2 = torch.empty(n, H, inter, device="cuda", dtype=torch.float8_e4m3fn)
        for w in (self.w1, self.w2):
            for e in range(0, n, 32):
                w[e:e + 32] = (torch.randn(w[e:e + 32].shape, device="cuda", generator=g) * 64).to(torch.float8_e4m3fn)
        self.w1_scale = torch.full((n, 2 * inter // 128, H // 128), s, device="cuda")
        self.w2_scale = torch.full((n, H // 128, inter // 128), s, device="cuda")

    def rank(self, r, n_local):
        v = Weights.__new__(Weights)
        sl = slice(r * n_local, (r + 1) * n_local)
        v.w1, v.w2, v.w1_scale, v.w2_scale = self.w1[sl], self.w2[sl], self.w1_scale[sl], self.w2_scale[sl]
        return v


def experts(x, W, topk_w, topk_ids, cfg, align):
    """_fused_moe_kernel_sequence for silu, block FP8, filter_expert=True, no TMA, no fused all-reduce."""
    M = x.shape[0]
    N = W.w1.shape[1]
    sorted_ids, expert_ids, npad = align
    cache1 = torch.empty(M * TOPK, N, device=x.device, dtype=x.dtype)
    cache2 = torch.empty(M * TOPK, N // 2, device=x.device, dtype=x.dtype)
    cache3 = torch.empty(M, TOPK, W.w2.shape[1], device=x.device, dtype=x.dtype)
    out = torch.empty_like(x)
    kw = dict(compute_type=tl.bfloat16, use_fp8_w8a8=True, use_int8_w8a8=False, use_int8_w8a16=False,
              use_int4_w4a16=False, per_channel_quant=False, block_shape=[128, 128], filter_expert=True)
    invoke_fused_moe_kernel(x, W.w1, None, cache1, None, W.w1_scale, None, topk_w, topk_ids, sorted_ids, expert_ids,
                            npad, False, TOPK, cfg, **kw)
    act_and_mul_triton(cache1, cache2, cfg, topk_ids, expert_ids, False, "silu")
    invoke_fused_moe_kernel(cache2, W.w2, None, cache3, None, W.w2_scale, None, topk_w, topk_ids, sorted_ids, expert_ids,
                            npad, True, 1, cfg, **kw)
    moe_sum_reduce_triton(cache3, out, 1.0)
    return out


def routing(M, seed):
    g = torch.Generator(device="cuda").manual_seed(seed)
    w, ids = torch.rand(M, E_ALL, device="cuda", generator=g).topk(TOPK, dim=-1)
    return torch.softmax(w, -1).float().contiguous(), ids.to(torch.int32).contiguous()


def local_ids(ids, r, n_local):
    """StandardDispatcher's local_expert_mapping[topk_ids] for EP rank r."""
    loc = ids - r * n_local
    return torch.where((loc >= 0) & (loc < n_local), loc, torch.full_like(loc, -1)).to(torch.int32).contiguous()


def reference(x, Wfull, tw, ti, inter):
    s1, s2 = float(Wfull.w1_scale[0, 0, 0]), float(Wfull.w2_scale[0, 0, 0])
    ref = torch.zeros(x.shape[0], H, device="cuda", dtype=torch.float64)
    for m in range(x.shape[0]):
        e = ti[m].long()
        a = torch.einsum("k,jnk->jn", x[m].double(), Wfull.w1.view(torch.uint8)[e].view(torch.float8_e4m3fn).double() * s1)
        hmid = torch.nn.functional.silu(a[:, :inter]) * a[:, inter:]
        ref[m] = torch.einsum("j,jn,jhn->h", tw[m].double(), hmid, Wfull.w2.view(torch.uint8)[e].view(torch.float8_e4m3fn).double() * s2)
    return ref


def check(Wep, Wtp):
    ok = True
    for M in (1, 7, 33):
        x = torch.randn(M, H, device="cuda", dtype=torch.bfloat16)
        tw, ti = routing(M, 100 + M)
        # EP: the sum over the 8 ranks' outputs (the all-reduce) is the full MoE
        tot = torch.zeros(M, H, device="cuda", dtype=torch.float64)
        for r in range(EP):
            cfg, _, _ = config_for(M, E_ALL // EP, INTER)
            li = local_ids(ti, r, E_ALL // EP)
            tot += experts(x, Wep.rank(r, E_ALL // EP), tw, li, cfg, moe_align(li, cfg["BLOCK_SIZE_M"], E_ALL // EP)).double()
        ref = reference(x, Wep, tw, ti, INTER)
        e1 = ((tot - ref).norm() / ref.norm()).item()
        cfg, _, _ = config_for(M, E_ALL, INTER // EP)
        out = experts(x, Wtp, tw, ti, cfg, moe_align(ti, cfg["BLOCK_SIZE_M"], E_ALL)).double()
        ref2 = reference(x, Wtp, tw, ti, INTER // EP)
        e2 = ((out - ref2).norm() / ref2.norm()).item()
        good = e1 < 6e-2 and e2 < 6e-2
        ok &= good
        log(f"check moe fp8 M={M}: ep8 (sum of 8 ranks) rel err {e1:.2e}, tp8 rel err {e2:.2e} {'ok' if good else 'FAIL'}")
    return ok


def bench_moe(W, e_local, inter, M, ids_of_set, touched):
    cfg, _, src = config_for(M, e_local, inter)
    wbytes = 3 * H * inter
    nbytes = touched * wbytes + 2 * M * H * (2 + TOPK)
    nsets = collect_ops.n_sets(nbytes)
    sets = []
    for i in range(nsets):
        x = torch.randn(M, H, device="cuda", dtype=torch.bfloat16)
        tw, ti = ids_of_set(i)
        sets.append((x, tw, ti, moe_align(ti, cfg["BLOCK_SIZE_M"], e_local)))
    k_us = collect_ops.bench(lambda i: sets[i], lambda x, tw, ti, al: experts(x, W, tw, ti, cfg, al), nbytes)
    a_us = collect_ops.bench(lambda i: sets[i], lambda x, tw, ti, al: moe_align(ti, cfg["BLOCK_SIZE_M"], e_local), 1 << 30)
    c = ";".join(f"{k}={v}" for k, v in cfg.items())
    return cfg, src, c, k_us, a_us, nsets


def run_moe(args, f, fs):
    deadline = time.time() + args.budget
    Wep = Weights(E_ALL, INTER)
    Wtp = Weights(E_ALL, INTER // EP)
    if not check(Wep, Wtp):
        log("CORRECTNESS FAILED: MoE skipped")
        return
    nl = E_ALL // EP
    for M in TOKENS:
        if time.time() > deadline:
            log("moe budget reached")
            break
        routs = [routing(M, 1000 * M + i) for i in range(collect_ops.MAX_SETS)]
        counts = []
        for _, ti in routs:
            u = torch.unique(ti.view(-1).long())
            counts.append([int(((u >= r * nl) & (u < (r + 1) * nl)).sum()) for r in range(EP)])
        cm = sum(sum(c) for c in counts) / (len(counts) * EP)
        cmax = sum(max(c) for c in counts) / len(counts)
        try:
            touched_tp = E_ALL * (1.0 - (1.0 - TOPK / E_ALL) ** M)
            cfg, src, c, k_us, a_us, _ = bench_moe(Wtp, E_ALL, INTER // EP, M, lambda i: routs[i], touched_tp)
            f.write(f"sglang_v0.5.14_fused_moe_triton,tp8,fp8,{M},{E_ALL},{TOPK},{H},{INTER // EP},-1,{src}:{c},{k_us:.3f},{a_us:.3f},{touched_tp:.2f},{touched_tp:.2f}\n")
            for r in range(EP):
                def ids_r(i, r=r):
                    tw, ti = routs[i]
                    return tw, local_ids(ti, r, nl)
                cfg, src, c, k_us, a_us, _ = bench_moe(Wep.rank(r, nl), nl, INTER, M, ids_r, cm)
                f.write(f"sglang_v0.5.14_fused_moe_triton,ep8,fp8,{M},{nl},{TOPK},{H},{INTER},{r},{src}:{c},{k_us:.3f},{a_us:.3f},{cm:.2f},{cmax:.2f}\n")
            f.flush()
            log(f"moe M={M} done at {time.time() - deadline + args.budget:.0f}s")
        except Exception as e:  # noqa: BLE001
            log(f"FAIL moe M={M}: {type(e).__name__}: {str(e).splitlines()[0][:300] if str(e) else ''}")
            torch.cuda.synchronize()
    # per routing and rank, no rotation (one routing per graph): the busiest rank of each routing
    for M in (16, 32, 64, 96, 128, 160, 256):
        if time.time() > deadline:
            log("moe per-set budget reached")
            break
        cfg, _, _ = config_for(M, nl, INTER)
        for s in range(4):
            x = torch.randn(M, H, device="cuda", dtype=torch.bfloat16)
            tw, ti = routing(M, 5000 * M + s)
            u = torch.unique(ti.view(-1).long())
            for r in range(EP):
                li = local_ids(ti, r, nl)
                al = moe_align(li, cfg["BLOCK_SIZE_M"], nl)
                t = int(((u >= r * nl) & (u < (r + 1) * nl)).sum())
                k_us = collect_ops.bench(lambda i: (x, tw, li, al), lambda x_, tw_, li_, al_: experts(x_, Wep.rank(r, nl), tw_, li_, cfg, al_), 1 << 30)
                fs.write(f"sglang_v0.5.14_fused_moe_triton,ep8,fp8,{M},{nl},{TOPK},{H},{INTER},{s},{r},{t},{k_us:.3f}\n")
        fs.flush()
        log(f"moe per-set M={M} done at {time.time() - deadline + args.budget:.0f}s")
    del Wep, Wtp
    torch.cuda.empty_cache()


def run_commit(args, f):
    """update_mamba_state_after_mtp_verify's two kernels for bs requests, 45 layers, TP8 Qwen3.5 shapes."""
    L, HV, V, K, DIM, KM1, D = 45, 8, 128, 128, 1536, 3, 4
    slots, spec = 129, 128
    ssm = torch.randn(L, slots, HV, V, K, device="cuda", dtype=torch.bfloat16)
    inter = torch.randn(L, spec, D, HV, V, K, device="cuda", dtype=torch.bfloat16)
    conv = torch.randn(L, slots, DIM, KM1, device="cuda", dtype=torch.bfloat16)
    base = torch.randn(L, spec, DIM, D + KM1 - 1, device="cuda", dtype=torch.bfloat16)
    win = base.as_strided((L, spec, D, DIM, KM1), (base.stride(0), base.stride(1), 1, base.stride(2), 1))
    # correctness: step s of request i lands in slot idx[i]
    idx = torch.randperm(slots - 1, device="cuda")[:16].to(torch.int32)
    step = torch.randint(0, D, (16,), device="cuda", dtype=torch.int32)
    fused_mamba_state_scatter_with_mask(ssm, inter, idx, step)
    fused_conv_window_scatter_with_mask(conv, win, idx, step)
    torch.cuda.synchronize()
    ok = all(torch.equal(ssm[:, idx[i].long()], inter[:, i, step[i].long()]) and
             torch.equal(conv[:, idx[i].long()], win[:, i, step[i].long()]) for i in range(16))
    log(f"check mamba commit scatter: {'ok' if ok else 'FAIL'}")
    for bs in (1, 4, 8, 16, 24, 32, 40, 64, 128):
        def mk(i, bs=bs):
            g = torch.Generator(device="cuda").manual_seed(77 + i)
            return (torch.randperm(slots - 1, device="cuda", generator=g)[:bs].to(torch.int32),
                    torch.randint(0, D, (bs,), device="cuda", dtype=torch.int32, generator=g))
        nbytes = 2 * bs * L * (HV * V * K + DIM * KM1) * 2
        us_s = collect_ops.bench(mk, lambda di, si: fused_mamba_state_scatter_with_mask(ssm, inter, di, si), nbytes)
        us_c = collect_ops.bench(mk, lambda di, si: fused_conv_window_scatter_with_mask(conv, win, di, si), nbytes)
        f.write(f"sglang_v0.5.14_mamba_commit,tp8,bf16,{bs},{L},{HV},{V},{K},{DIM},{us_s:.3f},{us_c:.3f},{nbytes}\n")
        f.flush()
    del ssm, inter, conv, base
    torch.cuda.empty_cache()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--budget", type=float, default=300)
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "mamba_commit.csv"), "w") as f:
        for line in collect_ops.header_lines(collect_ops.METHOD + "; state_us = fused_mamba_state_scatter_with_mask, conv_us = fused_conv_window_scatter_with_mask, one call each over all layers"):
            f.write(line + "\n")
        f.write("kernel,shard,dtype,requests,layers,v_heads,v_dim,k_dim,conv_dim,state_us,conv_us,bytes_moved\n")
        run_commit(args, f)
    with open(os.path.join(args.out, "moe_triton_ep.csv"), "w") as f:
        for line in collect_ops.header_lines(collect_ops.METHOD + "; kernels_us = SGLang v0.5.14 _fused_moe_kernel_sequence kernels (align excluded), align_us = torch stand-in for sgl_kernel moe_align_block_size; ep8 rows: one EP rank's 64 local experts at the full inter, ids of other ranks filtered (-1); touched = distinct local experts per call, mean over ranks and mean over routings of the busiest rank"):
            f.write(line + "\n")
        f.write(",".join(COLUMNS) + "\n")
        with open(os.path.join(args.out, "moe_triton_ep_sets.csv"), "w") as fs:
            fs.write("kernel,shard,dtype,tokens,experts_local,topk,hidden,inter,set,rank,touched,kernels_us\n")
            run_moe(args, f, fs)


if __name__ == "__main__":
    main()
