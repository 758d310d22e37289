"""Should the hybrid default stop on the validation log loss where its carve is large? Issue 22 point 2.

Hybrids stop on the validation error (HYBRID_SCORING): on a few hundred rows their validation *loss* grew
without bound once the trees separated the training rows (docs/guide/similarity.md "Defaults"). On
Fashion-MNIST 10k the error of a 1 250-row carve is flat within a row or two from a few hundred learners on,
so the default stops at about 1 100 learners where its own validated long run picks stages of 3 500 to
9 900 (bench/results/default_patience.md). The log loss moves with every learner. Per set and split of
bench/hybrid.py (50/25/25), the hybrid default (its refit included) is fitted on the training half with each
scoring; reported: the validation quarter's error (what a rule may be chosen on: no fit saw that quarter),
the test error, the carve's stage T, the learners of the refit and the seconds.

    OMP_WAIT_POLICY=passive python bench/experiments/hybrid_default_scoring.py [--datasets ...]

Writes bench/results/hybrid_default_scoring.{md,json} (per split rows in the JSON).
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "peers"))
import harness  # noqa: E402
import hybrid  # noqa: E402  (the protocol's data sets, split and N_JOBS)
from default_refit import errors  # noqa: E402

from rebelboost import REBELClassifier  # noqa: E402

SCORINGS = ("error", "log_loss")


def fit_one(name, seed, scoring, d):
    start = time.perf_counter()
    clf = REBELClassifier(weak_learner="hybrid", scoring=scoring, n_jobs=hybrid.N_JOBS).fit(d[0], d[1])
    refit = clf.fit_info_["refit"]
    row = {"set": name, "split": seed, "scoring": scoring, "T": int(clf.best_iteration_),
           "learners": int(clf.n_estimators_), "refit": refit is not None, "seconds": round(time.perf_counter() - start, 2)}
    row["val %"], row["test %"] = errors(clf, d)
    return row


def summary(per_split, name, scoring):
    mine = [r for r in per_split if r["set"] == name and r["scoring"] == scoring]
    mean = lambda key: round(float(np.mean([r[key] for r in mine])), 2)  # noqa: E731
    return {"set": name, "scoring": scoring, "splits": len(mine), "val %": mean("val %"), "test %": mean("test %"),
            "T": int(mean("T")), "learners": int(mean("learners")), "s (all fits)": round(sum(r["seconds"] for r in mine), 1)}


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--datasets", nargs="+", default=hybrid.ALL_SETS)
    parser.add_argument("--splits", type=int, default=5)
    parser.add_argument("--name", default="hybrid_default_scoring")
    args = parser.parse_args()
    per_split, rows = [], []
    for name in args.datasets:
        X, y = hybrid.load(name)
        for seed in range(args.splits):
            d = hybrid.split(X, y, seed)
            for scoring in SCORINGS:
                per_split.append(fit_one(name, seed, scoring, d))
                print(per_split[-1], flush=True)
        rows += [summary(per_split, name, scoring) for scoring in SCORINGS]
        lines = [f"The hybrid default (refit included) stopping on each validation metric, mean over {args.splits} splits "
                 "of bench/hybrid.py (validation quarter: unseen by every fit):", ""]
        lines += harness.markdown_table(rows)
        harness.record(args.name, {"per_split": per_split, "summary": rows}, lines, threads=hybrid.N_JOBS)
    print("\n".join(lines))


if __name__ == "__main__":
    main()
