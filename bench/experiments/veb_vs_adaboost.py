"""VEB-Boost vs AdaBoost with stumps: make_hastie_10_2 and a twonorm-style problem, 5 seeds each.

twonorm (Breiman): two Gaussians in d = 20 with means +-(a, ..., a), a = 2 / sqrt(20), unit covariance;
400 training and 7 000 test points. hastie: make_hastie_10_2 with 2 000 training and 10 000 test points.
Both estimators use the same number of stumps; the mean and standard deviation of the test error are
reported.

    python bench/experiments/veb_vs_adaboost.py [--n-estimators 500] [--lam 0.5]
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "peers"))  # datasets, compare_rebel
from compare_rebel import write  # noqa: E402

from rebelboost import AdaBoostClassifier, VEBBoostClassifier  # noqa: E402


def twonorm(seed, n_train=400, n_test=7000, d=20):
    rng = np.random.RandomState(seed)
    a = 2.0 / np.sqrt(d)
    y = rng.randint(0, 2, size=n_train + n_test)
    X = rng.normal(size=(n_train + n_test, d)) + np.where(y[:, None] == 1, a, -a)
    return X[:n_train], y[:n_train], X[n_train:], y[n_train:]


def hastie(seed, n_train=2000, n_test=10000):
    from sklearn.datasets import make_hastie_10_2

    X, y = make_hastie_10_2(n_samples=n_train + n_test, random_state=seed)
    y = (y > 0).astype(int)
    return X[:n_train], y[:n_train], X[n_train:], y[n_train:]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n-estimators", type=int, default=500)
    parser.add_argument("--lam", type=float, default=0.5)
    args = parser.parse_args(argv)
    lines = [f"# VEB-Boost (lam={args.lam}) vs AdaBoost, {args.n_estimators} stumps, 5 seeds ({time.strftime('%Y-%m-%d')})", "",
             "| task | AdaBoost test error | VEB-Boost test error | VEB trees (stops when alpha <= 0) |", "|---|---|---|---|"]
    data = {}
    for name, make in (("twonorm (d=20, 400 train)", twonorm), ("make_hastie_10_2 (2000 train)", hastie)):
        ada_err, veb_err, veb_trees = [], [], []
        for seed in range(5):
            X_train, y_train, X_test, y_test = make(seed)
            ada = AdaBoostClassifier(n_estimators=args.n_estimators).fit(X_train, y_train)
            veb = VEBBoostClassifier(lam=args.lam, n_estimators=args.n_estimators).fit(X_train, y_train)
            ada_err.append(1 - ada.score(X_test, y_test))
            veb_err.append(1 - veb.score(X_test, y_test))
            veb_trees.append(veb.n_estimators_)
        data[name] = {"adaboost": ada_err, "veb": veb_err, "veb_trees": veb_trees}
        lines.append(f"| {name} | {100 * np.mean(ada_err):.2f} ± {100 * np.std(ada_err):.2f} % | "
                     f"{100 * np.mean(veb_err):.2f} ± {100 * np.std(veb_err):.2f} % | {np.mean(veb_trees):.0f} |")
        print(lines[-1], flush=True)
    write("veb_vs_adaboost", lines, data)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
