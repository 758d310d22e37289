"""Distributed training speed, side by side in one run: rebelboost.dask, lightgbm.dask and xgboost.dask on one
LocalCluster (2 worker processes x 1 thread), and the local rebelboost fit with 2 threads.

Tasks: (a) the synthetic binary task of scaling.py, 2 000 000 x 50 float32, depth-3 trees; (b) Fashion-MNIST,
60 000 x 784, 10 classes, depth-2 trees (REBEL: one tree of 10 scores per iteration; LightGBM and XGBoost: a
round of 10 trees). The rows are split in two blocks, one persisted on each worker, before any fit.

Time per iteration: each library fits twice with T1 and twice with T2 iterations; (min fit(T2) - min fit(T1)) /
(T2 - T1) removes the setup (binning, Dataset / DMatrix construction, the bin sample); a 2-iteration fit of every
library first takes the one-time costs. Each library and repeat gets a fresh LocalCluster (peers' threads
left in a worker would slow the next library); the local fit runs with no cluster alive. Libraries are interleaved,
repeated (--repeats) and the medians reported; read speeds as ratios of one run (the machine is shared).
Bytes per iteration: the loopback interface's received bytes during the T2 fit over T2 (every worker,
the scheduler and the client talk over it: it counts what each library moves, its own sockets included);
for rebelboost also the all-reduce's own count (fit_info_["dask"]) and its reductions per iteration.
Default OpenMP settings.

    python bench/peers/dask_speed.py [--tasks synthetic,fmnist] [--repeats 2] [--out bench/results/dask_speed.md]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
from datasets import fashion_mnist  # noqa: E402
from scaling import synthetic  # noqa: E402

RESULTS = os.path.join(os.path.dirname(__file__), "..", "results")


def loopback_bytes():
    with open("/proc/net/dev") as handle:
        for line in handle:
            if line.strip().startswith("lo:"):
                return int(line.split(":")[1].split()[0])
    return 0


def persisted(client, X, y):
    """X and y as dask arrays of two row blocks, block i held by worker i (scattered there once). Checked: the
    scheduler may run the concatenation's task of a block on the other worker and copy it there (seen under
    load: a 2-worker fit then had one rank), so a misplaced layout is made again."""
    from distributed import futures_of, wait

    workers = sorted(client.sync(client.scheduler.identity)["workers"])[:2]
    for _ in range(5):
        Xd, yd = _persist_blocks(client, X, y, workers)
        futures = futures_of(Xd) + futures_of(yd)
        wait(futures)
        holders = client.who_has(futures)
        placed = [(f.key[1], set(holders[f.key])) for f in futures]  # (block, its holders)
        if all(held == {workers[block]} for block, held in placed):
            return Xd, yd
    raise RuntimeError(f"could not place one block on each worker: {placed}")


def _persist_blocks(client, X, y, workers):
    import dask.array as da

    half = (X.shape[0] + 1) // 2
    parts = [(slice(0, half), workers[0]), (slice(half, X.shape[0]), workers[1])]
    Xb, yb = [], []
    for rows, worker in parts:
        fx = client.scatter(X[rows], workers=[worker])
        fy = client.scatter(y[rows], workers=[worker])
        n = rows.stop - rows.start
        Xb.append(da.from_delayed(fx, shape=(n, X.shape[1]), dtype=X.dtype))
        yb.append(da.from_delayed(fy, shape=(n,), dtype=y.dtype))
    return client.persist(da.concatenate(Xb)), client.persist(da.concatenate(yb))


def fit_rebelboost_dask(client, task, n, Xd, yd):
    from rebelboost.dask import DaskAdaBoostClassifier, DaskREBELClassifier

    K, depth = task["K"], task["depth"]
    cls = DaskAdaBoostClassifier if K == 2 else DaskREBELClassifier
    est = cls(client=client, n_estimators=n, max_depth=depth).fit(Xd, yd)
    info = est.fit_info_["dask"]
    return {"reductions": info["reductions"], "allreduce_bytes_in": info["bytes_in"]}


def fit_lightgbm_dask(client, task, n, Xd, yd):
    import lightgbm as lgb

    est = lgb.DaskLGBMClassifier(client=client, n_estimators=n, max_depth=task["depth"], num_leaves=2 ** task["depth"],
                                 n_jobs=1, verbose=-1)
    est.fit(Xd, yd)
    return {}


def fit_xgboost_dask(client, task, n, Xd, yd):
    from xgboost import dask as xgb_dask

    est = xgb_dask.DaskXGBClassifier(n_estimators=n, max_depth=task["depth"], tree_method="hist", n_jobs=1)
    est.client = client
    est.fit(Xd, yd)
    return {}


def fit_rebelboost_local(client, task, n, Xd, yd):
    import rebelboost

    cls = rebelboost.AdaBoostClassifier if task["K"] == 2 else rebelboost.REBELClassifier
    cls(n_estimators=n, max_depth=task["depth"], n_jobs=2).fit(task["X"], task["y"])
    return {}


LIBRARIES = {"rebelboost.dask": fit_rebelboost_dask, "lightgbm.dask": fit_lightgbm_dask,
             "xgboost.dask": fit_xgboost_dask, "rebelboost local (2 threads)": fit_rebelboost_local}


def measure(client, name, task, lib, Xd, yd):
    """Per iteration from the fastest of two fits with T1 and the fastest of two with T2 iterations (a fit's
    set-up varies by seconds from fit to fit for some libraries: one pair alone can even come out negative)."""
    fit = LIBRARIES[lib]
    t1, t2 = task["iters"]
    times = {t1: [], t2: []}
    for n in (t1, t2, t1, t2):
        before = loopback_bytes()
        start = time.perf_counter()
        extra = fit(client, task, n, Xd, yd)
        times[n].append(time.perf_counter() - start)
        moved = loopback_bytes() - before
    short, long = min(times[t1]), min(times[t2])
    out = {"fit_short_s": short, "fit_long_s": long, "per_iter_s": (long - short) / (t2 - t1),
           "loopback_bytes_per_iter": moved / t2}
    for k, v in extra.items():
        out[k + "_per_iter"] = v / t2
    print(name, lib, {k: round(v, 4) for k, v in out.items()}, flush=True)
    return out


def measure_on_fresh_cluster(name, task, lib):
    """A new LocalCluster for every library and repeat (threads a peer leaves behind in its workers cannot
    slow the next one down); the local fit runs with no cluster at all."""
    from distributed import Client, LocalCluster

    if lib.startswith("rebelboost local"):
        LIBRARIES[lib](None, task, 2, None, None)  # warm-up
        return measure(None, name, task, lib, None, None)
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0") as cluster, \
            Client(cluster) as client:
        Xd, yd = persisted(client, task["X"], task["y"])
        LIBRARIES[lib](client, task, 2, Xd, yd)  # warm-up: first-use costs are not timed
        return measure(client, name, task, lib, Xd, yd)


def tasks(names, synthetic_iters, fmnist_iters):
    out = {}
    if "synthetic" in names:
        X, y, _, _ = synthetic()
        out["synthetic 2 M x 50, binary, depth 3"] = {"X": X, "y": y, "K": 2, "depth": 3, "iters": synthetic_iters}
    if "fmnist" in names:
        X, y, _, _ = fashion_mnist()
        out["Fashion-MNIST 60 000 x 784, 10 classes, depth 2"] = {
            "X": X.astype(np.float32), "y": y.astype(np.int32), "K": 10, "depth": 2, "iters": fmnist_iters}
    return out


def versions():
    import dask
    import distributed
    import lightgbm
    import xgboost

    import rebelboost

    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                            cwd=os.path.dirname(__file__)).stdout.strip()
    return {"rebelboost": rebelboost.__version__, "commit": commit, "dask": dask.__version__,
            "distributed": distributed.__version__, "lightgbm": lightgbm.__version__, "xgboost": xgboost.__version__,
            "numpy": np.__version__, "python": platform.python_version()}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", default="synthetic,fmnist")
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--synthetic-iters", default="10,40")
    parser.add_argument("--fmnist-iters", default="5,20")
    parser.add_argument("--libraries", default=",".join(LIBRARIES))
    parser.add_argument("--out", default=os.path.join(RESULTS, "dask_speed.md"))
    args = parser.parse_args(argv)
    load_before = os.getloadavg()
    libraries = args.libraries.split(",")
    iters = {"synthetic": tuple(int(v) for v in args.synthetic_iters.split(",")),
             "fmnist": tuple(int(v) for v in args.fmnist_iters.split(","))}
    results = {}
    for name, task in tasks(args.tasks.split(","), iters["synthetic"], iters["fmnist"]).items():
        runs = {lib: [] for lib in libraries}
        for _ in range(args.repeats):
            for lib in libraries:  # interleaved: a change of machine load hits every library alike
                runs[lib].append(measure_on_fresh_cluster(name, task, lib))
        results[name] = {lib: {**{k: statistics.median(r[k] for r in v) for k in v[0]},
                               "per_iter_runs_s": [r["per_iter_s"] for r in v]} for lib, v in runs.items()}
    write(results, libraries, args, load_before)


def run_meta(script, workers, load_before):
    """What every Dask benchmark result records: versions, commit, machine, workers, OpenMP setting, load."""
    return {"versions": versions(), "cpu": platform.processor() or platform.machine(), "cpus": os.cpu_count(),
            "workers": workers, "omp_wait_policy": os.environ.get("OMP_WAIT_POLICY", "default"),
            "load_before": [round(v, 2) for v in load_before], "load_after": [round(v, 2) for v in os.getloadavg()],
            "date": time.strftime("%Y-%m-%d %H:%M"), "command": f"python bench/peers/{script} " + " ".join(sys.argv[1:])}


def header(title, meta):
    return [f"# {title} ({meta['date']})", "", f"Command: `{meta['command']}`", "",
            f"Versions: {json.dumps(meta['versions'])}", "",
            f"Machine: {meta['cpu']}, {meta['cpus']} logical CPUs, shared; {meta['workers']}; OpenMP wait policy "
            f"{meta['omp_wait_policy']}; load average before {meta['load_before']}, after {meta['load_after']}.", ""]


def publish(lines, meta, results, out):
    """The markdown table and the JSON beside it."""
    with open(out, "w") as handle:
        handle.write("\n".join(lines) + "\n")
    with open(os.path.splitext(out)[0] + ".json", "w") as handle:
        json.dump({"meta": meta, "results": results}, handle, indent=1)
    print("\n".join(lines))


def write(results, libraries, args, load_before):
    meta = run_meta("dask_speed.py", "2 processes x 1 thread (LocalCluster)", load_before)
    lines = header("Distributed training speed", meta) + [
             "Per iteration: (fastest of two fits of T2 - fastest of two fits of T1) / (T2 - T1) iterations, each "
             "library on a fresh 2-worker LocalCluster (the local fit with none), median of the repeats (each "
             "repeat in the last column). Ratio: the library's time over rebelboost.dask's (above 1: "
             "rebelboost.dask is faster). Bytes: loopback bytes received during the last T2 fit, per iteration "
             "(the workers, the scheduler and the client all talk over it).", ""]
    for name, res in results.items():
        ours = res.get("rebelboost.dask")
        lines += [f"## {name}", "", "| library | per iteration (ms) | ratio to rebelboost.dask | loopback MB per iteration "
                  "| fit of T2 (s) | each repeat (ms) |", "|---|---|---|---|---|---|"]
        for lib in libraries:
            r = res[lib]
            ratio = f"{r['per_iter_s'] / ours['per_iter_s']:.2f}" if ours else ""
            runs = ", ".join(f"{1e3 * v:.1f}" for v in r["per_iter_runs_s"])
            lines.append(f"| {lib} | {1e3 * r['per_iter_s']:.1f} | {ratio} | {r['loopback_bytes_per_iter'] / 1e6:.2f} | "
                         f"{r['fit_long_s']:.2f} | {runs} |")
        if ours and "reductions_per_iter" in ours:
            lines += ["", f"rebelboost.dask: {ours['reductions_per_iter']:.1f} reductions per iteration, the all-reduce "
                      f"received {ours['allreduce_bytes_in_per_iter'] / 1e6:.3f} MB per iteration (both ranks)."]
        lines.append("")
    publish(lines, meta, results, args.out)


if __name__ == "__main__":
    main()
