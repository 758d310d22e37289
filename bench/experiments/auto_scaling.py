"""Issue 22, point 2: the default fits with similarity_scaling="auto" against the old default ("feature").

"auto" picks the scaling whose leave-one-out 1-nearest-neighbour error on the rows trained on is lower
(python/rebelboost/_scaling.py, docs/guide/similarity.md "Defaults"). This script fits REBELClassifier with
weak_learner "similarity" and "hybrid" and every parameter at its default (early stopping on a quarter
carved from the training half), once with similarity_scaling="feature" (the default before) and once with
"auto", on bench/hybrid.py's splits, scores each once on the test quarter, and prints the mean test error
per set beside the validated rows of bench/results/hybrid.json and hybrid_digits.json (scaling, depth and
stage picked on the validation quarter with up to 10 000 learners: the yardstick of the defaults point).
Where "auto" picks "feature" the two fits are the same model (tests/python/test_similarity_scaling.py), so
the fit is not repeated.

    OMP_WAIT_POLICY=passive python bench/experiments/auto_scaling.py [--datasets ...] [--splits 5]
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
from rebelboost._scaling import choose_scaling  # noqa: E402

SETS = ["wine", "breast_cancer", "digits", "sonar", "ionosphere", "pima"]
LEARNERS = ("similarity", "hybrid")


def default_fit(d, learner, scaling):
    Xtr, ytr, _, _, Xte, yte = d
    start = time.perf_counter()
    clf = REBELClassifier(weak_learner=learner, similarity_scaling=scaling, n_jobs=hybrid.N_JOBS).fit(Xtr, ytr)
    return {"error": float(np.mean(clf.predict(Xte) != yte)), "seconds": time.perf_counter() - start,
            "learners": int(clf.n_estimators_), "iterations": int(clf.fit_info_["n_iterations"]),
            "scaling": clf.similarity_scaling_}


def choice_seconds(d):
    """Seconds of the choice alone, on the whole training half (the fit makes it on the rows it keeps)."""
    Xtr, ytr = d[0], d[1]
    start = time.perf_counter()
    choose_scaling(np.asarray(Xtr, dtype=np.float64), np.unique(ytr, return_inverse=True)[1], 0)
    return time.perf_counter() - start


def stored_means(name, splits):
    """Mean test error (%) of the stored validated rows over the same splits, where all of them ran."""
    per = {}
    for file in ("hybrid.json", "hybrid_digits.json"):
        path = os.path.join(harness.RESULTS, file)
        if os.path.exists(path):
            for seed, methods in json.load(open(path))["results"].get(name, {}).items():
                per.setdefault(seed, {}).update(methods)
    per = hybrid.with_tuned_hybrid(per)
    out = {}
    for method in ("similarity", "hybrid", "hybrid tuned"):
        errors = [per[str(s)][method]["error"] for s in range(splits) if method in per.get(str(s), {})]
        if len(errors) == splits:
            out[f"{method} (validated)"] = 100 * float(np.mean(errors))
    return out


def fit_split(d, label, runs):
    """Both default fits of each learner on one split, appended to runs."""
    runs.setdefault("choice_seconds", []).append(choice_seconds(d))
    picks_global = choose_scaling(*_fit_rows(d), 0) == "global"
    for learner in LEARNERS:
        old = default_fit(d, learner, "feature")
        auto = default_fit(d, learner, "auto") if picks_global else dict(old, scaling="feature")
        runs.setdefault(f"{learner} feature", []).append(old)
        runs.setdefault(f"{learner} auto", []).append(auto)
        print(f"{label} {learner}: feature {100 * old['error']:.2f} % (T={old['learners']}, {old['seconds']:.1f} s), "
              f"auto={auto['scaling']} {100 * auto['error']:.2f} % (T={auto['learners']}, {auto['seconds']:.1f} s)",
              flush=True)


def summary_row(name, runs, splits):
    row = {"set": name, "auto picks global": f"{sum(r['scaling'] == 'global' for r in runs['similarity auto'])} of {splits}",
           "choice (s)": f"{max(runs['choice_seconds']):.3f}"}
    for learner in LEARNERS:
        for scaling in ("feature", "auto"):
            row[f"{learner} default, {scaling}"] = f"{100 * np.mean([r['error'] for r in runs[f'{learner} {scaling}']]):.2f}"
    row.update({k: f"{v:.2f}" for k, v in stored_means(name, splits).items()})
    return row


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--splits", type=int, default=5)
    parser.add_argument("--datasets", nargs="+", default=SETS)
    args = parser.parse_args()
    results = {name: {} for name in args.datasets}
    for name, runs in results.items():
        X, y = hybrid.load(name)
        for seed in range(args.splits):
            fit_split(split(X, y, seed), f"{name} split {seed}", runs)
    lines = [f"Mean test error (%) over splits 0-{args.splits - 1} of bench/hybrid.py (defaults fitted on the training "
             "half, test quarter; 'choice (s)': the longest leave-one-out choice on a training half); the validated "
             "columns are the stored rows of bench/results/hybrid.json and hybrid_digits.json on the same splits.", ""]
    lines += harness.markdown_table([summary_row(name, runs, args.splits) for name, runs in results.items()])
    harness.record("auto_scaling", results, lines, threads=hybrid.N_JOBS)


def _fit_rows(d):
    """The rows a default fit trains on: the training half minus the quarter it carves (seed 0), as the
    estimator carves it, with class indices."""
    from rebelboost._params import SIMILARITY_VALIDATION_FRACTION
    from rebelboost._validation import split_validation

    Xtr, ytr = np.asarray(d[0], dtype=np.float64), np.unique(d[1], return_inverse=True)[1]
    X, y, _, _ = split_validation(Xtr, ytr, None, SIMILARITY_VALIDATION_FRACTION, 0)
    return X, y


if __name__ == "__main__":
    main()
