#!/bin/bash
# Device command, issue 12 round 5 (NOTES.md): SGLang v0.5.14's Triton fused MoE at the TP8 EP8 shard and
# the TP8 shard, and the post-verify mamba commit kernels. SGL_PY = v0.5.14's python/ tree (the MoE
# triton_utils files with configs/, mamba_state_scatter_triton.py, and stubs), not part of this repository.
set -o pipefail
export PYTHONUNBUFFERED=1 PYTHONPATH="$SGL_PY:$PYTHONPATH"
cd "$(dirname "$0")"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,power.limit --format=csv | tee -a $OUT/log.txt
python3 -c "import torch,triton;print(torch.__version__,torch.version.cuda,triton.__version__)" | tee -a $OUT/log.txt
timeout ${EP_TIMEOUT:-420} python3 collect_moe_ep.py --out $OUT/ep --budget ${EP_BUDGET:-330} 2>&1 | tee -a $OUT/log.txt
nvidia-smi --query-gpu=clocks.sm,power.draw --format=csv | tee -a $OUT/log.txt
