"""Training speed of REBEL with Localized Similarities: the issue's target (10 000 rows x 16 features, 26
classes, 200 iterations in at most 60 s with 2 threads) and the time per iteration against N and d.

The data is scikit-learn's make_classification stand-in (n_informative = d / 2 + 2 or d, one cluster per
class). Each cell is one fit; wall time and this process's CPU time are reported (the VM is shared, so wall
time includes waiting for the CPU), with the two-point candidates an iteration visits. Writes
bench/results/similarity_speed.{md,json}.

    OMP_WAIT_POLICY=passive python bench/peers/similarity_speed.py
"""

from __future__ import annotations

import argparse
import json
import os
import time

import numpy as np
from sklearn.datasets import make_classification

from rebelboost import REBELClassifier

RESULTS = os.path.join(os.path.dirname(__file__), "..", "results")


def data(n, d, K, seed=0):
    informative = min(d, max(2, d // 2 + 2))
    return make_classification(n_samples=n, n_features=d, n_informative=informative, n_redundant=0,
                               n_classes=K, n_clusters_per_class=1, random_state=seed)


def fit(n, d, K, T, n_jobs):
    X, y = data(n, d, K)
    load = os.getloadavg()[0]  # other users of the shared VM: wall time waits for them
    wall, cpu = time.perf_counter(), time.process_time()
    clf = REBELClassifier(weak_learner="similarity", n_estimators=T, n_jobs=n_jobs).fit(X, y)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    candidates = clf.fit_info_["candidates"]
    return {"n": n, "d": d, "K": K, "T": int(clf.n_estimators_), "n_jobs": n_jobs, "load_1min": load,
            "wall_s": wall, "cpu_s": cpu,
            "ms_per_iteration": 1e3 * wall / clf.n_estimators_, "candidates_per_iteration": float(candidates.mean()),
            "us_per_candidate": 1e6 * wall / max(1, candidates.sum()),
            "train_error": float(np.mean(clf.predict(X) != y))}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iterations", type=int, default=20, help="iterations per cell of the N and d sweeps")
    parser.add_argument("--out", default=os.path.join(RESULTS, "similarity_speed"))
    args = parser.parse_args()
    target = fit(10_000, 16, 26, 200, 2)
    one_thread = fit(10_000, 16, 26, 200, 1)
    by_n = [fit(n, 16, 26, args.iterations, 2) for n in (1_250, 2_500, 5_000, 10_000, 20_000)]
    by_d = [fit(5_000, d, 26, args.iterations, 2) for d in (8, 16, 64, 256)]
    with open(args.out + ".json", "w") as handle:
        json.dump({"target": target, "one_thread": one_thread, "by_n": by_n, "by_d": by_d}, handle, indent=1)
    row = ("| {n} | {d} | {K} | {T} | {n_jobs} | {load_1min:.1f} | {wall_s:.1f} | {cpu_s:.1f} | "
           "{ms_per_iteration:.1f} | {candidates_per_iteration:.0f} | {us_per_candidate:.0f} |")
    head = ["| N | d | K | iterations | threads | load (uptime, 1 min) | wall s | CPU s | ms / iteration |"
            " candidates / iteration | us / candidate |", "|---|---|---|---|---|---|---|---|---|---|---|"]
    lines = ["# Localized Similarities: training speed", "",
             "`OMP_WAIT_POLICY=passive python bench/peers/similarity_speed.py` "
             "(make_classification, one cluster per class; 2-core shared VM: wall time includes waiting for the CPU).",
             "", f"Target: 10 000 x 16, 26 classes, 200 iterations, 2 threads: **{target['wall_s']:.1f} s** "
             f"(limit 60 s); the same on 1 thread: {one_thread['wall_s']:.1f} s.", ""] + head
    lines += [row.format(**target), row.format(**one_thread), "", "Time per iteration against N (d = 16):", ""] + head
    lines += [row.format(**r) for r in by_n] + ["", "Time per iteration against d (N = 5 000):", ""] + head
    lines += [row.format(**r) for r in by_d]
    with open(args.out + ".md", "w") as handle:
        handle.write("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
