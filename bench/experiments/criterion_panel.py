"""Which split criterion should AdaBoost use by default? The thesis's loss (weighted error) vs Gini.

Test error of rebelboost's AdaBoostClassifier with criterion="loss" (the default) and criterion="gini"
(scikit-learn's trees), 300 learners, depths 1 and 2, on Fashion-MNIST pairs, breast cancer (3 random
halvings), make_classification and make_hastie_10_2. Used to choose the default; see README.

    python bench/experiments/criterion_panel.py [--out bench/results/criterion_panel.md]
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np
from sklearn.datasets import load_breast_cancer, make_classification, make_hastie_10_2
from sklearn.model_selection import train_test_split

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "peers"))  # datasets, compare_rebel
from datasets import fashion_pair  # noqa: E402

from rebelboost import AdaBoostClassifier  # noqa: E402


def tasks():
    for a, b in [(0, 6), (1, 8), (2, 4), (5, 7), (3, 6)]:
        yield f"F-MNIST {a} vs {b}", fashion_pair(a, b)
    X, y = load_breast_cancer(return_X_y=True)
    for seed in range(3):
        X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.5, random_state=seed)
        yield f"breast cancer, halving {seed}", (X_train, y_train, X_test, y_test)
    X, y = make_classification(20000, 40, n_informative=10, random_state=0)
    X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.5, random_state=0)
    yield "make_classification 10k/10k", (X_train, y_train, X_test, y_test)
    X, y = make_hastie_10_2(20000, random_state=3)
    X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.5, random_state=0)
    yield "make_hastie_10_2 10k/10k", (X_train, y_train, X_test, y_test)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n-estimators", type=int, default=300)
    parser.add_argument("--out", default=None)
    args = parser.parse_args(argv)
    lines = [f"# AdaBoost split criterion: loss vs Gini ({time.strftime('%Y-%m-%d')}, {args.n_estimators} learners)", "",
             "Test error (%).", "",
             "| task | depth 1, loss | depth 1, gini | depth 2, loss | depth 2, gini |", "|---|---|---|---|---|"]
    wins = {"loss": 0, "gini": 0}
    for name, (X_train, y_train, X_test, y_test) in tasks():
        cells = []
        for depth in (1, 2):
            errs = {}
            for criterion in ("loss", "gini"):
                model = AdaBoostClassifier(n_estimators=args.n_estimators, max_depth=depth, criterion=criterion)
                model.fit(X_train, y_train)
                errs[criterion] = 100 * float(np.mean(model.predict(X_test) != y_test))
                cells.append(f"{errs[criterion]:.2f}")
            if errs["loss"] != errs["gini"]:
                wins[min(errs, key=errs.get)] += 1
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
        print(lines[-1], flush=True)
    lines += ["", f"Lower error (ties not counted): loss {wins['loss']}, gini {wins['gini']}."]
    report = "\n".join(lines)
    print(report)
    if args.out:
        with open(args.out, "w") as handle:
            handle.write(report + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
