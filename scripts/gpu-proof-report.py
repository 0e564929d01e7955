#!/usr/bin/env python3
"""One section of gpu-results.md from the raw JSON of a perfgate-gpu-proof stage.

Each perfgate case becomes a row: the median of its unthrottled samples of
the case's headline metric, the reference PyTorch measured on the same card
for the same key, their ratio (perfgate / reference for higher-is-better
metrics, reference / perfgate for times, so above 1 means perfgate is
faster), the noise the case reached, and its energy metrics where the device
has an energy counter. Cases that did not run keep their reason. Standard
library only.

    gpu-proof-report.py --title T --perfgate RESULTS.json [--reference REF.json]
        [--no-reference REASON] [--nvml LOAD.csv] [--model-reference DIR]
    gpu-proof-report.py --title T --ab DIR
    gpu-proof-report.py --title T --counts DIR
"""

import argparse
import csv
import glob
import json
import os
import re
import statistics
import sys

HEADLINE = ["tflops", "bandwidth", "busbw", "throughput", "tokens_per_s", "mfu", "time"]
ENERGY = [("power", "W"), ("energy", "J"), ("energy_per_tflop", "J/TFLOP"), ("energy_per_token", "J/token")]


def load(path):
    if not path or not os.path.exists(path) or os.path.getsize(path) == 0:
        return None
    with open(path) as f:
        return json.load(f)


def median_of(case, metric):
    names = [m["name"] for m in case["metrics"]]
    if metric not in names:
        return None
    i = names.index(metric)
    values = [s["values"][i] for s in case["samples"] if not s.get("throttled")]
    return statistics.median(values) if values else None


def params(key):
    body = re.search(r"\{(.*)\}", key)
    return dict(p.split("=", 1) for p in body.group(1).split(",")) if body else {}


def fmt(v):
    return "" if v is None else f"{v:.4g}"


def model_reference(directory, key, metric):
    """What model-reference.py measured for a training/inference case, and a
    note where its shape differs from the case's (prompt, decode steps)."""
    p = params(key)
    preset = p.get("preset")
    if key.startswith("training/step"):
        ref = load(os.path.join(directory, f"torch-train-{preset}.json"))
        field = {"time": "step_time_ms", "tokens_per_s": "tokens_per_s", "mfu": "mfu"}.get(metric)
        return (ref.get(field) if ref and field else None), ""
    ref = load(os.path.join(directory, f"torch-decode-{preset}.json")) or {}
    batch = ref.get("batches", {}).get(p.get("batch", ""))
    if not batch:
        return None, ""
    note = ""
    if str(ref.get("prompt_len")) != p.get("prompt", ""):
        note = f" (prompt {ref.get('prompt_len')}, here {p.get('prompt')})"
    if key.startswith("inference/prefill"):
        return {"time": batch.get("prefill_ms"), "tokens_per_s": batch.get("prefill_tokens_per_s")}.get(metric), note
    if key.startswith("inference/decode"):
        if str(ref.get("decode_steps")) != p.get("tokens", ""):
            note += f" ({ref.get('decode_steps')} steps, here {p.get('tokens')})"
        return {"time": batch.get("graph_ms_per_token"), "tokens_per_s": batch.get("graph_tokens_per_s")}.get(metric), note
    return None, ""


def metric_row(case, key, metric, reference, no_reference, model_dir, energy):
    unit = next(m["unit"] for m in case["metrics"] if m["name"] == metric)
    ours = median_of(case, metric)
    note = ""
    if model_dir:
        ref, note = model_reference(model_dir, key, metric)
    else:
        ref = ((reference or {}).get("cases", {}).get(key) or {}).get(metric)
    if ref is None:
        ref_text = f"none: {no_reference}" if no_reference else "none for this metric"
        ratio = ""
    else:
        ref_text = fmt(ref) + note
        lower = metric == "time"
        ratio = fmt(ref / ours if lower else ours / ref) if ours else ""
    return (f"| {key} {metric} [{unit}] | {fmt(ours)} | {ref_text} | {ratio} | "
            f"{case.get('noise', 0) * 100:.2f} % | {energy} |")


def case_rows(results, reference, no_reference, model_dir):
    rows = []
    for case in results["cases"]:
        key = case["key"]
        if case["status"] not in ("ok", "timed_out"):
            rows.append(f"| {key} | not measured: {case['status']}: {case.get('reason', '')} | | | | |")
            continue
        names = [m["name"] for m in case["metrics"]]
        energy = ", ".join(f"{fmt(median_of(case, n))} {u}" for n, u in ENERGY if n in names)
        if not energy:
            why = re.search(r"energy unavailable: (.*)", case.get("reason", ""))
            energy = f"energy unavailable: {why.group(1)}" if why else ""
        energy_names = {n for n, _ in ENERGY}
        # One row per metric, the headline first; energy on the first row.
        ordered = sorted((n for n in names if n not in energy_names),
                         key=lambda n: HEADLINE.index(n) if n in HEADLINE else len(HEADLINE))
        for row, metric in enumerate(ordered):
            rows.append(metric_row(case, key, metric, reference, no_reference, model_dir,
                                   energy if row == 0 else ""))
    return rows


def nvml_rows(path):
    if not path or not os.path.exists(path):
        return []
    with open(path) as f:
        rows = [{k.strip(): v.strip() for k, v in r.items() if k} for r in csv.DictReader(f)]

    def column(prefix):
        out = []
        for r in rows:
            for k, v in r.items():
                if k.startswith(prefix):
                    try:
                        out.append(float(v.split()[0]))
                    except (ValueError, IndexError):
                        pass
        return out

    reasons = sorted({v for r in rows for k, v in r.items() if k.startswith("clocks_event_reasons")})
    out = []
    for name, prefix, unit in [("SM clock", "clocks.current.sm", "MHz"), ("memory clock", "clocks.current.memory", "MHz"),
                               ("power", "power.draw", "W"), ("temperature", "temperature.gpu", "C")]:
        values = column(prefix)
        if values:
            out.append(f"| NVML under load: {name} [{unit}] | min {fmt(min(values))}, median "
                       f"{fmt(statistics.median(values))}, max {fmt(max(values))} | | | | |")
    if reasons:
        out.append(f"| NVML under load: clocks-event reasons seen | {' '.join(reasons)} | | | | |")
    return out


def ab_rows(directory):
    rows = []
    for run, want in [("aa1", 0), ("aa2", 0), ("slow", 1)]:
        exit_path = os.path.join(directory, f"{run}.exit")
        code = open(exit_path).read().strip() if os.path.exists(exit_path) else "missing"
        what = {"aa1": "A/A 1 (must pass)", "aa2": "A/A 2 (must pass)", "slow": "5 % slowdown (must be caught)"}[run]
        verdicts = []
        report = load(os.path.join(directory, f"{run}.json")) or {}
        for v in report.get("verdicts", []):
            if v.get("gating", True):
                change = v.get("change")
                change = f" {100 * change:+.2f} %" if isinstance(change, (int, float)) else ""
                verdicts.append(f"{v.get('benchmark', '')} {v.get('metric', '')}: {v.get('verdict', '')}{change}")
        ok = "as expected" if code == str(want) else f"NOT as expected (wanted exit {want})"
        rows.append(f"| {what} | exit {code}, {ok} | {'; '.join(verdicts)} | | | |")
    return rows


def count_rows(directory):
    """The A/A of GPU counts: each counted metric's two sides, change and verdict."""
    exit_path = os.path.join(directory, "aa.exit")
    code = open(exit_path).read().strip() if os.path.exists(exit_path) else "missing"
    report = load(os.path.join(directory, "aa.json")) or {}
    rows = []
    for v in report.get("verdicts", []):
        change = v.get("change")
        change = f"{100 * change:+.4f} %" if isinstance(change, (int, float)) else ""
        exact = [("" if v.get(k) is None else f"{v.get(k):.10g}") for k in ("baseline_median", "candidate_median")]
        rows.append(f"| {v.get('benchmark', '')} {v.get('metric', '')} | {exact[0]} vs {exact[1]} "
                    f"{v.get('unit', '')}, {v.get('verdict', '')} | | {change} | | |")
    if not rows:
        rows.append(f"| every counted case | not measured: the A/A judged nothing (exit {code}; see counts/aa.log) | | | | |")
    return rows


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--title", required=True)
    parser.add_argument("--perfgate")
    parser.add_argument("--reference")
    parser.add_argument("--no-reference", default="")
    parser.add_argument("--nvml")
    parser.add_argument("--model-reference")
    parser.add_argument("--ab")
    parser.add_argument("--counts")
    args = parser.parse_args()
    print(f"## {args.title}\n")
    print("| what | perfgate | reference | ratio | noise | energy (median) |")
    print("|---|---|---|---|---|---|")
    if args.ab:
        rows = ab_rows(args.ab)
    elif args.counts:
        rows = count_rows(args.counts)
    else:
        results = load(args.perfgate)
        if results is None:
            print(f"| every case | not measured: the run wrote no result file ({args.perfgate}); see its log | | | | |\n")
            return 0
        rows = case_rows(results, load(args.reference), args.no_reference, args.model_reference)
        rows += nvml_rows(args.nvml)
    print("\n".join(rows) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
