#!/usr/bin/env python3
"""Time the Gated DeltaNet kernels SGLang runs (prefill chunked, MTP verify, decode) on one GPU.

The kernels are SGLang's own copies of flash-linear-attention (python/sglang/srt/layers/attention/fla/
in sgl-project/sglang), called the way GDNAttnBackend.forward_extend / forward_decode call them in
python/sglang/srt/layers/attention/hybrid_linear_attn_backend.py:
  prefill : chunk_gated_delta_rule(q, k, v, g, beta, initial_state=ssm_pool, initial_state_indices,
            cu_seqlens, head_first=False, use_qk_l2norm_in_kernel=True)   (fla/chunk.py)
  verify  : fused_recurrent_gated_delta_rule_update(..., disable_state_update=True,
            intermediate_states_buffer, intermediate_state_indices, cache_steps)  (fla/fused_recurrent.py)
  decode  : fused_sigmoid_gating_delta_rule_update(A_log, a, dt_bias, ..., initial_state_source=ssm_pool)
            (fla/fused_sigmoid_gating_recurrent.py)
Upstream fla-org/flash-linear-attention's chunk_gated_delta_rule is timed at a few points beside it.
Neither source is part of this repository: the device command puts them on PYTHONPATH
(SGL_PY: the sglang python/ folder holding only those files plus stubs; FLA_UP: upstream fla).

Each point is timed two ways: GPU time per call from CUDA-graph replays (collect_ops.bench: n calls per
graph, inputs rotated past L2, median of 7 replays), and eager wall time (host clock around n
back-to-back eager calls, then synchronize; median of 5), which is what SGLang pays for prefill, which it
runs without graphs. eager_sync_us is one call + synchronize (launch latency included).
"""
import argparse
import math
import os
import random
import statistics
import sys
import time

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import collect_ops  # noqa: E402

from sglang.srt.layers.attention.fla.chunk import chunk_gated_delta_rule  # noqa: E402
from sglang.srt.layers.attention.fla.fused_gdn_gating import fused_gdn_gating  # noqa: E402,F401
from sglang.srt.layers.attention.fla.fused_recurrent import fused_recurrent_gated_delta_rule_update  # noqa: E402
from sglang.srt.layers.attention.fla.fused_sigmoid_gating_recurrent import fused_sigmoid_gating_delta_rule_update  # noqa: E402

try:  # v0.5.14 (TritonGDNKernel.packed_decode); absent from the 2026-01-01 copy
    from sglang.srt.layers.attention.fla.fused_recurrent import fused_recurrent_gated_delta_rule_packed_decode  # noqa: E402
except ImportError:
    fused_recurrent_gated_delta_rule_packed_decode = None

COLUMNS = "kernel,mode,state_dtype,batch,q_len,heads,kv_heads,head_dim,graph_us,eager_us,eager_sync_us".split(",")
# Qwen3.5-397B-A17B: linear_num_value_heads 64, linear_num_key_heads 16, head dims 128 (config.json);
# attention TP t gives each rank 64/t v-heads and 16/t k-heads.
TP_HEADS = {1: (64, 16), 2: (32, 8), 4: (16, 4), 8: (8, 2)}
D = 128
PREFILL_T = [64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384, 32768]
PREFILL_B = [1, 2, 4, 8]
MAX_TOKENS = 32768
REC_B = [1, 4, 16, 64, 256]
VERIFY_Q = [2, 4]
SIGMOID_VERIFY = False
PACKED_DECODE = False
STATE = {"fp32": torch.float32, "bf16": torch.bfloat16}


def log(*a):
    print(*a, file=sys.stderr, flush=True)


# ----------------------------------------------------------------------------- reference

def ref_gdn(q, k, v, g, beta, h0, cu, scale):
    """Float64 recurrence: per token S <- exp(g) S; u = beta (v - S^T k); S += k u^T; o = scale S^T q.
    q,k [T,HK,D] (L2-normalised here), v [T,HV,D], g,beta [T,HV], h0 [N,HV,D,D] (K x V). Returns o, states."""
    q, k, v, g, beta = (x.double() for x in (q, k, v, g, beta))
    q = F.normalize(q, dim=-1)
    k = F.normalize(k, dim=-1)
    HV, HK = v.shape[1], q.shape[1]
    rep = HV // HK
    o = torch.empty_like(v)
    hs = h0.double().clone()
    for n in range(len(cu) - 1):
        S = hs[n]
        for t in range(cu[n], cu[n + 1]):
            qt = q[t].repeat_interleave(rep, 0)
            kt = k[t].repeat_interleave(rep, 0)
            S = S * torch.exp(g[t])[:, None, None]
            u = beta[t][:, None] * (v[t] - torch.einsum("hkv,hk->hv", S, kt))
            S = S + kt[:, :, None] * u[:, None, :]
            o[t] = scale * torch.einsum("hkv,hk->hv", S, qt)
        hs[n] = S
    return o, hs


def rel(a, b):
    a, b = a.double(), b.double()
    return ((a - b).norm() / b.norm()).item()


def rel_state(x, ref):
    """State error under either layout: the 2026-01-01 copy keeps [.., K, V], v0.5.14 [.., V, K]."""
    return min(rel(x, ref), rel(x, ref.transpose(-1, -2)))


def gates(T, HV, dev):
    A_log = torch.rand(HV, device=dev) * 2 - 1
    dt_bias = torch.rand(HV, device=dev)
    a = torch.randn(T, HV, device=dev, dtype=torch.bfloat16)
    b = torch.randn(T, HV, device=dev, dtype=torch.bfloat16)
    g = -A_log.exp() * F.softplus(a.float() + dt_bias)
    beta = b.float().sigmoid()
    return A_log, dt_bias, a, b, g, beta


def check():
    """Each kernel against the float64 recurrence; returns {kernel: ok}. A kernel that raises counts as failed."""
    dev = "cuda"
    torch.manual_seed(11)
    ok = {}
    HV, HK = 8, 2
    scale = D ** -0.5

    def run(name, sd, fn):
        try:
            good = fn(sd)
        except Exception as e:  # noqa: BLE001
            log(f"check {name} state={sd}: {type(e).__name__}: {str(e).splitlines()[0][:300] if str(e) else ''} FAIL")
            good = False
        ok[name] = ok.get(name, True) and good

    def chunk(sd):
        cu = [0, 77, 130]
        T = cu[-1]
        q = torch.randn(1, T, HK, D, device=dev, dtype=torch.bfloat16)
        k = torch.randn(1, T, HK, D, device=dev, dtype=torch.bfloat16)
        v = torch.randn(1, T, HV, D, device=dev, dtype=torch.bfloat16)
        A_log, dt_bias, a, b, g, beta = gates(T, HV, dev)
        pool = torch.randn(5, HV, D, D, device=dev).mul_(0.1).to(STATE[sd])
        idx = torch.tensor([3, 1], device=dev, dtype=torch.int32)
        h0 = pool[idx.long()].clone()
        cu_t = torch.tensor(cu, device=dev, dtype=torch.int64)
        # the reference reads h0 as [K, V]; v0.5.14 stores [V, K]: feed it the layout the pool holds
        o_ref, h_ref = ref_gdn(q[0], k[0], v[0], g, beta, h0, cu, scale)
        o_ref_t, h_ref_t = ref_gdn(q[0], k[0], v[0], g, beta, h0.transpose(-1, -2), cu, scale)
        o, _, _ = chunk_gated_delta_rule(q=q, k=k, v=v, g=g[None].contiguous(), beta=beta[None].contiguous(),
                                         initial_state=pool, initial_state_indices=idx, cu_seqlens=cu_t,
                                         head_first=False, use_qk_l2norm_in_kernel=True)
        torch.cuda.synchronize()
        e_o = min(rel(o[0], o_ref), rel(o[0], o_ref_t))
        e_h = min(rel_state(pool[idx.long()], h_ref), rel_state(pool[idx.long()], h_ref_t))
        good = e_o < 2e-2 and e_h < 2e-2 and torch.isfinite(o).all().item()
        log(f"check chunk prefill state={sd}: rel err o {e_o:.2e}, final state {e_h:.2e} {'ok' if good else 'FAIL'}")
        return good

    def recurrent_inputs(N, Q, sd, slots, idx_list):
        pool = torch.randn(slots, HV, D, D, device=dev).mul_(0.1).to(STATE[sd])
        idx = torch.tensor(idx_list, device=dev, dtype=torch.int32)
        h0 = pool[idx.long()].clone()
        q = torch.randn(1, N * Q, HK, D, device=dev, dtype=torch.bfloat16)
        k = torch.randn(1, N * Q, HK, D, device=dev, dtype=torch.bfloat16)
        v = torch.randn(1, N * Q, HV, D, device=dev, dtype=torch.bfloat16)
        return pool, idx, h0, q, k, v, gates(N * Q, HV, dev)

    def ref_either(q, k, v, g, beta, h0, cu):
        """Reference under both state layouts; the caller keeps the one the kernel matches."""
        return (ref_gdn(q, k, v, g, beta, h0, cu, scale),
                ref_gdn(q, k, v, g, beta, h0.transpose(-1, -2), cu, scale))

    def sig_decode(sd):
        N = 3
        pool, idx, h0, qd, kd, vd, (A_log, dt_bias, a, b, g, beta) = recurrent_inputs(N, 1, sd, 6, [4, 0, 2])
        cud = torch.arange(N + 1, device=dev, dtype=torch.int32)
        od = fused_sigmoid_gating_delta_rule_update(A_log=A_log, a=a, dt_bias=dt_bias, softplus_beta=1.0,
                                                    softplus_threshold=20.0, q=qd, k=kd, v=vd, b=b,
                                                    initial_state_source=pool, initial_state_indices=idx,
                                                    use_qk_l2norm_in_kernel=True, cu_seqlens=cud)
        torch.cuda.synchronize()
        best = None
        for o_ref, h_ref in ref_either(qd[0], kd[0], vd[0], g, beta, h0, list(range(N + 1))):
            e = (rel(od[0], o_ref), rel_state(pool[idx.long()], h_ref))
            best = e if best is None or e[0] < best[0] else best
        good = best[0] < 2e-2 and best[1] < 2e-2
        log(f"check decode (fused sigmoid gating) state={sd}: rel err o {best[0]:.2e}, state {best[1]:.2e} {'ok' if good else 'FAIL'}")
        return good

    def packed_decode(sd):
        if fused_recurrent_gated_delta_rule_packed_decode is None:
            raise ImportError("fused_recurrent_gated_delta_rule_packed_decode not in this source")
        N = 3
        pool, idx, h0, qd, kd, vd, (A_log, dt_bias, a, b, g, beta) = recurrent_inputs(N, 1, sd, 6, [4, 0, 2])
        mixed = torch.cat([qd[0].reshape(N, -1), kd[0].reshape(N, -1), vd[0].reshape(N, -1)], dim=1).contiguous()
        out = torch.empty(N, 1, HV, D, device=dev, dtype=torch.bfloat16)
        fused_recurrent_gated_delta_rule_packed_decode(mixed_qkv=mixed, a=a, b=b, A_log=A_log, dt_bias=dt_bias,
                                                       scale=scale, initial_state=pool, out=out,
                                                       ssm_state_indices=idx, use_qk_l2norm_in_kernel=True)
        torch.cuda.synchronize()
        best = None
        for o_ref, h_ref in ref_either(qd[0], kd[0], vd[0], g, beta, h0, list(range(N + 1))):
            e = (rel(out[:, 0], o_ref), rel_state(pool[idx.long()], h_ref))
            best = e if best is None or e[0] < best[0] else best
        good = best[0] < 2e-2 and best[1] < 2e-2
        log(f"check packed decode state={sd}: rel err o {best[0]:.2e}, state {best[1]:.2e} {'ok' if good else 'FAIL'}")
        return good

    def verify(sd, sigmoid):
        N, Q = 2, 4
        pool, idx, h0, qv, kv, vv, (A_log, dt_bias, a, b, g, beta) = recurrent_inputs(N, Q, sd, 4, [2, 3])
        inter = torch.full((N, Q, HV, D, D), float("nan"), device=dev).to(STATE[sd])
        cuv = torch.arange(0, N * Q + 1, Q, device=dev, dtype=torch.int32)
        iidx = torch.arange(N, device=dev, dtype=torch.int32)
        if sigmoid:
            ov = fused_sigmoid_gating_delta_rule_update(A_log=A_log, a=a, dt_bias=dt_bias, softplus_beta=1.0,
                                                        softplus_threshold=20.0, q=qv, k=kv, v=vv, b=b,
                                                        initial_state_source=pool, initial_state_indices=idx,
                                                        use_qk_l2norm_in_kernel=True, cu_seqlens=cuv,
                                                        disable_state_update=True, intermediate_states_buffer=inter,
                                                        intermediate_state_indices=iidx, cache_steps=Q,
                                                        retrieve_parent_token=None)
        else:
            ov = fused_recurrent_gated_delta_rule_update(q=qv, k=kv, v=vv, g=g[None], beta=beta[None],
                                                         initial_state_source=pool, initial_state_indices=idx,
                                                         cu_seqlens=cuv, use_qk_l2norm_in_kernel=True,
                                                         disable_state_update=True, intermediate_states_buffer=inter,
                                                         intermediate_state_indices=iidx, cache_steps=Q)
        torch.cuda.synchronize()
        best = None
        for o_ref, h_ref in ref_either(qv[0], kv[0], vv[0], g, beta, h0, list(range(0, N * Q + 1, Q))):
            e = (rel(ov[0] if ov.dim() == 4 else ov, o_ref), rel_state(inter[:, Q - 1], h_ref))
            best = e if best is None or e[0] < best[0] else best
        e_pool = rel(pool[idx.long()], h0)
        good = best[0] < 2e-2 and best[1] < 2e-2 and e_pool == 0.0 and torch.isfinite(inter.float()).all().item()
        name = "fused sigmoid gating" if sigmoid else "fused recurrent"
        log(f"check verify ({name}, intermediate states) state={sd}: rel err o {best[0]:.2e}, "
            f"last intermediate {best[1]:.2e}, pool unchanged {e_pool == 0.0} {'ok' if good else 'FAIL'}")
        return good

    for sd in ("fp32", "bf16"):
        run("chunk", sd, chunk)
        run("sigmoid_decode", sd, sig_decode)
        run("packed_decode", sd, packed_decode)
        run("recurrent_verify", sd, lambda s: verify(s, False))
        run("sigmoid_verify", sd, lambda s: verify(s, True))
    return ok


# ----------------------------------------------------------------------------- cases

def prefill_case(kernel, batch, q_len, HV, HK, sd):
    """Inputs of one chunked prefill of `batch` sequences of q_len new tokens each (packed, cu_seqlens)."""
    dev = "cuda"
    T = batch * q_len
    cu = torch.arange(0, T + 1, q_len, device=dev, dtype=torch.int64)   # one object for every set: fla's tensor_cache
    nbytes = T * (2 * HK * D + 2 * HV * D) * 2 + batch * HV * D * D * 4
    nsets = collect_ops.n_sets(nbytes)
    pool = torch.randn(batch * nsets, HV, D, D, device=dev).mul_(0.05).to(STATE[sd])

    def make(i):
        q = torch.randn(1, T, HK, D, device=dev, dtype=torch.bfloat16)
        k = torch.randn(1, T, HK, D, device=dev, dtype=torch.bfloat16)
        v = torch.randn(1, T, HV, D, device=dev, dtype=torch.bfloat16)
        _, _, _, _, g, beta = gates(T, HV, dev)
        idx = torch.arange(i * batch, (i + 1) * batch, device=dev, dtype=torch.int32)
        return q, k, v, g[None].contiguous(), beta[None].contiguous(), idx

    if kernel == "sglang":
        def fn(q, k, v, g, beta, idx):
            return chunk_gated_delta_rule(q=q, k=k, v=v, g=g, beta=beta, initial_state=pool,
                                          initial_state_indices=idx, cu_seqlens=cu, head_first=False,
                                          use_qk_l2norm_in_kernel=True)
    else:
        from fla.ops.gated_delta_rule import chunk_gated_delta_rule as fla_chunk
        h0 = torch.randn(batch, HV, D, D, device=dev).mul_(0.05)

        def fn(q, k, v, g, beta, idx):
            return fla_chunk(q=q, k=k, v=v, g=g, beta=beta, initial_state=h0, output_final_state=True,
                             cu_seqlens=cu, use_qk_l2norm_in_kernel=True)
    return make, fn, nbytes, nsets


def recurrent_case(mode, batch, q_len, HV, HK, sd, kernel="recurrent"):
    dev = "cuda"
    T = batch * q_len
    sbytes = 4 if sd == "fp32" else 2
    nbytes = batch * HV * D * D * sbytes * (2 if mode == "decode" else 1 + q_len) + T * (2 * HK + HV) * D * 2
    nsets = collect_ops.n_sets(nbytes)
    pool = torch.randn(batch * nsets, HV, D, D, device=dev).mul_(0.05).to(STATE[sd])
    cu = torch.arange(0, T + 1, q_len, device=dev, dtype=torch.int32)
    inter = torch.empty(batch * nsets if mode == "verify" else 1, q_len, HV, D, D, device=dev, dtype=STATE[sd])

    def make(i):
        q = torch.randn(1, T, HK, D, device=dev, dtype=torch.bfloat16)
        k = torch.randn(1, T, HK, D, device=dev, dtype=torch.bfloat16)
        v = torch.randn(1, T, HV, D, device=dev, dtype=torch.bfloat16)
        A_log, dt_bias, a, b, g, beta = gates(T, HV, dev)
        idx = torch.arange(i * batch, (i + 1) * batch, device=dev, dtype=torch.int32)
        return q, k, v, A_log, dt_bias, a, b, g[None].contiguous(), beta[None].contiguous(), idx

    if mode == "decode" and kernel == "packed":
        # v0.5.14 TritonGDNKernel.packed_decode: q, k, v still packed in the projection's mixed_qkv row,
        # gating fused, state read and written in place ([slots, HV, V, K])
        qkv_dim = (2 * HK + HV) * D
        out = torch.empty(batch, 1, HV, D, device=dev, dtype=torch.bfloat16)

        def make(i):  # noqa: F811
            A_log, dt_bias, a, b, _, _ = gates(batch, HV, dev)
            mixed = torch.randn(batch, qkv_dim, device=dev, dtype=torch.bfloat16)
            idx = torch.arange(i * batch, (i + 1) * batch, device=dev, dtype=torch.int32)
            return mixed, a, b, A_log, dt_bias, idx

        def fn(mixed, a, b, A_log, dt_bias, idx):
            return fused_recurrent_gated_delta_rule_packed_decode(mixed_qkv=mixed, a=a, b=b, A_log=A_log,
                                                                  dt_bias=dt_bias, scale=D ** -0.5,
                                                                  initial_state=pool, out=out,
                                                                  ssm_state_indices=idx,
                                                                  use_qk_l2norm_in_kernel=True)
    elif mode == "decode":
        def fn(q, k, v, A_log, dt_bias, a, b, g, beta, idx):
            return fused_sigmoid_gating_delta_rule_update(A_log=A_log, a=a, dt_bias=dt_bias, softplus_beta=1.0,
                                                          softplus_threshold=20.0, q=q, k=k, v=v, b=b,
                                                          initial_state_source=pool, initial_state_indices=idx,
                                                          use_qk_l2norm_in_kernel=True, cu_seqlens=cu)
    elif kernel == "sigmoid":
        # verify through the fused sigmoid-gating kernel as v0.5.14's TritonGDNKernel.target_verify calls it
        # (gdn_triton.py): state not updated, every per-step state stored to intermediate_states_buffer
        # ([slots, steps, HV, V, K], dtype = --mamba-ssm-dtype, memory_pool.py MambaPool), chain (no tree).
        def fn(q, k, v, A_log, dt_bias, a, b, g, beta, idx):
            return fused_sigmoid_gating_delta_rule_update(A_log=A_log, a=a, dt_bias=dt_bias, softplus_beta=1.0,
                                                          softplus_threshold=20.0, q=q, k=k, v=v, b=b,
                                                          initial_state_source=pool, initial_state_indices=idx,
                                                          use_qk_l2norm_in_kernel=True, cu_seqlens=cu,
                                                          disable_state_update=True,
                                                          intermediate_states_buffer=inter,
                                                          intermediate_state_indices=idx, cache_steps=q_len,
                                                          retrieve_parent_token=None)
    else:
        def fn(q, k, v, A_log, dt_bias, a, b, g, beta, idx):
            return fused_recurrent_gated_delta_rule_update(q=q, k=k, v=v, g=g, beta=beta, initial_state_source=pool,
                                                           initial_state_indices=idx, cu_seqlens=cu,
                                                           use_qk_l2norm_in_kernel=True, disable_state_update=True,
                                                           intermediate_states_buffer=inter,
                                                           intermediate_state_indices=idx, cache_steps=q_len)
    return make, fn, nbytes, nsets


def time_both(make, fn, nbytes, nsets):
    sets = [make(i) for i in range(nsets)]
    graph = collect_ops.bench(lambda i: sets[i], fn, nbytes)
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    fn(*sets[0])
    torch.cuda.synchronize()
    est = (time.perf_counter() - t0) * 1e6
    n = int(max(3, min(100, 20000.0 / max(est, 1.0))))
    runs = []
    for _ in range(5):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        for i in range(n):
            fn(*sets[i % len(sets)])
        torch.cuda.synchronize()
        runs.append((time.perf_counter() - t0) * 1e6 / n)
    sync = []
    for i in range(9):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        fn(*sets[i % len(sets)])
        torch.cuda.synchronize()
        sync.append((time.perf_counter() - t0) * 1e6)
    del sets
    return graph, statistics.median(runs), statistics.median(sync)


def cases(args):
    """Prefill: fp32 state at every TP (batch 1 to 32k tokens; batch 2 and 4 to 4096, 8 to 1024 tokens each),
    bf16 state at TP 2 and 4, batch 1. Decode and verify: both state dtypes, every TP."""
    pre, pre16, rec = [], [], []
    for tp in args.tps:
        HV, HK = TP_HEADS[tp]
        for T in PREFILL_T:
            for B in PREFILL_B:
                if B == 1 or (B in (2, 4) and T <= 4096) or (B == 8 and T <= 1024):
                    pre.append(("gdn_chunk", ("sglang_chunk", "prefill", "fp32", B, T, HV, HK)))
            if tp in (2, 4):
                pre16.append(("gdn_chunk", ("sglang_chunk", "prefill", "bf16", 1, T, HV, HK)))
        for sd in ("fp32", "bf16"):
            for B in REC_B:
                if PACKED_DECODE:
                    rec.append(("gdn_decode_packed", ("sglang_packed_decode", "decode", sd, B, 1, HV, HK)))
                if SIGMOID_VERIFY:
                    rec.extend(("gdn_verify_sigmoid", ("sglang_fused_sigmoid_gating", "verify", sd, B, Q, HV, HK))
                               for Q in VERIFY_Q)
                if PACKED_DECODE or SIGMOID_VERIFY:
                    continue
                rec.append(("gdn_recurrent", ("sglang_fused_sigmoid_gating", "decode", sd, B, 1, HV, HK)))
                for Q in VERIFY_Q:
                    rec.append(("gdn_recurrent", ("sglang_fused_recurrent_update", "verify", sd, B, Q, HV, HK)))
    return pre, pre16, rec


def heldout(seed, n, tps):
    """Off-grid prefill points (q_len not on PREFILL_T, batch 1..3), drawn before any comparison."""
    r = random.Random(seed)
    grid = set(PREFILL_T)
    out = []
    while len(out) < n:
        T = int(round(math.exp(r.uniform(math.log(80), math.log(30000)))))
        if T in grid:
            continue
        B = r.choice([1, 1, 1, 2, 3])
        if B * T > MAX_TOKENS:
            continue
        tp = r.choice(tps)
        HV, HK = TP_HEADS[tp]
        out.append(("gdn_chunk_heldout", ("sglang_chunk", "prefill", r.choice(["fp32", "bf16"]), B, T, HV, HK)))
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--budget", type=float, default=300)
    ap.add_argument("--tps", type=lambda s: [int(x) for x in s.split(",")], default=[1, 2, 4, 8])
    ap.add_argument("--heldout", type=int, default=24)
    ap.add_argument("--stride", type=int, default=1)
    ap.add_argument("--only-recurrent", action="store_true", help="decode and verify rows only (run 3)")
    ap.add_argument("--rec-batches", type=lambda s: [int(x) for x in s.split(",")], default=None)
    ap.add_argument("--sigmoid-verify", action="store_true",
                    help="also verify through fused_sigmoid_gating_delta_rule_update (gdn_verify_sigmoid.csv)")
    ap.add_argument("--packed-decode", action="store_true",
                    help="also decode through fused_recurrent_gated_delta_rule_packed_decode (gdn_decode_packed.csv)")
    ap.add_argument("--verify-q", type=lambda s: [int(x) for x in s.split(",")], default=None)
    ap.add_argument("--upstream", default="2:1024,2:4096,2:16384,4:4096,8:4096,1:4096",
                    help="tp:q_len points for upstream fla's chunk kernel (batch 1, fp32 state)")
    args = ap.parse_args()
    torch.backends.cuda.matmul.allow_tf32 = False
    deadline = time.time() + args.budget
    os.makedirs(args.out, exist_ok=True)
    global REC_B, VERIFY_Q, SIGMOID_VERIFY, PACKED_DECODE
    SIGMOID_VERIFY = args.sigmoid_verify
    PACKED_DECODE = args.packed_decode
    ok = check()
    need = ["sigmoid_decode"] if args.only_recurrent else ["chunk", "sigmoid_decode", "recurrent_verify"]
    if args.only_recurrent and not (SIGMOID_VERIFY or PACKED_DECODE):
        need.append("recurrent_verify")
    if SIGMOID_VERIFY:
        need.append("sigmoid_verify")
    if PACKED_DECODE:
        need.append("packed_decode")
    bad = [k for k in need if not ok.get(k)]
    if bad:
        log(f"CORRECTNESS FAILED for {bad}: no timing")
        sys.exit(1)
    if args.rec_batches:
        REC_B = args.rec_batches
    if args.verify_q:
        VERIFY_Q = args.verify_q
    pre, pre16, rec = cases(args)
    if args.only_recurrent:
        pre, pre16, args.upstream, args.heldout = [], [], "", 0
    up = []
    if args.upstream:
        for p in args.upstream.split(","):
            tp, T = (int(x) for x in p.split(":"))
            HV, HK = TP_HEADS[tp]
            up.append(("gdn_chunk_upstream", ("fla_upstream_chunk", "prefill", "fp32", 1, T, HV, HK)))
    held = heldout(20261203, args.heldout, args.tps)
    todo = [c for part in (pre, held, pre16, up, rec) for c in part[::args.stride]]
    files = {}
    t_start = time.time()
    done = fail = 0
    for name, row in todo:
        if time.time() > deadline:
            log(f"budget reached: {done} done, {len(todo) - done - fail} left")
            break
        if name not in files:
            f = open(os.path.join(args.out, name + ".csv"), "w")
            for line in collect_ops.header_lines("graph_us: " + collect_ops.METHOD + "; eager_us: host clock over n back-to-back eager calls / n (median of 5); eager_sync_us: one eager call + synchronize (median of 9)"):
                f.write(line + "\n")
            f.write(",".join(COLUMNS) + "\n")
            files[name] = f
        kernel, mode, sd, B, T, HV, HK = row
        try:
            if mode == "prefill":
                make, fn, nbytes, nsets = prefill_case("upstream" if kernel.startswith("fla") else "sglang", B, T, HV, HK, sd)
            else:
                which = {"sglang_fused_sigmoid_gating": "sigmoid" if mode == "verify" else "recurrent",
                         "sglang_packed_decode": "packed"}.get(kernel, "recurrent")
                make, fn, nbytes, nsets = recurrent_case(mode, B, T, HV, HK, sd, kernel=which)
            g_us, e_us, s_us = time_both(make, fn, nbytes, nsets)
            files[name].write(f"{kernel},{mode},{sd},{B},{T},{HV},{HK},{D},{g_us:.3f},{e_us:.3f},{s_us:.3f}\n")
            files[name].flush()
            done += 1
        except Exception as e:  # noqa: BLE001
            fail += 1
            if fail <= 8:
                log(f"FAIL {name} {row}: {type(e).__name__}: {str(e).splitlines()[0][:300] if str(e) else ''}")
            torch.cuda.synchronize()
        torch.cuda.empty_cache()
    log(f"gdn: {done} rows, {fail} failed, {time.time() - t_start:.1f}s")


if __name__ == "__main__":
    main()
