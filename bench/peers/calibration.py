"""How trustworthy is predict_proba, and which fix should a user apply? rebelboost vs LightGBM.

Test log-loss, Brier score and expected calibration error (ECE, 10 equal-width bins of the top-class
confidence) of rebelboost's own link (AdaBoost / VEB: expit(2H); REBEL: normalised expit(2H_k)) and of
scikit-learn's CalibratedClassifierCV (cv=5 on the training rows only; method sigmoid, isotonic and
temperature) around the same estimator, against LightGBM's defaults (raw, and with the best of the same
calibrations). Tasks: breast cancer (AdaBoost and VEB-Boost, 200 stumps; 5 stratified 70/30 splits),
digits (REBEL, 200 depth-3 trees; 5 splits), Fashion-MNIST T-shirt vs Shirt (AdaBoost, 300 depth-2
trees; the standard train/test split). Also draws the reliability curves (first split) to
bench/results/calibration_reliability.png.

    python bench/peers/calibration.py [--out bench/results/calibration.md]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

import numpy as np
from sklearn.calibration import CalibratedClassifierCV
from sklearn.datasets import load_breast_cancer, load_digits
from sklearn.metrics import brier_score_loss, log_loss
from sklearn.model_selection import train_test_split

sys.path.insert(0, os.path.dirname(__file__))
from datasets import fashion_pair  # noqa: E402

from rebelboost import AdaBoostClassifier, REBELClassifier, VEBBoostClassifier  # noqa: E402

METHODS = ("raw", "sigmoid", "isotonic", "temperature")


def lightgbm():
    from lightgbm import LGBMClassifier

    return LGBMClassifier(verbose=-1, n_jobs=2)


def tasks():
    """(task name, [(model name, factory)], list of (X_train, y_train, X_test, y_test))."""
    X, y = load_breast_cancer(return_X_y=True)
    splits = [train_test_split(X, y, test_size=0.3, stratify=y, random_state=s) for s in range(5)]
    yield "breast cancer", [("AdaBoost, 200 stumps", lambda: AdaBoostClassifier(n_estimators=200)),
                            ("VEB-Boost, 200 stumps", lambda: VEBBoostClassifier(n_estimators=200)),
                            ("LightGBM default", lightgbm)], splits
    X, y = load_digits(return_X_y=True)
    splits = [train_test_split(X, y, test_size=0.3, stratify=y, random_state=s) for s in range(5)]
    yield "digits (10 classes)", [("REBEL, 200 depth-3 trees", lambda: REBELClassifier(n_estimators=200, max_depth=3)),
                                  ("LightGBM default", lightgbm)], splits
    X_train, y_train, X_test, y_test = fashion_pair(0, 6)
    yield "F-MNIST T-shirt vs Shirt", [("AdaBoost, 300 depth-2 trees", lambda: AdaBoostClassifier(n_estimators=300, max_depth=2)),
                                       ("LightGBM default", lightgbm)], [(X_train, X_test, y_train, y_test)]


def ece(y, proba, n_bins=10):
    """Expected calibration error of the top-class confidence (equal-width bins)."""
    confidence = proba.max(axis=1)
    correct = (proba.argmax(axis=1) == y).astype(float)
    bins = np.minimum((confidence * n_bins).astype(int), n_bins - 1)
    total = 0.0
    for b in range(n_bins):
        inside = bins == b
        if inside.any():
            total += inside.mean() * abs(correct[inside].mean() - confidence[inside].mean())
    return total


def reliability(y, proba, n_bins=10):
    """(mean confidence, accuracy) per non-empty bin of the top-class confidence."""
    confidence = proba.max(axis=1)
    correct = (proba.argmax(axis=1) == y).astype(float)
    bins = np.minimum((confidence * n_bins).astype(int), n_bins - 1)
    keep = [b for b in range(n_bins) if (bins == b).any()]
    return ([float(confidence[bins == b].mean()) for b in keep], [float(correct[bins == b].mean()) for b in keep])


def fit_proba(factory, method, X_train, y_train, X_test):
    model = factory() if method == "raw" else CalibratedClassifierCV(factory(), method=method, cv=5)
    model.fit(X_train, y_train)
    return model.predict_proba(X_test)


def run():
    rows, curves = [], {}
    for task, models, splits in tasks():
        for name, factory in models:
            for method in METHODS:
                scores = {"log_loss": [], "brier": [], "ece": []}
                start = time.perf_counter()
                for i, (X_train, X_test, y_train, y_test) in enumerate(splits):
                    proba = fit_proba(factory, method, X_train, y_train, X_test)
                    classes = np.unique(y_train)
                    y_index = np.searchsorted(classes, y_test)
                    scores["log_loss"].append(log_loss(y_test, proba, labels=classes))
                    onehot = np.eye(len(classes))[y_index]
                    scores["brier"].append(float(np.mean(np.sum((proba - onehot) ** 2, axis=1))) if len(classes) > 2
                                           else brier_score_loss(y_test, proba[:, 1]))
                    scores["ece"].append(ece(y_index, proba))
                    if i == 0:
                        curves[f"{task} | {name} | {method}"] = reliability(y_index, proba)
                row = {"task": task, "model": name, "method": method, "splits": len(splits),
                       "seconds": time.perf_counter() - start,
                       **{k: float(np.mean(v)) for k, v in scores.items()}}
                rows.append(row)
                print(f"{task:26s} {name:30s} {method:12s} log-loss {row['log_loss']:.4f}  brier {row['brier']:.4f}  "
                      f"ECE {row['ece']:.4f}", flush=True)
    return rows, curves


def plot(curves, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    tasks = sorted({key.split(" | ")[0] for key in curves})
    fig, axes = plt.subplots(1, len(tasks), figsize=(5 * len(tasks), 4.6))
    for ax, task in zip(np.atleast_1d(axes), tasks):
        ax.plot([0, 1], [0, 1], color="grey", lw=0.8, ls=":")
        for key, (conf, acc) in curves.items():
            t, model, method = key.split(" | ")
            if t != task or method not in ("raw", "sigmoid", "temperature"):
                continue
            style = "-" if model.startswith("LightGBM") else "--" if method == "raw" else "-"
            ax.plot(conf, acc, style, marker="o", ms=3, label=f"{model.split(',')[0]} {method}")
        ax.set_title(task)
        ax.set_xlabel("top-class confidence")
        ax.set_ylabel("accuracy")
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def write(rows, out):
    lines = [
        "# Calibration of predict_proba: rebelboost vs LightGBM",
        "",
        "Command: `OMP_WAIT_POLICY=passive python bench/peers/calibration.py` (2-core VM). Test-set means over "
        "the splits; calibration by scikit-learn's `CalibratedClassifierCV(estimator, method=..., cv=5)` fitted "
        "on the training rows only. ECE: top-class confidence, 10 bins. Lower is better everywhere. Reliability "
        "curves (first split): `calibration_reliability.png`.",
        "",
        "| task | model | probabilities | log-loss | Brier | ECE |",
        "|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(f"| {r['task']} | {r['model']} | {r['method']} | {r['log_loss']:.4f} | {r['brier']:.4f} | "
                     f"{r['ece']:.4f} |")
    with open(out, "w") as handle:
        handle.write("\n".join(lines) + "\n")
    with open(os.path.splitext(out)[0] + ".json", "w") as handle:
        json.dump(rows, handle, indent=1)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "..", "results", "calibration.md"))
    args = parser.parse_args()
    rows, curves = run()
    write(rows, args.out)
    plot(curves, os.path.join(os.path.dirname(args.out), "calibration_reliability.png"))


if __name__ == "__main__":
    main()
