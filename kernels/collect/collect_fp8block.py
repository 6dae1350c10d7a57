#!/usr/bin/env python3
"""Block-scaled FP8 GEMM on the H200 next to per-tensor FP8, same shapes, same run.

y[M,N] = x[M,K] W[N,K]^T, BF16 out. Block-scaled: x carries one fp32 scale per token per 128 of
K (ScalingType.BlockWise1x128), W one per 128x128 block (BlockWise128x128), the DeepSeek-V3
checkpoint format; PyTorch hands this to cuBLASLt's SM90 block-scaled kernels
(torch.nn.functional.scaled_mm). Per-tensor: torch._scaled_mm with scalar scales, exactly as
collect_ops.gemm_case times it for ops.csv. x is already E4M3 in both (its quantization is not
timed). Timing harness, pool and rotation: collect_ops.bench/Pool (see NOTES.md).

  --check-only: API probe and correctness against float64 on small shapes, a few timings.
  default: correctness, then the DeepSeek-V3 grid, both dtypes per shape back to back, under a
  wall-clock budget; rows are flushed as measured, a second pass (if time is left) goes to
  fp8_blockscaled_repeat.csv for the run-to-run spread.
"""
import argparse
import math
import os
import sys
import time

import torch
import torch.nn.functional as F

import collect_ops as co

FP8 = torch.float8_e4m3fn
NK = [(7168, 2048), (4096, 7168), (2048, 7168), (24576, 1536), (7168, 16384), (32768, 512), (2112, 7168)]
M_GRID = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 4096]
COLUMNS = ["op", "dtype", "m", "n", "k", "latency_us"]


def log(*a):
    print(*a, file=sys.stderr, flush=True)


def cdiv(a, b):
    return (a + b - 1) // b


def block_mm(x, w, sa, sb):
    """x [M,K] e4m3, w [N,K] e4m3, sa [M,K/128] (stride 1,M), sb [K/128 rounded to 4, N/128]
    (stride 1, rows): the layouts ScaledBlas.cpp checks for 1x128 x 128x128."""
    return F.scaled_mm(x, w.t(), sa, F.ScalingType.BlockWise1x128, sb, F.ScalingType.BlockWise128x128,
                       output_dtype=torch.bfloat16)


def block_mm_legacy(x, w, sa, sb):
    return torch._scaled_mm(x, w.t(), scale_a=sa, scale_b=sb, out_dtype=torch.bfloat16)


def scale_tensors(m, n, k, gen=None):
    kb, nb = cdiv(k, 128), cdiv(n, 128)
    kb4 = cdiv(kb, 4) * 4
    sa = (torch.rand(kb, m, device="cuda", generator=gen) + 0.5).t()          # (m, kb), strides (1, m)
    sw = torch.rand(nb, kb4, device="cuda", generator=gen) + 0.5              # (nb, kb4) row-major
    return sa, sw.t()                                                          # (kb4, nb), strides (1, kb4)


# ----------------------------------------------------------------------------- correctness

def quantize_blocks(t, bm, bk):
    """E4M3 of t with one amax/448 scale per bm x bk block; returns (q, scales[rows/bm, cols/bk])."""
    r, c = t.shape
    rb, cb = cdiv(r, bm), cdiv(c, bk)
    pad = torch.zeros(rb * bm, cb * bk, dtype=torch.float32, device=t.device)
    pad[:r, :c] = t.float()
    blocks = pad.view(rb, bm, cb, bk)
    s = blocks.abs().amax(dim=(1, 3)).clamp(min=1e-4) / 448.0
    q = (blocks / s[:, None, :, None]).to(FP8).view(rb * bm, cb * bk)[:r, :c].contiguous()
    return q, s


def expand(s, bm, bk, r, c):
    return s.repeat_interleave(bm, 0).repeat_interleave(bk, 1)[:r, :c]


def check(m, n, k, fn, seed):
    g = torch.Generator(device="cuda")
    g.manual_seed(seed)
    # rows and 128-column groups of different magnitude, so a misplaced scale shows
    x = torch.randn(m, k, device="cuda", generator=g) * torch.exp(torch.randn(m, 1, device="cuda", generator=g))
    x = x * torch.exp(torch.randn(1, cdiv(k, 128), device="cuda", generator=g)).repeat_interleave(128, 1)[:, :k]
    w = torch.randn(n, k, device="cuda", generator=g) * torch.exp(
        torch.randn(cdiv(n, 128), cdiv(k, 128), device="cuda", generator=g)).repeat_interleave(128, 0).repeat_interleave(128, 1)[:n, :k]
    xq, xs = quantize_blocks(x, 1, 128)                     # xs [m, kb]
    wq, ws = quantize_blocks(w, 128, 128)                   # ws [nb, kb]
    kb, nb = xs.shape[1], ws.shape[0]
    kb4 = cdiv(kb, 4) * 4
    sa = torch.empty(kb, m, device="cuda").t()
    sa.copy_(xs)
    swp = torch.zeros(nb, kb4, device="cuda")
    swp[:, :kb] = ws
    sb = swp.t()
    ref = (xq.double() * expand(xs, 1, 128, m, k).double()) @ (wq.double() * expand(ws, 128, 128, n, k).double()).t()
    out = fn(xq, wq, sa, sb)
    torch.cuda.synchronize()
    assert out.shape == (m, n) and out.dtype == torch.bfloat16, (out.shape, out.dtype)
    if not torch.isfinite(out).all():
        return float("nan"), float("nan"), float("nan")
    err = ((out.double() - ref).norm() / ref.norm()).item()
    # the same kernel with unit scales must be far off: proves the scales are applied
    ones = fn(xq, wq, torch.ones_like(sa.t().contiguous()).t(), torch.ones_like(swp).t()).double()
    ref_unit = xq.double() @ wq.double().t()
    err_unit_vs_ref = ((ones - ref).norm() / ref.norm()).item()
    err_unit_self = ((ones - ref_unit).norm() / ref_unit.norm()).item()
    return err, err_unit_vs_ref, err_unit_self


def run_checks(fns):
    """A path passes if every shape it accepts is right (rel err < 1e-2, unit scales far off)
    and it accepts at least three of the six; shapes it rejects are logged, not failures."""
    ok = {}
    for name, fn in fns.items():
        good_n, bad = 0, False
        for i, (m, n, k) in enumerate([(1, 256, 512), (4, 256, 512), (16, 2112, 1024), (64, 384, 7168), (130, 640, 2048), (4, 7168, 2048)]):
            try:
                e = check(m, n, k, fn, 100 + i)
                good = e[0] < 1e-2 and e[1] > 0.1 and e[2] < 1e-2
                log(f"check {name} M={m} N={n} K={k}: rel err {e[0]:.2e} (unit scales: {e[1]:.2e} vs scaled ref, {e[2]:.2e} vs unscaled ref) {'ok' if good else 'BAD'}")
                good_n += good
                bad |= not good
            except Exception as ex:  # noqa: BLE001
                log(f"check {name} M={m} N={n} K={k}: rejected: {type(ex).__name__}: {str(ex).splitlines()[0][:300]}")
                torch.cuda.synchronize()
        ok[name] = good_n >= 3 and not bad
    return ok


# ----------------------------------------------------------------------------- timing

def block_case(pool, m, n, k, pad_to=1, fn=None):
    mm = cdiv(m, pad_to) * pad_to

    def make(i):
        sa, sb = scale_tensors(mm, n, k)
        return pool.take((mm, k), FP8), pool.take((n, k), FP8), sa, sb
    scale_bytes = 4 * (mm * cdiv(k, 128) + cdiv(n, 128) * cdiv(cdiv(k, 128), 4) * 4)
    return make, fn or block_mm, mm * k + n * k + 2 * mm * n + scale_bytes


class Writer:
    def __init__(self, path, method):
        self.f = open(path, "w")
        for line in co.header_lines(method):
            self.f.write(line + "\n")
        self.f.write(",".join(COLUMNS) + "\n")
        self.f.flush()

    def row(self, dtype, m, n, k, us):
        self.f.write(f"gemm,{dtype},{m},{n},{k},{us:.3f}\n")
        self.f.flush()


METHOD = (co.METHOD + "; fp8-block = torch.nn.functional.scaled_mm(x_e4m3, W_e4m3.t(), x scales [M,K/128] "
          "BlockWise1x128, W scales [K/128,N/128] BlockWise128x128, bf16 out) (cuBLASLt SM90 block-scaled); "
          "fp8 = torch._scaled_mm per-tensor scalar scales as in ops.csv; x pre-quantized in both")


def timed_pass(pool, w, fn, deadline, pads):
    done = 0
    for (n, k) in NK:
        for m in M_GRID:
            for dt in ("fp8-block", "fp8"):
                if time.time() > deadline:
                    log(f"time guard: stopped after {done} rows")
                    return done
                pool.reset()
                try:
                    if dt == "fp8":
                        make, f, nb = co.gemm_case(pool, "fp8", m, n, k)
                    else:
                        make, f, nb = block_case(pool, m, n, k, pads.get(m, 1), fn)
                    us = co.bench(make, f, nb)
                    w.row(dt, m, n, k, us)
                    done += 1
                    if m <= 64:
                        log(f"{dt:9s} M={m:5d} N={n:6d} K={k:6d} {us:9.2f} us  weight stream {n * k / us / 1e6:6.3f} TB/s")
                except Exception as ex:  # noqa: BLE001
                    log(f"FAIL {dt} M={m} N={n} K={k}: {type(ex).__name__}: {str(ex).splitlines()[0][:300]}")
                    torch.cuda.synchronize()
    return done


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--check-only", action="store_true")
    ap.add_argument("--budget", type=float, default=200.0, help="wall-clock seconds for timing")
    ap.add_argument("--pool-gib", type=float, default=6.0)
    ap.add_argument("--pad-small", action="store_true", help="run M not a multiple of 4 at the next multiple of 4")
    args = ap.parse_args()
    start = time.time()
    os.makedirs(args.out, exist_ok=True)
    log(f"torch {torch.__version__} cuda {torch.version.cuda} device {torch.cuda.get_device_name(0)} cc {torch.cuda.get_device_capability(0)}")
    try:
        log(f"cublasLt {torch._C._cuda_getCompiledVersion() if hasattr(torch._C, '_cuda_getCompiledVersion') else '?'}")
    except Exception:  # noqa: BLE001
        pass
    log(f"F.scaled_mm: {hasattr(F, 'scaled_mm')}, F.ScalingType: {getattr(F, 'ScalingType', None)}")
    fns = {"F.scaled_mm": block_mm, "torch._scaled_mm": block_mm_legacy}
    ok = run_checks(fns)
    log(f"checks: {ok}")
    api = next((name for name in fns if ok[name]), None)
    if api is None:
        log("no PyTorch block-scaled path passed its checks: no timing")
        return
    fn = fns[api]
    log(f"timing with {api}")
    torch.backends.cuda.matmul.allow_tf32 = False
    pool = co.Pool(args.pool_gib)
    log(f"pool ready at {time.time() - start:.1f}s")
    pads = {}
    for m in (1, 2, 4):
        try:
            pool.reset()
            make, f, nb = block_case(pool, m, 7168, 2048, 1, fn)
            f(*make(0))
            torch.cuda.synchronize()
            log(f"M={m} unpadded: runs")
        except Exception as ex:  # noqa: BLE001
            log(f"M={m} unpadded: {type(ex).__name__}: {str(ex).splitlines()[0][:200]}")
            torch.cuda.synchronize()
            pads[m] = 4
    if args.pad_small:
        pads = {1: 4, 2: 4}
    if args.check_only:
        w = Writer(os.path.join(args.out, "smoke.csv"), METHOD)
        for (n, k) in [(7168, 2048), (7168, 16384), (2112, 7168)]:
            for m in (1, 64, 4096):
                for dt in ("fp8-block", "fp8"):
                    pool.reset()
                    t0 = time.time()
                    make, f, nb = (co.gemm_case(pool, "fp8", m, n, k) if dt == "fp8" else block_case(pool, m, n, k, pads.get(m, 1), fn))
                    us = co.bench(make, f, nb)
                    w.row(dt, m, n, k, us)
                    log(f"{dt:9s} M={m:5d} N={n:6d} K={k:6d} {us:9.2f} us  weight {n * k / us / 1e6:6.3f} TB/s  flops {2 * m * n * k / us / 1e6:7.1f} TFLOP/s  ({time.time() - t0:.2f}s wall)")
        log(f"total {time.time() - start:.1f}s")
        return
    t_start = time.time()
    deadline = t_start + args.budget
    note = f"; block-scaled through {api}" + (f"; M padded to 4 for M in {sorted(pads)}" if pads else "")
    w = Writer(os.path.join(args.out, "fp8_blockscaled.csv"), METHOD + note)
    n1 = timed_pass(pool, w, fn, deadline, pads)
    log(f"pass 1: {n1} rows in {time.time() - t_start:.1f}s")
    for p in (2, 3):
        if time.time() > deadline:
            break
        w2 = Writer(os.path.join(args.out, f"fp8_blockscaled_pass{p}.csv"), METHOD + note + f"; pass {p}, same process")
        log(f"pass {p}: {timed_pass(pool, w2, fn, deadline, pads)} rows, at {time.time() - t_start:.1f}s")
    log(f"total {time.time() - start:.1f}s")
    log("clocks at end: " + co.sh("nvidia-smi --query-gpu=clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv,noheader"))


if __name__ == "__main__":
    main()
