# Second-method check for audit/allocator.go and the SGLang draft sizing.
# Run on a GPU host with torch; results on an H200 (torch 2.11.0+cu130):
#   tp=1 delta 16.0879 GiB exact 17259611136 B = 16.0743 GiB
#   tp=2 delta  8.0762 GiB exact  8665482240 B =  8.0704 GiB
#   tp=4 delta  4.0840 GiB exact  4370514944 B =  4.0704 GiB
#   tp=8 delta  2.0801 GiB exact  2223031296 B =  2.0704 GiB
# The exact bytes equal specsim audit's mtp_bytes; the deltas its mtp_gib.
# Allocates, on one GPU, the parameters SGLang creates for the Qwen3.5-397B
# MTP draft on one rank (qwen3_5_mtp.py, qwen3_5.py, qwen2_moe.py,
# unquant.py, vocab_parallel_embedding.py) and prints the free-memory delta
# the way SGLang's "mem usage" measures it (torch.cuda.mem_get_info, GiB).
import torch
H, V, E, I, HEADS, KV, HD = 4096, 248320, 512, 1024, 32, 2, 256
def shapes(tp):
    vp = (V + 63) // 64 * 64 // tp
    kvh = max(1, KV // tp)
    return [
        (vp, H), (vp, H),                       # own embed_tokens, lm_head
        (H, 2 * H),                             # fc: nn.Linear, replicated
        (H,), (H,), (H,), (H,), (H,),           # norms
        (HD,), (HD,),                           # q_norm, k_norm
        ((2 * HEADS // tp + 2 * kvh) * HD, H),  # qkv_proj (q with gate)
        (H, HEADS * HD // tp),                  # o_proj
        (E, H),                                 # router
        (E, 2 * I // tp, H), (E, H, I // tp),   # w13, w2
        (2 * I // tp, H), (H, I // tp),         # shared expert
        (1, H),                                 # shared_expert_gate
    ]
print("torch", torch.__version__, torch.cuda.get_device_name(0))
torch.cuda.init()
for tp in (1, 2, 4, 8):
    torch.cuda.empty_cache()
    free0, _ = torch.cuda.mem_get_info()
    ps = [torch.empty(s, dtype=torch.bfloat16, device="cuda") for s in shapes(tp)]
    torch.cuda.synchronize()
    free1, _ = torch.cuda.mem_get_info()
    exact = sum(p.numel() * 2 for p in ps)
    print(f"tp={tp} mem_get_info delta {(free0 - free1) / 2**30:.4f} GiB, exact bytes {exact} = {exact / 2**30:.4f} GiB, reserved {torch.cuda.memory_reserved() / 2**30:.4f} GiB")
    del ps
