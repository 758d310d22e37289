"""Per-feature contributions (path-dependent TreeSHAP): rebelboost's pred_contrib vs LightGBM's pred_contrib.

make_classification (--features features, float64), binary and 10-class; both libraries train --trees
depth-4 trees on the same --rows rows (rebelboost AdaBoost / REBEL max_depth=4; LightGBM max_depth=4,
num_leaves=16, so multi-class LightGBM grows --trees trees per class); then each computes the
contributions of another --rows rows with --threads threads. Only the contribution call is timed: best of
--repeats rounds, the two libraries interleaved, after a warm-up call (bench/peers/predict_batch.py's
interleaved_best). Every output is checked: each row
(per class) sums to the library's own raw scores.

    OMP_WAIT_POLICY=passive python bench/peers/contrib_speed.py [--rows 100000 --threads 2]
"""

from __future__ import annotations

import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import environment, markdown_table, record  # noqa: E402
from predict_batch import interleaved_best  # noqa: E402


def one_problem(n_classes, args):
    import lightgbm as lgb
    from sklearn.datasets import make_classification

    from rebelboost import AdaBoostClassifier, REBELClassifier

    X, y = make_classification(n_samples=2 * args.rows, n_features=args.features, n_informative=args.features // 2,
                               n_classes=n_classes, n_clusters_per_class=1, random_state=0)
    X_train, y_train, X_test = X[: args.rows], y[: args.rows], np.ascontiguousarray(X[args.rows:])
    cls = AdaBoostClassifier if n_classes == 2 else REBELClassifier
    ours = cls(n_estimators=args.trees, max_depth=4, n_jobs=args.threads).fit(X_train, y_train)
    theirs = lgb.LGBMClassifier(n_estimators=args.trees, max_depth=4, num_leaves=16, n_jobs=args.threads,
                                verbose=-1).fit(X_train, y_train)
    booster = theirs.booster_
    out = {}  # each call keeps its output for the checks below
    calls = {"rebelboost": lambda: out.__setitem__("rebelboost", ours._model.contributions(X_test, args.threads)),
             "lightgbm": lambda: out.__setitem__("lightgbm", booster.predict(X_test, pred_contrib=True,
                                                                              num_threads=args.threads))}
    best = interleaved_best(calls, args.repeats)
    # Each library's contributions sum to its own raw scores (a check that both computed what was timed).
    raw = ours._model.decision_function(X_test, args.threads)
    ours_error = np.abs(out["rebelboost"].sum(axis=2) - (raw[:, None] if raw.ndim == 1 else raw)).max()
    lgb_raw = booster.predict(X_test, raw_score=True, num_threads=args.threads)
    lgb_sum = out["lightgbm"].reshape(len(X_test), -1, args.features + 1).sum(axis=2)
    lgb_error = np.abs(lgb_sum - (lgb_raw[:, None] if lgb_raw.ndim == 1 else lgb_raw)).max()
    return {"problem": "binary" if n_classes == 2 else f"{n_classes}-class",
            "rebelboost trees": ours.n_estimators_, "lightgbm trees": booster.num_trees(),
            "rebelboost s": best["rebelboost"], "lightgbm s": best["lightgbm"],
            "lightgbm / rebelboost": best["lightgbm"] / best["rebelboost"],
            "rebelboost max |sum - score|": ours_error, "lightgbm max |sum - score|": lgb_error}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--features", type=int, default=50)
    parser.add_argument("--trees", type=int, default=500)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--classes", type=int, nargs="+", default=[2, 10])
    parser.add_argument("--name", default="contrib_speed")
    parser.add_argument("--out", default=None, help="results folder (default: bench/results)")
    args = parser.parse_args(argv)
    env = environment(args.threads)
    rows = [one_problem(k, args) for k in args.classes]
    lines = [f"# Contribution speed: rebelboost pred_contrib vs LightGBM pred_contrib", "",
             f"{args.rows} rows x {args.features} features (make_classification), {args.trees} depth-4 trees per "
             f"model (LightGBM multi-class: {args.trees} per class), contributions of {args.rows} other rows on "
             f"{args.threads} threads, best of {args.repeats} interleaved rounds after a warm-up; the contribution "
             "call only (bench/peers/contrib_speed.py).", "", *markdown_table(rows)]
    if args.out:
        record(args.name, rows, lines, out_dir=args.out, threads=args.threads, env=env)
    else:
        record(args.name, rows, lines, threads=args.threads, env=env)
    print("\n".join(lines))


if __name__ == "__main__":
    main()
