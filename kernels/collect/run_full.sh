#!/bin/bash
# The full single-GPU collection (one device call, < 10 min): checks, then every section under its budget.
export PYTHONUNBUFFERED=1 NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
cd "$(dirname "$0")"
timeout 60 python3 check_ops.py > $OUT/check.txt 2>&1; grep -E "ok|FAIL|ALL" $OUT/check.txt
timeout 560 python3 collect_ops.py --out $OUT "$@" 2>&1 | tee $OUT/collect_log.txt
