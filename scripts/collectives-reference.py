#!/usr/bin/env python3
"""Reference figures for the collectives suite's NCCL cases, by torch.distributed.

Runs all_reduce, all_gather and reduce_scatter of float32 on every GPU given,
one process per GPU over NCCL, at the sizes the suite ran (S as nccl-tests
defines it: the buffer of all_reduce, the gathered output of all_gather, the
input of reduce_scatter), out of place. Each size: 5 warm-up calls, then 20
timed with CUDA events; a call's time is the slowest rank's, the figure the
median. algbw = S / time, busbw = algbw x 2(n-1)/n for all_reduce and (n-1)/n
for the others. Prints JSON keyed like the suite's benchmark keys. Needs
PyTorch with CUDA and NCCL and two GPUs or more.

    python3 scripts/collectives-reference.py --gpus N --bytes 1048576,16777216
"""

import argparse
import json
import os
import statistics
import sys

import torch
import torch.distributed as dist
import torch.multiprocessing as mp

OPS = ["all_reduce", "all_gather", "reduce_scatter"]


def time_op(op, nbytes, n, device):
    count = nbytes // 4  # float32
    if op == "all_reduce":
        buf = torch.ones(count, device=device)
        call = lambda: dist.all_reduce(buf)
        factor = 2 * (n - 1) / n
    elif op == "all_gather":
        out = torch.empty(count - count % n, device=device)
        inp = torch.ones(out.numel() // n, device=device)
        call = lambda: dist.all_gather_into_tensor(out, inp)
        factor = (n - 1) / n
    else:
        inp = torch.ones(count - count % n, device=device)
        out = torch.empty(inp.numel() // n, device=device)
        call = lambda: dist.reduce_scatter_tensor(out, inp)
        factor = (n - 1) / n
    for _ in range(5):
        call()
    torch.cuda.synchronize()
    times = []
    for _ in range(20):
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        dist.barrier()
        start.record()
        call()
        stop.record()
        stop.synchronize()
        t = torch.tensor([start.elapsed_time(stop) / 1e3], device=device)
        dist.all_reduce(t, op=dist.ReduceOp.MAX)
        times.append(t.item())
    median = statistics.median(times)
    algbw = nbytes / median / 1e9
    return {"time": median * 1e3, "algbw": algbw, "busbw": algbw * factor}


def worker(rank, n, sizes, port, queue):
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    torch.cuda.set_device(rank)
    dist.init_process_group("nccl", rank=rank, world_size=n)
    device = torch.device("cuda", rank)
    cases = {}
    for op in OPS:
        for nbytes in sizes:
            key = f"collectives/{op}{{backend=nccl,bytes={nbytes},dtype=float32,inplace=0}}"
            cases[key] = time_op(op, nbytes, n, device)
    if rank == 0:
        queue.put(cases)
    dist.destroy_process_group()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gpus", type=int, required=True)
    parser.add_argument("--bytes", required=True, help="comma-separated sizes S in bytes")
    parser.add_argument("--port", type=int, default=29511)
    args = parser.parse_args()
    if args.gpus < 2 or torch.cuda.device_count() < args.gpus:
        print(json.dumps({"error": f"needs {max(args.gpus, 2)} GPUs, PyTorch sees {torch.cuda.device_count()}"}))
        return 2
    sizes = [int(b) for b in args.bytes.split(",")]
    ctx = mp.get_context("spawn")
    queue = ctx.Queue()
    mp.spawn(worker, args=(args.gpus, sizes, args.port, queue), nprocs=args.gpus, join=True)
    print(json.dumps({"torch": torch.__version__, "nccl": ".".join(map(str, torch.cuda.nccl.version())),
                      "gpus": args.gpus, "cases": queue.get()}, indent=2, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
