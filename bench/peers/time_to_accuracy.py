"""Time to accuracy on Fashion-MNIST, 10 classes, 2 threads: test error against cumulative fit time.

The 60 000 training images are split 50 000 / 10 000 (train / validation, numpy seed 0); the 10 000 test
images are only ever reported, never used to choose. REBEL configurations (depth, shrinkage, feature
fraction) each train until a wall-time cap or a tree cap; their per-tree timestamps (callback) give the
cumulative fit time, and staged scores (learner_outputs) the validation and test error after every tree.
LightGBM and XGBoost train with their defaults, early stopping on the validation split (patience 50), and
their own per-iteration timestamps and metrics (multi_error / merror on validation and test, computed
incrementally by the libraries inside the timed loop). Stopping point and REBEL configuration are picked
on validation error; the table reports the test error there and the time each curve first reaches the
target test error (11.5 %). Default OpenMP settings.

    flock /work/bench.lock python bench/peers/time_to_accuracy.py [--cap-scale 1] [--configs all]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
from datasets import fashion_mnist  # noqa: E402

from rebelboost import _core  # noqa: E402

RESULTS = os.path.join(os.path.dirname(__file__), "..", "results")
THREADS = 2
TARGET = 0.115

# name: (max_depth, learning_rate, feature_fraction (LazyBoost), wall-time cap in seconds)
REBEL_CONFIGS = {
    "REBEL d4": (4, 1.0, 1.0, 120),
    "REBEL d6 ff0.3": (6, 1.0, 0.3, 300),
    "REBEL d2": (2, 1.0, 1.0, 120),
    "REBEL d3": (3, 1.0, 1.0, 120),
    "REBEL d4 lr0.5": (4, 0.5, 1.0, 120),
    "REBEL d6 lr0.5 ff0.3": (6, 0.5, 0.3, 300),
    "REBEL d2 lr0.5": (2, 0.5, 1.0, 120),
    "REBEL d3 lr0.5": (3, 0.5, 1.0, 120),
}


def split():
    X, y, X_test, y_test = fashion_mnist()
    order = np.random.default_rng(0).permutation(len(y))
    tr, va = order[:50_000], order[50_000:]
    f32 = lambda a: np.ascontiguousarray(a, dtype=np.float32)  # noqa: E731
    return f32(X[tr]), y[tr].astype(np.int32), f32(X[va]), y[va], f32(X_test), y_test


def staged_errors(model, X, y):
    """Error after each tree (1, 2, ..., T), from the trees' +-1 outputs and the steps."""
    steps = model.steps()
    scores = np.broadcast_to(model.bias, (X.shape[0], model.n_outputs)).astype(np.float64)
    errors = []
    for first in range(0, len(steps), 200):
        out = model.learner_outputs(X, THREADS, first, 200)
        for t in range(out.shape[1]):
            scores += out[:, t, None].astype(np.float64) * steps[first + t][None, :]
            errors.append(float(np.mean(np.argmax(scores, axis=1) != y)))
    return errors


def run_rebel(data, depth, lr, ff, cap, max_trees):
    """One configuration until `cap` seconds of fit or max_trees trees."""
    X, y, X_val, y_val, X_test, y_test = data
    stamps = []
    start = time.perf_counter()

    def stamp(info):
        stamps.append(time.perf_counter() - start)
        return stamps[-1] < cap

    model = _core.train(X, y, None, 10, "rebel", max_trees, depth, 256, lr, THREADS, callback=stamp,
                        feature_fraction=ff, seed=0)[0]
    n = model.n_trees
    return {"time_s": stamps[:n], "val_error": staged_errors(model, X_val, y_val),
            "test_error": staged_errors(model, X_test, y_test)}


def run_lightgbm(data, max_rounds):
    import lightgbm as lgb

    X, y, X_val, y_val, X_test, y_test = data
    params = {"objective": "multiclass", "num_class": 10, "num_threads": THREADS, "verbose": -1,
              "metric": "multi_error"}
    stamps, log = [], {}
    start = time.perf_counter()
    train = lgb.Dataset(X, y, params={"verbose": -1, "num_threads": THREADS})
    val = lgb.Dataset(X_val, y_val, reference=train)
    test = lgb.Dataset(X_test, y_test, reference=train)
    lgb.train(params, train, num_boost_round=max_rounds, valid_sets=[val, test], valid_names=["val", "test"],
              callbacks=[lambda env: stamps.append(time.perf_counter() - start), lgb.record_evaluation(log),
                         lgb.early_stopping(50, first_metric_only=True, verbose=False)])
    return {"time_s": stamps, "val_error": log["val"]["multi_error"], "test_error": log["test"]["multi_error"]}


def run_xgboost(data, max_rounds):
    import xgboost as xgb

    X, y, X_val, y_val, X_test, y_test = data
    params = {"objective": "multi:softprob", "num_class": 10, "tree_method": "hist", "nthread": THREADS,
              "eval_metric": "merror"}
    stamps, log = [], {}

    class Stamp(xgb.callback.TrainingCallback):
        def after_iteration(self, model, epoch, evals_log):
            stamps.append(time.perf_counter() - start)
            return False

    start = time.perf_counter()
    train = xgb.QuantileDMatrix(X, y, nthread=THREADS)
    val = xgb.QuantileDMatrix(X_val, y_val, ref=train, nthread=THREADS)
    test = xgb.QuantileDMatrix(X_test, y_test, ref=train, nthread=THREADS)
    xgb.train(params, train, num_boost_round=max_rounds, evals=[(val, "val"), (test, "test")], evals_result=log,
              callbacks=[Stamp(), xgb.callback.EarlyStopping(50, data_name="val", metric_name="merror")],
              verbose_eval=False)
    return {"time_s": stamps, "val_error": log["val"]["merror"], "test_error": log["test"]["merror"]}


def summary(curve):
    """Best validated stage (first minimum of the validation error), its test error and times."""
    val = np.asarray(curve["val_error"])
    best = int(np.argmin(val))
    test = np.asarray(curve["test_error"])
    reach = np.nonzero(test <= TARGET)[0]
    return {"stages": len(val), "best_stage": best + 1, "val_error": float(val[best]), "test_error": float(test[best]),
            "time_at_best_s": curve["time_s"][best], "fit_s": curve["time_s"][-1],
            "reach_target_s": float(curve["time_s"][reach[0]]) if len(reach) else None,
            "reach_target_stage": int(reach[0]) + 1 if len(reach) else None,
            "load": f"{curve.get('load_start', float('nan')):.1f} / {curve.get('load_end', float('nan')):.1f}"}


def curve_rows(name, curve, points=12):
    n = len(curve["time_s"])
    picks = sorted(set(int(round(x)) for x in np.geomspace(1, n, points)))
    return [f"| {name} | {k} | {curve['time_s'][k - 1]:.1f} | {100 * curve['val_error'][k - 1]:.2f} % | "
            f"{100 * curve['test_error'][k - 1]:.2f} % |" for k in picks]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cap-scale", type=float, default=1.0, help="multiplies each REBEL configuration's time cap")
    parser.add_argument("--max-trees", type=int, default=4000)
    parser.add_argument("--max-rounds", type=int, default=2000, help="LightGBM / XGBoost (early stopping ends them)")
    parser.add_argument("--configs", default="LightGBM," + ",".join(REBEL_CONFIGS) + ",XGBoost")
    parser.add_argument("--out", default=os.path.join(RESULTS, "time_to_accuracy.md"))
    args = parser.parse_args(argv)
    load_before = os.getloadavg()[0]
    data = split()
    curves = {}
    for name in args.configs.split(","):
        load_start = os.getloadavg()[0]
        if name == "LightGBM":
            curves[name] = run_lightgbm(data, args.max_rounds)
        elif name == "XGBoost":
            curves[name] = run_xgboost(data, args.max_rounds)
        else:
            depth, lr, ff, cap = REBEL_CONFIGS[name]
            curves[name] = run_rebel(data, depth, lr, ff, cap * args.cap_scale, args.max_trees)
        curves[name]["load_start"] = load_start
        curves[name]["load_end"] = os.getloadavg()[0]
        print(name, summary(curves[name]), flush=True)
        write(curves, args, load_before, quiet=True)  # what is done so far survives an interrupted run
    write(curves, args, load_before)


def write(curves, args, load_before, quiet=False):
    sums = {name: summary(c) for name, c in curves.items()}
    rebel = [n for n in sums if n.startswith("REBEL")]
    chosen = min(rebel, key=lambda n: (sums[n]["val_error"], sums[n]["time_at_best_s"])) if rebel else None
    lines = [f"# Time to accuracy, Fashion-MNIST 10 classes, {THREADS} threads ({time.strftime('%Y-%m-%d')})", "",
             f"Command: `flock /work/bench.lock python bench/peers/time_to_accuracy.py {' '.join(sys.argv[1:])}`", "",
             f"Load average (1 min) before / after: {load_before:.2f} / {os.getloadavg()[0]:.2f} (2-core shared VM). "
             f"OMP_WAIT_POLICY={os.environ.get('OMP_WAIT_POLICY', 'unset (default)')}.",
             "", "Train / validation: 50 000 / 10 000 rows of the training set (seed 0); test: the 10 000 test images. "
             "Stopping point (and REBEL's configuration) chosen on validation error only. Times are cumulative fit "
             "wall time from the start (binning / Dataset included); LightGBM and XGBoost compute their validation "
             "and test metrics inside the timed loop (incremental, small), REBEL's are computed afterwards. REBEL "
             f"configurations stop at their time cap ({args.cap_scale:g} x 120 s, 300 s for depth 6) or {args.max_trees} trees; LightGBM / XGBoost at early "
             f"stopping (patience 50 on validation) or --max-rounds {args.max_rounds}.", "",
             "| curve | stages | best validated stage | validation error | test error there | time there (s) | "
             "whole fit (s) | first stage at test error <= 11.5 % | time to 11.5 % (s) | load start / end |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for name, s in sums.items():
        mark = " (chosen on validation)" if name == chosen else ""
        reach = ("", "not reached") if s["reach_target_s"] is None else (s["reach_target_stage"], f"{s['reach_target_s']:.1f}")
        lines.append(f"| {name}{mark} | {s['stages']} | {s['best_stage']} | {100 * s['val_error']:.2f} % | "
                     f"{100 * s['test_error']:.2f} % | {s['time_at_best_s']:.1f} | {s['fit_s']:.1f} | {reach[0]} | {reach[1]} | {s['load']} |")
    if chosen and "LightGBM" in sums:
        c, lg = sums[chosen], sums["LightGBM"]
        lines += ["", f"REBEL chosen on validation: {chosen}, test error {100 * c['test_error']:.2f} % vs LightGBM "
                  f"{100 * lg['test_error']:.2f} % ({100 * (c['test_error'] - lg['test_error']):+.2f} percentage points)."]
        if c["reach_target_s"] and lg["reach_target_s"]:
            lines.append(f"Time to 11.5 % test error: {chosen} {c['reach_target_s']:.1f} s, LightGBM "
                         f"{lg['reach_target_s']:.1f} s (ratio LightGBM / REBEL {lg['reach_target_s'] / c['reach_target_s']:.2f}).")
        fastest = min((n for n in rebel if sums[n]["reach_target_s"]), key=lambda n: sums[n]["reach_target_s"], default=None)
        if fastest and lg["reach_target_s"]:
            lines.append(f"Fastest REBEL curve to 11.5 % (a test-set reading, not a choice): {fastest} "
                         f"{sums[fastest]['reach_target_s']:.1f} s.")
    lines += ["", "Curves (cumulative fit time, validation and test error; about 12 stages per curve, geometric):", "",
              "| curve | stage | time (s) | validation error | test error |", "|---|---|---|---|---|"]
    for name, c in curves.items():
        lines += curve_rows(name, c)
    with open(args.out, "w") as handle:
        handle.write("\n".join(lines) + "\n")
    with open(os.path.splitext(args.out)[0] + ".json", "w") as handle:
        json.dump({"summary": sums, "curves": curves}, handle)
    if not quiet:
        print("\n".join(lines))


if __name__ == "__main__":
    main()
