"""rebelboost AdaBoost side by side with scikit-learn's AdaBoostClassifier and LightGBM, in one run.

Tasks: Fashion-MNIST T-shirt (0) vs Shirt (6) on the standard split, and make_hastie_10_2 with 100 000
training rows. Reports fit time, the time ratio and test error for each library; the ratios are what to
quote (the machine is shared, so absolute times move between runs).

    OMP_WAIT_POLICY=passive python bench/peers/compare_adaboost.py [--quick] [--out bench/results/adaboost_peers.md]

--lightgbm-only --repeats R runs only the equal-work LightGBM comparison (1 000 stumps, one thread each),
R interleaved rounds, medians and the median of the per-round ratios (issue 13's "stumps keep their lead").
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
from datasets import fashion_pair, hastie  # noqa: E402

from rebelboost import AdaBoostClassifier  # noqa: E402


def timed_fit(make, X, y):
    model = make()
    start = time.perf_counter()
    model.fit(X, y)
    return model, time.perf_counter() - start


def test_error(model, X, y):
    return float(np.mean(model.predict(X) != y))


def run_vs_sklearn(name, data, depth, n_estimators, threads):
    """scikit-learn once, then rebelboost with its own split criterion and with scikit-learn's (Gini)."""
    from sklearn.ensemble import AdaBoostClassifier as SkAdaBoost
    from sklearn.tree import DecisionTreeClassifier

    X_train, y_train, X_test, y_test = data
    sk, sk_time = timed_fit(lambda: SkAdaBoost(DecisionTreeClassifier(max_depth=depth), n_estimators=n_estimators),
                            X_train, y_train)
    rows = []
    for criterion in ("loss", "gini"):
        rb, rb_time = timed_fit(lambda: AdaBoostClassifier(n_estimators=n_estimators, max_depth=depth, n_jobs=threads,
                                                           criterion=criterion), X_train, y_train)
        rows.append({
            "task": name, "depth": depth, "n_estimators": n_estimators, "threads": threads, "criterion": criterion,
            "rebelboost_fit_s": rb_time, "sklearn_fit_s": sk_time, "speedup": sk_time / rb_time,
            "rebelboost_test_error": test_error(rb, X_test, y_test), "sklearn_test_error": test_error(sk, X_test, y_test),
            "rebelboost_trees": rb.n_estimators_, "sklearn_trees": len(sk.estimators_),
        })
    return rows


def run_vs_lightgbm(name, data, n_rounds, repeats=1):
    """Equal work: n_rounds depth-1 trees, one thread each; `repeats` interleaved rounds, medians."""
    import statistics

    import lightgbm as lgb

    X_train, y_train, X_test, y_test = data
    rb_times, lg_times = [], []
    for _ in range(repeats):
        rb, rb_time = timed_fit(lambda: AdaBoostClassifier(n_estimators=n_rounds, max_depth=1, n_jobs=1), X_train, y_train)
        lg, lg_time = timed_fit(
            lambda: lgb.LGBMClassifier(n_estimators=n_rounds, num_leaves=2, max_depth=1, n_jobs=1, verbose=-1,
                                       force_col_wise=True),
            X_train, y_train)
        rb_times.append(rb_time)
        lg_times.append(lg_time)
    rb_time, lg_time = statistics.median(rb_times), statistics.median(lg_times)
    return {
        "task": name, "rounds": n_rounds, "repeats": repeats,
        "rebelboost_fit_s": rb_time, "lightgbm_fit_s": lg_time,
        "speedup": statistics.median(lg / rb for lg, rb in zip(lg_times, rb_times)),
        "rebelboost_test_error": test_error(rb, X_test, y_test), "lightgbm_test_error": test_error(lg, X_test, y_test),
    }


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="20 learners instead of 200 (a smoke run)")
    parser.add_argument("--depths", default="1", help="comma-separated tree depths for the scikit-learn comparison")
    parser.add_argument("--threads", type=int, default=2, help="rebelboost threads vs scikit-learn (single-threaded)")
    parser.add_argument("--lgb-rounds", type=int, default=1000)
    parser.add_argument("--lightgbm-only", action="store_true", help="only the equal-work LightGBM comparison")
    parser.add_argument("--repeats", type=int, default=1, help="interleaved rounds of the LightGBM comparison")
    parser.add_argument("--out", default=None, help="write a Markdown table (and .json beside it)")
    args = parser.parse_args(argv)
    load_before = os.getloadavg()[0]
    n_estimators = 20 if args.quick else 200
    tasks = {"F-MNIST T-shirt vs Shirt": fashion_pair(0, 6)}
    if not args.lightgbm_only:
        tasks["make_hastie_10_2 (100k)"] = hastie()

    rows = [] if args.lightgbm_only else [row for d in args.depths.split(",") for name, data in tasks.items()
                                          for row in run_vs_sklearn(name, data, int(d), n_estimators, args.threads)]
    lgb_rows = [run_vs_lightgbm("F-MNIST T-shirt vs Shirt", tasks["F-MNIST T-shirt vs Shirt"],
                                100 if args.quick else args.lgb_rounds, args.repeats)]

    lines = [f"# rebelboost AdaBoost vs peers ({time.strftime('%Y-%m-%d')}, {platform.processor() or platform.machine()},"
             f" {os.cpu_count()} cores, OMP_WAIT_POLICY={os.environ.get('OMP_WAIT_POLICY', 'unset')})", "",
             f"Command: `python bench/peers/compare_adaboost.py {' '.join(sys.argv[1:])}`; load average (1 min) before / "
             f"after: {load_before:.2f} / {os.getloadavg()[0]:.2f}", ""]
    if not args.lightgbm_only:
        lines += [f"## vs scikit-learn AdaBoostClassifier (SAMME, DecisionTreeClassifier), rebelboost n_jobs={args.threads}", "",
             "| task | depth | learners | rebelboost criterion | rebelboost fit (s) | sklearn fit (s) | speed-up | rebelboost test err | sklearn test err |",
                  "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['task']} | {r['depth']} | {r['n_estimators']} | {r['criterion']} | {r['rebelboost_fit_s']:.3f} | "
                     f"{r['sklearn_fit_s']:.2f} | {r['speedup']:.0f}x | {100 * r['rebelboost_test_error']:.2f} % | "
                     f"{100 * r['sklearn_test_error']:.2f} % |")
    lines += ["", "## equal work vs LightGBM (depth-1 trees, num_leaves=2, 1 thread each; medians of "
              f"{args.repeats} interleaved rounds, speed-up = median of the per-round ratios)", "",
              "| task | rounds | rebelboost fit (s) | LightGBM fit (s) | speed-up | rebelboost test err | LightGBM test err |",
              "|---|---|---|---|---|---|---|"]
    for r in lgb_rows:
        lines.append(f"| {r['task']} | {r['rounds']} | {r['rebelboost_fit_s']:.3f} | {r['lightgbm_fit_s']:.3f} | "
                     f"{r['speedup']:.2f}x | {100 * r['rebelboost_test_error']:.2f} % | {100 * r['lightgbm_test_error']:.2f} % |")
    report = "\n".join(lines)
    print(report)
    if args.out:
        os.makedirs(os.path.dirname(args.out) or ".", exist_ok=True)
        with open(args.out, "w") as handle:
            handle.write(report + "\n")
        with open(os.path.splitext(args.out)[0] + ".json", "w") as handle:
            json.dump({"sklearn": rows, "lightgbm": lgb_rows}, handle, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
