"""Thesis Figs. 5.9/5.10 protocol: REBEL with Localized Similarities against tree-REBEL, LightGBM, an RBF SVM
and one-hidden-layer MLPs on digits, wine, breast cancer and a 10 000-row Fashion-MNIST subset.

Five random stratified 50/25/25 splits per data set; every choice is made on the validation quarter, never
on the test quarter:
  similarity-REBEL  at most 200 learners (number picked on validation), similarity_scaling picked on
                    validation; and, with that scaling, trained until the training loss falls below 1/N in
                    the thesis's normalisation (ours below 2 / (K N)), capped at --max-learners
  tree-REBEL        at most 200 trees, depth in {1, 2, 3, 4}, both picked on validation
  LightGBM          defaults; and tuned: num_leaves {7, 15, 31, 63} x learning_rate {0.03, 0.1, 0.3} x
                    min_child_samples {3, 20}, trees up to 1 000 with early stopping on validation
  RBF SVM           scikit-learn SVC on standardised features, 5 x 6 grid: C {0.1, 1, 10, 100, 1000} x
                    gamma {0.01, 0.03, 0.1, 0.3, 1, 3} / n_features
  MLP               scikit-learn MLPClassifier on standardised features, one hidden layer of 4 d or 4 K units,
                    the better on validation
Writes bench/results/similarity_benchmark.{md,json}; per-split results are cached in the JSON, so data
sets can be run one at a time:

    OMP_WAIT_POLICY=passive python bench/experiments/similarity_benchmark.py --datasets digits wine breast_cancer
    OMP_WAIT_POLICY=passive python bench/experiments/similarity_benchmark.py --datasets fmnist10k --max-learners 1000 \
        --small-lgb-grid --resume
    OMP_WAIT_POLICY=passive python bench/experiments/similarity_benchmark.py --datasets fmnist10k --only-similarity \
        --max-learners 100000 --max-seconds 1800
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import warnings

import numpy as np
from sklearn.datasets import load_breast_cancer, load_digits, load_wine
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import train_test_split
from sklearn.neural_network import MLPClassifier
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC

from rebelboost import REBELClassifier

RESULTS = os.path.join(os.path.dirname(__file__), "..", "results")
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "peers"))  # datasets (Fashion-MNIST)
N_JOBS = 2


def load(name):
    if name == "digits":
        return load_digits(return_X_y=True)
    if name == "wine":
        return load_wine(return_X_y=True)
    if name == "breast_cancer":
        return load_breast_cancer(return_X_y=True)
    if name == "fmnist10k":
        from datasets import fashion_mnist

        X, y, _, _ = fashion_mnist()
        rows = np.random.RandomState(0).choice(len(y), 10_000, replace=False)
        return X[rows].astype(np.float64), y[rows]
    raise SystemExit(f"unknown data set {name}")


def split(X, y, seed):
    Xtr, Xrest, ytr, yrest = train_test_split(X, y, test_size=0.5, random_state=seed, stratify=y)
    Xva, Xte, yva, yte = train_test_split(Xrest, yrest, test_size=0.5, random_state=seed, stratify=yrest)
    return Xtr, ytr, Xva, yva, Xte, yte


def timed_fit(make, X, y, **fit):
    start = time.perf_counter()
    model = make().fit(X, y, **fit)
    return model, time.perf_counter() - start


def staged_errors(clf, X, y):
    return np.array([np.mean(p != y) for p in clf.staged_predict(X)])


def pick_on_validation(d, options, make):
    """Fits make(option) for each option; returns ((option, T, model, fit seconds), seconds of all fits) for
    the option and stage T with the lowest validation error (the first on ties)."""
    Xtr, ytr, Xva, yva, _, _ = d
    best, total = None, 0.0
    for option in options:
        clf, seconds = timed_fit(lambda: make(option), Xtr, ytr)
        total += seconds
        val = staged_errors(clf, Xva, yva)
        T = int(np.argmin(val)) + 1
        if best is None or val[T - 1] < best[0]:
            best = (val[T - 1], option, T, clf, seconds)
    return best[1:], total


def similarity_rebel(d, max_learners, max_seconds=float("inf")):
    """<= 200 learners and the scaling picked on validation; then the same scaling until loss < 1/N (or
    max_learners, or max_seconds of fitting)."""
    Xtr, ytr, _, _, Xte, yte = d
    (scaling, T, clf, seconds), total = pick_on_validation(d, ("feature", "global"), lambda scaling: REBELClassifier(
        weak_learner="similarity", similarity_scaling=scaling, n_estimators=200, n_jobs=N_JOBS))
    picked = {"error": float(np.mean(clf.predict(Xte, n_iter=T) != yte)), "fit_seconds": seconds,
              "tuning_seconds": total, "choice": f"{scaling}, T={T}",
              "candidates_per_iteration": float(clf.fit_info_["candidates"].mean())}
    K, N = len(np.unique(ytr)), len(ytr)
    threshold = 2.0 / (K * N)
    start = time.perf_counter()
    long, seconds = timed_fit(lambda: REBELClassifier(
        weak_learner="similarity", similarity_scaling=scaling, n_estimators=max_learners, n_jobs=N_JOBS,
        callbacks=[lambda record: record["train_loss"] < threshold or time.perf_counter() - start > max_seconds]),
        Xtr, ytr)
    loss = long.fit_info_["train_loss"]
    cap = "time cap" if long.n_estimators_ < max_learners else "cap"
    until = {"error": float(np.mean(long.predict(Xte) != yte)), "fit_seconds": seconds,
             "choice": f"{scaling}, T={long.n_estimators_}" + ("" if loss[-1] < threshold else f" ({cap}; loss "
                                                                f"{loss[-1] * K * N / 2:.2g}/N)"),
             "reached": bool(loss[-1] < threshold), "n_learners": int(long.n_estimators_),
             "train_error": float(np.mean(long.predict(Xtr) != ytr))}
    return {"similarity-REBEL (<=200, val)": picked, "similarity-REBEL (loss < 1/N)": until}


def tree_rebel(d):
    _, _, _, _, Xte, yte = d
    (depth, T, clf, seconds), total = pick_on_validation(d, (1, 2, 3, 4), lambda depth: REBELClassifier(
        n_estimators=200, max_depth=depth, n_jobs=N_JOBS))
    return {"tree-REBEL (<=200, val)": {"error": float(np.mean(clf.predict(Xte, n_iter=T) != yte)),
                                        "fit_seconds": seconds, "tuning_seconds": total, "choice": f"depth {depth}, T={T}"}}


def lightgbm_default(d):
    import lightgbm as lgb

    Xtr, ytr, _, _, Xte, yte = d
    default, seconds = timed_fit(lambda: lgb.LGBMClassifier(n_jobs=N_JOBS, verbose=-1), Xtr, ytr)
    return {"LightGBM default": {"error": float(np.mean(default.predict(Xte) != yte)), "fit_seconds": seconds,
                                 "choice": "defaults"}}


def lightgbm(d, small_grid):
    import lightgbm as lgb

    Xtr, ytr, Xva, yva, Xte, yte = d
    grid = ((15, 31, 63), (0.1, 0.3), (20,)) if small_grid else ((7, 15, 31, 63), (0.03, 0.1, 0.3), (3, 20))
    out = lightgbm_default(d)
    best, total = None, 0.0
    for leaves in grid[0]:
        for rate in grid[1]:
            for min_child in grid[2]:
                clf, seconds = timed_fit(
                    lambda: lgb.LGBMClassifier(n_estimators=1000, num_leaves=leaves, learning_rate=rate,
                                               min_child_samples=min_child, n_jobs=N_JOBS, verbose=-1),
                    Xtr, ytr, eval_X=(Xva,), eval_y=(yva,), callbacks=[lgb.early_stopping(50, verbose=False)])
                total += seconds
                val = float(np.mean(clf.predict(Xva) != yva))
                if best is None or val < best[0]:
                    best = (val, f"leaves {leaves}, lr {rate}, min_child {min_child}, T={clf.best_iteration_}", clf, seconds)
    _, choice, clf, seconds = best
    out["LightGBM tuned (val)"] = {"error": float(np.mean(clf.predict(Xte) != yte)), "fit_seconds": seconds,
                                   "tuning_seconds": total, "choice": choice}
    return out


def svm(d):
    Xtr, ytr, Xva, yva, Xte, yte = d
    best, total = None, 0.0
    for C in (0.1, 1, 10, 100, 1000):
        for g in (0.01, 0.03, 0.1, 0.3, 1, 3):
            clf, seconds = timed_fit(lambda: make_pipeline(StandardScaler(), SVC(C=C, gamma=g / Xtr.shape[1])), Xtr, ytr)
            total += seconds
            val = float(np.mean(clf.predict(Xva) != yva))
            if best is None or val < best[0]:
                best = (val, f"C {C}, gamma {g}/d", clf, seconds)
    _, choice, clf, seconds = best
    return {"RBF SVM (5x6 grid, val)": {"error": float(np.mean(clf.predict(Xte) != yte)), "fit_seconds": seconds,
                                        "tuning_seconds": total, "choice": choice}}


def mlp(d, seed):
    Xtr, ytr, Xva, yva, Xte, yte = d
    best, total = None, 0.0
    K = len(np.unique(ytr))
    for hidden, name in ((4 * Xtr.shape[1], "d-4d-K"), (4 * K, "d-4K-K")):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            clf, seconds = timed_fit(lambda: make_pipeline(StandardScaler(), MLPClassifier(
                hidden_layer_sizes=(hidden,), max_iter=500, random_state=seed)), Xtr, ytr)
        total += seconds
        val = float(np.mean(clf.predict(Xva) != yva))
        if best is None or val < best[0]:
            best = (val, name, clf, seconds)
    _, choice, clf, seconds = best
    return {"MLP (best of 2, val)": {"error": float(np.mean(clf.predict(Xte) != yte)), "fit_seconds": seconds,
                                     "tuning_seconds": total, "choice": choice}}


def table(results):
    methods = ["similarity-REBEL (<=200, val)", "similarity-REBEL (loss < 1/N)", "tree-REBEL (<=200, val)",
               "LightGBM default", "LightGBM tuned (val)", "RBF SVM (5x6 grid, val)", "MLP (best of 2, val)"]
    lines = ["| data set (N train, d, K) | " + " | ".join(methods) + " |", "|---" * (len(methods) + 1) + "|"]
    times = list(lines)
    for name, entry in results.items():
        splits = entry["splits"]
        if not splits:
            continue
        cells, tcells = [], []
        best_mean = min(np.mean([s[m]["error"] for s in splits]) for m in methods if all(m in s for s in splits))
        for m in methods:
            errs = [s[m]["error"] for s in splits if m in s]
            secs = [s[m]["fit_seconds"] for s in splits if m in s]
            if not errs:
                cells.append("-")
                tcells.append("-")
                continue
            text = f"{100 * np.mean(errs):.2f}" + (f" +- {100 * np.std(errs):.2f}" if len(errs) > 1 else "")
            cells.append(f"**{text}**" if np.isclose(np.mean(errs), best_mean) else text)
            tcells.append(f"{np.mean(secs):.2f}")
        head = f"{name} ({entry['n_train']}, {entry['d']}, {entry['K']}), {len(splits)} splits"
        lines.append(f"| {head} | " + " | ".join(cells) + " |")
        times.append(f"| {head} | " + " | ".join(tcells) + " |")
    return lines, times


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", nargs="+", default=["digits", "wine", "breast_cancer", "fmnist10k"])
    parser.add_argument("--splits", type=int, default=5)
    parser.add_argument("--max-learners", type=int, default=3000, help="cap of the 'until loss < 1/N' run")
    parser.add_argument("--small-lgb-grid", action="store_true",
                        help="LightGBM tuned over num_leaves {15, 31, 63} x learning_rate {0.1, 0.3} only")
    parser.add_argument("--max-seconds", type=float, default=float("inf"),
                        help="wall-time cap of the 'until loss < 1/N' fit")
    parser.add_argument("--resume", action="store_true", help="keep a data set's cached splits and add the rest")
    parser.add_argument("--only-similarity", action="store_true",
                        help="rerun similarity-REBEL on the cached splits of --datasets; keep every other method's results")
    parser.add_argument("--table-only", action="store_true", help="rewrite the .md from the cached .json")
    parser.add_argument("--out", default=os.path.join(RESULTS, "similarity_benchmark"))
    args = parser.parse_args()
    results = {}
    if os.path.exists(args.out + ".json"):
        with open(args.out + ".json") as handle:
            results = json.load(handle)
    if args.table_only:
        write_table(results, args.out)
        return
    for name in args.datasets:
        X, y = load(name)
        if args.only_similarity:
            for seed, row in enumerate(results[name]["splits"]):
                row.update(similarity_rebel(split(X, y, seed), args.max_learners, args.max_seconds))
                print(name, seed, {m: round(100 * r["error"], 2) for m, r in row.items()}, flush=True)
                with open(args.out + ".json", "w") as handle:
                    json.dump(results, handle, indent=1)
            write_table(results, args.out)
            continue
        entry = {"n_train": len(y) // 2, "d": X.shape[1], "K": len(np.unique(y)), "splits": []}
        if args.resume and name in results:
            entry = results[name]
        results[name] = entry
        for seed in range(len(entry["splits"]), args.splits):
            d = split(X, y, seed)
            row = {}
            row.update(similarity_rebel(d, args.max_learners, args.max_seconds))
            row.update(tree_rebel(d))
            row.update(lightgbm(d, args.small_lgb_grid))
            row.update(svm(d))
            row.update(mlp(d, seed))
            entry["splits"].append(row)
            print(name, seed, {m: round(100 * r["error"], 2) for m, r in row.items()}, flush=True)
            with open(args.out + ".json", "w") as handle:
                json.dump(results, handle, indent=1)
            write_table(results, args.out)


def paired(results, ours="similarity-REBEL (loss < 1/N)"):
    """Per data set and rival: splits where `ours` had lower / equal / higher test error."""
    lines = [f"| data set | " + " | ".join(f"vs {m}" for m in RIVALS) + " |", "|---" * (len(RIVALS) + 1) + "|"]
    for name, entry in results.items():
        cells = []
        for m in RIVALS:
            pairs = [(s[ours]["error"], s[m]["error"]) for s in entry["splits"] if ours in s and m in s]
            cells.append("/".join(str(sum(f(a, b) for a, b in pairs)) for f in
                                  (lambda a, b: a < b, lambda a, b: a == b, lambda a, b: a > b)))
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return lines


RIVALS = ["similarity-REBEL (<=200, val)", "tree-REBEL (<=200, val)", "LightGBM default", "LightGBM tuned (val)",
          "RBF SVM (5x6 grid, val)", "MLP (best of 2, val)"]


FMNIST_NOTE = (
    "fmnist10k (10 000 random rows of the F-MNIST training set): one split only (more splits: "
    "similarity_fmnist_splits.md); the other methods from `... --datasets fmnist10k --max-learners 1000 "
    "--small-lgb-grid --resume` (LightGBM tuned over 6 configurations; ~40 min of the 2-core machine); "
    "similarity-REBEL rerun with the distance-column cache (main 347655d; the <= 200 column is unchanged, "
    "its fit 149 -> 5.0 s): `OMP_WAIT_POLICY=passive python "
    "bench/experiments/similarity_benchmark.py --datasets fmnist10k --only-similarity --max-learners 100000 "
    "--max-seconds 1800`. Its loss < 1/N fit stopped at the 30-minute cap after 74 996 learners (24 ms "
    "each) with zero training error but the loss still 820/N (4 400/N after 1 000 learners: the loss "
    "criterion itself is out of reach); load average 1.0-5.8 at readings during the run. The earlier run, "
    "capped at 1 000 learners, ended at 19.32 % with 19.7 % training error. Why similarity-REBEL loses "
    "on digits at <= 200 learners: `similarity_locality.md`.")


def write_table(results, out):
    errors, times = table(results)
    intro = ("`OMP_WAIT_POLICY=passive python bench/experiments/similarity_benchmark.py` (2-core shared VM, n_jobs=2 "
             "where the library has threads; every choice made on the validation quarter). Test error in % (mean "
             "+- std over the splits; bold: the best mean).")
    if max(len(entry["splits"]) for entry in results.values()) > 5:
        intro += (" More than 5 splits: `... --splits N --resume --out OUT`, started from a copy of the 5-split "
                  "JSON (splits are seeded by their number, so the first five are the same splits and results).")
    if "fmnist10k" in results:
        intro += " " + FMNIST_NOTE
    lines = ["# Localized Similarities vs trees, LightGBM, SVM and MLP (thesis Figs. 5.9/5.10 protocol)", "",
             intro, ""] + errors + [
             "", "Fit time in seconds of the chosen configuration (one fit; the tuning fits are in the JSON):", ""] + times + [
             "", "Paired by split: similarity-REBEL (loss < 1/N) lower / equal / higher test error than each rival:", ""
             ] + paired(results)
    with open(out + ".md", "w") as handle:
        handle.write("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
