"""Which tree depth should the hybrid default use? Issue 22's protocol sets, the hybrid default at each depth.

REBELClassifier(weak_learner="hybrid") defaults to stumps (HYBRID_MAX_DEPTH, chosen on the five small sets of
bench/results/hybrid_stopping.md, where deeper trees separate the training half within a few learners). The
validated hybrid of bench/hybrid.py picked depth 3 on most splits of digits, where the default erred twice as
much as the validated hybrid. Per set and split of bench/hybrid.py (50/25/25), the hybrid with every
parameter at its default but max_depth is fitted on the training half:
  carve      early stopping on its own carve: the validation quarter is untouched, so its error there is the
             one a depth rule may be chosen on (never the test quarter's)
  eval_set   the validation quarter as eval_set (the issue's own baseline), for the report only: its
             validation error is what stopped it
Reported per set and depth: the mean validation-quarter error of the carve fits (the selection column), the
mean test error of both, the learners kept and the seconds of all fits; training rows (the training half).

    OMP_WAIT_POLICY=passive python bench/experiments/hybrid_default_depth.py [--datasets ...] [--depths 1 2 3]

Writes bench/results/hybrid_default_depth.{md,json} (per split rows in the JSON).
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

from rebelboost import REBELClassifier  # noqa: E402


def fit_one(name, seed, depth, validation, d):
    Xtr, ytr, Xva, yva, Xte, yte = d
    start = time.perf_counter()
    clf = REBELClassifier(weak_learner="hybrid", max_depth=depth, n_jobs=hybrid.N_JOBS).fit(
        Xtr, ytr, eval_set=[(Xva, yva)] if validation == "eval_set" else None)
    return {"set": name, "split": seed, "depth": depth, "validation": validation, "training rows": len(ytr),
            "validation %": round(100 * float(np.mean(clf.predict(Xva) != yva)), 2),
            "test %": round(100 * float(np.mean(clf.predict(Xte) != yte)), 2),
            "kept": int(clf.n_estimators_), "trained": int(clf.fit_info_["n_iterations"]),
            "tree share": round(1.0 - float(np.mean(clf.fit_info_["learner"][:clf.n_estimators_])), 3),
            "seconds": round(time.perf_counter() - start, 2)}


def summary(per_split, name, depth):
    mine = {v: [r for r in per_split if r["set"] == name and r["depth"] == depth and r["validation"] == v]
            for v in ("carve", "eval_set")}
    if not all(mine.values()):
        return None
    mean = lambda rows, key: round(float(np.mean([r[key] for r in rows])), 2)  # noqa: E731
    return {"set": name, "training rows": mine["carve"][0]["training rows"], "depth": depth,
            "splits": len(mine["carve"]), "carve: validation %": mean(mine["carve"], "validation %"),
            "carve: test %": mean(mine["carve"], "test %"), "eval_set: test %": mean(mine["eval_set"], "test %"),
            "carve: kept": int(mean(mine["carve"], "kept")), "eval_set: kept": int(mean(mine["eval_set"], "kept")),
            "carve: tree share": mean(mine["carve"], "tree share"),
            "s (all fits)": round(float(sum(r["seconds"] for v in mine.values() for r in v)), 1)}


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--datasets", nargs="+", default=hybrid.ALL_SETS)
    parser.add_argument("--depths", nargs="+", type=int, default=[1, 2, 3])
    parser.add_argument("--splits", type=int, default=5)
    parser.add_argument("--name", default="hybrid_default_depth")
    args = parser.parse_args()
    per_split, rows = [], []
    for name in args.datasets:
        X, y = hybrid.load(name)
        for seed in range(args.splits):
            d = hybrid.split(X, y, seed)
            for depth in args.depths:
                for validation in ("carve", "eval_set"):
                    per_split.append(fit_one(name, seed, depth, validation, d))
                    print(per_split[-1], flush=True)
        rows += [row for depth in args.depths if (row := summary(per_split, name, depth))]
        lines = [f"The hybrid default at each max_depth (every other parameter at its default), mean over {args.splits} "
                 "splits of bench/hybrid.py: the validation quarter's error of the fits that stopped on their own carve "
                 "(what a depth rule may be chosen on), the test error with the carve and with the validation quarter as "
                 "eval_set, learners kept, the carve fits' share of trees among them, seconds of all fits:", ""]
        lines += harness.markdown_table(rows)
        harness.record(args.name, {"per_split": per_split, "summary": rows}, lines, threads=hybrid.N_JOBS)
    print("\n".join(lines))


if __name__ == "__main__":
    main()
