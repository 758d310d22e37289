"""Time to accuracy on Fashion-MNIST, 10 classes, 2 threads: test error against cumulative fit time.

The 60 000 training images are split 50 000 / 10 000 (train / validation, numpy seed 0); the 10 000 test
images are only ever reported, never used to choose. REBEL configurations (depth, shrinkage, feature
fraction, subsample) each train until a wall-time cap or a tree cap; their per-tree timestamps (callback)
give the cumulative fit time, and staged scores (learner_outputs) the validation and test error after every
tree. LightGBM and XGBoost train with their defaults, early stopping on the validation split's error (patience
200: with patience 50, or stopped on log-loss, LightGBM stopped at round 128-340 while its validation error
still fell until round ~1 260, which flattered REBEL; issue 24),
and their own per-iteration timestamps and metrics (multi_error / merror on validation and test, computed
incrementally by the libraries inside the timed loop). Stopping points and the REBEL configuration are
picked on validation error. Each curve also keeps its test predictions at its best validated stage and at
the best validated stage within each time budget of the report, for the paired comparison there.

Curves of several runs are merged into one results file (--merge keeps the curves already there that this
run does not redo; every curve records the command, date, OpenMP setting and load average of its run).
The report (tables, diagnostics, plot) is written by time_to_accuracy_report.py after every curve.

    OMP_WAIT_POLICY=passive python bench/experiments/time_to_accuracy.py \
        [--cap-scale 1] [--configs "REBEL d2,XGBoost"] [--merge]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "peers"))  # datasets, compare_rebel
from datasets import fashion_mnist  # noqa: E402
from time_to_accuracy_report import BUDGETS, best_within, write_report  # noqa: E402

from rebelboost import _core  # noqa: E402

RESULTS = os.path.join(os.path.dirname(__file__), "..", "results")
THREADS = 2
PATIENCE = 200  # LightGBM / XGBoost early stopping: rounds without a better validation error


def rebel(depth, lr=1.0, ff=1.0, subsample=1.0, cap=120):
    """A REBEL configuration; cap: wall-time seconds (times --cap-scale)."""
    return {"max_depth": depth, "learning_rate": lr, "feature_fraction": ff, "subsample": subsample, "cap_s": cap}


REBEL_CONFIGS = {
    "REBEL d4": rebel(4),
    "REBEL d6 ff0.3": rebel(6, ff=0.3, cap=300),
    "REBEL d2": rebel(2),
    "REBEL d3": rebel(3),
    "REBEL d4 lr0.5": rebel(4, lr=0.5),
    "REBEL d6 lr0.5 ff0.3": rebel(6, lr=0.5, ff=0.3, cap=300),
    "REBEL d2 lr0.5": rebel(2, lr=0.5),
    "REBEL d3 lr0.5": rebel(3, lr=0.5),
    "REBEL d6 lr0.5 ff0.3 ss0.5": rebel(6, lr=0.5, ff=0.3, subsample=0.5, cap=300),
    "REBEL d8 lr0.5 ff0.3": rebel(8, lr=0.5, ff=0.3, cap=300),
}


def split(seed=0):
    X, y, X_test, y_test = fashion_mnist()
    order = np.random.default_rng(seed).permutation(len(y))
    tr, va = order[:50_000], order[50_000:]
    f32 = lambda a: np.ascontiguousarray(a, dtype=np.float32)  # noqa: E731
    return f32(X[tr]), y[tr].astype(np.int32), f32(X[va]), y[va], f32(X_test), y_test


def picked_stages(curve, budgets):
    """Stages whose test predictions are kept: the best validated one, and the best within each budget."""
    picks = {"best": best_within(curve, float("inf"))}
    for budget in budgets:
        stage = best_within(curve, budget)
        if stage is not None:
            picks[f"T={budget:g}"] = stage
    return picks


def staged_errors(model, X, y, keep=()):
    """Error after each tree (1, 2, ..., T) from the trees' +-1 outputs and the steps, and the predicted
    classes after the trees in `keep` ({stage: classes})."""
    steps = model.steps()
    scores = np.broadcast_to(model.bias, (X.shape[0], model.n_outputs)).astype(np.float64)
    errors, kept = [], {}
    for first in range(0, len(steps), 200):
        out = model.learner_outputs(X, THREADS, first, 200)
        for t in range(out.shape[1]):
            scores += out[:, t, None].astype(np.float64) * steps[first + t][None, :]
            predicted = np.argmax(scores, axis=1)
            errors.append(float(np.mean(predicted != y)))
            if first + t + 1 in keep:
                kept[first + t + 1] = predicted.astype(np.int8)
    return errors, kept


def run_rebel(data, config, cap, max_trees, budgets):
    """One configuration until `cap` seconds of fit or max_trees trees."""
    X, y, X_val, y_val, X_test, y_test = data
    stamps = []
    start = time.perf_counter()

    def stamp(info):
        stamps.append(time.perf_counter() - start)
        return stamps[-1] < cap

    model = _core.train(X, y, None, 10, "rebel", max_trees, config["max_depth"], 256, config["learning_rate"],
                        THREADS, callback=stamp, feature_fraction=config["feature_fraction"],
                        subsample=config["subsample"], seed=0, rebel_loss=config.get("loss", "exponential"))[0]
    curve = {"time_s": stamps[:model.n_trees], "val_error": staged_errors(model, X_val, y_val)[0]}
    picks = picked_stages(curve, budgets)
    curve["test_error"], kept = staged_errors(model, X_test, y_test, set(picks.values()))
    return {**curve, "picked": picks}, kept


def run_lightgbm(data, max_rounds, budgets):
    import lightgbm as lgb

    X, y, X_val, y_val, X_test, y_test = data
    params = {"objective": "multiclass", "num_class": 10, "num_threads": THREADS, "verbose": -1,
              "metric": "multi_error"}
    stamps, log, best = [], {}, [float("inf"), 0]

    def stop_on_validation(env):
        # lgb.early_stopping watches every validation set, the test set too: this one watches "val" only.
        error = next(r.metric_value for r in env.evaluation_result_list if r.dataset_name == "val")
        if error < best[0]:
            best[:] = [error, env.iteration]
        elif env.iteration - best[1] >= PATIENCE:
            raise lgb.callback.EarlyStopException(best[1], env.evaluation_result_list)

    start = time.perf_counter()
    train = lgb.Dataset(X, y, params={"verbose": -1, "num_threads": THREADS})
    val = lgb.Dataset(X_val, y_val, reference=train)
    test = lgb.Dataset(X_test, y_test, reference=train)
    booster = lgb.train(params, train, num_boost_round=max_rounds, valid_sets=[val, test], valid_names=["val", "test"],
                        callbacks=[lambda env: stamps.append(time.perf_counter() - start), lgb.record_evaluation(log),
                                   stop_on_validation], keep_training_booster=True)  # all trees, not the best's
    # The stopping callback runs before record_evaluation: the round it stops at has a stamp but no metrics.
    n = len(log["val"]["multi_error"])
    curve = {"time_s": stamps[:n], "val_error": log["val"]["multi_error"], "test_error": log["test"]["multi_error"]}
    predict = lambda stage: np.argmax(booster.predict(X_test, num_iteration=stage), axis=1)  # noqa: E731
    return kept_predictions(curve, budgets, predict, y_test)


def run_xgboost(data, max_rounds, budgets):
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
    booster = xgb.train(params, train, num_boost_round=max_rounds, evals=[(val, "val"), (test, "test")],
                        evals_result=log, verbose_eval=False,
                        callbacks=[Stamp(), xgb.callback.EarlyStopping(PATIENCE, data_name="val", metric_name="merror")])
    curve = {"time_s": stamps, "val_error": log["val"]["merror"], "test_error": log["test"]["merror"]}
    predict = lambda stage: np.argmax(booster.predict(test, iteration_range=(0, stage)), axis=1)  # noqa: E731
    return kept_predictions(curve, budgets, predict, y_test)


def kept_predictions(curve, budgets, predict, y_test):
    """The curve with its picked stages, and the library's test predictions there; each must reproduce the
    test error the library logged at that stage (within 2 rows: ties of the argmax)."""
    picks = picked_stages(curve, budgets)
    kept = {stage: predict(stage).astype(np.int8) for stage in set(picks.values())}
    for stage, classes in kept.items():
        if abs(np.mean(classes != y_test) - curve["test_error"][stage - 1]) > 2 / len(y_test):
            raise RuntimeError(f"predictions after {stage} rounds do not give the logged test error")
    return {**curve, "picked": picks}, kept


def load_previous(out):
    """Curves and kept predictions already in the results files (empty when there are none)."""
    base = os.path.splitext(out)[0]
    curves = json.load(open(base + ".json"))["curves"] if os.path.exists(base + ".json") else {}
    kept = dict(np.load(base + "_predictions.npz")) if os.path.exists(base + "_predictions.npz") else {}
    kept.pop("y_test", None)
    return curves, kept


def save(curves, kept, y_test, out):
    base = os.path.splitext(out)[0]
    with open(base + ".json", "w") as handle:
        json.dump({"curves": curves}, handle)
    np.savez_compressed(base + "_predictions.npz", y_test=y_test.astype(np.int8), **kept)
    write_report(out)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cap-scale", type=float, default=1.0, help="multiplies each REBEL configuration's time cap")
    parser.add_argument("--max-trees", type=int, default=8000)
    parser.add_argument("--max-rounds", type=int, default=5000, help="LightGBM / XGBoost (early stopping ends them)")
    parser.add_argument("--configs", default="LightGBM," + ",".join(REBEL_CONFIGS) + ",XGBoost")
    parser.add_argument("--merge", action="store_true", help="keep the curves already in --out that this run does not redo")
    parser.add_argument("--out", default=os.path.join(RESULTS, "time_to_accuracy.md"))
    args = parser.parse_args(argv)
    curves, kept = load_previous(args.out) if args.merge else ({}, {})
    run = {"command": "python bench/experiments/time_to_accuracy.py "
                      + " ".join(f'"{a}"' if " " in a else a for a in sys.argv[1:]),
           "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
           "omp_wait_policy": os.environ.get("OMP_WAIT_POLICY", "unset (default)")}
    data = split()
    for name in args.configs.split(","):
        load_start = os.getloadavg()[0]
        if name == "LightGBM":
            curve, preds = run_lightgbm(data, args.max_rounds, BUDGETS)
            limit = f"early stopping on validation error (patience {PATIENCE}) or {args.max_rounds} rounds"
        elif name == "XGBoost":
            curve, preds = run_xgboost(data, args.max_rounds, BUDGETS)
            limit = f"early stopping on validation error (patience {PATIENCE}) or {args.max_rounds} rounds"
        else:
            config = REBEL_CONFIGS[name]
            cap = config["cap_s"] * args.cap_scale
            curve, preds = run_rebel(data, config, cap, args.max_trees, BUDGETS)
            limit = f"{cap:g} s or {args.max_trees} trees"
        curves[name] = {**curve, "run": {**run, "limit": limit, "load_start": load_start,
                                         "load_end": os.getloadavg()[0]}}
        kept = {key: value for key, value in kept.items() if not key.startswith(name + "|")}
        kept.update({f"{name}|{stage}": classes for stage, classes in preds.items()})
        print(name, f"{len(curve['time_s'])} stages in {curve['time_s'][-1]:.1f} s", flush=True)
        save(curves, kept, data[5], args.out)  # what is done so far survives an interrupted run


if __name__ == "__main__":
    main()
