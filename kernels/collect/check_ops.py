#!/usr/bin/env python3
"""Correctness checks of every timed op against float32/float64 references on fresh random inputs.

Run before a collection: prints the relative error ||out - ref|| / ||ref|| of each op and which
PyTorch APIs and SDPA backends accept the shapes we time. Exits non-zero if an op is wrong.
"""
import sys

import torch
import torch.nn.functional as F

import collect_ops as co

ok = True


def rel(out, ref):
    out, ref = out.double(), ref.double()
    return ((out - ref).norm() / ref.norm()).item()


def report(name, err, tol):
    global ok
    good = err == err and err < tol
    ok &= good
    print(f"{name:40s} rel_err={err:.2e} tol={tol:.0e} {'ok' if good else 'FAIL'}", flush=True)


def main():
    torch.manual_seed(0)
    pool = co.Pool(1)
    # gemm bf16 / fp8
    for dt in ("bf16", "fp8"):
        make, fn, _ = co.gemm_case(pool, dt, 37, 256, 512)
        x, w = make(0)
        ref = x.float() @ w.float().t()
        report(f"gemm {dt}", rel(fn(x, w), ref), 2e-2)
    # moe bf16 / fp8
    for dt in ("bf16", "fp8"):
        T, E, K, H, I = 45, 16, 4, 256, 128
        make, fn, _ = co.moe_case(pool, dt, T, E, K, H, I)
        x, ids, w, w1, w2 = make(0)
        out = fn(x, ids, w, w1, w2)
        ref = torch.zeros(T, H, dtype=torch.float64, device="cuda")
        for t in range(T):
            for j in range(K):
                e = ids[t, j].item()
                h = x[t].double() @ w1[e].double().t()
                a = F.silu(h[:I]) * h[I:]
                ref[t] += w[t, j].double() * (a @ w2[e].double().t())
        distinct = all(len(set(r.tolist())) == K for r in ids)
        # fp8: two E4M3 activation roundings (3 mantissa bits each) give ~4-5 % relative error
        report(f"moe {dt} (topk distinct={distinct})", rel(out, ref), 8e-2 if dt == "fp8" else 2e-2)
    # attention (flash, GQA folded) and MLA shapes per backend
    make, fn, _ = co.attn_case(pool, 2, 3, 1000, 16, 2, 256)
    q, k, v = make(0)
    B, G, L, D = q.shape
    ref = torch.softmax(q.float() @ k.float().transpose(-1, -2) / D ** 0.5, -1) @ v.float()
    report("attention flash hd256 folded", rel(fn(q, k, v), ref), 2e-2)
    make, fn, _ = co.attn_case(pool, 2, 2, 1000, 16, 1, 576)
    q, k, v = make(0)
    ref = torch.softmax(q.float() @ k.float().transpose(-1, -2) / 576 ** 0.5, -1) @ v.float()
    try:
        report("attention MLA 576/512 (efficient)", rel(fn(q, k, v), ref), 2e-2)
    except Exception as e:  # noqa: BLE001
        print("attention MLA efficient backend: FAILED", type(e).__name__, str(e).splitlines()[0][:200])
    for be in (torch.nn.attention.SDPBackend.FLASH_ATTENTION, torch.nn.attention.SDPBackend.CUDNN_ATTENTION):
        try:
            with torch.nn.attention.sdpa_kernel(be):
                F.scaled_dot_product_attention(q, k, v)
            torch.cuda.synchronize()
            print(f"attention MLA 576 via {be.name}: accepted")
        except Exception as e:  # noqa: BLE001
            print(f"attention MLA 576 via {be.name}: rejected ({str(e).splitlines()[0][:160]})")
    # gdn vs a float64 loop, q_len 1 (state in place) and 3 (intermediate states kept)
    for qlen in (1, 3):
        B, HV, HK, D = 2, 8, 2, 128
        make, fn, _ = co.gdn_case(pool, B, qlen, HV, HK, D)
        q, k, v, g, be, s, so, o = make(0)
        s0 = s.clone().double()
        fn(q, k, v, g, be, s, so, o)
        S = s0.clone()
        outs, states = [], []
        for t in range(qlen):
            qt = F.normalize(q[:, t].double(), dim=-1).repeat_interleave(HV // HK, dim=1) * D ** -0.5
            kt = F.normalize(k[:, t].double(), dim=-1).repeat_interleave(HV // HK, dim=1)
            vt = v[:, t].double()
            S = S * torch.exp(g[:, t].double())[..., None, None]
            vn = (vt - torch.einsum("bhk,bhkv->bhv", kt, S)) * be[:, t].double()[..., None]
            S = S + kt[..., :, None] * vn[..., None, :]
            outs.append(torch.einsum("bhk,bhkv->bhv", qt, S))
            states.append(S.clone())
        report(f"gdn q_len={qlen} output", rel(o, torch.stack(outs, 1)), 2e-2)
        got = so if qlen == 1 else so[:, -1]
        report(f"gdn q_len={qlen} final state", rel(got, states[-1]), 1e-4)
    # rmsnorm
    make, fn, _ = co.rmsnorm_case(pool, 33, 7168)
    x, w, y = make(0)
    xf = x.double()
    ref = xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + 1e-6) * w.double()
    report("rmsnorm", rel(fn(x, w, y), ref), 1e-2)
    # lm_head + greedy
    make, fn, _ = co.lm_head_case(pool, 5, 4096, 1024)
    x, w = make(0)
    got = fn(x, w)
    ref = F.linear(x, w).argmax(-1)
    print(f"lm_head argmax matches eager: {bool((got == ref).all())}")
    ok_ = bool((got == ref).all())
    global ok
    ok &= ok_
    print("ALL OK" if ok else "SOME CHECKS FAILED", flush=True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
