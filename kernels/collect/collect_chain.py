#!/usr/bin/env python3
"""What a decoder layer costs beyond its ops timed one by one (issue 12): the layer gap, measured.

The op tables time each kernel as collect_ops.bench does: one CUDA graph of n calls of the same op,
inputs rotated past L2. A decode layer instead runs ~18 different, dependent kernels in a row. This
collector builds a stand-in for one Qwen3.5-397B Gated DeltaNet + MoE decode layer at TP8/EP8 (bf16
weights; shapes from config.json: hidden 4096, 8 v / 2 k GDN heads of 128 per rank, 512 experts
top-10 with 64 per rank, expert and shared inter 1024/8), from torch GEMMs (cuBLAS), one-kernel
Triton elementwise ops and SGLang v0.5.14's packed GDN decode kernel, and times
  chain_us : a CUDA graph of L such layers (each with its own weights and state), per layer;
  sum_us   : the sum over the layer's ops of each op timed alone with collect_ops.bench;
gap = chain - sum, per layer and per op. Batches 1, 16, 64 tokens. Writes chain.csv and
chain_ops.csv. SGLang's files come from SGL_PY (not part of this repository)."""
import argparse
import math
import os
import statistics
import sys

import torch
import triton
import triton.language as tl

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import collect_ops  # noqa: E402

from sglang.srt.layers.attention.fla.fused_recurrent import fused_recurrent_gated_delta_rule_packed_decode  # noqa: E402

H = 4096
HK, HV, D = 2, 8, 128
QKVZ = 2 * HK * D + 2 * HV * D + 2 * HV  # in_proj_qkvz + in_proj_ba outputs per rank
QKV = 2 * HK * D + HV * D
E_RANK, TOPK, E_ALL = 64, 10, 512
INTER = 1024 // 8
BF = torch.bfloat16


@triton.jit
def _rmsnorm(x_ptr, r_ptr, w_ptr, o_ptr, N: tl.constexpr, ADD: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, N)
    x = tl.load(x_ptr + row * N + offs).to(tl.float32)
    if ADD:
        x += tl.load(r_ptr + row * N + offs).to(tl.float32)
    w = tl.load(w_ptr + offs).to(tl.float32)
    y = x * tl.rsqrt(tl.sum(x * x) / N + 1e-6) * w
    tl.store(o_ptr + row * N + offs, y.to(tl.bfloat16))


@triton.jit
def _gated_norm(x_ptr, z_ptr, w_ptr, o_ptr, N: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, N)
    x = tl.load(x_ptr + row * N + offs).to(tl.float32)
    z = tl.load(z_ptr + row * N + offs).to(tl.float32)
    w = tl.load(w_ptr + offs).to(tl.float32)
    y = x * tl.rsqrt(tl.sum(x * x) / N + 1e-6) * w * (z * tl.sigmoid(z))
    tl.store(o_ptr + row * N + offs, y.to(tl.bfloat16))


@triton.jit
def _split(src_ptr, dst_ptr, SRC: tl.constexpr, N: tl.constexpr, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    for s in range(0, N, BLOCK):
        offs = s + tl.arange(0, BLOCK)
        m = offs < N
        tl.store(dst_ptr + row * N + offs, tl.load(src_ptr + row * SRC + offs, mask=m), mask=m)


@triton.jit
def _conv(x_ptr, w_ptr, o_ptr, N: tl.constexpr, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    for s in range(0, N, BLOCK):
        offs = s + tl.arange(0, BLOCK)
        m = offs < N
        x = tl.load(x_ptr + row * N + offs, mask=m).to(tl.float32)
        w = tl.load(w_ptr + offs, mask=m).to(tl.float32)
        y = x * w
        tl.store(o_ptr + row * N + offs, (y * tl.sigmoid(y)).to(tl.bfloat16), mask=m)


@triton.jit
def _silu_mul(x_ptr, o_ptr, N: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, N)
    g = tl.load(x_ptr + row * 2 * N + offs).to(tl.float32)
    u = tl.load(x_ptr + row * 2 * N + N + offs).to(tl.float32)
    tl.store(o_ptr + row * N + offs, (g * tl.sigmoid(g) * u).to(tl.bfloat16))


def touched(batch):
    """Expected experts one EP8 rank reads for batch tokens routed top-10 over 512 (uniform)."""
    return max(1, round(E_RANK * (1 - (1 - TOPK / E_ALL) ** batch)))


class Layer:
    """Weights, state and activations of one stand-in layer for batch tokens."""

    def __init__(self, batch, dev="cuda"):
        r = lambda *s: torch.randn(*s, device=dev, dtype=BF).mul_(0.02)  # noqa: E731
        self.B, self.E = batch, touched(batch)
        self.w_norm1, self.w_norm2, self.w_gn = r(H), r(H), r(HV * D)
        self.w_in, self.w_out = r(H, QKVZ), r(HV * D, H)
        self.w_conv = r(QKV)
        self.w_router = r(H, E_ALL)
        self.w_sh_up, self.w_sh_down = r(H, 2 * INTER), r(INTER, H)
        self.w_ex_up, self.w_ex_down = r(self.E, H, 2 * INTER), r(self.E, INTER, H)
        self.A_log, self.dt_bias = torch.rand(HV, device=dev) - 0.5, torch.rand(HV, device=dev)
        self.pool = torch.randn(batch, HV, D, D, device=dev).mul_(0.05).to(BF)
        self.idx = torch.arange(batch, device=dev, dtype=torch.int32)
        e = lambda *s: torch.empty(*s, device=dev, dtype=BF)  # noqa: E731
        self.h, self.proj, self.mixed, self.conv = e(batch, H), e(batch, QKVZ), e(batch, QKV), e(batch, QKV)
        self.core = e(batch, 1, HV, D)
        self.gn, self.attn, self.h2 = e(batch, HV * D), e(batch, H), e(batch, H)
        self.logits = e(batch, E_ALL)
        self.sh_gu, self.sh_act, self.sh = e(batch, 2 * INTER), e(batch, INTER), e(batch, H)
        self.ex_gu, self.ex_act, self.ex = e(self.E, batch, 2 * INTER), e(self.E, batch, INTER), e(self.E, batch, H)
        self.out = e(batch, H)
        self.a = torch.randn(batch, HV, device=dev, dtype=BF)
        self.b = torch.randn(batch, HV, device=dev, dtype=BF)

    def ops(self, x):
        """The layer's ops in order, each (name, fn); x is the layer input [B, H]."""
        B = self.B
        return [
            ("input_norm", lambda: _rmsnorm[(B,)](x, x, self.w_norm1, self.h, N=H, ADD=False)),
            ("in_proj", lambda: torch.mm(self.h, self.w_in, out=self.proj)),
            ("split", lambda: _split[(B,)](self.proj, self.mixed, SRC=QKVZ, N=QKV, BLOCK=512)),
            ("conv", lambda: _conv[(B,)](self.mixed, self.w_conv, self.conv, N=QKV, BLOCK=512)),
            ("gdn_packed_decode", lambda: fused_recurrent_gated_delta_rule_packed_decode(
                mixed_qkv=self.conv, a=self.a, b=self.b, A_log=self.A_log, dt_bias=self.dt_bias,
                scale=D ** -0.5, initial_state=self.pool, out=self.core, ssm_state_indices=self.idx,
                use_qk_l2norm_in_kernel=True)),
            ("gated_norm", lambda: _gated_norm[(B,)](self.core, self.proj, self.w_gn, self.gn, N=HV * D)),
            ("out_proj", lambda: torch.mm(self.gn, self.w_out, out=self.attn)),
            ("post_norm", lambda: _rmsnorm[(B,)](self.attn, x, self.w_norm2, self.h2, N=H, ADD=True)),
            ("router", lambda: torch.mm(self.h2, self.w_router, out=self.logits)),
            ("topk", lambda: torch.topk(self.logits, TOPK, dim=-1)),
            ("shared_gate_up", lambda: torch.mm(self.h2, self.w_sh_up, out=self.sh_gu)),
            ("shared_act", lambda: _silu_mul[(B,)](self.sh_gu, self.sh_act, N=INTER)),
            ("shared_down", lambda: torch.mm(self.sh_act, self.w_sh_down, out=self.sh)),
            ("experts_gate_up", lambda: torch.bmm(self.h2.expand(self.E, B, H), self.w_ex_up, out=self.ex_gu)),
            ("experts_act", lambda: _silu_mul[(self.E * B,)](self.ex_gu, self.ex_act, N=INTER)),
            ("experts_down", lambda: torch.bmm(self.ex_act, self.w_ex_down, out=self.ex)),
            ("experts_sum", lambda: torch.sum(self.ex, dim=0, out=self.out)),
            ("shared_add", lambda: self.out.add_(self.sh)),
        ]

    def weight_bytes(self):
        return 2 * (H * QKVZ + HV * D * H + H * E_ALL + 3 * H * INTER + self.E * 3 * H * INTER)


def chain_us(layers, x):
    """Per-layer GPU time of a graph running every layer's ops in order (median of 7 replays)."""
    ins = [x] + [l.out for l in layers[:-1]]
    fns = [fn for l, xi in zip(layers, ins) for _, fn in l.ops(xi)]
    for f in fns:  # warm-up (Triton compilation)
        f()
    torch.cuda.synchronize()
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for f in fns:
            f()
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        for f in fns:
            f()
    g.replay()
    torch.cuda.synchronize()
    ts = []
    for _ in range(7):
        e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        e0.record()
        g.replay()
        e1.record()
        torch.cuda.synchronize()
        ts.append(e0.elapsed_time(e1) * 1e3 / len(layers))
    return statistics.median(ts), len(fns) // len(layers)


def op_alone_us(batch, name):
    """One op timed as the op tables are: collect_ops.bench over fresh layers' inputs, past L2."""
    probe = Layer(batch)
    nbytes = probe.weight_bytes() // 6 if name not in ("experts_gate_up", "experts_down") else probe.weight_bytes() // 2
    del probe
    cache = {}

    def make(i):
        if i not in cache:
            cache[i] = Layer(batch)
        l = cache[i]
        x = torch.randn(batch, H, device="cuda", dtype=BF)
        return (dict(l.ops(x))[name],)

    nsets = min(collect_ops.n_sets(nbytes), 8)
    sets = [make(i) for i in range(nsets)]
    return collect_ops.bench(lambda i: sets[i % len(sets)], lambda f: f(), nbytes)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--batches", default="1,16,64")
    ap.add_argument("--layers", type=int, default=8)
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    hdr = collect_ops.header_lines("chain_us: one CUDA graph of L stand-in layers (own weights each), median of 7 "
                                   "replays / L; sum_us: sum of the layer's ops each timed alone by collect_ops.bench")
    fc = open(os.path.join(args.out, "chain.csv"), "w")
    fo = open(os.path.join(args.out, "chain_ops.csv"), "w")
    for line in hdr:
        fc.write(line + "\n")
        fo.write(line + "\n")
    fc.write("batch,layers,ops_per_layer,chain_us,sum_us,gap_per_layer_us,gap_per_op_us\n")
    fo.write("batch,op,alone_us\n")
    for B in (int(b) for b in args.batches.split(",")):
        torch.manual_seed(B)
        layers = [Layer(B) for _ in range(args.layers)]
        x = torch.randn(B, H, device="cuda", dtype=BF)
        ch, nops = chain_us(layers, x)
        names = [n for n, _ in layers[0].ops(x)]
        del layers
        torch.cuda.empty_cache()
        alone = {}
        for n in names:
            alone[n] = op_alone_us(B, n)
            fo.write(f"{B},{n},{alone[n]:.3f}\n")
            fo.flush()
            torch.cuda.empty_cache()
        s = sum(alone.values())
        fc.write(f"{B},{args.layers},{nops},{ch:.3f},{s:.3f},{ch - s:.3f},{(ch - s) / nops:.3f}\n")
        fc.flush()
        print(f"batch {B}: chain {ch:.1f} us/layer, ops alone {s:.1f} us, gap {ch - s:.1f} us/layer "
              f"({(ch - s) / nops:.2f} us/op, {nops} ops)", flush=True)
        print("  " + ", ".join(f"{n} {alone[n]:.1f}" for n in names), flush=True)


if __name__ == "__main__":
    main()
