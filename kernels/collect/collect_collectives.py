#!/usr/bin/env python3
"""Time NCCL collectives through PyTorch, one process per GPU, and write collectives.csv.

No torchrun: torch.multiprocessing spawns one worker per GPU for each world size asked for.
NVLink multicast (NVLS) stays off, as the machines require: NCCL_NVLS_ENABLE=0 and
TORCH_SYMM_MEM_DISABLE_MULTICAST=1 are set here before anything starts, and inherited by workers.

bytes (per-GPU message, bf16):
  allreduce      each rank's buffer, reduced in place
  allgather      each rank's input; output is gpus x bytes
  reducescatter  each rank's input; output is bytes / gpus
  alltoall       each rank's send buffer (bytes / gpus to each peer), all_to_all_single
Timing: warm-up, then a CUDA graph of n back-to-back calls (n so a replay is ~2 ms, at least 2),
median of 7 replays / n on every rank; the row is the slowest rank's median. If capture fails
(NCCL or driver without graph support) the same loop runs eagerly and the log says so.
"""
import argparse
import datetime
import os
import statistics
import subprocess
import sys
import time

os.environ["NCCL_NVLS_ENABLE"] = "0"
os.environ["TORCH_SYMM_MEM_DISABLE_MULTICAST"] = "1"
os.environ["NVSHMEM_DISABLE_NVLS"] = "1"

import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402
import torch.multiprocessing as mp  # noqa: E402

OPS = ("allreduce", "allgather", "reducescatter", "alltoall")
REPLAYS = 7
TARGET_GRAPH_US = 2000.0


def sizes(lo=4 << 10, hi=1 << 30):
    out, b = [], lo
    while b <= hi:
        out.append(b)
        if b * 3 // 2 <= hi and b < hi:
            out.append(b * 3 // 2)
        b *= 2
    return out


def make_call(op, nbytes, world, dev):
    n = nbytes // 2
    n -= n % world
    x = torch.randn(n, device=dev, dtype=torch.bfloat16)
    if op == "allreduce":
        return lambda: dist.all_reduce(x)
    if op == "allgather":
        out = torch.empty(n * world, device=dev, dtype=torch.bfloat16)
        return lambda: dist.all_gather_into_tensor(out, x)
    if op == "reducescatter":
        out = torch.empty(n // world, device=dev, dtype=torch.bfloat16)
        return lambda: dist.reduce_scatter_tensor(out, x)
    out = torch.empty(n, device=dev, dtype=torch.bfloat16)
    return lambda: dist.all_to_all_single(out, x)


def time_call(call, use_graph):
    call()
    torch.cuda.synchronize()
    e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    e0.record()
    for _ in range(3):
        call()
    e1.record()
    torch.cuda.synchronize()
    est = max(e0.elapsed_time(e1) * 1000.0 / 3, 1.0)
    n = int(max(2, min(100, TARGET_GRAPH_US / est)))
    # every rank must use the same n, or the collectives inside the graphs mismatch
    nt = torch.tensor([n], device="cuda")
    dist.all_reduce(nt, op=dist.ReduceOp.MIN)
    n = int(nt.item())
    g = None
    if use_graph:
        s = torch.cuda.Stream()
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):
            call()
        torch.cuda.current_stream().wait_stream(s)
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g, stream=s):
            for _ in range(n):
                call()
        g.replay()
        torch.cuda.synchronize()
    times = []
    for _ in range(REPLAYS):
        dist.barrier()
        torch.cuda.synchronize()
        e0.record()
        if g is not None:
            g.replay()
        else:
            for _ in range(n):
                call()
        e1.record()
        torch.cuda.synchronize()
        times.append(e0.elapsed_time(e1) * 1000.0 / n)
    return statistics.median(times)


def worker(rank, world, port, ops, max_bytes, budget_s, queue):
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(port)
    torch.cuda.set_device(rank)
    dev = torch.device("cuda", rank)
    dist.init_process_group("nccl", rank=rank, world_size=world, device_id=dev)
    t0 = time.time()
    use_graph = True
    try:
        for op in ops:
            for nbytes in sizes(hi=max_bytes):
                flag = torch.tensor([1 if time.time() - t0 < budget_s else 0], device=dev)
                dist.all_reduce(flag, op=dist.ReduceOp.MIN)
                if flag.item() == 0:
                    if rank == 0:
                        queue.put(("log", f"world {world}: budget reached at {op} {nbytes}"))
                    raise StopIteration
                call = make_call(op, nbytes, world, dev)
                try:
                    us = time_call(call, use_graph)
                except RuntimeError as e:
                    if not use_graph:
                        raise
                    use_graph = False
                    if rank == 0:
                        queue.put(("log", f"world {world}: graph capture failed ({str(e).splitlines()[0][:200]}); eager from here"))
                    us = time_call(call, False)
                worst = torch.tensor([us], device=dev, dtype=torch.float64)
                dist.all_reduce(worst, op=dist.ReduceOp.MAX)
                if rank == 0:
                    queue.put(("row", op, world, nbytes, worst.item(), use_graph))
                del call
    except StopIteration:
        pass
    finally:
        torch.cuda.synchronize()
        dist.barrier()
        dist.destroy_process_group()
        if rank == 0:
            queue.put(("done",))


def sh(cmd):
    try:
        return subprocess.run(cmd, shell=True, capture_output=True, text=True, timeout=20).stdout.strip()
    except Exception as e:  # noqa: BLE001
        return f"unavailable ({e})"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True, help="output CSV path")
    ap.add_argument("--worlds", default="2,4,8")
    ap.add_argument("--ops", default=",".join(OPS))
    ap.add_argument("--max-bytes", type=int, default=1 << 30)
    ap.add_argument("--budget", type=float, default=150, help="seconds per world size")
    args = ap.parse_args()
    ngpu = torch.cuda.device_count()
    props = torch.cuda.get_device_properties(0)
    worlds = [w for w in map(int, args.worlds.split(",")) if w <= ngpu]
    print(f"{ngpu} GPUs; measuring world sizes {worlds}", file=sys.stderr, flush=True)
    with open(args.out, "w") as f:
        f.write(f"# gpu: {props.name} x{ngpu} ({props.multi_processor_count} SMs)\n")
        f.write(f"# driver: {sh('nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -1')}\n")
        f.write(f"# torch: {torch.__version__}\n# cuda: {torch.version.cuda}\n")
        f.write(f"# nccl: {'.'.join(map(str, torch.cuda.nccl.version()))}\n")
        f.write("# clocks: sm,mem,max_sm,max_mem = " + sh("nvidia-smi --query-gpu=clocks.sm,clocks.mem,clocks.max.sm,clocks.max.mem --format=csv,noheader | head -1") + " (read at start, not changed)\n")
        f.write(f"# topology: {sh('nvidia-smi topo -m | head -12').replace(chr(10), ' | ')}\n")
        f.write("# method: one process per GPU (mp.spawn), NCCL via torch.distributed, NCCL_NVLS_ENABLE=0, "
                "CUDA graph of n calls (~2 ms), median of 7 replays / n, slowest rank; bytes = per-GPU message "
                "(allreduce buffer; allgather/reducescatter input; alltoall send buffer); bf16\n")
        f.write(f"# date: {datetime.datetime.now(datetime.timezone.utc).strftime('%Y-%m-%dT%H:%M:%SZ')}\n")
        f.write("op,dtype,gpus,bytes,latency_us\n")
        f.flush()
        ctx = mp.get_context("spawn")
        for i, world in enumerate(worlds):
            q = ctx.Queue()
            procs = mp.start_processes(worker, args=(world, 29500 + i, args.ops.split(","), args.max_bytes, args.budget, q),
                                       nprocs=world, join=False, start_method="spawn")
            t0 = time.time()
            while True:
                try:
                    msg = q.get(timeout=args.budget + 120 - (time.time() - t0))
                except Exception:  # noqa: BLE001
                    print(f"world {world}: timed out waiting for workers", file=sys.stderr, flush=True)
                    break
                if msg[0] == "done":
                    break
                if msg[0] == "log":
                    print(msg[1], file=sys.stderr, flush=True)
                    continue
                _, op, w, nbytes, us, graph = msg
                f.write(f"{op},bf16,{w},{nbytes},{us:.3f}\n")
                f.flush()
                print(f"{op:14s} gpus={w} bytes={nbytes:>11d} {us:10.2f} us {'graph' if graph else 'eager'}", file=sys.stderr, flush=True)
            procs.join(timeout=60)
            print(f"world {world} took {time.time() - t0:.1f}s", file=sys.stderr, flush=True)


if __name__ == "__main__":
    main()
