#!/usr/bin/python3
"""Reference values for tests/gate/inference_test.cc, from SciPy.

Run once and commit the output:
    /usr/bin/python3 tests/data/make_stats_reference.py > tests/data/stats_reference.json
The inputs are generated here with a fixed NumPy seed and stored beside the
expected values, so the C++ tests read both from the JSON.
"""
import json
import sys

import numpy as np
import scipy
from scipy import stats

COMMAND = "/usr/bin/python3 tests/data/make_stats_reference.py > tests/data/stats_reference.json"


def mwu_case(name, x, y):
    x = [float(v) for v in x]
    y = [float(v) for v in y]
    out = {"name": name, "x": x, "y": y}
    for method in ("auto", "exact", "asymptotic"):
        r = stats.mannwhitneyu(x, y, alternative="two-sided", method=method)
        out[method] = {"u": float(r.statistic), "p": float(r.pvalue)}
    # scipy's own rule for "auto", recorded so the test checks which path ran.
    tied = len(set(x + y)) < len(x) + len(y)
    out["auto_is_exact"] = not (len(x) > 8 and len(y) > 8) and not tied
    return out


def history_case(name, history, candidate, confidence):
    h = np.asarray(history, dtype=float)
    k = len(h)
    mean = float(np.mean(h))
    s = float(np.std(h, ddof=1))
    scale = s * np.sqrt(1.0 + 1.0 / k)
    t_crit = float(stats.t.ppf(1.0 - (1.0 - confidence) / 2.0, k - 1))
    t_stat = (candidate - mean) / scale
    return {
        "name": name,
        "history": [float(v) for v in history],
        "candidate": float(candidate),
        "confidence": confidence,
        "t_crit": t_crit,
        "prediction_low": mean - t_crit * scale,
        "prediction_high": mean + t_crit * scale,
        "p": float(2.0 * stats.t.sf(abs(t_stat), k - 1)),
    }


def main():
    rng = np.random.default_rng(20261122)
    mwu = []
    # scipy's documented example (Shier 2004): U = 17, exact p = 0.1111.
    males = [19, 22, 16, 29, 24]
    females = [20, 11, 17, 12]
    mwu.append(mwu_case("small_untied", males, females))
    mwu.append(mwu_case("small_untied_swapped", females, males))
    mwu.append(mwu_case("small_tied", [1, 2, 2, 3, 4], [2, 3, 3, 5, 6, 7]))
    mwu.append(mwu_case("small_tied_swapped", [2, 3, 3, 5, 6, 7], [1, 2, 2, 3, 4]))
    sep_x = list(range(1, 9))
    sep_y = list(range(9, 17))
    mwu.append(mwu_case("complete_separation_8_8", sep_x, sep_y))
    a = rng.normal(100.0, 2.0, 6)
    b = rng.normal(101.5, 2.0, 40)
    mwu.append(mwu_case("one_small_untied_6_40", a, b))
    mwu.append(mwu_case("one_small_untied_40_6", b, a))
    a = rng.normal(100.0, 2.0, 30)
    b = rng.normal(101.0, 2.0, 25)
    mwu.append(mwu_case("large_untied_30_25", a, b))
    mwu.append(mwu_case("large_untied_25_30", b, a))
    a = np.round(rng.normal(100.0, 2.0, 40))
    b = np.round(rng.normal(100.8, 2.0, 35))
    mwu.append(mwu_case("large_tied_40_35", a, b))
    mwu.append(mwu_case("large_tied_35_40", b, a))
    a = rng.normal(10.0, 1.0, 12)
    b = rng.normal(10.0, 1.0, 9)
    mwu.append(mwu_case("null_untied_12_9", a, b))
    # A far tail of the exact distribution: only small counts contribute.
    a = rng.normal(106.0, 2.0, 7)
    b = rng.normal(100.0, 2.0, 60)
    mwu.append(mwu_case("one_small_shifted_7_60", a, b))

    t_quantiles = []
    for df in (1, 2, 4, 9, 29):
        for prob in (0.95, 0.975, 0.995):
            t_quantiles.append({"df": df, "prob": prob, "q": float(stats.t.ppf(prob, df))})

    history = [
        history_case("five_runs_slower_candidate", [100.2, 99.1, 100.9, 100.4, 99.6], 103.0, 0.95),
        history_case("five_runs_same_candidate", [100.2, 99.1, 100.9, 100.4, 99.6], 100.1, 0.95),
        history_case("two_runs_90", [50.0, 52.0], 49.0, 0.90),
        history_case("eight_runs_99", list(rng.normal(200.0, 3.0, 8)), 190.0, 0.99),
    ]

    json.dump({
        "generated_by": COMMAND,
        "scipy_version": scipy.__version__,
        "numpy_version": np.__version__,
        "python_version": sys.version.split()[0],
        "mannwhitneyu": mwu,
        "t_quantiles": t_quantiles,
        "history": history,
    }, sys.stdout, indent=1)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
