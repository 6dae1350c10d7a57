"""Fixed cost of a kernel launch on the device machine (issue 12): N tiny kernels back to back,
replayed as one CUDA graph (GPU time per graph node: the inter-kernel gap inside a replay plus
the shortest kernel) and launched eagerly from Python (host time per launch, the rate an eager
forward can issue kernels). Kernels: a one-element torch add (ATen dispatch) and a one-block
Triton kernel (Triton's launcher), plus a 1 MiB copy as a kernel with real work, to separate the
node gap from kernel duration: gap = graph time per node - isolated kernel time.
A bf16 [1 x 4096] x [4096 x 256] linear adds a cuBLAS launch (the path of every projection at decode).
Writes launch.csv: kernel,n,graph_node_us,eager_launch_us,eager_sync_us, and launch_replay.csv:
kernel,n,replay_host_us,replay_gpu_us (host time of one CUDAGraph.replay() call of an n-node graph,
before synchronize, and its GPU time: what a graph-replayed forward costs the scheduler's thread)."""
import argparse
import os
import statistics
import time

import torch
import triton
import triton.language as tl


@triton.jit
def _tiny(x_ptr):
    v = tl.load(x_ptr)
    tl.store(x_ptr, v + 1.0)


def kernels(dev):
    x = torch.zeros(1, device=dev)
    a = torch.zeros(1 << 18, device=dev)
    b = torch.empty_like(a)
    xa = torch.randn(1, 4096, device=dev, dtype=torch.bfloat16)
    w = torch.randn(256, 4096, device=dev, dtype=torch.bfloat16)
    return {
        "torch_add_1elem": lambda: x.add_(1.0),
        "torch_linear_bf16_1x4096x256": lambda: torch.nn.functional.linear(xa, w),
        "triton_1block": lambda: _tiny[(1,)](x),
        "torch_copy_1MiB": lambda: b.copy_(a),
    }


def capture(fn, n):
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(3):
            fn()
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        for _ in range(n):
            fn()
    g.replay()
    torch.cuda.synchronize()
    return g


def replay_host_us(fn, n):
    g = capture(fn, n)
    host, gpu = [], []
    for _ in range(21):
        torch.cuda.synchronize()
        e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        e0.record()
        t0 = time.perf_counter()
        g.replay()
        host.append((time.perf_counter() - t0) * 1e6)
        e1.record()
        torch.cuda.synchronize()
        gpu.append(e0.elapsed_time(e1) * 1e3)
    return statistics.median(host), statistics.median(gpu)


def graph_node_us(fn, n):
    g = capture(fn, n)
    ts = []
    for _ in range(9):
        e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        e0.record()
        g.replay()
        e1.record()
        torch.cuda.synchronize()
        ts.append(e0.elapsed_time(e1) * 1e3 / n)
    return statistics.median(ts)


def eager_us(fn, n):
    fn()
    torch.cuda.synchronize()
    runs = []
    for _ in range(7):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        t1 = time.perf_counter()
        torch.cuda.synchronize()
        runs.append((t1 - t0) * 1e6 / n)
    sync = []
    for _ in range(21):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        fn()
        torch.cuda.synchronize()
        sync.append((time.perf_counter() - t0) * 1e6)
    return statistics.median(runs), statistics.median(sync)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    p = torch.cuda.get_device_properties(0)
    with open(os.path.join(args.out, "launch.csv"), "w") as f:
        f.write(f"# device: {p.name}, {p.multi_processor_count} SMs; torch {torch.__version__}, triton {triton.__version__}\n")
        f.write("# graph_node_us: median of 9 replays of a graph of n launches, CUDA events, / n; "
                "eager_launch_us: host clock over n eager launches (before synchronize) / n, median of 7; "
                "eager_sync_us: one launch + synchronize, median of 21\n")
        f.write("kernel,n,graph_node_us,eager_launch_us,eager_sync_us\n")
        for name, fn in kernels("cuda").items():
            for n in (100, 1000):
                g = graph_node_us(fn, n)
                e, s = eager_us(fn, n)
                f.write(f"{name},{n},{g:.3f},{e:.3f},{s:.3f}\n")
                print(name, n, f"graph {g:.2f} us/node, eager {e:.2f} us/launch, sync {s:.1f} us", flush=True)
    with open(os.path.join(args.out, "launch_replay.csv"), "w") as f:
        f.write(f"# device: {p.name}; torch {torch.__version__}, triton {triton.__version__}\n")
        f.write("# replay_host_us: host clock around one CUDAGraph.replay() of an n-node graph (before synchronize), "
                "median of 21; replay_gpu_us: CUDA events around the same replay\n")
        f.write("kernel,n,replay_host_us,replay_gpu_us\n")
        ks = kernels("cuda")
        for name in ("triton_1block", "torch_copy_1MiB"):
            for n in (1, 100, 1000, 3000):
                h, gg = replay_host_us(ks[name], n)
                f.write(f"{name},{n},{h:.3f},{gg:.3f}\n")
                print("replay", name, n, f"host {h:.1f} us, gpu {gg:.1f} us", flush=True)


if __name__ == "__main__":
    main()
