"""Issue 22, point 2: which tree_penalty should the hybrid's default fit use?

The hybrid's default (docs/guide/similarity.md "Defaults": stumps, up to 10 000 learners, early stopping on
the validation error of a quarter it carves from the training rows, patience 500) keeps a tree whenever a
tree cuts the training loss more than the best similarity (tree_penalty 0). bench/results/hybrid.md found
that picking tree_penalty on validation moved the hybrid most of the way toward the similarities where
those generalise better, so this script fits the default hybrid with each penalty, every other parameter at
its default, on bench/hybrid.py's splits (fitted on the training half, scored once on the test quarter; the
validation quarter is not used: the default carves its own), and prints the mean test error per set next to
bench/results/hybrid.json's validated rows ("hybrid tuned": tree_penalty, depth and scaling picked on the
validation quarter with up to 10 000 learners, the yardstick of issue 22's defaults point).

    OMP_WAIT_POLICY=passive python bench/experiments/hybrid_default_penalty.py [--penalties 0,1,10] [--splits 5]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)
import harness  # noqa: E402
import hybrid  # noqa: E402  (bench/hybrid.py: its loaders, splits and stored results)
from similarity_benchmark import split  # noqa: E402

from rebelboost import REBELClassifier  # noqa: E402

SETS = ["wine", "breast_cancer", "sonar", "ionosphere", "pima"]


def default_hybrid(d, penalty):
    Xtr, ytr, _, _, Xte, yte = d
    start = time.perf_counter()
    clf = REBELClassifier(weak_learner="hybrid", tree_penalty=penalty, n_jobs=hybrid.N_JOBS).fit(Xtr, ytr)
    return {"error": float(np.mean(clf.predict(Xte) != yte)), "seconds": time.perf_counter() - start,
            "learners": int(clf.n_estimators_), "iterations": int(clf.fit_info_["n_iterations"]),
            "similarity_share": float(np.mean(clf.fit_info_["learner"][:clf.n_estimators_]))}


def stored_means(name, splits):
    """Mean test error (%) of bench/results/hybrid.json's rows over the same splits, where all of them ran."""
    path = os.path.join(harness.RESULTS, "hybrid.json")
    per = hybrid.with_tuned_hybrid(json.load(open(path))["results"].get(name, {})) if os.path.exists(path) else {}
    out = {}
    for method in ("hybrid tuned", "hybrid", "hybrid default", "similarity", "similarity default", "trees"):
        errors = [per[str(s)][method]["error"] for s in range(splits) if method in per.get(str(s), {})]
        if len(errors) == splits:
            out[method] = 100 * float(np.mean(errors))
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--penalties", default="0,1,10")
    parser.add_argument("--splits", type=int, default=5)
    parser.add_argument("--datasets", nargs="+", default=SETS)
    args = parser.parse_args()
    penalties = [float(p) for p in args.penalties.split(",")]
    results, rows = {}, []
    for name in args.datasets:
        X, y = hybrid.load(name)
        runs = results.setdefault(name, {})
        for seed in range(args.splits):
            d = split(X, y, seed)
            for p in penalties:
                r = runs.setdefault(str(p), [])
                r.append(default_hybrid(d, p))
                print(f"{name} split {seed} tree_penalty {p:g}: {100 * r[-1]['error']:.2f} % "
                      f"(T={r[-1]['learners']} of {r[-1]['iterations']}, similarities {r[-1]['similarity_share']:.2f}, "
                      f"{r[-1]['seconds']:.1f} s)", flush=True)
        row = {"set": name}
        for p in penalties:
            row[f"default, tree_penalty {p:g}"] = f"{100 * np.mean([r['error'] for r in runs[str(p)]]):.2f}"
        row.update({k: f"{v:.2f}" for k, v in stored_means(name, args.splits).items()})
        rows.append(row)
    lines = [f"Mean test error (%) over splits 0-{args.splits - 1} of bench/hybrid.py (fitted on the training half, "
             "test quarter); the stored columns are bench/results/hybrid.json's rows of the same splits.", ""]
    lines += harness.markdown_table(rows)
    harness.record("hybrid_default_penalty", results, lines, threads=hybrid.N_JOBS)


if __name__ == "__main__":
    main()
