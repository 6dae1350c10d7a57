#!/bin/bash
# Device command, issue 12 round 5, second call (NOTES.md): the GDN verify layer's conv / split / recurrent
# kernels per request at TP8, and a repeat of collect_moe_ep.py on a fresh machine (repeatability).
set -o pipefail
export PYTHONUNBUFFERED=1 PYTHONPATH="$SGL_PY:$PYTHONPATH"
cd "$(dirname "$0")"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,power.limit --format=csv | tee -a $OUT/log.txt
timeout 200 python3 collect_gdn_verify_path.py --out $OUT/gdn 2>&1 | tee -a $OUT/log.txt
timeout 300 python3 collect_moe_ep.py --out $OUT/ep --budget 200 2>&1 | grep -v "Using default\|Using MoE kernel config" | tee -a $OUT/log.txt
nvidia-smi --query-gpu=clocks.sm,power.draw --format=csv | tee -a $OUT/log.txt
