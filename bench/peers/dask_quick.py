"""QuickBoost across workers: what the distributed pruned pass saves, in time, histogram adds and bytes.

rebelboost.dask on one LocalCluster (2 worker processes x 1 thread), each of quick=False (every layer: the
reduced full scan, one reduction), quick=True (every layer: the pruned pass, three smaller reductions) and
quick="auto" (the default: the choice per layer from reduced timings), and the local fit with 2 threads in the
same three modes for reference. Every mode grows the same model (checked: the model files are compared).

Tasks: Fashion-MNIST Trouser vs rest (60 000 x 784, binary, depth 2), where the local pruned pass pays
(bench/results/quickboost_panel.md), and the synthetic 2 000 000 x 50 binary task of dask_speed.py (depth 3),
where it does not.

Per tree: (fit of T2 trees - fit of T1 trees) / (T2 - T1), the fastest of --repeats interleaved rounds.
Adds: histogram adds per tree of one rank (fit_info_["bin_accumulations"], the rank of the first block);
bytes: the all-reduce's received bytes per tree (both ranks, fit_info_["dask"]["bytes_in"]). Default OpenMP
settings.

    python bench/peers/dask_quick.py [--tasks trouser,synthetic] [--repeats 2] [--trouser-iters 20,300]
        [--synthetic-iters 10,40] [--out bench/results/dask_quick.md]
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
from dask_speed import header, persisted, publish, run_meta  # noqa: E402
from datasets import fashion_mnist  # noqa: E402
from scaling import synthetic  # noqa: E402

RESULTS = os.path.join(os.path.dirname(__file__), "..", "results")
MODES = {"off": False, "on": True, "auto": "auto"}
ITERS = {}


def tasks(names):
    out = {}
    if "trouser" in names:
        X, y, _, _ = fashion_mnist()
        out["F-MNIST Trouser vs rest, depth 2"] = {"X": X.astype(np.float32), "y": (y == 1).astype(np.int32),
                                                  "depth": 2, "iters": ITERS["trouser"]}
    if "synthetic" in names:
        X, y, _, _ = synthetic()
        out["synthetic 2 M x 50, depth 3"] = {"X": X, "y": y, "depth": 3, "iters": ITERS["synthetic"]}
    return out


def fit(task, n, quick, client=None, Xd=None, yd=None):
    import rebelboost
    from rebelboost.dask import DaskAdaBoostClassifier

    params = dict(n_estimators=n, max_depth=task["depth"], quick=quick)
    start = time.perf_counter()
    if client is None:
        est = rebelboost.AdaBoostClassifier(n_jobs=2, **params).fit(task["X"], task["y"])
    else:
        est = DaskAdaBoostClassifier(client=client, **params).fit(Xd, yd)
    return time.perf_counter() - start, est


def model_bytes(est):
    """The trees and steps (the estimator's file also holds its parameters, quick among them)."""
    return (est.to_local() if hasattr(est, "to_local") else est)._model.to_bytes()


def summary(est, n):
    info = est.fit_info_
    out = {"adds_per_tree": float(np.sum(info["bin_accumulations"])) / n,
           "quick_nodes_per_tree": float(np.sum(info["quick_nodes"])) / n,
           "features_pruned_per_quick_node": float(np.sum(info["features_pruned"])) / max(1, np.sum(info["quick_nodes"]))}
    if "dask" in info:
        out["bytes_in_per_tree"] = info["dask"]["bytes_in"] / n
        out["reductions_per_tree"] = info["dask"]["reductions"] / n
        out["rows_per_worker"] = info["dask"]["rows_per_worker"]
    return out


def run_task(name, task, repeats):
    from distributed import Client, LocalCluster

    t1, t2 = task["iters"]
    times = {(where, mode, n): [] for where in ("dask", "local") for mode in MODES for n in (t1, t2)}
    last = {}
    models = set()
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0") as cluster, \
            Client(cluster) as client:
        Xd, yd = persisted(client, task["X"], task["y"])
        fit(task, 2, False, client, Xd, yd)  # warm-up
        for _ in range(repeats):
            for where in ("dask", "local"):
                for mode, quick in MODES.items():  # interleaved: load changes hit every mode alike
                    for n in (t1, t2):
                        seconds, est = fit(task, n, quick, *((client, Xd, yd) if where == "dask" else ()))
                        times[(where, mode, n)].append(seconds)
                        if n == t2:
                            last[(where, mode)] = summary(est, n)
                            models.add(model_bytes(est))
                        print(name, where, mode, n, round(seconds, 3), flush=True)
    rows = {}
    for where in ("dask", "local"):
        for mode in MODES:
            per_tree = (min(times[(where, mode, t2)]) - min(times[(where, mode, t1)])) / (t2 - t1)
            rows[f"{where} quick={mode}"] = {"per_tree_s": per_tree, **last[(where, mode)]}
    return {"rows": rows, "identical_models": len(models) == 1, "iters": [t1, t2]}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", default="trouser,synthetic")
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--trouser-iters", default="20,300")
    parser.add_argument("--synthetic-iters", default="10,40")
    parser.add_argument("--out", default=os.path.join(RESULTS, "dask_quick.md"))
    args = parser.parse_args(argv)
    ITERS.update(trouser=tuple(int(v) for v in args.trouser_iters.split(",")),
                 synthetic=tuple(int(v) for v in args.synthetic_iters.split(",")))
    load_before = os.getloadavg()
    results = {name: run_task(name, task, args.repeats) for name, task in tasks(args.tasks.split(",")).items()}
    meta = run_meta("dask_quick.py", "2 processes x 1 thread (LocalCluster); local fits: 2 threads", load_before)
    lines = header("QuickBoost across workers", meta) + [
             "Per tree: (fastest fit of T2 - fastest fit of T1) / (T2 - T1). Speed-up: the same place's quick=off time "
             "over this row's. Adds: histogram adds per tree (one rank for Dask). Bytes: all-reduce bytes received per "
             "tree, both ranks.", ""]
    for name, res in results.items():
        lines += [f"## {name} (T1, T2 = {res['iters']}; every mode the same model: {res['identical_models']})", "",
                  "| run | per tree (ms) | speed-up over quick=off | adds per tree (M) | pruned nodes per tree "
                  "| features pruned per pruned node | reductions per tree | all-reduce MB per tree |",
                  "|---|---|---|---|---|---|---|---|"]
        for run, r in res["rows"].items():
            base = res["rows"][run.split()[0] + " quick=off"]["per_tree_s"]
            lines.append(f"| {run} | {1e3 * r['per_tree_s']:.1f} | {base / r['per_tree_s']:.2f}x | "
                         f"{r['adds_per_tree'] / 1e6:.1f} | {r['quick_nodes_per_tree']:.2f} | "
                         f"{r['features_pruned_per_quick_node']:.0f} | {r.get('reductions_per_tree', float('nan')):.1f} | "
                         f"{r.get('bytes_in_per_tree', float('nan')) / 1e6:.3f} |")
        lines.append("")
    publish(lines, meta, results, args.out)


if __name__ == "__main__":
    main()
