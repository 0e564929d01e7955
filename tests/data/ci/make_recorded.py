#!/usr/bin/env python3
"""Writes the recorded inputs of the pull-request CI test (ci_e2e_test):
Google Benchmark files of five runs of main, of a candidate whose BM_Work is
40 % slower, and of a candidate like main. Run once; the files are kept."""
import json
import random

rng = random.Random(27)
CONTEXT = {"date": "2026-11-27T11:00:00+00:00", "host_name": "gpu-runner-7", "executable": "./bench",
           "num_cpus": 2, "mhz_per_cpu": 2596, "cpu_scaling_enabled": False, "caches": [],
           "load_avg": [0.1, 0.1, 0.1], "library_build_type": "release"}


def run(slowdown):
    out = []
    for name, base in (("BM_Work/1024", 100.0), ("BM_Other/64", 50.0)):
        scale = 1 + (slowdown if name.startswith("BM_Work") else 0)
        level = base * scale * (1 + rng.uniform(-0.01, 0.01))  # this run's level
        for i in range(10):
            t = level * (1 + rng.gauss(0, 0.005))
            out.append({"name": name, "family_index": 0, "per_family_instance_index": 0, "run_name": name,
                        "run_type": "iteration", "repetitions": 10, "repetition_index": i, "threads": 1,
                        "iterations": 100000, "real_time": t, "cpu_time": t, "time_unit": "ns"})
    return {"context": CONTEXT, "benchmarks": out}


for i in range(1, 6):
    json.dump(run(0), open(f"main-{i}.json", "w"), indent=1)
json.dump(run(0.40), open("candidate-slow.json", "w"), indent=1)
json.dump(run(0), open("candidate-clean.json", "w"), indent=1)
