#!/usr/bin/env python3
"""How far apart the rounds of an interleaved A/B of one perfgate case lie.

Runs ROUNDS rounds of one block a side (`perfgate-agent sample`, one process
per block, the order alternating as in `perfgate-agent ab`), the candidate
optionally slowed by --inject-slowdown, and prints the paired change with a
95 % t interval and the standard deviation of the rounds' log-ratios when
each block is summarised by its median, its 25th percentile or its minimum.
A spread that no summary narrows is the processes', not the samples'.

Usage: round-spread.py CASE [--samples 8] [--rounds 24] [--slowdown PCT]
                       [--agent build/agent/perfgate-agent] [--json FILE]
"""
import argparse
import json
import math
import statistics
import subprocess
import sys


def block(agent, case, samples, slowdown):
    cmd = [agent]
    if slowdown:
        cmd += ["--inject-slowdown", f"{case}={slowdown}"]
    cmd += ["sample", "--case", case, "--samples", str(samples), "--suite", case.split("/")[0]]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True)
    return [s["values"][0] for s in json.loads(out.stdout)["cases"][0]["samples"]]


def report(rounds, name, summary):
    d = [math.log(summary(r["candidate"]) / summary(r["baseline"])) for r in rounds]
    m, sd = statistics.mean(d), statistics.stdev(d)
    t = 2.07 if len(d) < 30 else 2.0  # about t(0.975) for 20-30 rounds
    h = t * sd / math.sqrt(len(d))
    pct = lambda x: 100 * (math.exp(x) - 1)
    print(f"{name:<8} change {pct(m):+.1f} %  95 % [{pct(m - h):+.1f}, {pct(m + h):+.1f}]  "
          f"rounds' sd {100 * sd:.1f} %")


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("case")
    p.add_argument("--samples", type=int, default=8)
    p.add_argument("--rounds", type=int, default=24)
    p.add_argument("--slowdown", type=float, default=0)
    p.add_argument("--agent", default="build/agent/perfgate-agent")
    p.add_argument("--json")
    a = p.parse_args()
    rounds = []
    for i in range(a.rounds):
        sides = [("baseline", 0), ("candidate", a.slowdown)]
        got = {side: block(a.agent, a.case, a.samples, slow) for side, slow in (sides if i % 2 == 0 else sides[::-1])}
        rounds.append(got)
    if a.json:
        with open(a.json, "w") as f:
            json.dump(rounds, f)
    report(rounds, "median", statistics.median)
    report(rounds, "p25", lambda x: sorted(x)[len(x) // 4])
    report(rounds, "min", min)


if __name__ == "__main__":
    sys.exit(main())
