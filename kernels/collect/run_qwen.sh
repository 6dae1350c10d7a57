#!/bin/bash
# Device command for the Qwen3.5 kernel tables (gdn_chunk, gdn_recurrent, moe_triton; see NOTES.md).
# Usage: run_qwen.sh smoke|full  with SGL_PY (sglang python/ tree: fla + fused_moe_triton files and stubs)
# and FLA_UP (upstream flash-linear-attention checkout) set; neither is part of this repository.
set -o pipefail
export PYTHONUNBUFFERED=1 PYTHONPATH="$SGL_PY:$FLA_UP:$PYTHONPATH"
cd "$(dirname "$0")"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,power.limit --format=csv | tee -a $OUT/log.txt
python3 -c "import torch,triton;print(torch.__version__,torch.version.cuda,triton.__version__)" | tee -a $OUT/log.txt
if [ "$1" = smoke ]; then
  timeout 200 python3 collect_gdn.py --out $OUT/gdn --budget 90 --stride 9 --heldout 9 --upstream 2:4096 2>&1 | tee -a $OUT/log.txt
  timeout 150 python3 collect_moe_triton.py --out $OUT/moe --budget 60 --stride 4 --tps 1,8 2>&1 | tee -a $OUT/log.txt
elif [ "$1" = full ]; then
  timeout 360 python3 collect_gdn.py --out $OUT/gdn --budget ${GDN_BUDGET:-300} 2>&1 | tee -a $OUT/log.txt
  timeout 200 python3 collect_moe_triton.py --out $OUT/moe --budget ${MOE_BUDGET:-170} 2>&1 | tee -a $OUT/log.txt
fi
if [ "$1" = recurrent ]; then
  timeout 420 python3 collect_gdn.py --out $OUT/gdn --budget 380 --only-recurrent --rec-batches 1,2,4,8,16,32,64,128,256 --verify-q 2,3,4,6,8 2>&1 | tee -a $OUT/log.txt
fi
if [ "$1" = launch ]; then
  # issue 12 round 3: launch costs, then SGLang v0.5.14's GDN kernels for decode and verify on the H200's
  # default (triton) linear-attention backend: packed decode (gdn_decode_packed.csv) and the fused
  # sigmoid-gating kernel as target verify with intermediate states (gdn_verify_sigmoid.csv)
  timeout 150 python3 collect_launch.py --out $OUT/launch 2>&1 | tee -a $OUT/log.txt
  timeout 360 python3 collect_gdn.py --out $OUT/gdn --budget 320 --only-recurrent --sigmoid-verify --packed-decode --rec-batches 1,2,4,8,16,32,64,128,256 --verify-q 2,3,4,5,6,7,8 2>&1 | tee -a $OUT/log.txt
fi
if [ "$1" = chain ]; then
  # issue 12 round 4: the layer gap measured (chain of a stand-in Qwen3.5 decode layer vs its ops alone)
  timeout 500 python3 collect_chain.py --out $OUT/chain 2>&1 | tee -a $OUT/log.txt
fi
