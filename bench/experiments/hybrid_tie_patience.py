"""Does a tie of the validation error restart the patience? The hybrid default under both rules.

REBELClassifier(weak_learner="hybrid") watches the validation error (HYBRID_SCORING) and keeps the latest of
equal best values. Two patience rules for that counting metric:
  ties restart    an equal best value restarts the patience (the rule before 2026-11-29): a validation error
                  that sits at its best never stops the fit, which then trains all 10 000 learners
  strict          the patience counts from the last improvement beyond tol, as for every other metric (the
                  rule since): the fit stops SIMILARITY_PATIENCE learners after the error last fell
Either way the model kept is the latest of the equal best stages the fit reached. Per set and split of
bench/hybrid.py (50/25/25), the hybrid default is fitted on the training half with its own carve and with
the validation quarter as eval_set; reported: mean test error, learners trained, seconds of all fits. The
"ties restart" rule is the old TrainingMonitor.__call__ rule, restated here; "strict" is the library's.
Also an easy synthetic set (make_classification, class_sep 3, no flipped labels), where the old rule ran
to the cap.

    OMP_WAIT_POLICY=passive python bench/experiments/hybrid_tie_patience.py

Writes bench/results/hybrid_tie_patience.{md,json}.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np
from sklearn.datasets import make_classification

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "peers"))
import harness  # noqa: E402
import hybrid  # noqa: E402  (the protocol's data sets and N_JOBS)
from similarity_benchmark import split  # noqa: E402

import rebelboost._monitor as monitor  # noqa: E402
from rebelboost import REBELClassifier  # noqa: E402

SETS = ["wine", "breast_cancer", "sonar", "ionosphere", "pima", "digits", "easy"]
STRICT = monitor.TrainingMonitor.__call__


def ties_restart(self, record):
    """The library's callback, then the old rule on top: an equal best counting metric restarts the patience."""
    keep_going = STRICT(self, record)
    if self.evals and self.scoring in monitor.LATE_TIES:
        value = self.history[self.evals[0].name][-1]
        k = record["iteration"] + 1
        if value <= self.best_value:
            self.best_for_patience = k
        if self.early_stopping and not self.callbacks:
            return k - self.best_for_patience < self.n_iter_no_change
    return keep_going


def load(name):
    if name == "easy":
        return make_classification(4000, 10, n_informative=5, class_sep=3.0, flip_y=0.0, random_state=0)
    return hybrid.load(name)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--datasets", nargs="+", default=SETS)
    parser.add_argument("--splits", type=int, default=5)
    args = parser.parse_args()
    per_split, rows = [], []
    for name in args.datasets:
        X, y = load(name)
        for seed in range(args.splits):
            Xtr, ytr, Xva, yva, Xte, yte = split(X, y, seed)
            for rule, call in (("ties restart", ties_restart), ("strict", STRICT)):
                monitor.TrainingMonitor.__call__ = call
                for validation in ("carve", "eval_set"):
                    start = time.perf_counter()
                    clf = REBELClassifier(weak_learner="hybrid", n_jobs=hybrid.N_JOBS).fit(
                        Xtr, ytr, eval_set=[(Xva, yva)] if validation == "eval_set" else None)
                    per_split.append({"set": name, "split": seed, "rule": rule, "validation": validation,
                                      "test %": round(100 * float(np.mean(clf.predict(Xte) != yte)), 2),
                                      "trained": clf.fit_info_["n_iterations"], "kept": int(clf.n_estimators_),
                                      "seconds": round(time.perf_counter() - start, 2)})
                    print(per_split[-1], flush=True)
            monitor.TrainingMonitor.__call__ = STRICT
        for validation in ("carve", "eval_set"):
            row = {"set": name, "validation": validation}
            for rule in ("ties restart", "strict"):
                mine = [r for r in per_split if r["set"] == name and r["rule"] == rule and r["validation"] == validation]
                row[f"{rule}: test %"] = round(float(np.mean([r["test %"] for r in mine])), 2)
                row[f"{rule}: trained"] = int(np.mean([r["trained"] for r in mine]))
                row[f"{rule}: s"] = round(float(np.sum([r["seconds"] for r in mine])), 1)
            rows.append(row)
    lines = [f"The hybrid default under each patience rule: mean over {args.splits} splits of the test error, of the "
             "learners trained, and the seconds of all its fits (the rules: this script's docstring):", ""]
    lines += harness.markdown_table(rows)
    harness.record("hybrid_tie_patience", {"per_split": per_split, "summary": rows}, lines, threads=hybrid.N_JOBS)
    print("\n".join(lines))


if __name__ == "__main__":
    main()
