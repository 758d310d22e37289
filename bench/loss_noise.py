"""REBEL's three losses under label noise: test error at the stage picked on validation, side by side.

Tasks: two Fashion-MNIST pairs (Debian's dataset-fashion-mnist; T-shirt/top vs Shirt, Pullover vs Coat; per
split seed a random --pair-rows of the pair's 12 000 training images, the whole pair test set) and
scikit-learn's digits (10 classes). Per task and split seed, the training set is cut into training (80 %)
and validation (20 %); then 0 %, 10 % or 20 % of the labels of both are flipped (binary: to the other
class; digits: to a uniformly drawn other class), so the validation data is as noisy as the training data,
as it would be when carved from it. The test labels stay clean. Each loss (exponential, logistic, squared)
trains the same number of trees with the same parameters on the same rows; the stage is the one of lowest
validation error over every tree (the first such), i.e. unlimited patience within the tree cap, the same
rule for all three. Reported: test error at the picked stage (mean and standard deviation over splits),
the picked stage, and the fit time per tree.

    nice -n 5 python bench/loss_noise.py [--splits 3] [--trees 300] [--depth 3] [--threads 2] [--pair-rows 12000]
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "peers"))  # datasets
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # harness
from datasets import fashion_mnist  # noqa: E402
from harness import markdown_table, record  # noqa: E402

from rebelboost import REBELClassifier  # noqa: E402

LOSSES = ["exponential", "logistic", "squared"]
NOISE = [0.0, 0.1, 0.2]
PAIRS = {"F-MNIST T-shirt/Shirt": (0, 6), "F-MNIST Pullover/Coat": (2, 4)}


def tasks():
    """{name: (X_train, y_train, X_test, y_test, n_classes)}."""
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split

    X, y, X_test, y_test = fashion_mnist()
    out = {}
    for name, (a, b) in PAIRS.items():
        tr, te = (y == a) | (y == b), (y_test == a) | (y_test == b)
        out[name] = (X[tr].astype(np.float32), (y[tr] == b).astype(np.int64), X_test[te].astype(np.float32),
                     (y_test[te] == b).astype(np.int64), 2)
    Xd, yd = load_digits(return_X_y=True)
    Xd_tr, Xd_te, yd_tr, yd_te = train_test_split(Xd, yd, test_size=0.3, random_state=0, stratify=yd)
    out["digits (10 classes)"] = (Xd_tr, yd_tr, Xd_te, yd_te, 10)
    return out


def flip(y, share, n_classes, rng):
    """y with `share` of its labels replaced by another class."""
    y = y.copy()
    chosen = rng.random(len(y)) < share
    y[chosen] = (y[chosen] + rng.integers(1, n_classes, size=chosen.sum())) % n_classes
    return y


def staged_errors(clf, X, y):
    return np.array([np.mean(p != y) for p in clf.staged_predict(X)])


def run_one(task, noise, seed, args):
    X, y, X_test, y_test, K = task
    rng = np.random.default_rng(seed)
    order = rng.permutation(len(y))[:args.pair_rows if K == 2 else len(y)]
    cut = int(0.8 * len(order))
    tr, va = order[:cut], order[cut:]
    y_noisy = flip(y, noise, K, rng)
    rows = []
    for loss in LOSSES:
        clf = REBELClassifier(loss=loss, n_estimators=args.trees, max_depth=args.depth,
                              learning_rate=args.learning_rate, n_jobs=args.threads, random_state=seed)
        start = time.perf_counter()
        clf.fit(X[tr], y_noisy[tr])
        seconds = time.perf_counter() - start
        val = staged_errors(clf, X[va], y_noisy[va])
        stage = int(np.argmin(val)) + 1
        test = staged_errors(clf, X_test, y_test)
        rows.append({"loss": loss, "stage": stage, "trees": len(val), "val_error": float(val[stage - 1]),
                     "test_error": float(test[stage - 1]), "test_error_last": float(test[-1]),
                     "ms_per_tree": 1000 * seconds / max(clf.n_estimators_, 1)})
    return rows


def summary(results):
    """One row per (task, noise, loss): mean and std over splits."""
    rows = []
    for (task, noise), per_split in results.items():
        for loss in LOSSES:
            runs = [r for split in per_split for r in split if r["loss"] == loss]
            test = np.array([r["test_error"] for r in runs])
            rows.append({"task": task, "flipped": f"{100 * noise:.0f} %", "loss": loss,
                         "test error % (mean ± sd)": f"{100 * test.mean():.2f} ± {100 * test.std():.2f}",
                         "picked stage (each split)": " ".join(str(r["stage"]) for r in runs),
                         "last-tree test error %": f"{100 * np.mean([r['test_error_last'] for r in runs]):.2f}",
                         "ms / tree": f"{np.median([r['ms_per_tree'] for r in runs]):.1f}"})
    return rows


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--splits", type=int, default=3)
    parser.add_argument("--trees", type=int, default=300)
    parser.add_argument("--depth", type=int, default=3)
    parser.add_argument("--learning-rate", type=float, default=0.5)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--pair-rows", type=int, default=12000, help="training rows drawn per F-MNIST pair split")
    parser.add_argument("--tasks", default=",".join(list(PAIRS) + ["digits (10 classes)"]))
    parser.add_argument("--out-name", default="loss_noise")
    args = parser.parse_args(argv)
    data = tasks()
    results = {}
    for name in args.tasks.split(","):
        for noise in NOISE:
            results[(name, noise)] = [run_one(data[name], noise, seed, args) for seed in range(args.splits)]
            print(name, noise, [(r["loss"], r["test_error"], r["stage"]) for r in results[(name, noise)][-1]],
                  flush=True)
    rows = summary(results)
    lines = ["# REBEL's losses under label noise", "",
             f"{args.splits} splits per task (F-MNIST pairs: {args.pair_rows} of the training images drawn per "
             "split; 80 / 20 train / validation carved from the training set, labels of "
             f"both flipped at the rate shown; clean test set). Every loss: {args.trees} trees of depth "
             f"{args.depth}, learning_rate {args.learning_rate}, {args.threads} threads; stage = lowest validation "
             "error over all trees (the same rule for every loss). Script: `bench/loss_noise.py`.", ""]
    lines += markdown_table(rows)
    record(args.out_name, {f"{task} | {noise}": splits for (task, noise), splits in results.items()}, lines,
           threads=args.threads)
    print("\n".join(lines))


if __name__ == "__main__":
    main()
