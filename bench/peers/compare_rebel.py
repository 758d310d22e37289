"""REBEL on Fashion-MNIST (10 classes) and digits, side by side with LightGBM, XGBoost and scikit-learn.

Every library gets the same threads (--threads, default 2). For REBEL, the fit-time of every iteration is
recorded through the engine's per-iteration callback and the test error of every stage is computed from
staged predictions, giving the curve of test error against fit time.

    OMP_WAIT_POLICY=passive python bench/peers/compare_rebel.py fmnist [--iters 1000] [--skip-sklearn-adaboost]
    OMP_WAIT_POLICY=passive python bench/peers/compare_rebel.py digits
    python bench/peers/compare_rebel.py smoothing        # effect of the step smoothing on digits, depths 1-4
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

import rebelboost  # noqa: E402
from rebelboost import REBELClassifier, _core  # noqa: E402

# bench/run.py --quick points this elsewhere, so quick runs never overwrite the recorded results.
RESULTS = os.environ.get("REBELBOOST_BENCH_RESULTS") or os.path.join(os.path.dirname(__file__), "..", "results")


def rebel_curve(X_train, y_train, X_test, y_test, depth, iters, threads, smoothing=-1.0, X_val=None, y_val=None):
    """Fit REBEL once; return per-stage (cumulative fit seconds, test error[, validation error])."""
    classes, y_enc = np.unique(y_train, return_inverse=True)
    stamps = []
    start = time.perf_counter()
    model, history, _, _ = _core.train(X_train, y_enc.astype(np.int32), None, len(classes), "rebel", iters, depth, 256,
                                    1.0, threads, smoothing=smoothing,
                                    callback=lambda info: stamps.append(time.perf_counter()) or True)
    total = time.perf_counter() - start
    setup = (stamps[0] - start) if stamps else total
    clf = REBELClassifier(max_depth=depth, n_jobs=threads)
    clf.classes_, clf._model, clf.n_features_in_ = classes, model, X_train.shape[1]

    def errors(X, y):
        out = []
        for scores in clf.staged_decision_function(X):
            out.append(float(np.mean(classes[np.argmax(scores, axis=1)] != y)))
        return np.array(out)

    times = np.array(stamps) - start
    result = {"depth": depth, "fit_s": total, "setup_s": setup, "times": times, "test_error": errors(X_test, y_test)}
    if X_val is not None:
        result["val_error"] = errors(X_val, y_val)
    return result


def peers(X_train, y_train, X_test, y_test, threads, skip_sklearn_adaboost):
    import lightgbm as lgb
    import xgboost as xgb
    from sklearn.ensemble import AdaBoostClassifier as SkAdaBoost
    from sklearn.ensemble import HistGradientBoostingClassifier
    from sklearn.tree import DecisionTreeClassifier
    from threadpoolctl import threadpool_limits

    rows = []

    def run(name, make):
        with threadpool_limits(limits=threads, user_api="openmp"):
            model = make()
            start = time.perf_counter()
            model.fit(X_train, y_train)
            elapsed = time.perf_counter() - start
            error = float(np.mean(model.predict(X_test) != y_test))
        rows.append({"library": name, "fit_s": elapsed, "test_error": error})
        print(f"  {name}: fit {elapsed:.1f} s, test error {100 * error:.2f} %", flush=True)

    run("LightGBM (defaults)", lambda: lgb.LGBMClassifier(n_jobs=threads, verbose=-1))
    run("XGBoost hist (defaults)", lambda: xgb.XGBClassifier(tree_method="hist", n_jobs=threads))
    run("sklearn HistGradientBoosting (defaults)", lambda: HistGradientBoostingClassifier(random_state=0))
    if not skip_sklearn_adaboost:
        run("sklearn AdaBoost SAMME depth 2, 200", lambda: SkAdaBoost(DecisionTreeClassifier(max_depth=2),
                                                                        n_estimators=200, random_state=0))
    return rows


def first_time_below(curve, target):
    hit = np.flatnonzero(curve["test_error"] <= target)
    return (float(curve["times"][hit[0]]), int(hit[0]) + 1) if hit.size else (None, None)


def fmnist(args):
    X_train, y_train, X_test, y_test = fashion_mnist()
    X_train, X_test = X_train.astype(np.float32), X_test.astype(np.float32)
    print("peers (Fashion-MNIST 60 000 x 784, 10 classes):", flush=True)
    peer_rows = peers(X_train, y_train, X_test, y_test, args.threads, args.skip_sklearn_adaboost)
    curves = []
    for depth in (2, 4):
        c = rebel_curve(X_train, y_train, X_test, y_test, depth, args.iters, args.threads)
        best = int(np.argmin(c["test_error"]))
        print(f"  REBEL depth {depth}: {len(c['times'])} trees in {c['fit_s']:.1f} s; oracle (test-picked) error "
              f"{100 * c['test_error'][best]:.2f} % at {best + 1} trees ({c['times'][best]:.1f} s)", flush=True)
        curves.append(c)
    lines = [f"# REBEL on Fashion-MNIST ({time.strftime('%Y-%m-%d')}, {args.threads} threads each)", "",
             "| method | fit time (s) | test error |", "|---|---|---|"]
    for r in peer_rows:
        lines.append(f"| {r['library']} | {r['fit_s']:.1f} | {100 * r['test_error']:.2f} % |")
    for c in curves:
        best = int(np.argmin(c["test_error"]))
        lines.append(f"| REBEL depth {c['depth']}, oracle: stage picked on the test set ({best + 1} trees; not a result) | "
                     f"{c['times'][best]:.1f} | {100 * c['test_error'][best]:.2f} % |")
        lines.append(f"| REBEL depth {c['depth']}, all {len(c['times'])} trees | {c['fit_s']:.1f} | "
                     f"{100 * c['test_error'][-1]:.2f} % |")
    sk = [r for r in peer_rows if r["library"].startswith("sklearn AdaBoost")]
    target = sk[0]["test_error"] if sk else args.sklearn_adaboost_error
    sk_time = sk[0]["fit_s"] if sk else args.sklearn_adaboost_time
    if not sk:
        lines += ["", f"scikit-learn AdaBoost (SAMME, depth 2, 200) not rerun (--skip-sklearn-adaboost): its test error "
                  f"{100 * target:.2f} % and fit time {sk_time} s come from an earlier run of this script."]
    lines += ["", f"Time for REBEL to reach scikit-learn AdaBoost's test error ({100 * target:.2f} %):", ""]
    for c in curves:
        t, trees = first_time_below(c, target)
        ratio = f", {sk_time / t:.0f}x faster than scikit-learn's {sk_time:.0f} s" if t and sk_time else ""
        lines.append(f"- depth {c['depth']}: {t:.2f} s ({trees} trees){ratio}" if t else f"- depth {c['depth']}: not reached")
    lgb_error = peer_rows[0]["test_error"]
    for c in curves:
        lines.append(f"- depth {c['depth']}: oracle (test-picked) REBEL error minus LightGBM default: "
                     f"{100 * (c['test_error'].min() - lgb_error):+.2f} percentage points")
    lines += ["", "The oracle rows pick the stage on the test set: they bound what stopping could give and are not "
              "results. Stopping picked on a validation split of the training set: `time_to_accuracy.md`.",
              "", "Curve (REBEL test error against cumulative fit time):", "", "| depth | trees | fit time (s) | test error |",
              "|---|---|---|---|"]
    for c in curves:
        for t in sorted({1, 5, 10, 20, 50, 100, 200, 300, 500, 750, len(c["times"])}):
            if t <= len(c["times"]):
                lines.append(f"| {c['depth']} | {t} | {c['times'][t - 1]:.1f} | {100 * c['test_error'][t - 1]:.2f} % |")
    write("rebel_fmnist", lines, {"peers": peer_rows, "curves": curves})


def digits(args):
    import lightgbm as lgb
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split

    X, y = load_digits(return_X_y=True)
    rows = []
    for seed in range(5):
        X_train, X_rest, y_train, y_rest = train_test_split(X, y, train_size=0.5, random_state=seed, stratify=y)
        X_val, X_test, y_val, y_test = train_test_split(X_rest, y_rest, test_size=0.5, random_state=seed, stratify=y_rest)
        best = None
        for depth in (2, 3):
            c = rebel_curve(X_train, y_train, X_test, y_test, depth, args.iters, args.threads, X_val=X_val, y_val=y_val)
            t = int(np.argmin(c["val_error"]))  # validation picks depth and number of trees
            if best is None or c["val_error"][t] < best[0]:
                best = (c["val_error"][t], depth, t + 1, c["test_error"][t], c["fit_s"])
        start = time.perf_counter()
        lg = lgb.LGBMClassifier(n_jobs=args.threads, verbose=-1).fit(X_train, y_train)
        lg_time = time.perf_counter() - start
        lg_err = float(np.mean(lg.predict(X_test) != y_test))
        rows.append({"seed": seed, "rebel_depth": best[1], "rebel_trees": best[2], "rebel_test_error": best[3],
                     "rebel_fit_s": best[4], "lightgbm_test_error": lg_err, "lightgbm_fit_s": lg_time})
        print(rows[-1], flush=True)
    lines = [f"# REBEL on digits, 5 random 50/25/25 splits ({time.strftime('%Y-%m-%d')})", "",
             "| split | REBEL depth | REBEL trees | REBEL test error | LightGBM default test error |", "|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['seed']} | {r['rebel_depth']} | {r['rebel_trees']} | {100 * r['rebel_test_error']:.2f} % | "
                     f"{100 * r['lightgbm_test_error']:.2f} % |")
    mean_r = np.mean([r["rebel_test_error"] for r in rows])
    mean_l = np.mean([r["lightgbm_test_error"] for r in rows])
    lines.append(f"| mean | | | {100 * mean_r:.2f} % | {100 * mean_l:.2f} % |")
    write("rebel_digits", lines, rows)


def smoothing(args):
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split

    X, y = load_digits(return_X_y=True)
    settings = [("default 1/(K N)", -1.0), ("tiny 1e-12", 1e-12)]
    lines = [f"# Effect of the step smoothing on digits (mean test error over 5 random 50/50 splits, {args.iters} trees)", "",
             "| depth | " + " | ".join(name for name, _ in settings) + " |", "|---|" + "---|" * len(settings)]
    table = {}
    for depth in (1, 2, 3, 4):
        cells = []
        for name, value in settings:
            errs = []
            for seed in range(5):
                X_train, X_test, y_train, y_test = train_test_split(X, y, train_size=0.5, random_state=seed, stratify=y)
                c = rebel_curve(X_train, y_train, X_test, y_test, depth, args.iters, args.threads, smoothing=value)
                errs.append(c["test_error"][-1])
            table[(depth, name)] = float(np.mean(errs))
            cells.append(f"{100 * np.mean(errs):.2f} %")
        lines.append(f"| {depth} | " + " | ".join(cells) + " |")
        print(lines[-1], flush=True)
    write("rebel_smoothing", lines, {f"{d}/{n}": v for (d, n), v in table.items()})


def write(name, lines, data):
    report = "\n".join(lines)
    print(report)
    os.makedirs(RESULTS, exist_ok=True)
    with open(os.path.join(RESULTS, name + ".md"), "w") as handle:
        handle.write(report + "\n")

    def plain(o):
        if isinstance(o, np.ndarray):
            return o.tolist()
        if isinstance(o, dict):
            return {k: plain(v) for k, v in o.items()}
        if isinstance(o, list):
            return [plain(v) for v in o]
        return o

    with open(os.path.join(RESULTS, name + ".json"), "w") as handle:
        json.dump(plain(data), handle)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("task", choices=["fmnist", "digits", "smoothing"])
    parser.add_argument("--iters", type=int, default=None)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--skip-sklearn-adaboost", action="store_true",
                        help="use --sklearn-adaboost-error/--sklearn-adaboost-time from an earlier run instead")
    parser.add_argument("--sklearn-adaboost-error", type=float, default=0.378)
    parser.add_argument("--sklearn-adaboost-time", type=float, default=None)
    args = parser.parse_args(argv)
    if args.iters is None:
        args.iters = {"fmnist": 1000, "digits": 1000, "smoothing": 300}[args.task]
    {"fmnist": fmnist, "digits": digits, "smoothing": smoothing}[args.task](args)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
