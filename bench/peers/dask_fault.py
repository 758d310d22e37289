"""A worker killed (SIGKILL) mid-fit on a 2-worker LocalCluster: seconds from the kill until fit raises, when the
victim is another rank's worker and when it is the all-reduce's own worker (400 000 x 20 rows, depth-6 trees,
a fit far longer than the measurement).

    python bench/peers/dask_fault.py [--out bench/results/dask_fault.md]
"""

from __future__ import annotations

import argparse
import os
import platform
import signal
import subprocess
import sys
import threading
import time

import numpy as np

RESULTS = os.path.join(os.path.dirname(__file__), "..", "results")


def kill_mid_fit(victim_index, X, y):
    """(seconds from the kill until fit raised, the exception) for one victim."""
    import dask.array as da
    import distributed

    from rebelboost.dask import DaskAdaBoostClassifier

    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, dashboard_address=":0") as cluster, \
            distributed.Client(cluster) as client:
        Xd, yd = client.persist([da.from_array(X, chunks=(len(X) // 2, X.shape[1])), da.from_array(y, chunks=len(y) // 2)])
        distributed.wait([Xd, yd])
        outcome = {}

        def fit():
            try:
                DaskAdaBoostClassifier(client=client, n_estimators=100_000, max_depth=6).fit(Xd, yd)
            except Exception as e:  # noqa: BLE001 - the exception is the outcome
                outcome["error"] = e
            outcome["end"] = time.monotonic()

        thread = threading.Thread(target=fit)
        thread.start()
        time.sleep(4.0)  # the ranks are training
        victim = sorted(client.sync(client.scheduler.identity)["workers"])[victim_index]
        pid = client.run(os.getpid, workers=[victim])[victim]
        killed = time.monotonic()
        os.kill(pid, signal.SIGKILL)
        thread.join(120)
        if thread.is_alive():
            return float("inf"), "still running 120 s after the kill"
        return outcome["end"] - killed, f"{type(outcome.get('error')).__name__}: {outcome.get('error')}"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=os.path.join(RESULTS, "dask_fault.md"))
    args = parser.parse_args(argv)
    rng = np.random.default_rng(0)
    X = rng.normal(size=(400_000, 20))
    y = (X[:, 0] > 0).astype(int)
    load_before = os.getloadavg()
    rows = [(name, *kill_mid_fit(index, X, y)) for name, index in
            (("another rank's worker", 1), ("rank 0's worker", 0))]
    import dask

    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                            cwd=os.path.dirname(__file__)).stdout.strip()
    lines = [f"# A worker killed mid-fit ({time.strftime('%Y-%m-%d %H:%M')})", "",
             f"Command: `python bench/peers/dask_fault.py {' '.join(sys.argv[1:])}`", "",
             f"Versions: rebelboost {commit}, dask {dask.__version__}, numpy {np.__version__}, Python "
             f"{platform.python_version()}; {os.cpu_count()} CPUs (shared VM), 2 workers x 1 thread, OpenMP wait policy "
             f"{os.environ.get('OMP_WAIT_POLICY', 'default')}; load before "
             f"{[round(v, 2) for v in load_before]}, after {[round(v, 2) for v in os.getloadavg()]}.", "",
             "| worker killed (SIGKILL, 4 s into the fit) | seconds until fit raised | what fit raised |", "|---|---|---|"]
    lines += [f"| {name} | {seconds:.2f} | {message[:160]} |" for name, seconds, message in rows]
    with open(args.out, "w") as handle:
        handle.write("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
