#!/bin/bash
# One short device call: environment, API checks, a strided slice of every section, collectives at world size 1.
set -o pipefail
export PYTHONUNBUFFERED=1 NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
cd "$(dirname "$0")"
{ ls; git log -1 --oneline; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,clocks.max.sm,clocks.max.mem,power.limit --format=csv
  python3 -c "import torch,triton;print(torch.__version__,torch.version.cuda,triton.__version__,torch.cuda.get_device_name(),'nccl',torch.cuda.nccl.version()); print([hasattr(torch,n) for n in ('_grouped_mm','_scaled_mm','_scaled_grouped_mm')])"
} 2>&1 | tee $OUT/smoke_env.txt
timeout 120 python3 check_ops.py 2>&1 | tee $OUT/smoke_check.txt
timeout 200 python3 collect_ops.py --out $OUT/smoke --pool-gib 8 --stride 37 --heldout 40 \
  --budgets copy=3,gemm_bf16=8,moe_bf16=8,attention=8,gdn=4,rmsnorm=3,lm_head=5,gemm_fp8=8,moe_fp8=8,heldout=8 2>&1 | tee $OUT/smoke_collect.txt
timeout 90 python3 collect_collectives.py --out $OUT/smoke/collectives_ws1.csv --worlds 1 --max-bytes 16777216 --budget 30 2>&1 | tail -20 | tee $OUT/smoke_coll.txt
