"""Training speed against thread count: rebelboost, LightGBM and XGBoost side by side.

Tasks: (a) a synthetic binary task, 2 000 000 x 50 float32 (numpy generator, seed 0; 200 000 more rows
for the test error), depth-3 trees; (b) Fashion-MNIST, 10 classes, depth-2 trees (REBEL: one tree of 10
scores per iteration; LightGBM and XGBoost: one round of 10 trees). Threads 1, 2, 4, ... up to the cores
present. Per library and thread count: setup (time before the first tree: binning / Dataset / DMatrix),
time per tree (median of the per-iteration callback intervals), whole fit, test error. Libraries and
thread counts are interleaved and repeated (--repeats), medians reported; speeds are to be read as ratios
of the same run (the machine may be shared). Default OpenMP settings (no OMP_WAIT_POLICY).

    python bench/peers/scaling.py [--repeats 3] [--tasks synthetic,fmnist] [--out bench/results/scaling.md]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))  # bench/harness.py
from datasets import fashion_mnist  # noqa: E402
from harness import command_line  # noqa: E402

from rebelboost import _core  # noqa: E402

RESULTS = os.path.join(os.path.dirname(__file__), "..", "results")


def synthetic(n_train=2_000_000, n_test=200_000, d=50, seed=0):
    """Binary labels from a noisy sum of a linear part, an interaction and a sine: not separable by stumps."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n_train + n_test, d), dtype=np.float32)
    s = X[:, 0] + 0.8 * X[:, 1] * X[:, 2] + 0.5 * np.sin(2 * X[:, 3]) + 0.3 * X[:, 4:10].sum(1)
    y = (s + rng.standard_normal(n_train + n_test).astype(np.float32) > 0).astype(np.int32)
    return X[:n_train], y[:n_train], X[n_train:], y[n_train:]


def thread_counts():
    cores = os.cpu_count() or 1
    counts, t = [], 1
    while t < cores:
        counts.append(t)
        t *= 2
    return counts + [cores]


def per_tree(stamps):
    return statistics.median(np.diff(stamps)) if len(stamps) > 1 else float("nan")


def run_rebelboost(task, threads):
    X, y, X_test, y_test, K, depth, trees = task
    stamps = []
    start = time.perf_counter()
    model = _core.train(X, y, None, K, "adaboost" if K == 2 else "rebel", trees, depth, 256, 1.0, threads,
                        callback=lambda info: stamps.append(time.perf_counter()) or True)[0]
    fit = time.perf_counter() - start
    tree = per_tree(stamps)
    pred = np.asarray(model.predict(X_test, threads))  # class indices
    return {"setup_s": stamps[0] - start - tree, "tree_s": tree, "fit_s": fit, "test_error": float(np.mean(pred != y_test))}


def run_lightgbm(task, threads):
    import lightgbm as lgb

    X, y, X_test, y_test, K, depth, rounds = task
    params = {"objective": "binary" if K == 2 else "multiclass", "num_class": 1 if K == 2 else K, "max_depth": depth,
              "num_leaves": 2 ** depth, "num_threads": threads, "verbose": -1}
    stamps = []
    start = time.perf_counter()
    data = lgb.Dataset(X, y, params={"verbose": -1, "num_threads": threads}).construct()
    setup = time.perf_counter() - start
    booster = lgb.train(params, data, num_boost_round=rounds, callbacks=[lambda env: stamps.append(time.perf_counter())])
    fit = time.perf_counter() - start
    p = booster.predict(X_test, num_threads=threads)
    pred = (p > 0.5).astype(int) if K == 2 else np.argmax(p, axis=1)
    return {"setup_s": setup, "tree_s": per_tree(stamps), "fit_s": fit, "test_error": float(np.mean(pred != y_test))}


def run_xgboost(task, threads):
    import xgboost as xgb

    X, y, X_test, y_test, K, depth, rounds = task
    params = {"objective": "binary:logistic" if K == 2 else "multi:softprob", "tree_method": "hist", "max_depth": depth,
              "nthread": threads}
    if K > 2:
        params["num_class"] = K
    stamps = []

    class Stamp(xgb.callback.TrainingCallback):
        def after_iteration(self, model, epoch, evals_log):
            stamps.append(time.perf_counter())
            return False

    start = time.perf_counter()
    data = xgb.QuantileDMatrix(X, y, nthread=threads)
    setup = time.perf_counter() - start
    booster = xgb.train(params, data, num_boost_round=rounds, callbacks=[Stamp()])
    fit = time.perf_counter() - start
    p = booster.predict(xgb.DMatrix(X_test, nthread=threads))
    pred = (p > 0.5).astype(int) if K == 2 else np.argmax(p, axis=1)
    return {"setup_s": setup, "tree_s": per_tree(stamps), "fit_s": fit, "test_error": float(np.mean(pred != y_test))}


LIBRARIES = {"rebelboost": run_rebelboost, "LightGBM": run_lightgbm, "XGBoost": run_xgboost}


def tasks(names, trees_synthetic, iters_fmnist):
    out = {}
    if "synthetic" in names:
        X, y, Xt, yt = synthetic()
        out["synthetic 2 M x 50, binary, depth 3"] = (X, y, Xt, yt, 2, 3, trees_synthetic)
    if "fmnist" in names:
        X, y, Xt, yt = fashion_mnist()
        out["Fashion-MNIST 60 000 x 784, 10 classes, depth 2"] = (X.astype(np.float32), y.astype(np.int32),
                                                                  Xt.astype(np.float32), yt, 10, 2, iters_fmnist)
    return out


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--tasks", default="synthetic,fmnist")
    parser.add_argument("--threads", default=None, help="comma-separated thread counts (default 1, 2, 4, ... cores)")
    parser.add_argument("--trees", type=int, default=50, help="trees of the synthetic task")
    parser.add_argument("--iters", type=int, default=60, help="iterations of the Fashion-MNIST task")
    parser.add_argument("--libraries", default=",".join(LIBRARIES))
    parser.add_argument("--out", default=os.path.join(RESULTS, "scaling.md"))
    args = parser.parse_args(argv)
    args.load_before = f"{os.getloadavg()[0]:.2f}"
    counts = [int(t) for t in args.threads.split(",")] if args.threads else thread_counts()
    libraries = args.libraries.split(",")
    results = {}
    for name, task in tasks(args.tasks.split(","), args.trees, args.iters).items():
        runs = {(lib, t): [] for lib in libraries for t in counts}
        for r in range(args.repeats):
            for t in counts:
                for lib in libraries:  # interleaved: a change of machine load hits every library alike
                    runs[(lib, t)].append(LIBRARIES[lib](task, t))
                    print(name, lib, t, "threads:", {k: round(v, 4) for k, v in runs[(lib, t)][-1].items()}, flush=True)
        results[name] = {f"{lib}|{t}": {k: statistics.median(x[k] for x in v) for k in v[0]} for (lib, t), v in runs.items()}
    write(results, counts, libraries, args)


def write(results, counts, libraries, args):
    cores = os.cpu_count()
    lines = [f"# Training speed against threads ({time.strftime('%Y-%m-%d')})", "",
             f"Command: `{command_line()}`", "",
             f"Load average before / after (uptime): {args.load_before} / {os.getloadavg()[0]:.2f}", "",
             f"Machine: {platform.processor() or platform.machine()}, {cores} logical CPUs (a shared VM: other jobs may "
             "run; libraries are interleaved, medians of the repeats). Default OpenMP settings. Setup: time before the "
             "first tree (binning / Dataset / QuantileDMatrix). Per tree: median per-iteration interval (REBEL on "
             "Fashion-MNIST: one 10-score tree; LightGBM/XGBoost: one round of 10 trees). Ratios are LightGBM's (or "
             "XGBoost's) time over rebelboost's: above 1, rebelboost is faster.", ""]
    for name, res in results.items():
        lines += [f"## {name}", "", "| threads | library | setup (s) | per tree (ms) | whole fit (s) | test error | "
                  "per-tree ratio | fit ratio |", "|---|---|---|---|---|---|---|---|"]
        for t in counts:
            rb = res.get(f"rebelboost|{t}")
            for lib in libraries:
                r = res[f"{lib}|{t}"]
                ratio = (f"{r['tree_s'] / rb['tree_s']:.2f}", f"{r['fit_s'] / rb['fit_s']:.2f}") if rb and lib != "rebelboost" else ("", "")
                lines.append(f"| {t} | {lib} | {r['setup_s']:.2f} | {1e3 * r['tree_s']:.1f} | {r['fit_s']:.2f} | "
                             f"{100 * r['test_error']:.2f} % | {ratio[0]} | {ratio[1]} |")
        lines += ["", "Speed-up from 1 thread (per tree):", ""]
        for lib in libraries:
            base = res[f"{lib}|{counts[0]}"]["tree_s"]
            lines.append(f"- {lib}: " + ", ".join(f"{t} threads {base / res[f'{lib}|{t}']['tree_s']:.2f}x" for t in counts))
        lines.append("")
    with open(args.out, "w") as handle:
        handle.write("\n".join(lines) + "\n")
    with open(os.path.splitext(args.out)[0] + ".json", "w") as handle:
        json.dump({"threads": counts, "results": results}, handle, indent=1)
    print("\n".join(lines))


if __name__ == "__main__":
    main()
