"""The data never comes home: fit 20 M x 50 float32 rows generated on the workers (dask.array.random) on a
2-worker LocalCluster whose workers each have less memory than a local fit of the same data needs.

Steps, each measured:
1. A local fit of the same data in a child process: its peak RSS (the memory one machine needs).
   --skip-local uses the value measured before.
2. A 2-worker LocalCluster (processes, 1 thread each) with memory_limit per worker below that peak. Spilling
   and pausing are off (a worker must hold its rows, as the fit reads them every layer). The nanny still
   kills a worker that passes 95 % of its limit.
3. X generated on the workers in two blocks, block i by a task pinned to worker i
   (`numpy.random.default_rng([0, i]).random(dtype=float32)`: dask.array.random gave no say in where its
   blocks are made, and two 2 GiB blocks on one worker pass its limit), labels from X on the same worker. Then a DaskAdaBoostClassifier fit (depth 3).
4. The peak RSS of the client process (which also hosts the scheduler in a LocalCluster) and of each
   worker process.

    python bench/peers/dask_memory.py [--rows 20000000] [--limit 4GiB] [--out bench/results/dask_memory.md]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import subprocess
import sys
import time

import numpy as np

RESULTS = os.path.join(os.path.dirname(__file__), "..", "results")
GIB = 1 << 30


def local_peak(rows, features, trees, depth):
    """Peak RSS (bytes) of a process that makes the same data in numpy and fits it locally."""
    code = f"""
import resource, numpy as np, rebelboost
rng = np.random.default_rng(0)
X = rng.random(({rows}, {features}), dtype=np.float32)
y = (X[:, 0] + X[:, 1] > 1).astype(np.int32)
rebelboost.AdaBoostClassifier(n_estimators={trees}, max_depth={depth}, n_jobs=2).fit(X, y)
print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024)
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return int(out.stdout.strip().splitlines()[-1])


def worker_peak():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def make_block(i, n, features):
    """Block i of X, made on the worker that runs it (numpy's Generator writes float32 directly: the block
    never exists in float64)."""
    return np.random.default_rng([0, i]).random((n, features), dtype=np.float32)


def labels(block):
    return (block[:, 0] + block[:, 1] > 1).astype(np.int32)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=20_000_000)
    parser.add_argument("--features", type=int, default=50)
    parser.add_argument("--trees", type=int, default=10)
    parser.add_argument("--depth", type=int, default=3)
    parser.add_argument("--limit", default="4GiB", help="memory_limit of each worker")
    parser.add_argument("--skip-local", type=float, default=None, metavar="GIB",
                        help="the local fit's peak RSS measured before, in GiB")
    parser.add_argument("--out", default=os.path.join(RESULTS, "dask_memory.md"))
    args = parser.parse_args(argv)
    import dask
    import dask.array as da
    import distributed
    from distributed import Client, LocalCluster, futures_of

    import rebelboost
    from rebelboost.dask import DaskAdaBoostClassifier

    load_before = os.getloadavg()
    start = time.perf_counter()
    local = args.skip_local * GIB if args.skip_local else local_peak(args.rows, args.features, args.trees, args.depth)
    local_s = time.perf_counter() - start
    print(f"local fit peak RSS {local / GIB:.2f} GiB ({local_s:.0f} s)", flush=True)
    config = {"distributed.worker.memory.target": False, "distributed.worker.memory.spill": False,
              "distributed.worker.memory.pause": False, "distributed.worker.memory.terminate": 0.95}
    with dask.config.set(config), LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                               memory_limit=args.limit, dashboard_address=":0") as cluster, \
            Client(cluster) as client:
        limit = next(iter(client.sync(client.scheduler.identity)["workers"].values()))["memory_limit"]
        sizes = (args.rows // 2, args.rows - args.rows // 2)
        workers = sorted(client.sync(client.scheduler.identity)["workers"])
        start = time.perf_counter()
        Xb, yb = [], []
        for i, (n, worker) in enumerate(zip(sizes, workers)):  # block i is made on worker i and stays there
            fx = client.submit(make_block, i, n, args.features, workers=[worker], pure=False)
            fy = client.submit(labels, fx, workers=[worker], pure=False)
            Xb.append(da.from_delayed(fx, shape=(n, args.features), dtype=np.float32))
            yb.append(da.from_delayed(fy, shape=(n,), dtype=np.int32))
        X, y = da.concatenate(Xb), da.concatenate(yb)
        distributed.wait(futures_of([X, y]))
        made_s = time.perf_counter() - start
        start = time.perf_counter()
        est = DaskAdaBoostClassifier(client=client, n_estimators=args.trees, max_depth=args.depth).fit(X, y)
        fit_s = time.perf_counter() - start
        workers = client.run(worker_peak)
        info = est.fit_info_["dask"]
        client_peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
        accuracy = float(est.to_local().score(X[:200_000].compute(), y[:200_000].compute()))
    result = {
        "rows": args.rows, "features": args.features, "trees": est.n_estimators_, "depth": args.depth,
        "data_gib": args.rows * args.features * 4 / GIB, "local_peak_gib": local / GIB,
        "worker_limit_gib": limit / GIB, "client_peak_gib": client_peak / GIB,
        "worker_peak_gib": {addr: v / GIB for addr, v in sorted(workers.items())},
        "rows_per_worker": info["rows_per_worker"], "generate_s": made_s, "fit_s": fit_s,
        "reductions": info["reductions"], "allreduce_bytes_in": info["bytes_in"], "train_accuracy_200k": accuracy,
        "meta": {"rebelboost": rebelboost.__version__, "dask": dask.__version__, "distributed": distributed.__version__,
                 "numpy": np.__version__, "python": platform.python_version(),
                 "commit": subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                                          cwd=os.path.dirname(__file__)).stdout.strip(),
                 "cpus": os.cpu_count(), "threads": "2 workers x 1 thread",
                 "omp_wait_policy": os.environ.get("OMP_WAIT_POLICY", "default"),
                 "load_before": [round(v, 2) for v in load_before], "load_after": [round(v, 2) for v in os.getloadavg()],
                 "date": time.strftime("%Y-%m-%d %H:%M"),
                 "command": "python bench/peers/dask_memory.py " + " ".join(sys.argv[1:])},
    }
    write(result, args.out)


def write(r, out):
    m = r["meta"]
    lines = [f"# The data never comes home ({m['date']})", "", f"Command: `{m['command']}`", "",
             f"Versions: rebelboost {m['rebelboost']} ({m['commit']}), dask {m['dask']}, distributed {m['distributed']}, "
             f"numpy {m['numpy']}, Python {m['python']}; {m['cpus']} CPUs (shared VM), {m['threads']}, OpenMP wait "
             f"policy {m['omp_wait_policy']}; load before {m['load_before']}, after {m['load_after']}.", "",
             f"Data: {r['rows']:,} x {r['features']} float32 ({r['data_gib']:.2f} GiB), generated on the workers in two "
             f"blocks; {r['trees']} AdaBoost trees of depth {r['depth']}.", "",
             "| what | GiB |", "|---|---|",
             f"| a local fit of the same data (peak RSS of its process) | {r['local_peak_gib']:.2f} |",
             f"| memory_limit of each worker | {r['worker_limit_gib']:.2f} |"]
    for i, (addr, v) in enumerate(r["worker_peak_gib"].items()):
        lines.append(f"| worker {i} peak RSS ({r['rows_per_worker'][i]:,} rows) | {v:.2f} |")
    lines += [f"| client peak RSS (the client and the LocalCluster's scheduler) | {r['client_peak_gib']:.2f} |", "",
              f"Generating the data took {r['generate_s']:.1f} s, the fit {r['fit_s']:.1f} s ({r['reductions']} "
              f"reductions, {r['allreduce_bytes_in'] / 1e6:.1f} MB received by the all-reduce); training accuracy on "
              f"the first 200 000 rows {r['train_accuracy_200k']:.4f}.", ""]
    with open(out, "w") as handle:
        handle.write("\n".join(lines) + "\n")
    with open(os.path.splitext(out)[0] + ".json", "w") as handle:
        json.dump(r, handle, indent=1)
    print("\n".join(lines))


if __name__ == "__main__":
    main()
