#!/usr/bin/env python3
"""The kernels of one Gated DeltaNet layer's MTP verify that run beside the recurrent kernel, at the H200
Qwen3.5 recipe's TP8 shard (issue 12, round 5; NOTES.md): do any of them cost per request?

SGLang v0.5.14 (49e384ce9d30), layers/attention/linear/gdn_backend.py GDNAttnBackend.forward_extend for
TARGET_VERIFY: mixed_qkv.view(bs, draft, -1).transpose(1, 2) -> mamba/causal_conv1d_triton.py:
causal_conv1d_update(..., conv_state_indices, intermediate_conv_window, intermediate_state_indices)
(BLOCK_N 256, grid (batch, dim/256), PDL on SM90), then jit_kernel/triton/gdn_fused_proj.py:
fused_qkv_split_gdn_prefill, then TritonGDNKernel.target_verify = fla/fused_sigmoid_gating_recurrent.py:
fused_sigmoid_gating_delta_rule_update with intermediate states (also in gdn_verify_sigmoid.csv; timed
again here beside the others, same machine). Shapes at TP8: q/k heads 2, v heads 8, head dim 128, conv
channels 1536, width 4, 4 draft tokens, bf16 conv and SSM state (--mamba-ssm-dtype bfloat16); the
intermediate conv cache is the overlapping sliding-window view memory_pool.py uses ([slots, draft, dim, 3]
over [slots, dim, draft + 2]).
"""
import argparse
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import collect_ops  # noqa: E402

from sglang.jit_kernel.triton.gdn_fused_proj import fused_qkv_split_gdn_prefill  # noqa: E402
from sglang.srt.layers.attention.fla.fused_sigmoid_gating_recurrent import (  # noqa: E402
    fused_sigmoid_gating_delta_rule_update)
from sglang.srt.layers.attention.mamba.causal_conv1d_triton import causal_conv1d_update  # noqa: E402

HQ, HK, HV, D, W, DRAFT = 2, 2, 8, 128, 4, 4
DIM = (HQ + HK) * D + HV * D
SLOTS = 130
BATCHES = [1, 4, 8, 16, 24, 32, 40, 64, 128]


def log(*a):
    print(*a, file=sys.stderr, flush=True)


def conv_ref(x, state, w):
    """x [B, dim, T], state [B, dim, W-1] -> silu(causal conv) [B, dim, T] in float64."""
    full = torch.cat([state.double(), x.double()], dim=-1)
    out = torch.stack([(full[:, :, t:t + W] * w.double()).sum(-1) for t in range(x.shape[-1])], dim=-1)
    return torch.nn.functional.silu(out)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    dev = "cuda"
    g = torch.Generator(device=dev).manual_seed(3)
    weight = torch.randn(DIM, W, device=dev, dtype=torch.bfloat16, generator=g) * 0.3
    conv_states = torch.randn(SLOTS, DIM, W - 1, device=dev, dtype=torch.bfloat16, generator=g)
    base = torch.zeros(SLOTS, DIM, DRAFT + W - 2, device=dev, dtype=torch.bfloat16)
    inter_conv = base.as_strided((SLOTS, DRAFT, DIM, W - 1), (base.stride(0), 1, base.stride(1), 1))
    pool = torch.randn(SLOTS, HV, D, D, device=dev, dtype=torch.bfloat16, generator=g) * 0.05
    inter_ssm = torch.zeros(SLOTS, DRAFT, HV, D, D, device=dev, dtype=torch.bfloat16)

    # correctness of the conv path on fresh data (the others are checked in collect_gdn.py)
    bs = 5
    idx = torch.randperm(SLOTS - 1, device=dev)[:bs].to(torch.int32)
    mixed = torch.randn(bs * DRAFT, DIM, device=dev, dtype=torch.bfloat16, generator=g)
    before = conv_states[idx.long()].clone()
    out = causal_conv1d_update(mixed.view(bs, DRAFT, -1).transpose(1, 2), conv_states, weight, None, "silu",
                               conv_state_indices=idx, intermediate_conv_window=inter_conv,
                               intermediate_state_indices=idx)
    ref = conv_ref(mixed.view(bs, DRAFT, -1).transpose(1, 2), before, weight)
    err = ((out.double() - ref).norm() / ref.norm()).item()
    win_ok = torch.equal(inter_conv[idx[0].long(), DRAFT - 1],
                         torch.cat([before[0], mixed.view(bs, DRAFT, -1)[0].transpose(0, 1)], -1)[:, -(W - 1):])
    q, k, v = fused_qkv_split_gdn_prefill(out.transpose(1, 2).reshape(bs * DRAFT, DIM), HQ, HK, HV, D, D, D)
    flat = out.transpose(1, 2).reshape(bs * DRAFT, DIM)
    split_ok = torch.equal(q.view(-1, HQ * D), flat[:, :HQ * D]) and torch.equal(v.view(-1, HV * D), flat[:, 2 * HQ * D:])
    log(f"check conv verify: rel err {err:.2e}, last window {'ok' if win_ok else 'BAD'}, split {'ok' if split_ok else 'BAD'}")

    A_log = torch.randn(HV, device=dev) * 0.1
    dt_bias = torch.randn(HV, device=dev) * 0.1
    with open(os.path.join(args.out, "gdn_verify_path.csv"), "w") as f:
        for line in collect_ops.header_lines(collect_ops.METHOD + "; one layer's verify kernels at TP8, 4 draft tokens per request"):
            f.write(line + "\n")
        f.write("batch,q_len,conv_dim,v_heads,k_heads,head_dim,conv_us,split_us,verify_us\n")
        for B in BATCHES:
            T = B * DRAFT

            def make(i, B=B):
                gg = torch.Generator(device=dev).manual_seed(100 + i)
                ix = torch.randperm(SLOTS - 1, device=dev, generator=gg)[:B].to(torch.int32)
                mx = torch.randn(T, DIM, device=dev, dtype=torch.bfloat16, generator=gg)
                a = torch.randn(T, HV, device=dev, dtype=torch.bfloat16, generator=gg)
                b = torch.randn(T, HV, device=dev, dtype=torch.bfloat16, generator=gg)
                cu = torch.arange(0, T + 1, DRAFT, device=dev, dtype=torch.int32)
                qq, kk, vv = fused_qkv_split_gdn_prefill(mx, HQ, HK, HV, D, D, D)
                return mx, a, b, ix, cu, qq, kk, vv

            def conv(mx, a, b, ix, cu, qq, kk, vv, B=B):
                return causal_conv1d_update(mx.view(B, DRAFT, -1).transpose(1, 2), conv_states, weight, None, "silu",
                                            conv_state_indices=ix, intermediate_conv_window=inter_conv,
                                            intermediate_state_indices=ix)

            def split(mx, a, b, ix, cu, qq, kk, vv):
                return fused_qkv_split_gdn_prefill(mx, HQ, HK, HV, D, D, D)

            def verify(mx, a, b, ix, cu, qq, kk, vv):
                return fused_sigmoid_gating_delta_rule_update(
                    A_log=A_log, a=a, dt_bias=dt_bias, softplus_beta=1.0, softplus_threshold=20.0, q=qq, k=kk, v=vv,
                    b=b, initial_state_source=pool, initial_state_indices=ix, use_qk_l2norm_in_kernel=True, cu_seqlens=cu,
                    disable_state_update=True, intermediate_states_buffer=inter_ssm, intermediate_state_indices=ix,
                    cache_steps=DRAFT, retrieve_parent_token=None)

            nb = T * DIM * 2 * 2 + B * HV * D * D * 2 * (1 + DRAFT)
            uc = collect_ops.bench(make, conv, nb)
            us = collect_ops.bench(make, split, nb)
            uv = collect_ops.bench(make, verify, nb)
            f.write(f"{B},{DRAFT},{DIM},{HV},{HK},{D},{uc:.3f},{us:.3f},{uv:.3f}\n")
            f.flush()
            log(f"batch {B}: conv {uc:.1f} us, split {us:.1f} us, verify {uv:.1f} us")


if __name__ == "__main__":
    main()
