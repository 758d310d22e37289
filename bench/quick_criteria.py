"""QuickBoost with each split criterion: full scan vs pruned pass vs auto, side by side in one run.

For each task and criterion ("loss", "gini", "entropy"), trains AdaBoost with quick=False, True and "auto"
(modes interleaved, --repeats rounds, median time of each; the same model in every mode, checked byte for
byte) and reports the fit times, their ratios, the histogram adds and the features pruned per node.
The easy task is Fashion-MNIST Trouser vs Bag (the weight concentrates on a few rows within tens of trees),
the hard one T-shirt vs Shirt (it stays spread).

The variance criterion ("variance") is BoostingRegressor's (learning_rate 0.1), on regression tasks:
- sparse spikes (easy): 100 000 rows of 200 uniform features; y is a sum of 4 rare steps (3 % of the rows
  each) of 4 features, without noise, so the squared residuals stay on few rows and a split explains much;
  but each step falls inside a bin, whose rows no split separates, and after some tens of trees those rows
  hold most of the squared residual while a split explains little of it;
- integer spikes (easy, exact): the same steps on 200 integer features of 100 values each (a bin per value,
  as counts and codes have), so every step falls between two bins: the stumps fit the target exactly and
  each tree's best split explains all of what is left;
- Trouser vs Bag as a 0/1 target: the residuals concentrate on the rows near the boundary, but late splits
  explain under 1 % of a node's error;
- make_friedman1 with 95 noise features and noise 1 (hard): the residuals stay spread.

    OMP_WAIT_POLICY=passive python bench/quick_criteria.py [--iters 300] [--threads 2] [--repeats 3]
        [--criteria loss,gini,entropy,variance]
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "peers"))
from datasets import fashion_mnist  # noqa: E402
from harness import markdown_table, record  # noqa: E402

from rebelboost import AdaBoostClassifier, BoostingRegressor  # noqa: E402

MODES = (False, True, "auto")


def pair(a, b):
    X_train, y_train, _, _ = fashion_mnist()
    keep = (y_train == a) | (y_train == b)
    return X_train[keep].astype(np.float32), (y_train[keep] == a).astype(int)


def sparse_spikes(n=100_000, n_features=200, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.random((n, n_features)).astype(np.float32)
    y = 10.0 * (X[:, 0] > 0.97) + 7.0 * (X[:, 1] > 0.97) - 5.0 * (X[:, 2] > 0.97) + 4.0 * (X[:, 3] < 0.03)
    return X, y


def integer_spikes(n=100_000, n_features=200, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 100, size=(n, n_features)).astype(np.float32)
    y = 10.0 * (X[:, 0] >= 97) + 7.0 * (X[:, 1] >= 97) - 5.0 * (X[:, 2] >= 97) + 4.0 * (X[:, 3] < 3)
    return X, y


def friedman_noise(n=50_000):
    from sklearn.datasets import make_friedman1

    X, y = make_friedman1(n_samples=n, n_features=100, noise=1.0, random_state=0)
    return X.astype(np.float32), y


def estimator(criterion, depth, mode, args):
    if criterion == "variance":
        return BoostingRegressor(n_estimators=args.iters, max_depth=depth, learning_rate=0.1, quick=mode,
                                 n_jobs=args.threads)
    return AdaBoostClassifier(n_estimators=args.iters, max_depth=depth, criterion=criterion, quick=mode,
                              n_jobs=args.threads)


def compare(task, X, y, depth, criterion, args):
    times = {mode: [] for mode in MODES}
    search = {mode: [] for mode in MODES}  # the split search alone: what QuickBoost replaces
    fits = {}
    for _ in range(args.repeats):  # interleaved: a slow spell of the shared machine hits every mode
        for mode in MODES:
            clf = estimator(criterion, depth, mode, args)
            start = time.perf_counter()
            clf.fit(X, y)
            times[mode].append(time.perf_counter() - start)
            stages = clf.fit_info_["stage_seconds"]
            search[mode].append(stages["histograms"] + stages["quick_search"])
            fits[mode] = clf
    t = {mode: float(np.median(times[mode])) for mode in MODES}
    s = {mode: float(np.median(search[mode])) for mode in MODES}
    full, quick, auto = (fits[mode] for mode in MODES)
    info = quick.fit_info_
    return {
        "task": task, "depth": depth, "criterion": criterion, "trees": full.n_estimators_,
        "identical": full._model.to_bytes() == quick._model.to_bytes() == auto._model.to_bytes(),
        "adds full/quick": round(full.fit_info_["bin_accumulations"].sum() / max(1, info["bin_accumulations"].sum()), 2),
        "full (s)": round(t[False], 3), "quick (s)": round(t[True], 3), "auto (s)": round(t["auto"], 3),
        "full/quick": round(t[False] / t[True], 2), "full/auto": round(t[False] / t["auto"], 2),
        "search full/quick": round(s[False] / s[True], 2), "search full/auto": round(s[False] / s["auto"], 2),
        "pruned per node": round(float(info["features_pruned"].sum() / max(1, info["quick_nodes"].sum())), 1),
        "auto quick nodes": int(auto.fit_info_["quick_nodes"].sum()),
        "times": {str(mode): times[mode] for mode in MODES},
        "search times": {str(mode): search[mode] for mode in MODES},
    }


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iters", type=int, default=300)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=3, help="interleaved rounds; times are medians")
    parser.add_argument("--criteria", default="loss,gini,entropy,variance")
    args = parser.parse_args(argv)
    criteria = args.criteria.split(",")
    classification = [c for c in criteria if c != "variance"]
    tasks = [("Trouser vs Bag (easy)", pair(1, 8), 1, classification),
             ("T-shirt vs Shirt (hard)", pair(0, 6), 2, classification)]
    if "variance" in criteria:
        tasks += [("sparse spikes (easy)", sparse_spikes(), 1, ["variance"]),
                  ("sparse spikes (easy)", sparse_spikes(), 3, ["variance"]),
                  ("integer spikes (easy, exact)", integer_spikes(), 1, ["variance"]),
                  ("integer spikes (easy, exact)", integer_spikes(), 3, ["variance"]),
                  ("Trouser vs Bag, 0/1 target", pair(1, 8), 1, ["variance"]),
                  ("friedman1 + 95 noise features (hard)", friedman_noise(), 3, ["variance"])]
    rows = []
    for name, (X, y), depth, task_criteria in tasks:
        for criterion in task_criteria:
            row = compare(name, X, y, depth, criterion, args)
            print({k: v for k, v in row.items() if k not in ("times", "search times")}, flush=True)
            rows.append(row)
    lines = [f"# QuickBoost with each criterion ({args.iters} trees: AdaBoost, BoostingRegressor for the variance; "
             f"{args.threads} threads)", "",
             f"Times: median of {args.repeats} interleaved rounds of full scan, pruned pass and auto, wall time of the "
             "fit; 'search': the split search alone (fit_info_ stage_seconds 'histograms' + 'quick_search', the part "
             "QuickBoost replaces; binning, leaf values and updates are the same in every mode); 'identical': the "
             "three models are the same byte for byte.", ""]
    lines += markdown_table([{k: v for k, v in r.items() if k not in ("times", "search times")} for r in rows])
    record("quick_criteria", rows, lines, threads=args.threads)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
