"""The hybrid default (its refit included) with one parameter varied: which value reaches the lower validation error?

Issue 22 point 2. Per set and split of bench/hybrid.py (50/25/25), REBELClassifier(weak_learner="hybrid")
with every parameter at its default but ``--param`` (set to each of ``--values``) is fitted on the training
half; reported: the validation quarter's error (what a default may be chosen on: no fit saw that quarter),
the test error, the carve's stage T, the learners kept (the refit's) and the seconds.

- ``--param scoring --values error log_loss`` (bench/results/hybrid_default_scoring.md): hybrids stop on
  the validation error (HYBRID_SCORING) because on a few hundred rows their validation *loss* grew without
  bound once the trees separated the training rows (docs/guide/similarity.md "Defaults"); on
  Fashion-MNIST 10k the error of a 1 250-row carve is flat within a row or two from a few hundred learners
  on, and the log loss moves with every learner.
- ``--param validation_fraction --values 0.25 0.4 0.5`` (bench/results/hybrid_default_fraction.md): with
  the refit returning the carved rows, a larger carve costs the kept model less and gives the stage a less
  noisy validation curve.

    OMP_WAIT_POLICY=passive python bench/experiments/hybrid_default_variants.py --param P --values V1 V2 ...
        [--datasets ...] --name NAME

Writes bench/results/NAME.{md,json} (per split rows in the JSON).
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


def fit_one(name, seed, param, value, d):
    start = time.perf_counter()
    clf = REBELClassifier(weak_learner="hybrid", n_jobs=hybrid.N_JOBS, **{param: value}).fit(d[0], d[1])
    refit = clf.fit_info_["refit"]
    row = {"set": name, "split": seed, param: value, "T": int(clf.best_iteration_),
           "learners": int(clf.n_estimators_), "refit": refit is not None, "seconds": round(time.perf_counter() - start, 2)}
    row["val %"], row["test %"] = errors(clf, d)
    return row


def summary(per_split, name, param, value):
    mine = [r for r in per_split if r["set"] == name and r[param] == value]
    mean = lambda key: round(float(np.mean([r[key] for r in mine])), 2)  # noqa: E731
    return {"set": name, param: value, "splits": len(mine), "val %": mean("val %"), "test %": mean("test %"),
            "T": int(mean("T")), "learners": int(mean("learners")), "s (all fits)": round(sum(r["seconds"] for r in mine), 1)}


def _number_or_text(text):
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--datasets", nargs="+", default=hybrid.ALL_SETS)
    parser.add_argument("--splits", type=int, default=5)
    parser.add_argument("--param", required=True, help="a REBELClassifier parameter")
    parser.add_argument("--values", nargs="+", required=True, help="its values (numbers where they parse as such)")
    parser.add_argument("--name", required=True)
    args = parser.parse_args()
    values = [_number_or_text(v) for v in args.values]
    per_split, rows = [], []
    for name in args.datasets:
        X, y = hybrid.load(name)
        for seed in range(args.splits):
            d = hybrid.split(X, y, seed)
            for value in values:
                per_split.append(fit_one(name, seed, args.param, value, d))
                print(per_split[-1], flush=True)
        rows += [summary(per_split, name, args.param, value) for value in values]
        lines = [f"The hybrid default (refit included) with each {args.param}, mean over {args.splits} splits "
                 "of bench/hybrid.py (validation quarter: unseen by every fit):", ""]
        lines += harness.markdown_table(rows)
        harness.record(args.name, {"per_split": per_split, "summary": rows}, lines, threads=hybrid.N_JOBS)
    print("\n".join(lines))


if __name__ == "__main__":
    main()
