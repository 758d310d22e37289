"""Which stopping rule lets the similarity default reach its plateau? Issue 22 point 2.

Until 2026-11-30 the similarity default stopped on the validation log loss of a carved quarter with a patience
of 500 and kept the carve's model. That missed its own 10 000-learner validated run by about 2 points on the
two sets with large carves (digits: 225 rows, Fashion-MNIST 10k: 1 250): the log loss of a similarity model
turns up while its error still falls (its probabilities grow overconfident), and the model lacks the carved
rows (bench/results/default_stop_rules.md, default_refit.md).

Per set and split of bench/hybrid.py (50/25/25), REBELClassifier(weak_learner="similarity") with every
parameter at its default except the rule's, fitted on the training half:
  log loss, 500           scoring="log_loss", n_iter_no_change=500, refit=False (the default before)
  log loss, 1000          the same with a patience of 1 000
  error, 500, refit       scoring="error", n_iter_no_change=500, refit=True (T / 0.75 learners on every row)
  error, 1000, refit      the same with a patience of 1 000
Reported: the validation quarter's error (what a rule may be chosen on: no fit saw that quarter), the test
error, the carve's stage T, the learners kept and the seconds (fits ran beside other work: compare seconds
within a row only).

    OMP_WAIT_POLICY=passive python bench/experiments/similarity_default_rule.py [--datasets ...] [--splits 5]

Writes bench/results/similarity_default_rule.{md,json} (per split rows in the JSON).
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
from default_refit import errors, stored_long  # noqa: E402

from rebelboost import REBELClassifier  # noqa: E402

RULES = {
    "log loss, 500": {"scoring": "log_loss", "n_iter_no_change": 500, "refit": False},
    "log loss, 1000": {"scoring": "log_loss", "n_iter_no_change": 1000, "refit": False},
    "error, 500, refit": {"scoring": "error", "n_iter_no_change": 500, "refit": True},
    "error, 1000, refit": {"scoring": "error", "n_iter_no_change": 1000, "refit": True},
}


def fit_one(name, seed, rule, d):
    start = time.perf_counter()
    clf = REBELClassifier(weak_learner="similarity", n_jobs=hybrid.N_JOBS, **RULES[rule]).fit(d[0], d[1])
    row = {"set": name, "split": seed, "rule": rule, "T": int(clf.best_iteration_), "learners": int(clf.n_estimators_),
           "seconds": round(time.perf_counter() - start, 2), "long test %": stored_long(name, seed, "similarity")}
    row["val %"], row["test %"] = errors(clf, d)
    return row


def summary(per_split, name, rule):
    mine = [r for r in per_split if r["set"] == name and r["rule"] == rule]
    mean = lambda key: round(float(np.mean([r[key] for r in mine])), 2)  # noqa: E731
    longs = [r["long test %"] for r in mine if r["long test %"] is not None]
    return {"set": name, "rule": rule, "splits": len(mine), "val %": mean("val %"), "test %": mean("test %"),
            "long test %": round(float(np.mean(longs)), 2) if len(longs) == len(mine) else None,
            "T": int(mean("T")), "learners": int(mean("learners")),
            "s (all fits)": round(sum(r["seconds"] for r in mine), 1)}


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--datasets", nargs="+", default=hybrid.ALL_SETS)
    parser.add_argument("--splits", type=int, default=5)
    parser.add_argument("--rules", nargs="+", default=list(RULES), choices=list(RULES))
    parser.add_argument("--name", default="similarity_default_rule")
    args = parser.parse_args()
    per_split, rows = [], []
    for name in args.datasets:
        X, y = hybrid.load(name)
        for seed in range(args.splits):
            d = hybrid.split(X, y, seed)
            for rule in args.rules:
                per_split.append(fit_one(name, seed, rule, d))
                print(per_split[-1], flush=True)
        rows += [summary(per_split, name, rule) for rule in args.rules]
        lines = [f"The similarity default with each stopping rule, mean over {args.splits} splits of bench/hybrid.py "
                 "(validation quarter: unseen by every fit; 'long': the stored 10 000-learner validated default of "
                 "bench/hybrid.py):", ""]
        lines += harness.markdown_table(rows)
        harness.record(args.name, {"per_split": per_split, "summary": rows}, lines, threads=hybrid.N_JOBS)
    print("\n".join(lines))


if __name__ == "__main__":
    main()
