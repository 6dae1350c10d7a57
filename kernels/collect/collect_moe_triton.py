#!/usr/bin/env python3
"""Time SGLang's Triton fused MoE (fused_moe_triton) for Qwen3.5-397B-A17B's expert shapes.

The kernels are SGLang's own (sgl-project/sglang python/sglang/srt/layers/moe/fused_moe_triton/
fused_moe_triton_kernels.py: invoke_fused_moe_kernel, act_and_mul_triton, moe_sum_reduce_triton; config
lookup from fused_moe_triton_config.py: try_get_optimal_moe_config with its configs/ folder), kept outside
this repository and put on PYTHONPATH by the device command. The timed call follows
fused_moe.py: fused_experts_impl step by step (gate_up GEMM, activation, down GEMM with the routing
weight, sum over top-k), with two substitutions for the CUDA ops of sgl_kernel that this machine does not
have: moe_align_block_size is a graph-capturable torch sort (timed separately, column align_us, and not
in kernels_us), and the top-k sum is always SGLang's Triton moe_sum_reduce_triton (SGLang uses it on
ROCm; on CUDA it uses sgl_kernel's moe_sum_reduce for > 32 tokens and a torch.compile'd sum below).
For FP8 (w8a8, 128x128 weight blocks, per-token 1x128 activation groups, what block-FP8 checkpoints
run) the activation quantization is a one-pass Triton kernel standing in for sgl_kernel's
sglang_per_token_group_quant_fp8 (inside kernels_us, as it is inside invoke_fused_moe_kernel).

Config: whatever try_get_optimal_moe_config returns on this machine (the `config` column says
whether a tuned JSON for device_name=NVIDIA_H200 was found, and its file's Triton version folder, or
the default).
"""
import argparse
import json
import os
import random
import sys
import time

import torch
import triton
import triton.language as tl

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import collect_ops  # noqa: E402

from sglang.srt.layers.moe.fused_moe_triton import fused_moe_triton_config as cfgmod  # noqa: E402
from sglang.srt.layers.moe.fused_moe_triton.fused_moe_triton_kernels import (  # noqa: E402
    act_and_mul_triton, invoke_fused_moe_kernel, moe_sum_reduce_triton)

COLUMNS = "kernel,dtype,tokens,experts,topk,hidden,inter,config,kernels_us,align_us,block_m".split(",")
E, TOPK, H, INTER = 512, 10, 4096, 1024          # Qwen3.5-397B-A17B config.json (num_experts, num_experts_per_tok, hidden_size, moe_intermediate_size)
TOKENS = [1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192, 256, 384, 512, 768, 1024, 2048, 4096, 8192]
HELD = [5, 10, 20, 40, 80, 160, 320, 448]


def log(*a):
    print(*a, file=sys.stderr, flush=True)


def moe_align(topk_ids, block_m, num_experts):
    """Same outputs as sgl_kernel.moe_align_block_size: token slots sorted by expert, each expert's
    run padded to a multiple of block_m with the sentinel numel; one expert id per block; the padded total."""
    flat = topk_ids.view(-1).to(torch.int64)
    numel = flat.numel()
    max_pad = numel * block_m if numel < num_experts + 1 else numel + (num_experts + 1) * (block_m - 1)
    counts = torch.zeros(num_experts, device=flat.device, dtype=torch.int64).scatter_add_(0, flat, torch.ones_like(flat))
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
    expert_ids = torch.searchsorted(ends, blk, right=True).clamp_(max=num_experts - 1).to(torch.int32)
    return sorted_ids, expert_ids, ends[-1:].to(torch.int32)


def config_for(M, inter, dtype):
    block = [128, 128] if dtype == "fp8" else None
    dstr = "fp8_w8a8" if dtype == "fp8" else None
    w1 = (E, 2 * inter, H)
    w2 = (E, H, inter)
    cfg, (down, _) = cfgmod.try_get_optimal_moe_config(w1, w2, TOPK, dstr, M, block_shape=block, return_down_config=True)
    name = cfgmod.get_config_file_name(E, inter, dstr, block)
    src = "default"
    for v in [triton.__version__, "3.4.0", "3.3.1", "3.2.0", "3.1.0"]:
        p = os.path.join(os.path.dirname(cfgmod.__file__), "configs", f"triton_{v.replace('.', '_')}", name)
        if os.path.exists(p):
            src = f"tuned:triton_{v.replace('.', '_')}"
            break
    return dict(cfg), down, src


class Weights:
    def __init__(self, inter, dtype):
        g = torch.Generator(device="cuda").manual_seed(5)
        self.dtype = dtype
        w1 = torch.empty(E, 2 * inter, H, device="cuda", dtype=torch.bfloat16)
        w2 = torch.empty(E, H, inter, device="cuda", dtype=torch.bfloat16)
        for w in (w1, w2):
            for e in range(0, E, 64):
                w[e:e + 64].normal_(0.0, 0.02, generator=g)
        if dtype == "fp8":
            self.w1_scale = torch.full((E, 2 * inter // 128, H // 128), 0.02 / 64, device="cuda")
            self.w2_scale = torch.full((E, H // 128, inter // 128), 0.02 / 64, device="cuda")
            self.w1 = (w1 / (0.02 / 64)).to(torch.float8_e4m3fn)
            self.w2 = (w2 / (0.02 / 64)).to(torch.float8_e4m3fn)
            del w1, w2
        else:
            self.w1, self.w2 = w1, w2
            self.w1_scale = self.w2_scale = None


def experts(x, W, topk_w, topk_ids, cfg, align):
    """fused_experts_impl (one chunk, silu, filter_expert=True, no TMA): returns out [M, H]."""
    M = x.shape[0]
    N = W.w1.shape[1]
    sorted_ids, expert_ids, npad = align
    fp8 = W.dtype == "fp8"
    block = [128, 128] if fp8 else None
    cache1 = torch.empty(M * TOPK, N, device=x.device, dtype=x.dtype)
    cache2 = torch.empty(M * TOPK, N // 2, device=x.device, dtype=x.dtype)
    cache3 = torch.empty(M, TOPK, W.w2.shape[1], device=x.device, dtype=x.dtype)
    out = torch.empty_like(x)
    invoke_fused_moe_kernel(x, W.w1, None, cache1, None, W.w1_scale, None, topk_w, topk_ids, sorted_ids, expert_ids, npad,
                            False, TOPK, cfg, compute_type=tl.bfloat16, use_fp8_w8a8=fp8, use_int8_w8a8=False,
                            use_int8_w8a16=False, use_int4_w4a16=False, per_channel_quant=False, block_shape=block)
    act_and_mul_triton(cache1, cache2, cfg, topk_ids, expert_ids, False, "silu")
    invoke_fused_moe_kernel(cache2, W.w2, None, cache3, None, W.w2_scale, None, topk_w, topk_ids, sorted_ids, expert_ids, npad,
                            True, 1, cfg, compute_type=tl.bfloat16, use_fp8_w8a8=fp8, use_int8_w8a8=False,
                            use_int8_w8a16=False, use_int4_w4a16=False, per_channel_quant=False, block_shape=block)
    moe_sum_reduce_triton(cache3, out, 1.0)
    return out


def routing(M, seed):
    g = torch.Generator(device="cuda").manual_seed(seed)
    logits = torch.rand(M, E, device="cuda", generator=g)
    w, ids = logits.topk(TOPK, dim=-1)
    return torch.softmax(w, -1).float().contiguous(), ids.to(torch.int32).contiguous()


def check(W, inter):
    ok = True
    for M in (1, 7, 33):
        x = torch.randn(M, H, device="cuda", dtype=torch.bfloat16)
        tw, ti = routing(M, 100 + M)
        cfg, _, src = config_for(M, inter, W.dtype)
        sid, eid, npad = moe_align(ti, cfg["BLOCK_SIZE_M"], E)
        # the align invariants: every slot once, each block one expert, padded total a multiple of block_m
        s = sid[:npad.item()].long()
        valid = s[s < M * TOPK]
        good_align = valid.numel() == M * TOPK and torch.unique(valid).numel() == M * TOPK and npad.item() % cfg["BLOCK_SIZE_M"] == 0
        blk_exp = eid[:npad.item() // cfg["BLOCK_SIZE_M"]].long().repeat_interleave(cfg["BLOCK_SIZE_M"])
        good_align &= bool((ti.view(-1).long()[s[s < M * TOPK]] == blk_exp[s < M * TOPK]).all())
        out = experts(x, W, tw, ti, cfg, (sid, eid, npad))
        torch.cuda.synchronize()
        if W.dtype == "fp8":
            w1 = W.w1.float() * (0.02 / 64)
            w2 = W.w2.float() * (0.02 / 64)
        else:
            w1, w2 = W.w1, W.w2
        ref = torch.zeros(M, H, device="cuda", dtype=torch.float64)
        for m in range(M):
            e = ti[m].long()
            a = torch.einsum("k,jnk->jn", x[m].double(), w1[e].double())
            hmid = torch.nn.functional.silu(a[:, :inter]) * a[:, inter:]
            ref[m] = torch.einsum("j,jn,jhn->h", tw[m].double(), hmid, w2[e].double())
        err = ((out.double() - ref).norm() / ref.norm()).item()
        good = good_align and err < (6e-2 if W.dtype == "fp8" else 1.5e-2) and torch.isfinite(out).all().item()
        ok &= good
        log(f"check moe {W.dtype} inter={inter} M={M} config={src} {cfg}: align {'ok' if good_align else 'BAD'}, rel err {err:.2e} {'ok' if good else 'FAIL'}")
    return ok


def bench_point(W, inter, M):
    cfg, down, src = config_for(M, inter, W.dtype)
    touched = E * (1.0 - (1.0 - TOPK / E) ** M)
    wbytes = (1 if W.dtype == "fp8" else 2) * 3 * H * inter
    nbytes = touched * wbytes + 2 * M * H * (2 + TOPK)
    nsets = collect_ops.n_sets(nbytes)
    sets = []
    for i in range(nsets):
        x = torch.randn(M, H, device="cuda", dtype=torch.bfloat16)
        tw, ti = routing(M, 1000 * M + i)
        sets.append((x, tw, ti, moe_align(ti, cfg["BLOCK_SIZE_M"], E)))
    k_us = collect_ops.bench(lambda i: sets[i], lambda x, tw, ti, al: experts(x, W, tw, ti, cfg, al), nbytes)
    a_us = collect_ops.bench(lambda i: sets[i], lambda x, tw, ti, al: moe_align(ti, cfg["BLOCK_SIZE_M"], E), 1 << 30)
    return cfg, src, k_us, a_us


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--budget", type=float, default=200)
    ap.add_argument("--dtypes", default="bf16,fp8")
    ap.add_argument("--tps", default="1,2,4,8")
    ap.add_argument("--stride", type=int, default=1)
    args = ap.parse_args()
    torch.backends.cuda.matmul.allow_tf32 = False
    deadline = time.time() + args.budget
    os.makedirs(args.out, exist_ok=True)
    files = {}
    for name in ("moe_triton", "moe_triton_heldout"):
        f = open(os.path.join(args.out, name + ".csv"), "w")
        for line in collect_ops.header_lines(collect_ops.METHOD + "; kernels_us = SGLang fused_experts_impl kernels (align excluded), align_us = torch stand-in for sgl_kernel moe_align_block_size"):
            f.write(line + "\n")
        f.write(",".join(COLUMNS) + "\n")
        files[name] = f
    order = [(d, int(t)) for d in args.dtypes.split(",") for t in args.tps.split(",")]
    for dtype, tp in order:
        inter = INTER // tp
        W = Weights(inter, dtype)
        if not check(W, inter):
            log(f"CORRECTNESS FAILED for {dtype} tp{tp}: skipped")
            continue
        pts = [("moe_triton", m) for m in TOKENS[::args.stride]] + [("moe_triton_heldout", m) for m in HELD[::args.stride]]
        for name, M in pts:
            if time.time() > deadline:
                log("budget reached")
                break
            try:
                cfg, src, k_us, a_us = bench_point(W, inter, M)
                c = json.dumps(cfg, separators=(";", "=")).replace('"', "").replace(",", ";")
                files[name].write(f"sglang_fused_moe_triton,{dtype},{M},{E},{TOPK},{H},{inter},{src}:{c},{k_us:.3f},{a_us:.3f},{cfg['BLOCK_SIZE_M']}\n")
                files[name].flush()
            except Exception as e:  # noqa: BLE001
                log(f"FAIL {dtype} tp{tp} M={M}: {type(e).__name__}: {str(e).splitlines()[0][:300] if str(e) else ''}")
                torch.cuda.synchronize()
        del W
        torch.cuda.empty_cache()
        log(f"done {dtype} tp{tp} at {time.time() - deadline + args.budget:.0f}s")


if __name__ == "__main__":
    main()
