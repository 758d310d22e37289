"""The step of a real-valued learner: the exact per-class minimiser (REBELClassifier's) against the thesis's
closed form on sign(f), on digits (5 stratified 50/25/25 splits, at most 200 learners picked on validation,
both similarity scalings). Writes bench/results/similarity_step_rule.{md,json}; the spiral's comparison is in
similarity_spiral.md.

    OMP_WAIT_POLICY=passive python bench/experiments/similarity_step_rule.py
"""

from __future__ import annotations

import json
import os

import numpy as np
from sklearn.datasets import load_digits

from rebelboost import REBELClassifier
from similarity_benchmark import split, staged_errors

RESULTS = os.path.join(os.path.dirname(__file__), "..", "results")


def with_rule(rule):
    class Rule(REBELClassifier):
        _similarity_options = {**REBELClassifier._similarity_options, "step_rule": rule}

    return Rule


def main():
    X, y = load_digits(return_X_y=True)
    rows = []
    for scaling in ("feature", "global"):
        for rule in ("exact", "sign"):
            errors, rises = [], []
            for seed in range(5):
                Xtr, ytr, Xva, yva, Xte, yte = split(X, y, seed)
                clf = with_rule(rule)(weak_learner="similarity", similarity_scaling=scaling, n_estimators=200,
                                      n_jobs=2).fit(Xtr, ytr)
                T = int(np.argmin(staged_errors(clf, Xva, yva))) + 1
                errors.append(float(np.mean(clf.predict(Xte, n_iter=T) != yte)))
                rises.append(int(np.sum(np.diff(np.r_[1.0, clf.fit_info_["train_loss"]]) >= 0)))
            rows.append({"scaling": scaling, "rule": rule, "test_errors": errors, "loss_rises": rises})
    out = os.path.join(RESULTS, "similarity_step_rule")
    with open(out + ".json", "w") as handle:
        json.dump(rows, handle, indent=1)
    lines = ["# Exact step vs the closed form on sign(f), digits", "",
             "`OMP_WAIT_POLICY=passive python bench/experiments/similarity_step_rule.py` (5 splits of 50/25/25 %, at most "
             "200 learners, their number picked on validation).", "",
             "| scaling | step | test error % (mean +- std) | iterations where the training loss rose (per split) |",
             "|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['scaling']} | {r['rule']} | {100 * np.mean(r['test_errors']):.2f} +- "
                     f"{100 * np.std(r['test_errors']):.2f} | {', '.join(map(str, r['loss_rises']))} |")
    with open(out + ".md", "w") as handle:
        handle.write("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
