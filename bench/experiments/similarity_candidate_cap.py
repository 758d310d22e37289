"""Issue 22 point 3: does visiting fewer two-point candidates buy the similarity's accuracy sooner?

Step 4 of the selection (docs/guide/similarity.md) visits the other binarized class nearest first until the
removal step has covered it: about 2 000 candidates per learner on 5 000 x 30, each O(N K), which makes the
default fit run for minutes (bench/results/hybrid_speed.md). The parameter
``similarity_max_candidates`` stops after the first m visited (the m nearest the anchor that no
earlier candidate removed). This script fits the similarity with each cap on the data of
similarity_stopping_5000x30.py (make_classification, 10 classes, 30 features, seed 1; 3 750 fitting rows,
1 250 validation rows carved like the default's, the last 5 000 rows as the test set), early stopping off,
and reports the fit's time per learner and the test error of the stage of least validation log loss among
the first t learners, for several t, against wall time; and the default's stopping rule (validation log loss,
patience 500) replayed on the curves.

    OMP_WAIT_POLICY=passive python bench/experiments/similarity_candidate_cap.py --caps 0:3000,256,64 --learners 10000
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np
from sklearn.datasets import make_classification
from sklearn.model_selection import train_test_split

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)
import harness  # noqa: E402
from similarity_stopping_5000x30 import curves, stop  # noqa: E402

from rebelboost import REBELClassifier  # noqa: E402

STAGES = (200, 500, 1000, 2000, 5000, 10000)


def fit(cap, learners, X_fit, y_fit):
    clf = REBELClassifier(weak_learner="similarity", n_estimators=learners, early_stopping=False, n_jobs=2,
                          similarity_max_candidates=cap)
    start, cpu = time.perf_counter(), time.process_time()
    clf.fit(X_fit, y_fit)
    return clf, time.perf_counter() - start, time.process_time() - cpu


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--caps", default="0:3000,256,64",
                        help="max_candidates per learner (0: all), each optionally with its own number of learners "
                             "after a colon")
    parser.add_argument("--learners", type=int, default=10000)
    args = parser.parse_args()
    X, y = make_classification(n_samples=10000, n_features=30, n_informative=10, n_redundant=0, n_classes=10,
                               n_clusters_per_class=1, random_state=1)
    X_fit, X_val, y_fit, y_val = train_test_split(X[:5000], y[:5000], test_size=0.25, stratify=y[:5000],
                                                  random_state=0)
    results, rows = {}, []
    for spec in args.caps.split(","):
        cap, _, learners = spec.partition(":")
        cap = int(cap)
        clf, wall, cpu = fit(cap, int(learners or args.learners), X_fit, y_fit)
        T = int(clf.n_estimators_)
        val_err, val_loss = curves(clf, X_val, y_val)
        test_err, _ = curves(clf, X[5000:], y[5000:])
        per = wall / T
        r = {"cap": cap, "learners": T, "fit_s": wall, "cpu_s": cpu, "ms_per_learner": 1e3 * per,
             "candidates_per_learner": float(np.mean(clf.fit_info_["candidates"])),
             # the curves every 50 learners (the file stays small)
             "test_error": test_err[49::50].tolist(), "val_loss": val_loss[49::50].tolist(),
             "val_error": val_err[49::50].tolist()}
        run, kept = stop(val_loss, 500)
        r["default_rule"] = {"iterations": run, "kept": kept, "test_error": float(test_err[kept - 1]),
                             "seconds": run * per}
        row = {"max_candidates": cap or "all", "candidates per learner": f"{r['candidates_per_learner']:.0f}",
               "ms per learner": f"{r['ms_per_learner']:.2f}", "fit s": f"{wall:.1f}"}
        for t in STAGES:
            if t <= T:
                best = int(np.argmin(val_loss[:t]))
                row[f"test % by {t} (s)"] = f"{100 * test_err[best]:.2f} ({t * per:.0f})"
        row["default rule: kept of run, test %, s"] = (f"{kept} of {run}, {100 * r['default_rule']['test_error']:.2f}, "
                                                       f"{run * per:.0f}")
        results[str(cap)] = r
        rows.append(row)
        print(row, flush=True)
    lines = ["Similarity, 5 000 x 30 (3 750 fitting rows), 10 classes, 2 threads, early stopping off. 'test % by t': "
             "the stage of least validation log loss among the first t learners, its test error, and t times the "
             "fit's wall time per learner in brackets. 'default rule': validation log loss with patience 500 "
             "replayed on the curves.", ""]
    lines += harness.markdown_table(rows)
    harness.record("similarity_candidate_cap", results, lines, threads=2)


if __name__ == "__main__":
    main()
