"""Shapes the simulator needs, derived from the model configs in testdata/configs.

Every number below is read from those config.json files (see NOTES.md); TP splits N for
column-parallel layers and K for row-parallel ones, EP divides the expert count. Shapes are
deduplicated so each (op, dims) is measured once.
"""

TPS = (1, 2, 4, 8)

# hidden, attention, MoE and vocab sizes per model (from testdata/configs/*.json).
MODELS = {
    "qwen3.5-397b": dict(hidden=4096, heads=32, kv_heads=2, head_dim=256, gated_q=True,
                         lin=(16, 64, 128, 128), shared=1024, dense=None,
                         experts=512, topk=10, inter=1024, vocab=248320),
    "qwen3.5-122b": dict(hidden=3072, heads=32, kv_heads=2, head_dim=256, gated_q=True,
                         lin=(16, 64, 128, 128), shared=1024, dense=None,
                         experts=256, topk=8, inter=1024, vocab=248320),
    "qwen3.5-35b": dict(hidden=2048, heads=16, kv_heads=2, head_dim=256, gated_q=True,
                        lin=(16, 32, 128, 128), shared=512, dense=None,
                        experts=256, topk=8, inter=512, vocab=248320),
    "deepseek-v3": dict(hidden=7168, mla=dict(heads=128, q_lora=1536, kv_lora=512, rope=64, nope=128, v=128),
                        shared=2048, dense=18432, experts=256, topk=8, inter=2048, vocab=129280),
    "kimi-k2.5": dict(hidden=7168, mla=dict(heads=64, q_lora=1536, kv_lora=512, rope=64, nope=128, v=128),
                      shared=2048, dense=18432, experts=384, topk=8, inter=2048, vocab=163840),
    "glm-5": dict(hidden=6144, mla=dict(heads=64, q_lora=2048, kv_lora=512, rope=64, nope=192, v=256),
                  indexer=(32, 128), shared=2048, dense=12288, experts=256, topk=8, inter=2048, vocab=154880),
    "minimax-m2.5": dict(hidden=3072, heads=48, kv_heads=8, head_dim=128, gated_q=False,
                         shared=None, dense=None, experts=256, topk=8, inter=1536, vocab=200064),
}

MOE_PRIORITY = ["qwen3.5-397b", "deepseek-v3", "kimi-k2.5", "glm-5", "minimax-m2.5", "qwen3.5-122b", "qwen3.5-35b"]


def gemm_nk(model, tp):
    """(N, K) pairs of the model's linear layers at tensor-parallel degree tp."""
    c = MODELS[model]
    h = c["hidden"]
    out = []
    if "mla" in c:
        a = c["mla"]
        heads = a["heads"] // tp
        out.append((a["q_lora"] + a["kv_lora"] + a["rope"], h))      # fused q_a + kv_a (replicated)
        out.append((heads * (a["nope"] + a["rope"]), a["q_lora"]))    # q_b
        out.append((heads * (a["nope"] + a["v"]), a["kv_lora"]))      # kv_b (prefill path)
        out.append((h, heads * a["v"]))                               # o_proj
        if "indexer" in c:
            ih, idim = c["indexer"]
            out.append((ih * idim, a["q_lora"]))                      # indexer wq_b (replicated)
            out.append((idim, h))                                     # indexer wk
    else:
        heads = c["heads"] // tp
        kvh = max(1, c["kv_heads"] // tp)
        d = c["head_dim"]
        qmul = 2 if c["gated_q"] else 1
        out.append((qmul * heads * d + 2 * kvh * d, h))             # fused qkv (+ output gate)
        out.append((h, heads * d))                                   # o_proj
    if "lin" in c:
        hk, hv, dk, dv = c["lin"]
        out.append(((2 * hk * dk + 2 * hv * dv) // tp, h))           # in_proj_qkvz
        out.append((2 * hv // tp, h))                                # in_proj_ba
        out.append((h, hv * dv // tp))                               # out_proj
    for inter in (c.get("shared"), c.get("dense")):
        if inter:
            out.append((2 * inter // tp, h))                          # gate_up
            out.append((h, inter // tp))                              # down
    out.append((c["experts"], h))                                     # router (replicated)
    return out


def all_gemm_nk():
    seen, res = set(), []
    for tp in (1, 8, 2, 4):
        for m in MODELS:
            for nk in gemm_nk(m, tp):
                if nk not in seen and nk[0] % 16 == 0 and nk[1] % 16 == 0:
                    seen.add(nk)
                    res.append(nk)
    return res


# (ep, tp) splits of the routed experts: expert-parallel or tensor-parallel MoE.
MOE_SPLITS = ((1, 1), (8, 1), (1, 8), (4, 1), (1, 4), (2, 1), (1, 2))


def all_moe():
    """(experts_local, topk, hidden, inter_local) for EP/TP shards of every model."""
    seen, res = set(), []
    for ep, tp in MOE_SPLITS:
        for m in MOE_PRIORITY:
            c = MODELS[m]
            s = (c["experts"] // ep, c["topk"], c["hidden"], c["inter"] // tp)
            if s not in seen:
                seen.add(s)
                res.append(s)
    return res


def all_attention(mla=False):
    """(heads, kv_heads, head_dim) per rank; MLA entries (only with mla=True) have kv_heads=1, head_dim 576."""
    seen, res = set(), []
    for tp in (1, 8, 4, 2):
        for m, c in MODELS.items():
            if "mla" in c and not mla:
                continue
            if "mla" in c:
                a = c["mla"]
                s = (a["heads"] // tp, 1, a["kv_lora"] + a["rope"])
            else:
                s = (c["heads"] // tp, max(1, c["kv_heads"] // tp), c["head_dim"])
            if s not in seen:
                seen.add(s)
                res.append(s)
    return res


def all_gdn():
    """(v_heads, k_heads, head_dim) per rank for the Gated DeltaNet layers."""
    seen, res = set(), []
    for tp in TPS:
        for c in MODELS.values():
            if "lin" in c:
                hk, hv, dk, dv = c["lin"]
                s = (hv // tp, hk // tp, dk)
                if s not in seen:
                    seen.add(s)
                    res.append(s)
    return res


def all_lm_head():
    """(vocab_per_rank, hidden) with the vocabulary split over TP ranks."""
    seen, res = set(), []
    for tp in (1, 8, 2, 4):
        for c in MODELS.values():
            s = (c["vocab"] // tp, c["hidden"])
            if s not in seen:
                seen.add(s)
                res.append(s)
    return res


RMSNORM_HIDDEN = (128, 256, 512, 1536, 2048, 3072, 4096, 6144, 7168)
