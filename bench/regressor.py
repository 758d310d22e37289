"""The regressor against LightGBM, XGBoost and scikit-learn's HistGradientBoostingRegressor, side by side in one run.

1. Accuracy. ``make_friedman1`` (noise 1.0, so the Bayes RMSE is 1.0; --friedman-rows training rows, of which
   --val-fraction are carved off for validation, plus --friedman-test test rows; one data set per seed) and
   scikit-learn's diabetes set (442 rows; --diabetes-splits random splits, 25 % test, --val-fraction of the
   rest for validation). Every model has learning rate 0.1, a cap of --cap rounds and early stopping on
   validation RMSE with the same patience (--patience rounds), and each peer is otherwise at its defaults:
   - rebelboost ``BoostingRegressor`` at its defaults and with ``max_depth`` picked from {3, 4, 6, 8} on the
     validation RMSE, fitted with ``eval_set=[(X_val, y_val)]`` (stops on its RMSE, keeps the best iteration);
   - LightGBM ``LGBMRegressor(metric="rmse")`` with the ``early_stopping`` callback on the same eval set;
   - XGBoost ``XGBRegressor(tree_method="hist", eval_metric="rmse", early_stopping_rounds=patience)``;
   - ``HistGradientBoostingRegressor(early_stopping=True, scoring="loss", n_iter_no_change=patience)``: it
     takes no eval set, so it gets the training and validation rows together and carves its own validation
     split of the same size (``validation_fraction``, its own random rows); it stops on its validation
     squared error (the same order as RMSE) and, unlike the others, keeps the rounds after the best one.
   Reported: test RMSE per model (mean and spread over seeds / splits), rounds kept, and per split the ratio
   rebelboost / LightGBM (target: mean ratio <= 1.02).
2. Time per tree. ``make_friedman1(--time-rows, n_features=10, noise=1)``, depth 3 for all (LightGBM
   ``max_depth=3, num_leaves=8``, XGBoost ``max_depth=3``, HGB ``max_depth=3, max_leaf_nodes=8``, rebelboost
   ``max_depth=3``; minimum leaf sizes at each library's default), learning rate 0.1, --threads threads, no
   early stopping. Per library and repeat: the wall time of a --time-trees fit minus that of a 1-tree fit (the
   same data preparation and binning in both), divided by --time-trees - 1. Libraries interleaved in a
   rotating order for --repeats rounds; the median is reported (target: rebelboost at least 1.5x LightGBM's
   speed). The timed fits run without callbacks (a watched rebelboost fit computes its training loss every
   iteration); as a check, the median interval between per-iteration callbacks of a separate --stamp-trees
   fit (not HGB: it has no callback), and the process CPU seconds per tree from the same two fits (both threads;
   less moved by other processes' load than the wall time). rebelboost's ``fit_info_["stage_seconds"]`` of its last long fit is
   recorded beside it.

Run from the repository root, with OpenMP threads sleeping when idle (the machine may be shared):

    OMP_WAIT_POLICY=passive python bench/regressor.py            # full: bench/results/regressor.md and .json
    OMP_WAIT_POLICY=passive python bench/regressor.py --quick    # about a minute: build/bench-quick/regressor.*
"""

from __future__ import annotations

import argparse
import inspect
import os
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import REPO, RESULTS, environment, markdown_table, record  # noqa: E402

DEPTHS = (3, 4, 6, 8)
LEARNING_RATE = 0.1
PEERS = ("LightGBM", "XGBoost", "HGB")
FULL = {"friedman_rows": 100_000, "friedman_test": 50_000, "seeds": 3, "diabetes_splits": 20,
        "time_rows": 1_000_000, "time_trees": 200, "stamp_trees": 50, "repeats": 5}
QUICK = {"friedman_rows": 10_000, "friedman_test": 5_000, "seeds": 1, "diabetes_splits": 3,
         "time_rows": 50_000, "time_trees": 20, "stamp_trees": 10, "repeats": 1}


def measured_checkout() -> dict:
    """The commit of the rebelboost measured, when it is another checkout's than this one (an editable install
    elsewhere): the harness records this checkout's commit. Local changes include untracked files."""
    import subprocess

    import rebelboost

    folder = os.path.dirname(os.path.realpath(rebelboost.__file__))

    def git(*a):
        try:
            return subprocess.run(["git", "-C", folder, *a], capture_output=True, text=True, timeout=10).stdout.strip()
        except (OSError, subprocess.SubprocessError):
            return ""

    return {"commit": git("rev-parse", "--short", "HEAD") or "unknown",
            "local_changes": bool(git("status", "--porcelain"))}


def rmse(y, p) -> float:
    return float(np.sqrt(np.mean((np.asarray(y, dtype=np.float64) - np.asarray(p, dtype=np.float64)) ** 2)))


def thread_limit(threads):
    """HistGradientBoosting has no n_jobs: its OpenMP threads are limited through threadpoolctl."""
    from threadpoolctl import threadpool_limits

    return threadpool_limits(limits=threads, user_api="openmp")


# ---- accuracy: one early-stopped fit per library ---------------------------------------------------------

def fit_rebelboost(split, args, seed, max_depth=None):
    from rebelboost import BoostingRegressor

    X_fit, y_fit, X_val, y_val = split[:4]
    params = {"max_depth": max_depth} if max_depth is not None else {}
    model = BoostingRegressor(n_estimators=args.cap, learning_rate=LEARNING_RATE, early_stopping=True,
                              n_iter_no_change=args.patience, scoring="rmse", random_state=seed,
                              n_jobs=args.threads, **params)
    model.fit(X_fit, y_fit, eval_set=[(X_val, y_val)])
    return model, {"kept": int(model.n_estimators_), "ran": int(model.fit_info_["n_iterations"])}


def fit_lightgbm(split, args, seed):
    import lightgbm as lgb

    X_fit, y_fit, X_val, y_val = split[:4]
    model = lgb.LGBMRegressor(n_estimators=args.cap, learning_rate=LEARNING_RATE, metric="rmse", random_state=seed,
                              n_jobs=args.threads, verbose=-1)
    # LightGBM 4.7 takes the eval set as eval_X / eval_y and deprecates eval_set; older versions have only eval_set.
    evals = ({"eval_X": (X_val,), "eval_y": (y_val,)} if "eval_X" in inspect.signature(model.fit).parameters
             else {"eval_set": [(X_val, y_val)]})
    model.fit(X_fit, y_fit, callbacks=[lgb.early_stopping(args.patience, first_metric_only=True, verbose=False)],
              **evals)
    ran = len(model.evals_result_["valid_0"]["rmse"])
    return model, {"kept": int(model.best_iteration_ or ran), "ran": ran}


def fit_xgboost(split, args, seed):
    import xgboost as xgb

    X_fit, y_fit, X_val, y_val = split[:4]
    model = xgb.XGBRegressor(tree_method="hist", n_estimators=args.cap, learning_rate=LEARNING_RATE,
                             early_stopping_rounds=args.patience, eval_metric="rmse", random_state=seed,
                             n_jobs=args.threads)
    model.fit(X_fit, y_fit, eval_set=[(X_val, y_val)], verbose=False)
    ran = len(model.evals_result()["validation_0"]["rmse"])
    return model, {"kept": int(model.best_iteration) + 1, "ran": ran}


def fit_hgb(split, args, seed):
    from sklearn.ensemble import HistGradientBoostingRegressor

    X_fit, y_fit, X_val, y_val = split[:4]
    model = HistGradientBoostingRegressor(max_iter=args.cap, learning_rate=LEARNING_RATE, early_stopping=True,
                                          scoring="loss", validation_fraction=len(y_val) / (len(y_fit) + len(y_val)),
                                          n_iter_no_change=args.patience, random_state=seed)
    with thread_limit(args.threads):
        model.fit(np.concatenate([X_fit, X_val]), np.concatenate([y_fit, y_val]))
    return model, {"kept": int(model.n_iter_), "ran": int(model.n_iter_)}


PEER_FITS = {"LightGBM": fit_lightgbm, "XGBoost": fit_xgboost, "HGB": fit_hgb}


def evaluate(name, fitter, split, args, seed, **kw):
    start = time.perf_counter()
    model, rounds = fitter(split, args, seed, **kw)
    seconds = time.perf_counter() - start
    X_val, y_val, X_test, y_test = split[2:]
    if name == "HGB":
        with thread_limit(args.threads):
            val, test = model.predict(X_val), model.predict(X_test)
    else:
        val, test = model.predict(X_val), model.predict(X_test)
    return {"model": name, "val_rmse": rmse(y_val, val), "test_rmse": rmse(y_test, test), "fit_s": seconds, **rounds}


def one_split(split, args, seed):
    """Every model on one train / validation / test split; rebelboost's depth picked on validation RMSE."""
    rows = {}
    if "rebelboost" in args.libraries:
        from rebelboost import BoostingRegressor

        default_depth = BoostingRegressor().get_params()["max_depth"]
        by_depth = {d: evaluate(f"rebelboost depth {d}", fit_rebelboost, split, args, seed, max_depth=d)
                    for d in DEPTHS}
        default = by_depth.get(default_depth) or evaluate("rebelboost", fit_rebelboost, split, args, seed)
        rows["rebelboost defaults"] = {**default, "model": "rebelboost defaults"}
        best = min(DEPTHS, key=lambda d: by_depth[d]["val_rmse"])
        rows["rebelboost depth picked"] = {**by_depth[best], "model": "rebelboost depth picked", "depth": best}
    for name in PEERS:
        if name in args.libraries:
            rows[name] = evaluate(name, PEER_FITS[name], split, args, seed)
    return rows


# ---- accuracy: the data sets ------------------------------------------------------------------------------

def carve(X, y, n_test, val_fraction, seed):
    """Test rows first, then validation rows carved from the training part (one permutation per seed)."""
    order = np.random.default_rng(seed).permutation(len(y))
    test, train = order[:n_test], order[n_test:]
    n_val = int(round(val_fraction * len(train)))
    val, fit = train[:n_val], train[n_val:]
    return X[fit], y[fit], X[val], y[val], X[test], y[test]


def friedman_splits(args):
    from sklearn.datasets import make_friedman1

    for seed in range(args.seeds):
        X, y = make_friedman1(n_samples=args.friedman_rows + args.friedman_test, noise=1.0, random_state=seed)
        yield seed, carve(X.astype(np.float32), y, args.friedman_test, args.val_fraction, seed)


def diabetes_splits(args):
    from sklearn.datasets import load_diabetes

    X, y = load_diabetes(return_X_y=True)
    for seed in range(args.diabetes_splits):
        yield seed, carve(X.astype(np.float32), y, int(round(0.25 * len(y))), args.val_fraction, seed)


def accuracy(name, splits, args):
    per_split = []
    for seed, split in splits:
        rows = one_split(split, args, seed)
        per_split.append({"seed": seed, "rows": [len(split[1]), len(split[3]), len(split[5])], "models": rows})
        print(name, seed, {k: round(v["test_rmse"], 4) for k, v in rows.items()}, flush=True)
    return per_split


def summarise(name, per_split):
    """One table row per model: mean (std) test RMSE, rounds kept, and the per-split ratio to LightGBM."""
    out = []
    for model in per_split[0]["models"]:
        test = np.array([s["models"][model]["test_rmse"] for s in per_split])
        row = {"data": name, "model": model, "test RMSE mean": float(test.mean()), "std": float(test.std(ddof=1))
               if len(test) > 1 else 0.0,
               "rounds kept (median)": float(np.median([s["models"][model]["kept"] for s in per_split])),
               "fit s (median)": float(np.median([s["models"][model]["fit_s"] for s in per_split]))}
        if "LightGBM" in per_split[0]["models"]:
            ratio = test / np.array([s["models"]["LightGBM"]["test_rmse"] for s in per_split])
            row.update({"/ LightGBM mean": float(ratio.mean()), "min": float(ratio.min()), "max": float(ratio.max())})
        if model == "rebelboost depth picked":
            row["depths picked"] = " ".join(str(s["models"][model]["depth"]) for s in per_split)
        out.append(row)
    return out


# ---- time per tree ----------------------------------------------------------------------------------------

def stamp_callback(library, stamps):
    """A per-iteration callback that records the wall clock (HGB has none: None)."""
    if library == "XGBoost":
        import xgboost as xgb

        class Stamp(xgb.callback.TrainingCallback):
            def after_iteration(self, model, epoch, evals_log):
                stamps.append(time.perf_counter())
                return False

        return Stamp()
    if library == "HGB":
        return None
    return lambda _record: stamps.append(time.perf_counter()) and None


def timed_fit(library, X, y, trees, threads, stamps=None):
    """Wall and process CPU seconds (all threads) of one fit of `trees` depth-3 trees, early stopping off, and the
    model. With a `stamps` list,
    a callback appends the wall clock after every tree (not in HGB): a callback is not free (rebelboost then
    reports each iteration's training loss), so the fits timed as a whole run without one."""
    callbacks = [stamp_callback(library, stamps)] if stamps is not None and library != "HGB" else None
    fit_kw = {}
    if library == "rebelboost":
        from rebelboost import BoostingRegressor
        model = BoostingRegressor(n_estimators=trees, learning_rate=LEARNING_RATE, max_depth=3, n_jobs=threads,
                                  random_state=0, callbacks=callbacks)
    elif library == "LightGBM":
        import lightgbm as lgb
        model = lgb.LGBMRegressor(n_estimators=trees, learning_rate=LEARNING_RATE, max_depth=3, num_leaves=8,
                                  min_child_samples=20, n_jobs=threads, verbose=-1)
        fit_kw = {"callbacks": callbacks}
    elif library == "XGBoost":
        import xgboost as xgb
        model = xgb.XGBRegressor(tree_method="hist", n_estimators=trees, learning_rate=LEARNING_RATE, max_depth=3,
                                 n_jobs=threads, callbacks=callbacks)
    else:
        from sklearn.ensemble import HistGradientBoostingRegressor
        model = HistGradientBoostingRegressor(max_iter=trees, learning_rate=LEARNING_RATE, max_depth=3,
                                              max_leaf_nodes=8, early_stopping=False)
    with thread_limit(threads):
        start, cpu = time.perf_counter(), time.process_time()
        model.fit(X, y, **fit_kw)
        return time.perf_counter() - start, time.process_time() - cpu, model


def time_per_tree(args):
    from sklearn.datasets import make_friedman1

    X, y = make_friedman1(n_samples=args.time_rows + 100_000, n_features=10, noise=1.0, random_state=0)
    X = X.astype(np.float32)
    X_test, y_test, X, y = X[args.time_rows:], y[args.time_rows:], X[:args.time_rows], y[:args.time_rows]
    libraries = [lib for lib in ("rebelboost",) + PEERS if lib in args.libraries]
    runs = {lib: [] for lib in libraries}
    extra = {}
    for lib in libraries:  # untimed warm-up: first-call costs (lazy imports, thread pools) out of the first repeat
        timed_fit(lib, X[:10_000], y[:10_000], 2, args.threads, [])
    for r in range(args.repeats):
        for lib in libraries[r % len(libraries):] + libraries[:r % len(libraries)]:  # rotating order
            one, one_cpu, _ = timed_fit(lib, X, y, 1, args.threads)
            many, many_cpu, model = timed_fit(lib, X, y, args.time_trees, args.threads)
            stamps = []
            if lib != "HGB":
                timed_fit(lib, X, y, args.stamp_trees, args.threads, stamps)
            runs[lib].append({"fit_1_s": one, "fit_s": many, "per_tree_s": (many - one) / (args.time_trees - 1),
                              "cpu_per_tree_s": (many_cpu - one_cpu) / (args.time_trees - 1),
                              "per_iteration_median_s": float(np.median(np.diff(stamps))) if len(stamps) > 1
                              else None})
            with thread_limit(args.threads):
                extra[lib] = {"test_rmse": rmse(y_test, model.predict(X_test))}
            if lib == "rebelboost":
                extra[lib]["stage_seconds"] = dict(model.fit_info_["stage_seconds"])
            print("time", r, lib, {k: v if v is None else round(v, 4) for k, v in runs[lib][-1].items()}, flush=True)
    return {lib: {"runs": runs[lib], "median_per_tree_s": statistics.median(x["per_tree_s"] for x in runs[lib]),
                  **extra[lib]} for lib in libraries}


def timing_rows(timing):
    """Per library: both measures of the time per tree (ms) and LightGBM's time over this library's (speed)."""
    def stamped(t):
        values = [x["per_iteration_median_s"] for x in t["runs"] if x["per_iteration_median_s"] is not None]
        return statistics.median(values) if values else None

    lgb = timing.get("LightGBM")
    rows = []
    for lib, t in timing.items():
        per_iteration = stamped(t)
        rows.append({
            "library": lib, "per tree (ms): fit difference, median": t["median_per_tree_s"] * 1e3,
            "each repeat": " ".join(f"{x['per_tree_s'] * 1e3:.2f}" for x in t["runs"]),
            "LightGBM / this": lgb["median_per_tree_s"] / t["median_per_tree_s"] if lgb else "",
            "same repeat's LightGBM / this": " ".join(f"{a['per_tree_s'] / b['per_tree_s']:.2f}"
                                                     for a, b in zip(lgb["runs"], t["runs"])) if lgb else "",
            "per tree (ms): callback interval, median": per_iteration * 1e3 if per_iteration else "no callback",
            "LightGBM / this (callback)": stamped(lgb) / per_iteration if lgb and per_iteration else "",
            "process CPU per tree (ms), median": statistics.median(x["cpu_per_tree_s"] for x in t["runs"]) * 1e3,
            "1-tree fit (s), median": statistics.median(x["fit_1_s"] for x in t["runs"]),
            "test RMSE": t["test_rmse"]})
    return rows


# ---- report ----------------------------------------------------------------------------------------------

def report(args, results):
    mode = "quick" if args.quick else "full"
    measured = results.get("rebelboost_measured")
    lines = [f"# The regressor against LightGBM, XGBoost and HistGradientBoosting ({mode})", ""]
    if measured:
        lines += [f"rebelboost measured: commit {measured['commit']}"
                  f"{' + local changes' if measured['local_changes'] else ''} of the checkout it was imported from."]
    lines += ["", "## Accuracy", "",
              f"Learning rate {LEARNING_RATE} for all, cap {args.cap} rounds, early stopping on validation RMSE with "
              f"patience {args.patience} rounds for all, {args.threads} threads; peers otherwise at their defaults. "
              f"Validation: {args.val_fraction:.0%} of the training part. HGB takes no eval set: it gets training and "
              "validation rows together and carves its own validation split of the same size (scoring='loss', "
              "its own random rows), and keeps the rounds after its best one. 'depth picked': rebelboost with "
              f"max_depth in {{{', '.join(map(str, DEPTHS))}}} chosen on validation RMSE. friedman1: "
              f"{args.friedman_rows} training rows (validation carved from them), {args.friedman_test} test rows, "
              f"noise 1.0 (Bayes RMSE 1.0), {args.seeds} seeds; diabetes: 442 rows, {args.diabetes_splits} random "
              "splits, 25 % test. '/ LightGBM': the per-split ratio of test RMSEs (mean, min, max); "
              "target <= 1.02.", ""]
    lines += markdown_table(results["accuracy_summary"])
    if "time_per_tree" in results:
        lines += ["", "## Time per tree", "",
                  f"make_friedman1({args.time_rows}, n_features=10, noise=1), float32, depth 3 for all (LightGBM "
                  "num_leaves=8, HGB max_leaf_nodes=8), learning rate 0.1, no early stopping, "
                  f"{args.threads} threads. Per tree = (wall time of a {args.time_trees}-tree fit - wall time of a "
                  f"1-tree fit) / {args.time_trees - 1} (the same data checks, binning and Dataset construction "
                  "in both); beside it, "
                  f"as a check, the median interval between per-iteration callbacks in a separate {args.stamp_trees}-"
                  "tree fit (HGB has none), and the process CPU time per tree (both threads; the same difference of "
                  "two fits), which a loaded machine changes less than the wall time; "
                  "libraries interleaved in a rotating order, "
                  f"{args.repeats} repeats, median. Test RMSE of the {args.time_trees}-tree model on 100 000 "
                  "further rows. Target: rebelboost at least 1.5x LightGBM's speed.", ""]
        lines += markdown_table(timing_rows(results["time_per_tree"]))
        stages = results["time_per_tree"].get("rebelboost", {}).get("stage_seconds")
        if stages:
            lines += ["", "rebelboost's stage seconds (last long fit): "
                      + ", ".join(f"{k} {v:.3f}" for k, v in stages.items())]
    return lines


def parse(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes (about a minute)")
    parser.add_argument("--out", default=None, help="results folder (bench/results; --quick: build/bench-quick)")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--patience", type=int, default=50)
    parser.add_argument("--cap", type=int, default=5000)
    parser.add_argument("--val-fraction", type=float, default=0.2)
    parser.add_argument("--libraries", default="rebelboost,LightGBM,XGBoost,HGB")
    parser.add_argument("--skip", default="", help="comma-separated parts to skip: friedman1, diabetes, time")
    for key, value in FULL.items():
        parser.add_argument("--" + key.replace("_", "-"), type=int, default=None, help=f"full mode: {value}")
    args = parser.parse_args(argv)
    for key, value in (QUICK if args.quick else FULL).items():
        if getattr(args, key) is None:
            setattr(args, key, value)
    args.libraries = args.libraries.split(",")
    args.skip = [s for s in args.skip.split(",") if s]
    if "LightGBM" not in args.libraries:
        parser.error("LightGBM is the reference of every ratio: keep it in --libraries")
    if args.out is None:
        args.out = os.path.join(REPO, "build", "bench-quick") if args.quick else RESULTS
    return args


def main(argv=None):
    args = parse(argv)
    env = environment(args.threads)  # the load before the run (record() adds the load after it)
    results = {"settings": {k: v for k, v in vars(args).items() if k != "out"}, "accuracy": {}}
    if "rebelboost" in args.libraries:
        results["rebelboost_measured"] = measured_checkout()
    if "friedman1" not in args.skip:
        results["accuracy"]["friedman1"] = accuracy("friedman1", friedman_splits(args), args)
    if "diabetes" not in args.skip:
        results["accuracy"]["diabetes"] = accuracy("diabetes", diabetes_splits(args), args)
    results["accuracy_summary"] = [row for name, splits in results["accuracy"].items()
                                   for row in summarise(name, splits)]
    if "time" not in args.skip:
        results["time_per_tree"] = time_per_tree(args)
    record("regressor", results, report(args, results), out_dir=args.out, threads=args.threads, env=env)
    print("\n".join(report(args, results)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
