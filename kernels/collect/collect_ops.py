#!/usr/bin/env python3
"""Time GPU ops inside CUDA graphs and write kernels/data/<gpu>/ops.csv (see NOTES.md).

Method: every op's inputs are views into one large random bf16 pool (and an E4M3 copy of it), so
no shape allocates weights; for ops whose bytes per call are under ~4x the L2 the graph rotates
among several input sets at different pool offsets. One eager call warms up (and estimates the
time); a graph then captures n back-to-back calls (n chosen so a replay lasts ~2 ms), is replayed
once to warm, then REPLAYS times, each timed with CUDA events; latency = median replay / n.

Each section has a wall-clock budget, and the whole run a global one: when a budget runs out
the section stops, says how many shapes it skipped, and every row measured so far is already on
disk (the CSV is flushed after each row).
"""
import argparse
import datetime
import math
import os
import random
import statistics
import subprocess
import sys
import time

import torch
import torch.nn.functional as F
import triton
import triton.language as tl

import shapes

COLUMNS = "op,dtype,m,n,k,tokens,experts,topk,hidden,inter,batch,q_len,kv_len,heads,kv_heads,head_dim,latency_us".split(",")
L2_ROTATE_BYTES = 256 << 20   # rotate inputs until one graph pass touches this many bytes
MAX_SETS = 32
TARGET_GRAPH_US = 2000.0
REPLAYS = 7
ALIGN = 4096                  # pool offsets in elements (8 KiB for bf16): TMA and vector loads

M_GRID = [1, 2, 4, 8, 16, 24, 32, 48, 64, 96, 128, 192, 256, 384, 512, 768, 1024, 1536, 2048, 3072, 4096, 6144, 8192]
T_GRID = [1, 2, 4, 8, 16, 32, 64, 96, 128, 192, 256, 384, 512, 768, 1024, 1536, 2048, 3072, 4096, 6144, 8192]
B_GRID = [1, 2, 4, 8, 16, 32, 64, 128, 256]
Q_GRID = [1, 2, 4, 8]
# second pass (run 2): a denser batch and q_len grid for attention, where flash kernels step with
# the number of CTA waves (batch x kv_heads over 132 SMs); together with the first pass it forms a
# complete B_DENSE x Q_DENSE x KV_GRID grid per head configuration.
B_DENSE = [1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 40, 48, 64, 96, 128, 192, 256]
Q_DENSE = [1, 2, 3, 4, 6, 8]
KV_GRID = [1024, 2048, 4096, 8192, 16384, 32768, 65536, 131072]
GDN_B = [1, 2, 4, 8, 16, 32, 64, 128, 256]
GDN_Q = [1, 2, 3, 4, 6, 8]
NORM_T = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192]
LM_T = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048]
ATTN_KV_BYTES_CAP = 24 << 30


def log(*a):
    print(*a, file=sys.stderr, flush=True)


# ----------------------------------------------------------------------------- pools

class Pool:
    """A large random bf16 buffer and its E4M3 copy; ops take views at rotating offsets."""

    def __init__(self, gib):
        n = int(gib * (1 << 30)) // 2
        self.bf16 = torch.empty(n, dtype=torch.bfloat16, device="cuda")
        g = torch.Generator(device="cuda")
        g.manual_seed(1234)
        chunk = 1 << 28
        for i in range(0, n, chunk):
            self.bf16[i:i + chunk].normal_(0.0, 1.0, generator=g)
        self.fp8 = torch.empty(n, dtype=torch.float8_e4m3fn, device="cuda")
        for i in range(0, n, chunk):
            self.fp8[i:i + chunk].copy_(self.bf16[i:i + chunk])
        self.cursor = {torch.bfloat16: 0, torch.float8_e4m3fn: 0}

    def reset(self):
        for k in self.cursor:
            self.cursor[k] = 0

    def take(self, shape, dtype=torch.bfloat16):
        buf = self.bf16 if dtype == torch.bfloat16 else self.fp8
        n = math.prod(shape)
        if n > buf.numel():
            raise MemoryError(f"pool too small for {shape}")
        off = self.cursor[dtype]
        if off + n > buf.numel():
            off = 0
        self.cursor[dtype] = off + (n + ALIGN - 1) // ALIGN * ALIGN
        return buf[off:off + n].view(*shape)


# ----------------------------------------------------------------------------- timing

def n_sets(bytes_per_call):
    return max(1, min(MAX_SETS, math.ceil(L2_ROTATE_BYTES / max(bytes_per_call, 1))))


def bench(make_set, fn, bytes_per_call):
    """Median GPU microseconds per call of fn(*set) from CUDA-graph replays."""
    sets = [make_set(i) for i in range(n_sets(bytes_per_call))]
    torch.cuda.synchronize()
    fn(*sets[0])  # warm-up: compilation, handles, autotune
    torch.cuda.synchronize()
    e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    e0.record()
    for s in sets[:4]:
        fn(*s)
    e1.record()
    torch.cuda.synchronize()
    est = max(e0.elapsed_time(e1) * 1000.0 / min(4, len(sets)), 1.0)
    n = int(max(3, min(200, TARGET_GRAPH_US / est)))
    n = max(n, min(len(sets), 200))
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        fn(*sets[0])
    torch.cuda.current_stream().wait_stream(stream)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g, stream=stream):
        for i in range(n):
            fn(*sets[i % len(sets)])
    g.replay()
    torch.cuda.synchronize()
    times = []
    for _ in range(REPLAYS):
        e0.record()
        g.replay()
        e1.record()
        torch.cuda.synchronize()
        times.append(e0.elapsed_time(e1) * 1000.0 / n)
    del g
    return statistics.median(times)


# ----------------------------------------------------------------------------- ops

def gemm_case(pool, dtype, m, n, k):
    if dtype == "bf16":
        def make(i):
            return pool.take((m, k)), pool.take((n, k))

        def fn(x, w):
            return F.linear(x, w)
        return make, fn, 2 * (m * k + n * k + m * n)
    one = torch.ones((), device="cuda", dtype=torch.float32)

    def make8(i):
        return pool.take((m, k), torch.float8_e4m3fn), pool.take((n, k), torch.float8_e4m3fn)

    def fn8(x, w):
        return torch._scaled_mm(x, w.t(), scale_a=one, scale_b=one, out_dtype=torch.bfloat16)
    return make8, fn8, m * k + n * k + 2 * m * n


@triton.jit
def gather_quant_kernel(x_ptr, tok_ptr, q_ptr, s_ptr, H, BLOCK: tl.constexpr):
    """Row r of the output = E4M3 of x[tok[r]] with its own amax/448 scale (gather + quantize, one pass)."""
    r = tl.program_id(0)
    src = tl.load(tok_ptr + r)
    o = tl.arange(0, BLOCK)
    m = o < H
    x = tl.load(x_ptr + src * H + o, mask=m, other=0.0).to(tl.float32)
    scale = tl.maximum(tl.max(tl.abs(x)), 1e-4) / 448.0
    tl.store(q_ptr + r.to(tl.int64) * H + o, (x / scale).to(tl.float8e4nv), mask=m)
    tl.store(s_ptr + r, scale)


@triton.jit
def silu_mul_kernel(h_ptr, a_ptr, s_ptr, I, BLOCK: tl.constexpr, QUANT: tl.constexpr):
    """a = silu(h[:, :I]) * h[:, I:] per row; with QUANT, E4M3 with a per-row scale."""
    r = tl.program_id(0).to(tl.int64)
    o = tl.arange(0, BLOCK)
    m = o < I
    g = tl.load(h_ptr + r * 2 * I + o, mask=m, other=0.0).to(tl.float32)
    u = tl.load(h_ptr + r * 2 * I + I + o, mask=m, other=0.0).to(tl.float32)
    a = g * tl.sigmoid(g) * u
    if QUANT:
        scale = tl.maximum(tl.max(tl.abs(a)), 1e-4) / 448.0
        tl.store(a_ptr + r * I + o, (a / scale).to(tl.float8e4nv), mask=m)
        tl.store(s_ptr + r, scale)
    else:
        tl.store(a_ptr + r * I + o, a.to(tl.bfloat16), mask=m)


def moe_case(pool, dtype, tokens, experts, topk, hidden, inter):
    """Timed: sort by expert, offsets, gather (+E4M3 row quantization for fp8), grouped gate_up,
    fused silu*up (+quantization), grouped down, weighted combine back to token order."""
    ar = torch.arange(experts, device="cuda", dtype=torch.int64)
    touched = experts * (1.0 - (1.0 - topk / experts) ** tokens)
    wbytes = (1 if dtype == "fp8" else 2) * 3 * hidden * inter
    bytes_per_call = touched * wbytes + 2 * tokens * hidden * (2 + topk)
    ones_e = torch.ones(experts, 2 * inter, device="cuda", dtype=torch.float32)
    ones_h = torch.ones(experts, hidden, device="cuda", dtype=torch.float32)
    rows = tokens * topk
    bh, bi = triton.next_power_of_2(hidden), triton.next_power_of_2(inter)
    nwh, nwi = max(1, min(16, bh // 512)), max(1, min(16, bi // 512))
    fp8 = dtype == "fp8"

    def make(i):
        ids = torch.rand(tokens, experts, device="cuda").topk(topk, dim=1).indices
        w = torch.softmax(torch.rand(tokens, topk, device="cuda"), dim=1).to(torch.bfloat16)
        x = pool.take((tokens, hidden))
        wd = torch.float8_e4m3fn if fp8 else torch.bfloat16
        w1 = pool.take((experts, 2 * inter, hidden), wd)
        w2 = pool.take((experts, hidden, inter), wd)
        return x, ids, w, w1, w2

    def fn(x, ids, w, w1, w2):
        sorted_ids, order = ids.reshape(-1).sort()
        offs = torch.searchsorted(sorted_ids, ar, right=True).to(torch.int32)
        tok = order // topk
        if fp8:
            xq = torch.empty(rows, hidden, device="cuda", dtype=torch.float8_e4m3fn)
            xs = torch.empty(rows, device="cuda", dtype=torch.float32)
            gather_quant_kernel[(rows,)](x, tok, xq, xs, hidden, BLOCK=bh, num_warps=nwh)
            h = torch._scaled_grouped_mm(xq, w1.transpose(-2, -1), xs, ones_e, offs=offs, out_dtype=torch.bfloat16)
            a = torch.empty(rows, inter, device="cuda", dtype=torch.float8_e4m3fn)
            as_ = torch.empty(rows, device="cuda", dtype=torch.float32)
            silu_mul_kernel[(rows,)](h, a, as_, inter, BLOCK=bi, QUANT=True, num_warps=nwi)
            y = torch._scaled_grouped_mm(a, w2.transpose(-2, -1), as_, ones_h, offs=offs, out_dtype=torch.bfloat16)
        else:
            h = torch._grouped_mm(x.index_select(0, tok), w1.transpose(-2, -1), offs=offs)
            a = torch.empty(rows, inter, device="cuda", dtype=torch.bfloat16)
            silu_mul_kernel[(rows,)](h, a, a, inter, BLOCK=bi, QUANT=False, num_warps=nwi)
            y = torch._grouped_mm(a, w2.transpose(-2, -1), offs=offs)
        back = torch.empty_like(y)
        back.index_copy_(0, order, y)
        return (back.view(tokens, topk, hidden) * w.unsqueeze(-1)).sum(dim=1)
    return make, fn, bytes_per_call


def attn_case(pool, batch, q_len, kv_len, heads, kv_heads, head_dim):
    group = heads // kv_heads
    mla = head_dim == 576
    if mla:
        kv_bytes = 2 * batch * kv_len * head_dim
    else:
        kv_bytes = 2 * 2 * batch * kv_heads * kv_len * head_dim
    backend = torch.nn.attention.SDPBackend.EFFICIENT_ATTENTION if mla else torch.nn.attention.SDPBackend.FLASH_ATTENTION

    def make(i):
        q = pool.take((batch, kv_heads, q_len * group, head_dim))
        k = pool.take((batch, kv_heads, kv_len, head_dim))
        v = k[..., :512] if mla else pool.take((batch, kv_heads, kv_len, head_dim))
        return q, k, v

    def fn(q, k, v):
        with torch.nn.attention.sdpa_kernel(backend):
            return F.scaled_dot_product_attention(q, k, v)
    return make, fn, kv_bytes


@triton.jit
def gdn_kernel(q_ptr, k_ptr, v_ptr, g_ptr, b_ptr, s_ptr, so_ptr, o_ptr, T, scale,
               HK: tl.constexpr, HV: tl.constexpr, K: tl.constexpr, V: tl.constexpr,
               BV: tl.constexpr, KEEP: tl.constexpr):
    """Gated delta rule, one (batch, v-head, V-block) per program, state block kept in registers."""
    iv = tl.program_id(0)
    ibh = tl.program_id(1)
    b = ibh // HV
    h = ibh % HV
    hk = h // (HV // HK)
    ok = tl.arange(0, K)
    ov = iv * BV + tl.arange(0, BV)
    s_off = (ibh * K + ok[:, None]) * V + ov[None, :]
    S = tl.load(s_ptr + s_off)
    for t in range(T):
        row = b * T + t
        qt = tl.load(q_ptr + (row * HK + hk) * K + ok).to(tl.float32)
        kt = tl.load(k_ptr + (row * HK + hk) * K + ok).to(tl.float32)
        vt = tl.load(v_ptr + (row * HV + h) * V + ov).to(tl.float32)
        qt = qt * tl.rsqrt(tl.sum(qt * qt) + 1e-6) * scale
        kt = kt * tl.rsqrt(tl.sum(kt * kt) + 1e-6)
        gt = tl.load(g_ptr + row * HV + h)
        bt = tl.load(b_ptr + row * HV + h)
        S = S * tl.exp(gt)
        vn = (vt - tl.sum(S * kt[:, None], 0)) * bt
        S = S + kt[:, None] * vn[None, :]
        ot = tl.sum(S * qt[:, None], 0)
        tl.store(o_ptr + (row * HV + h) * V + ov, ot.to(tl.bfloat16))
        if KEEP:
            tl.store(so_ptr + ((row * HV + h) * K + ok[:, None]) * V + ov[None, :], S)
    if not KEEP:
        tl.store(so_ptr + s_off, S)


def gdn_case(pool, batch, q_len, v_heads, k_heads, dim):
    keep = q_len > 1
    state_bytes = batch * v_heads * dim * dim * 4
    bytes_per_call = state_bytes * (1 + (q_len if keep else 1))
    bv = 32 if batch * v_heads * (dim // 32) >= 264 else 8
    grid = (dim // bv, batch * v_heads)

    def make(i):
        q = pool.take((batch, q_len, k_heads, dim))
        k = pool.take((batch, q_len, k_heads, dim))
        v = pool.take((batch, q_len, v_heads, dim))
        g = -torch.rand(batch, q_len, v_heads, device="cuda") * 0.1
        be = torch.rand(batch, q_len, v_heads, device="cuda")
        s = torch.randn(batch, v_heads, dim, dim, device="cuda") * 0.1
        so = s if not keep else torch.empty(batch, q_len, v_heads, dim, dim, device="cuda")
        o = torch.empty(batch, q_len, v_heads, dim, device="cuda", dtype=torch.bfloat16)
        return q, k, v, g, be, s, so, o

    def fn(q, k, v, g, be, s, so, o):
        gdn_kernel[grid](q, k, v, g, be, s, so, o, q_len, dim ** -0.5,
                         HK=k_heads, HV=v_heads, K=dim, V=dim, BV=bv, KEEP=keep,
                         num_warps=4 if bv == 32 else 1)
        return o
    return make, fn, bytes_per_call


@triton.jit
def rmsnorm_kernel(x_ptr, w_ptr, y_ptr, N, eps, BLOCK: tl.constexpr):
    r = tl.program_id(0)
    o = tl.arange(0, BLOCK)
    msk = o < N
    x = tl.load(x_ptr + r * N + o, mask=msk, other=0.0).to(tl.float32)
    w = tl.load(w_ptr + o, mask=msk, other=0.0).to(tl.float32)
    y = x * tl.rsqrt(tl.sum(x * x) / N + eps) * w
    tl.store(y_ptr + r * N + o, y.to(tl.bfloat16), mask=msk)


def rmsnorm_case(pool, tokens, hidden):
    block = triton.next_power_of_2(hidden)
    nw = max(1, min(16, block // 512))

    def make(i):
        return pool.take((tokens, hidden)), pool.take((hidden,)), torch.empty(tokens, hidden, device="cuda", dtype=torch.bfloat16)

    def fn(x, w, y):
        rmsnorm_kernel[(tokens,)](x, w, y, hidden, 1e-6, BLOCK=block, num_warps=nw)
        return y
    return make, fn, 4 * tokens * hidden


def lm_head_case(pool, tokens, vocab, hidden):
    def make(i):
        return pool.take((tokens, hidden)), pool.take((vocab, hidden))

    def fn(x, w):
        return torch.argmax(F.linear(x, w), dim=-1)
    return make, fn, 2 * (tokens * hidden + vocab * hidden + tokens * vocab)


@triton.jit
def copy_kernel(src_ptr, dst_ptr, n, BLOCK: tl.constexpr):
    o = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    m = o < n
    tl.store(dst_ptr + o, tl.load(src_ptr + o, mask=m), mask=m)


def copy_case(pool, nbytes, memcpy=False):
    """Device-to-device copy of nbytes (read nbytes, write nbytes) by an SM kernel, or by
    cudaMemcpyAsync (memcpy=True; a graph memcpy node, which may run on the copy engines)."""
    n = nbytes // 2
    block = 8192

    def make(i):
        return pool.take((n,)), pool.take((n,))

    def fn(src, dst):
        if memcpy:
            dst.copy_(src)
        else:
            copy_kernel[(triton.cdiv(n, block),)](src, dst, n, BLOCK=block, num_warps=8)
        return dst
    return make, fn, 2 * nbytes


# ----------------------------------------------------------------------------- grids

def grid_cases(args):
    """(section, row-dict, case-builder) in priority order per section."""
    sec = {}
    sec["copy"], sec["memcpy"] = [], []
    b = 4096
    while b <= (2 << 30):
        for nb in (b, b * 3 // 2):
            if nb <= (2 << 30):
                sec["copy"].append(({"op": "copy", "dtype": "bf16", "n": nb}, lambda p, nb=nb: copy_case(p, nb)))
                sec["memcpy"].append(({"op": "copy", "dtype": "bf16", "n": nb}, lambda p, nb=nb: copy_case(p, nb, True)))
        b *= 2
    for dt in ("bf16", "fp8"):
        sec["gemm_" + dt] = [({"op": "gemm", "dtype": dt, "m": m, "n": n, "k": k},
                              lambda p, dt=dt, m=m, n=n, k=k: gemm_case(p, dt, m, n, k))
                             for (n, k) in shapes.all_gemm_nk() for m in M_GRID]
        sec["moe_" + dt] = [({"op": "moe", "dtype": dt, "tokens": t, "experts": e, "topk": tk, "hidden": h, "inter": it},
                             lambda p, dt=dt, t=t, e=e, tk=tk, h=h, it=it: moe_case(p, dt, t, e, tk, h, it))
                            for (e, tk, h, it) in shapes.all_moe() for t in T_GRID]
    att, dense = [], []
    for (h, kvh, d) in shapes.all_attention():
        for q in Q_DENSE:
            for bsz in B_DENSE:
                for kv in KV_GRID:
                    kvb = (2 * bsz * kv * d) if d == 576 else (4 * bsz * kvh * kv * d)
                    if kvb > ATTN_KV_BYTES_CAP:
                        continue
                    (att if q in Q_GRID and bsz in B_GRID else dense).append(({"op": "attention", "dtype": "bf16", "batch": bsz, "q_len": q, "kv_len": kv,
                                 "heads": h, "kv_heads": kvh, "head_dim": d},
                                lambda p, bsz=bsz, q=q, kv=kv, h=h, kvh=kvh, d=d: attn_case(p, bsz, q, kv, h, kvh, d)))
    sec["attention"] = att
    sec["attention_dense"] = dense
    sec["gdn"] = [({"op": "gdn", "dtype": "bf16", "batch": bsz, "q_len": q, "heads": hv, "kv_heads": hk, "head_dim": d},
                   lambda p, bsz=bsz, q=q, hv=hv, hk=hk, d=d: gdn_case(p, bsz, q, hv, hk, d))
                  for (hv, hk, d) in shapes.all_gdn() for q in GDN_Q for bsz in GDN_B]
    sec["rmsnorm"] = [({"op": "rmsnorm", "dtype": "bf16", "tokens": t, "hidden": h},
                       lambda p, t=t, h=h: rmsnorm_case(p, t, h))
                      for h in shapes.RMSNORM_HIDDEN for t in NORM_T]
    sec["lm_head"] = [({"op": "lm_head", "dtype": "bf16", "m": t, "n": v, "k": h},
                       lambda p, t=t, v=v, h=h: lm_head_case(p, t, v, h))
                      for (v, h) in shapes.all_lm_head() for t in LM_T]
    return sec


def heldout_cases(seed, count):
    """Random off-grid shapes of random models: M/T/B/KV drawn log-uniformly between grid points."""
    rng = random.Random(seed)

    def logu(lo, hi, avoid):
        for _ in range(100):
            v = int(round(math.exp(rng.uniform(math.log(lo), math.log(hi)))))
            if v not in avoid:
                return v
        return v
    out = []
    nk = shapes.all_gemm_nk()
    moe = shapes.all_moe()
    att = shapes.all_attention()
    gdn = shapes.all_gdn()
    lm = shapes.all_lm_head()
    plan = [("gemm", 0.30), ("moe", 0.25), ("attention", 0.25), ("gdn", 0.07), ("rmsnorm", 0.05), ("lm_head", 0.08)]
    for op, frac in plan:
        for _ in range(max(1, int(round(count * frac)))):
            if op == "gemm":
                dt = rng.choice(["bf16", "fp8"])
                n, k = rng.choice(nk)
                m = logu(1, 8192, M_GRID)
                out.append(({"op": "gemm", "dtype": dt, "m": m, "n": n, "k": k},
                            lambda p, dt=dt, m=m, n=n, k=k: gemm_case(p, dt, m, n, k)))
            elif op == "moe":
                dt = rng.choice(["bf16", "fp8"])
                e, tk, h, it = rng.choice(moe)
                t = logu(1, 8192, T_GRID)
                out.append(({"op": "moe", "dtype": dt, "tokens": t, "experts": e, "topk": tk, "hidden": h, "inter": it},
                            lambda p, dt=dt, t=t, e=e, tk=tk, h=h, it=it: moe_case(p, dt, t, e, tk, h, it)))
            elif op == "attention":
                h, kvh, d = rng.choice(att)
                while True:
                    bsz = logu(1, 256, B_DENSE)
                    kv = logu(1024, 131072, KV_GRID)
                    q = rng.choice([1, 2, 3, 4, 5, 6, 7, 8])
                    kvb = (2 * bsz * kv * d) if d == 576 else (4 * bsz * kvh * kv * d)
                    if kvb <= ATTN_KV_BYTES_CAP:
                        break
                out.append(({"op": "attention", "dtype": "bf16", "batch": bsz, "q_len": q, "kv_len": kv,
                             "heads": h, "kv_heads": kvh, "head_dim": d},
                            lambda p, bsz=bsz, q=q, kv=kv, h=h, kvh=kvh, d=d: attn_case(p, bsz, q, kv, h, kvh, d)))
            elif op == "gdn":
                hv, hk, d = rng.choice(gdn)
                bsz = logu(1, 256, GDN_B)
                q = rng.choice([1, 2, 3, 4, 5, 6, 7, 8])
                out.append(({"op": "gdn", "dtype": "bf16", "batch": bsz, "q_len": q, "heads": hv, "kv_heads": hk, "head_dim": d},
                            lambda p, bsz=bsz, q=q, hv=hv, hk=hk, d=d: gdn_case(p, bsz, q, hv, hk, d)))
            elif op == "rmsnorm":
                h = rng.choice(shapes.RMSNORM_HIDDEN)
                t = logu(1, 8192, NORM_T)
                out.append(({"op": "rmsnorm", "dtype": "bf16", "tokens": t, "hidden": h},
                            lambda p, t=t, h=h: rmsnorm_case(p, t, h)))
            else:
                v, h = rng.choice(lm)
                t = logu(1, 2048, LM_T)
                out.append(({"op": "lm_head", "dtype": "bf16", "m": t, "n": v, "k": h},
                            lambda p, t=t, v=v, h=h: lm_head_case(p, t, v, h)))
    return out


# ----------------------------------------------------------------------------- output

def sh(cmd):
    try:
        return subprocess.run(cmd, shell=True, capture_output=True, text=True, timeout=20).stdout.strip()
    except Exception as e:  # noqa: BLE001
        return f"unavailable ({e})"


def header_lines(method):
    props = torch.cuda.get_device_properties(0)
    clocks = sh("nvidia-smi --query-gpu=clocks.sm,clocks.mem,clocks.max.sm,clocks.max.mem,power.limit --format=csv,noheader")
    return [
        f"# gpu: {props.name} ({props.multi_processor_count} SMs, {props.total_memory / 2**30:.0f} GiB)",
        f"# driver: {sh('nvidia-smi --query-gpu=driver_version --format=csv,noheader')}",
        f"# torch: {torch.__version__}",
        f"# cuda: {torch.version.cuda}",
        f"# triton: {triton.__version__}",
        f"# clocks: sm,mem,max_sm,max_mem,power_limit = {clocks} (read at start, not changed)",
        f"# method: {method}",
        f"# date: {datetime.datetime.now(datetime.timezone.utc).strftime('%Y-%m-%dT%H:%M:%SZ')}",
    ]


METHOD = ("CUDA graph of n back-to-back calls (n so one replay is ~2 ms, min 3), inputs rotated over "
          "up to 32 random sets at distinct offsets of a random pool until a pass touches >=256 MiB, "
          f"1 warm replay then median of {REPLAYS} replays / n; random normal data; see kernels/collect/NOTES.md")


class Writer:
    def __init__(self, path, method):
        self.f = open(path, "w")
        for line in header_lines(method):
            self.f.write(line + "\n")
        self.f.write(",".join(COLUMNS) + "\n")
        self.f.flush()
        self.rows = 0

    def row(self, d, us):
        cells = [str(d.get(c, "")) for c in COLUMNS[:-1]] + [f"{us:.3f}"]
        self.f.write(",".join(cells) + "\n")
        self.f.flush()
        self.rows += 1


def run_section(name, cases, pool, writer, budget_s, deadline):
    t0 = time.time()
    done = fail = 0
    for i, (row, build) in enumerate(cases):
        now = time.time()
        if now - t0 > budget_s or now > deadline:
            log(f"[{name}] budget reached: {done} done, {len(cases) - i} skipped")
            break
        pool.reset()
        try:
            make, fn, nbytes = build(pool)
            us = bench(make, fn, nbytes)
            writer.row(row, us)
            done += 1
        except Exception as e:  # noqa: BLE001
            fail += 1
            if fail <= 5:
                log(f"[{name}] FAIL {row}: {type(e).__name__}: {str(e).splitlines()[0][:300]}")
            torch.cuda.synchronize()
    el = time.time() - t0
    log(f"[{name}] {done}/{len(cases)} rows, {fail} failed, {el:.1f}s ({1000 * el / max(done + fail, 1):.1f} ms/shape)")
    return done


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--pool-gib", type=float, default=40)
    ap.add_argument("--global-budget", type=float, default=490)
    ap.add_argument("--sections", default="copy,memcpy,gemm_bf16,moe_bf16,attention,gdn,rmsnorm,lm_head,gemm_fp8,moe_fp8,heldout")
    ap.add_argument("--budgets", default="", help="name=seconds,... overriding the defaults")
    ap.add_argument("--stride", type=int, default=1, help="keep every stride-th case (smoke tests)")
    ap.add_argument("--heldout", type=int, default=160)
    ap.add_argument("--heldout-seed", type=int, default=20261202)
    ap.add_argument("--repeat", type=int, default=300)
    args = ap.parse_args()
    start = time.time()
    deadline = start + args.global_budget
    budgets = {"copy": 8, "memcpy": 5, "gemm_bf16": 60, "moe_bf16": 85, "attention": 115, "gdn": 25,
               "rmsnorm": 12, "lm_head": 15, "gemm_fp8": 50, "moe_fp8": 80, "heldout": 40,
               "attention_dense": 200, "repeat": 60}
    for kv in filter(None, args.budgets.split(",")):
        k, v = kv.split("=")
        budgets[k] = float(v)
    torch.manual_seed(0)
    torch.backends.cuda.matmul.allow_tf32 = False
    pool = Pool(args.pool_gib)
    log(f"pool ready in {time.time() - start:.1f}s")
    os.makedirs(args.out, exist_ok=True)
    sec = grid_cases(args)
    main_w = Writer(os.path.join(args.out, "ops.csv"), METHOD)
    held_w = None
    for name in args.sections.split(","):
        if name == "repeat":
            # re-measure a fixed random sample of first-pass grid rows: run-to-run spread
            rep = Writer(os.path.join(args.out, "ops_repeat.csv"), METHOD + "; repeat of sampled grid rows")
            pool_cases = [c for n in ("gemm_bf16", "gemm_fp8", "moe_bf16", "moe_fp8", "attention", "gdn", "rmsnorm", "lm_head", "copy")
                          for c in sec[n]]
            run_section(name, random.Random(7).sample(pool_cases, args.repeat), pool, rep, budgets[name], deadline)
            continue
        if name == "memcpy":
            side = Writer(os.path.join(args.out, "copy_memcpy.csv"), METHOD + "; copy by cudaMemcpyAsync (graph memcpy node), not a kernel")
            run_section(name, sec[name][::args.stride], pool, side, budgets[name], deadline)
            continue
        if name in ("heldout", "heldout_a"):
            # heldout: --heldout shapes from --heldout-seed; heldout_a: the first run's set (160, seed 20261202)
            seed, count, fname = ((args.heldout_seed, args.heldout, "ops_heldout.csv") if name == "heldout"
                                  else (20261202, 160, "ops_heldout_a.csv"))
            held_w = Writer(os.path.join(args.out, fname), METHOD + f"; held-out random off-grid shapes, seed {seed}")
            cases = heldout_cases(seed, count)
            run_section(name, cases[::args.stride], pool, held_w, budgets["heldout"], deadline + 30)
            continue
        cases = sec[name][::args.stride]
        run_section(name, cases, pool, main_w, budgets[name], deadline)
    log(f"total {time.time() - start:.1f}s, {main_w.rows} rows" + (f", {held_w.rows} held-out" if held_w else ""))
    log("clocks at end: " + sh("nvidia-smi --query-gpu=clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv,noheader"))


if __name__ == "__main__":
    main()
