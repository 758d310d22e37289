"""Time per iteration of REBEL with Localized Similarities with the distance-column cache off
(similarity_cache_mb=0) and on (the default, 1024 MiB), side by side in one run, and the proof that both
give the same model (bytes of the core model compared).

Cases: the 5 000 training rows of split 0 of similarity_benchmark.py's Fashion-MNIST 10 000-row subset
(d = 784, K = 10, per-feature scaling as that split picked), scikit-learn's digits (1 797 x 64, K = 10)
and similarity_speed.py's target (make_classification 10 000 x 16, 26 classes, 200 iterations). 2 threads.
Each pair runs off then on; the load average is recorded before each fit. Writes
bench/results/similarity_cache_speed.{md,json}.

    OMP_WAIT_POLICY=passive python bench/peers/similarity_cache_speed.py
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

import numpy as np
from sklearn.datasets import load_digits

from rebelboost import REBELClassifier

sys.path.insert(0, os.path.dirname(__file__))
import similarity_benchmark  # noqa: E402
import similarity_speed  # noqa: E402

RESULTS = os.path.join(os.path.dirname(__file__), "..", "results")


def cases(fmnist_iterations):
    Xtr, ytr, *_ = similarity_benchmark.split(*similarity_benchmark.load("fmnist10k"), 0)
    yield "fmnist10k split 0 train", Xtr, ytr, fmnist_iterations, "feature"
    yield "digits", *load_digits(return_X_y=True), 300, "feature"
    yield "make_classification 26 classes", *similarity_speed.data(10_000, 16, 26), 200, "feature"


def fit(X, y, T, scaling, cache_mb):
    load = os.getloadavg()[0]
    wall, cpu = time.perf_counter(), time.process_time()
    clf = REBELClassifier(weak_learner="similarity", n_estimators=T, n_jobs=2, similarity_scaling=scaling,
                          similarity_cache_mb=cache_mb).fit(X, y)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    candidates = clf.fit_info_["candidates"]
    return clf, {"cache_mb": cache_mb, "load_1min": load, "wall_s": wall, "cpu_s": cpu, "T": int(clf.n_estimators_),
                 "ms_per_iteration": 1e3 * wall / clf.n_estimators_,
                 "selection_s": float(clf.fit_info_.get("stage_seconds", {}).get("selection", float("nan"))),
                 "candidates_per_iteration": float(candidates.mean()),
                 "us_per_candidate": 1e6 * wall / max(1, candidates.sum())}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fmnist-iterations", type=int, default=250)
    parser.add_argument("--out", default=os.path.join(RESULTS, "similarity_cache_speed"))
    args = parser.parse_args()
    rows = []
    for name, X, y, T, scaling in cases(args.fmnist_iterations):
        off_model, off = fit(X, y, T, scaling, 0)
        on_model, on = fit(X, y, T, scaling, 1024)
        same = off_model._model.to_bytes() == on_model._model.to_bytes()
        rows.append({"case": name, "N": len(y), "d": X.shape[1], "K": len(np.unique(y)), "off": off, "on": on,
                     "same_model": same, "speedup": off["wall_s"] / on["wall_s"]})
        print(rows[-1], flush=True)
    with open(args.out + ".json", "w") as handle:
        json.dump(rows, handle, indent=1)
    head = ["| case (N, d, K) | iterations | cache | load (1 min) | wall s | CPU s | ms / iteration | selection s |"
            " candidates / iteration | us / candidate | same model |", "|---" * 11 + "|"]
    row = ("| {case} ({N}, {d}, {K}) | {T} | {label} | {load_1min:.1f} | {wall_s:.1f} | {cpu_s:.1f} | "
           "{ms_per_iteration:.1f} | {selection_s:.1f} | {candidates_per_iteration:.0f} | {us_per_candidate:.0f} | {same} |")
    lines = ["# Localized Similarities: the distance-column cache, off vs on", "",
             "`OMP_WAIT_POLICY=passive python bench/peers/similarity_cache_speed.py` "
             "(2 threads, 2-core shared VM: wall time includes waiting for the CPU; off = similarity_cache_mb=0, "
             "on = the default 1024 MiB; each pair run back to back, off first).", ""] + head
    for r in rows:
        for key, label in (("off", "off"), ("on", "on")):
            lines.append(row.format(case=r["case"], N=r["N"], d=r["d"], K=r["K"], label=label,
                                    same="yes" if r["same_model"] else "NO", **r[key]))
    lines += ["", "Speed-up (wall time off / on): " + "; ".join(f"{r['case']} {r['speedup']:.2f}x" for r in rows) + "."]
    with open(args.out + ".md", "w") as handle:
        handle.write("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
