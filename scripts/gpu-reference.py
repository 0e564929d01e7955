#!/usr/bin/env python3
"""Reference figures for the kernels suite's CUDA cases, measured by PyTorch.

Times torch.matmul on the shapes and dtypes of kernels/gemm and
torch.Tensor.copy_ at the size of kernels/device_copy, the way the suite
does: CUDA events, a warm-up, an L2 flush (a write of twice the L2) before
each iteration, and the median of the iterations. Prints JSON keyed like the
suite's benchmark keys, so the two can be compared line by line
(suites/kernels/README.md says how). Needs PyTorch with CUDA; runs on the
GPU machine only.

    python3 scripts/gpu-reference.py [--iterations 30] [--dtypes bf16,fp8]
"""

import argparse
import json
import statistics
import sys

import torch

SHAPES = [(4096, 4096, 4096), (8192, 8192, 8192), (4096, 14336, 4096), (8192, 8192, 28672)]
DTYPES = ["fp32", "tf32", "fp16", "bf16", "fp8"]
COPY_BYTES = 1 << 30  # kernels/device_copy's default


def l2_flusher():
    props = torch.cuda.get_device_properties(0)
    l2 = getattr(props, "L2_cache_size", 50 << 20)
    buf = torch.empty(2 * l2, dtype=torch.uint8, device="cuda")
    return lambda: buf.zero_()


def time_cold(fn, flush, iterations, warmup=3):
    """Median seconds of fn() over `iterations`, L2 flushed before each."""
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(iterations):
        flush()
        start = torch.cuda.Event(enable_timing=True)
        stop = torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop) / 1e3)
    return statistics.median(times), times


def gemm_case(dtype, m, n, k, flush, iterations):
    gen = torch.Generator(device="cuda").manual_seed(m * 31 + n * 17 + k)
    torch.backends.cuda.matmul.allow_tf32 = dtype == "tf32"
    if dtype == "fp8":
        if torch.cuda.get_device_capability() < (8, 9):
            return {"skipped": "fp8 needs compute capability 8.9 or newer"}
        # The suite's layout: A row-major MxK, B column-major KxN (B^T row-major).
        a = (torch.rand(m, k, device="cuda", generator=gen) * 2 - 1).to(torch.float8_e4m3fn)
        bt = (torch.rand(n, k, device="cuda", generator=gen) * 2 - 1).to(torch.float8_e4m3fn)
        one = torch.ones((), device="cuda")
        fn = lambda: torch._scaled_mm(a, bt.t(), scale_a=one, scale_b=one, out_dtype=torch.bfloat16)
    else:
        torch_dtype = {"fp32": torch.float32, "tf32": torch.float32,
                       "fp16": torch.float16, "bf16": torch.bfloat16}[dtype]
        a = (torch.rand(m, k, device="cuda", generator=gen) * 2 - 1).to(torch_dtype)
        bt = (torch.rand(n, k, device="cuda", generator=gen) * 2 - 1).to(torch_dtype)
        b = bt.t()
        fn = lambda: torch.matmul(a, b)
    median, _ = time_cold(fn, flush, iterations)
    return {"time_ms": median * 1e3, "tflops": 2.0 * m * n * k / median / 1e12}


def copy_case(nbytes, flush, iterations):
    src = torch.randint(0, 255, (nbytes,), dtype=torch.uint8, device="cuda")
    dst = torch.empty_like(src)
    median, _ = time_cold(lambda: dst.copy_(src), flush, iterations)
    # Read plus written, decimal GB: as kernels/device_copy counts.
    return {"time_ms": median * 1e3, "bandwidth": 2.0 * nbytes / median / 1e9}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iterations", type=int, default=30, help="timed iterations (>= 20)")
    parser.add_argument("--dtypes", default=",".join(DTYPES), help="comma-separated GEMM dtypes")
    args = parser.parse_args()
    if args.iterations < 20:
        parser.error("--iterations must be at least 20")
    if not torch.cuda.is_available():
        print(json.dumps({"error": "PyTorch sees no CUDA device"}))
        return 2
    flush = l2_flusher()
    out = {"device": torch.cuda.get_device_name(0), "torch": torch.__version__,
           "cuda": torch.version.cuda, "iterations": args.iterations, "cases": {}}
    for dtype in args.dtypes.split(","):
        if dtype not in DTYPES:
            parser.error(f"unknown dtype {dtype!r} (known: {', '.join(DTYPES)})")
        for m, n, k in SHAPES:
            key = f"kernels/gemm{{dtype={dtype},k={k},m={m},n={n}}}"
            out["cases"][key] = gemm_case(dtype, m, n, k, flush, args.iterations)
            torch.cuda.empty_cache()
    out["cases"][f"kernels/device_copy{{bytes={COPY_BYTES}}}"] = copy_case(COPY_BYTES, flush, args.iterations)
    print(json.dumps(out, indent=2, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
