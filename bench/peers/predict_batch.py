"""Batch prediction throughput: rebelboost vs XGBoost's inplace_predict and LightGBM, same data, same model size.

make_classification (50 features, float32), binary; each library trains 1 000 depth-2 trees on the same
100 000 rows (XGBoost hist max_depth=2, LightGBM num_leaves=4 max_depth=2); all predict raw scores for another
100 000 rows with 2 threads (--threads). Beside it, rebelboost's class prediction with exact early exit and
with a soft cascade: that model is trained on the first 80 000 training rows and its cascade calibrated on the
last 20 000 (a validation split of the training set; max_accuracy_loss --target; checkpoints after every
learner, and every 16 learners), then both report the mean learners per row and the test error on the other
100 000 rows.
Timings: min over --repeats rounds, the calls interleaved, after a warm-up; Python call overhead included
for everyone; OMP_WAIT_POLICY=passive for the OpenMP libraries (rebelboost, XGBoost, LightGBM use it).

    OMP_WAIT_POLICY=passive python bench/peers/predict_batch.py [--threads 2]
"""

from __future__ import annotations

import argparse
import copy
import os
import platform
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
from compare_rebel import write  # noqa: E402


def interleaved_best(fns, repeats):
    """Best wall time of each call over `repeats` rounds, the calls interleaved, after one warm-up each."""
    for f in fns.values():
        f()
    best = {k: np.inf for k in fns}
    for _ in range(repeats):
        for k, f in fns.items():
            start = time.perf_counter()
            f()
            best[k] = min(best[k], time.perf_counter() - start)
    return best


def main(argv=None):
    import lightgbm as lgb
    import xgboost as xgb
    from sklearn.datasets import make_classification

    from rebelboost import AdaBoostClassifier

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=9)
    parser.add_argument("--target", type=float, default=0.002, help="cascade max_accuracy_loss")
    args = parser.parse_args(argv)
    load_before = f"{os.getloadavg()[0]:.2f}"
    t = args.threads
    X, y = make_classification(n_samples=200_000, n_features=50, n_informative=20, random_state=0)
    X = X.astype(np.float32)
    X_train, y_train, X_test, y_test = X[:100_000], y[:100_000], X[100_000:], y[100_000:]

    ours = AdaBoostClassifier(n_estimators=1000, max_depth=2, n_jobs=t).fit(X_train, y_train)
    xg = xgb.XGBClassifier(n_estimators=1000, max_depth=2, tree_method="hist", n_jobs=t).fit(X_train, y_train)
    booster = xg.get_booster()
    booster.set_param({"nthread": t})
    lg = lgb.LGBMClassifier(n_estimators=1000, num_leaves=4, max_depth=2, n_jobs=t, verbose=-1).fit(X_train, y_train)
    cascaded = AdaBoostClassifier(n_estimators=1000, max_depth=2, n_jobs=t).fit(X_train[:80_000], y_train[:80_000])
    sparse = copy.deepcopy(cascaded)  # the same model and target, checked every 16 learners
    cascaded.calibrate_cascade(X_train[80_000:], y_train[80_000:], max_accuracy_loss=args.target)
    sparse.calibrate_cascade(X_train[80_000:], y_train[80_000:], max_accuracy_loss=args.target, every=16)
    assert ours.n_estimators_ == cascaded.n_estimators_ == 1000

    fns = {
        "rebelboost decision_function": lambda: ours.decision_function(X_test),
        "rebelboost predict": lambda: ours.predict(X_test),
        "XGBoost inplace_predict (margin)": lambda: booster.inplace_predict(X_test, predict_type="margin"),
        "LightGBM predict (raw_score)": lambda: lg.predict(X_test, raw_score=True, num_threads=t),
        "rebelboost predict, exact early exit": lambda: ours.predict(X_test, early_exit=True),
        "rebelboost (80k + calibrated) predict, full": lambda: cascaded.predict(X_test),
        "rebelboost (80k + calibrated) predict, cascade": lambda: cascaded.predict(X_test, cascade=True),
        "rebelboost (80k + calibrated) predict, cascade every 16": lambda: sparse.predict(X_test, cascade=True),
    }
    best = interleaved_best(fns, args.repeats)
    learners = {
        "rebelboost predict, exact early exit": ours.predict(X_test, early_exit=True, return_n_learners=True)[1].mean(),
        "rebelboost (80k + calibrated) predict, cascade": cascaded.predict(X_test, cascade=True,
                                                                        return_n_learners=True)[1].mean(),
        "rebelboost (80k + calibrated) predict, cascade every 16": sparse.predict(X_test, cascade=True,
                                                                                 return_n_learners=True)[1].mean(),
    }
    errors = {
        "rebelboost predict": np.mean(ours.predict(X_test) != y_test),
        "XGBoost inplace_predict (margin)": np.mean((booster.inplace_predict(X_test, predict_type="margin") > 0) != y_test),
        "LightGBM predict (raw_score)": np.mean((lg.predict(X_test, raw_score=True) > 0) != y_test),
        "rebelboost predict, exact early exit": np.mean(ours.predict(X_test, early_exit=True) != y_test),
        "rebelboost (80k + calibrated) predict, full": np.mean(cascaded.predict(X_test) != y_test),
        "rebelboost (80k + calibrated) predict, cascade": np.mean(cascaded.predict(X_test, cascade=True) != y_test),
        "rebelboost (80k + calibrated) predict, cascade every 16": np.mean(sparse.predict(X_test, cascade=True) != y_test),
    }
    xgb_time = best["XGBoost inplace_predict (margin)"]
    rows = []
    for name, seconds in best.items():
        rows.append({"call": name, "ms": 1e3 * seconds, "ns_per_row": 1e9 * seconds / len(X_test),
                     "xgboost_over_this": xgb_time / seconds, "learners_per_row": learners.get(name, 1000.0),
                     "test_error": errors.get(name, errors["rebelboost predict"])})
        print(rows[-1], flush=True)
    cpu = next((line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo") if line.startswith("model name")),
               platform.processor())
    lines = [f"# Batch prediction, {time.strftime('%Y-%m-%d')}: 100 000 rows x 50 float32, binary, 1 000 depth-2 trees, "
             f"{t} threads ({cpu})", "",
             "Command: `OMP_WAIT_POLICY=passive python bench/peers/predict_batch.py` "
             f"(min of {args.repeats} interleaved rounds; each library's own model trained on the same 100 000 rows; "
             f"the cascade model on 80 000 of them, calibrated on the other 20 000 with max_accuracy_loss={args.target}, "
             f"checked with the spacing calibrate_cascade chooses (every=None) and every 16 learners). Load average before the run: "
             f"{load_before}, after: {os.getloadavg()[0]:.2f}.",
             "",
             "| call | ms | ns per row | XGBoost time / this | learners per row | test error |",
             "|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['call']} | {r['ms']:.1f} | {r['ns_per_row']:.0f} | {r['xgboost_over_this']:.2f}x | "
                     f"{r['learners_per_row']:.0f} | {100 * r['test_error']:.2f} % |")
    write("predict_batch", lines, rows)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
