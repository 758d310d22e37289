"""Prediction speed side by side: rebelboost, LightGBM and XGBoost on the same data and model sizes.

Raw scores (no probability transform) for 20 000 rows of make_classification (50 features, float32), models
of 200 trees of depth 1, 3 and 6 trained by each library on 100 000 rows (LightGBM: num_leaves = 2^depth and
max_depth = depth; XGBoost: hist, max_depth = depth), and a 10-class model (REBEL / multiclass objectives)
of 200 depth-3 trees. 1 thread each (--threads to change), best of 7 timed calls after a warm-up; the
Python call overhead is included for everyone. Also the latency of one row at a time (best of 5 rounds of
400 calls; for rebelboost both decision_function and predict, which returns the label).

    OMP_WAIT_POLICY=passive python bench/peers/compare_predict.py [--threads 1]
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
from compare_rebel import write  # noqa: E402


def best_time(f, repeats=7):
    f()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        f()
        times.append(time.perf_counter() - start)
    return min(times)


def main(argv=None):
    import lightgbm as lgb
    import xgboost as xgb
    from sklearn.datasets import make_classification

    from rebelboost import AdaBoostClassifier, REBELClassifier

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args(argv)
    load_before = f"{os.getloadavg()[0]:.2f}"
    t = args.threads
    rows = []
    for n_classes, depths in ((2, (1, 3, 6)), (10, (3,))):
        X, y = make_classification(n_samples=100_000, n_features=50, n_informative=20, n_classes=n_classes,
                                   random_state=0)
        X = X.astype(np.float32)
        X_pred = X[:20_000].copy()
        for depth in depths:
            if n_classes == 2:
                ours = AdaBoostClassifier(n_estimators=200, max_depth=depth, n_jobs=t).fit(X, y)
            else:
                ours = REBELClassifier(n_estimators=200, max_depth=depth, n_jobs=t).fit(X, y)
            lg = lgb.LGBMClassifier(n_estimators=200, num_leaves=2**depth, max_depth=depth, n_jobs=t, verbose=-1).fit(X, y)
            xg = xgb.XGBClassifier(n_estimators=200, max_depth=depth, tree_method="hist", n_jobs=t).fit(X, y)
            timings = {
                "rebelboost": best_time(lambda: ours.decision_function(X_pred)),
                "LightGBM": best_time(lambda: lg.predict(X_pred, raw_score=True)),
                "XGBoost": best_time(lambda: xg.predict(X_pred, output_margin=True)),
            }
            row = {"classes": n_classes, "depth": depth, **{k: 1e9 * v / len(X_pred) for k, v in timings.items()}}
            # One row at a time (latency, Python call and input checks included): the best of 5 rounds of 400
            # calls (the machine is shared: the best round is the one least disturbed).
            one = X_pred[:1]
            for name, f in (("rebelboost", lambda: ours.decision_function(one)),
                            ("rebelboost_predict", lambda: ours.predict(one)),
                            ("LightGBM", lambda: lg.predict(one, raw_score=True)),
                            ("XGBoost", lambda: xg.predict(one, output_margin=True))):
                f()
                rounds = []
                for _ in range(5):
                    start = time.perf_counter()
                    for _ in range(400):
                        f()
                    rounds.append((time.perf_counter() - start) / 400)
                row[f"{name}_one_row_us"] = 1e6 * min(rounds)
            rows.append(row)
            print(row, flush=True)
    lines = [f"# Prediction speed, ns per row ({time.strftime('%Y-%m-%d')}, {t} thread(s), 20 000 rows x 50 float32, 200 trees)", "",
             "Command: `OMP_WAIT_POLICY=passive python bench/peers/compare_predict.py`; load "
             f"average before {load_before}, after {os.getloadavg()[0]:.2f} (2 shared cores).", "",
             "| classes | depth | rebelboost | LightGBM | XGBoost | LightGBM / rebelboost | XGBoost / rebelboost | one row (µs): rebelboost decision_function / predict / LightGBM / XGBoost |",
             "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['classes']} | {r['depth']} | {r['rebelboost']:.0f} | {r['LightGBM']:.0f} | {r['XGBoost']:.0f} | "
                     f"{r['LightGBM'] / r['rebelboost']:.2f}x | {r['XGBoost'] / r['rebelboost']:.2f}x | "
                     f"{r['rebelboost_one_row_us']:.1f} / {r['rebelboost_predict_one_row_us']:.1f} / "
                     f"{r['LightGBM_one_row_us']:.1f} / {r['XGBoost_one_row_us']:.1f} |")
    write("predict_peers", lines, rows)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
