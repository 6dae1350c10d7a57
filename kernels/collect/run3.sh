#!/bin/bash
# Run 2 (second full call): fused-activation MoE re-measured, dense attention B/q_len pass, two held-out sets, repeat sample.
export PYTHONUNBUFFERED=1 NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
cd "$(dirname "$0")"
timeout 45 python3 check_ops.py > $OUT/check.txt 2>&1; grep -E "ok|FAIL|ALL" $OUT/check.txt
if grep -q "^moe.*FAIL" $OUT/check.txt; then S=attention_dense,heldout,repeat; else S=moe_bf16,moe_fp8,attention_dense,heldout_a,heldout,repeat; fi
echo "sections: $S"
timeout 530 python3 collect_ops.py --out $OUT --sections $S --heldout 300 --heldout-seed 7321 2>&1 | tee $OUT/collect_log.txt
