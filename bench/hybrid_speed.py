"""Issue 22, point 3: similarity and hybrid fits, seconds per learner against N and d, and a default fit on
5 000 rows x 30 features at 2 threads (target: under 30 s).

Data: scikit-learn's make_classification (10 classes, 10 informative features, the rest noise; seed 0), so
N and d vary independently; the per-learner time is a fixed number of learners (early stopping off)
divided into the fit's wall time, and the process CPU time per learner beside it (on a shared machine the
wall time measures the load as much as the code). The default fit uses REBELClassifier(weak_learner=...)
with every parameter at its default (docs/guide/similarity.md "Defaults": up to 10 000 learners, early
stopping on a carved 25 % split with a patience of 500; hybrids: stumps, the validation error).

    OMP_WAIT_POLICY=passive nice -n 5 python bench/hybrid_speed.py
    OMP_WAIT_POLICY=passive nice -n 5 python bench/hybrid_speed.py --quick
    OMP_WAIT_POLICY=passive nice -n 5 python bench/hybrid_speed.py --learners 200 --defaults similarity

Writes bench/results/hybrid_speed.{md,json} (hybrid_speed_quick with --quick).
"""

from __future__ import annotations

import argparse
import os
import sys
import time

from sklearn.datasets import make_classification

from rebelboost import REBELClassifier

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402

THREADS = 2


def data(n, d, seed=0):
    return make_classification(n_samples=n, n_features=d, n_informative=min(10, d), n_redundant=0,
                               n_classes=10, n_clusters_per_class=1, random_state=seed)


def per_learner(learner, n, d, learners):
    X, y = data(n, d)
    clf = REBELClassifier(weak_learner=learner, n_estimators=learners, early_stopping=False, n_jobs=THREADS)
    start, cpu = time.perf_counter(), time.process_time()
    clf.fit(X, y)
    seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
    return {"learner": learner, "N": n, "d": d, "learners": int(clf.n_estimators_),
            "ms per learner": round(1e3 * seconds / clf.n_estimators_, 3),
            "CPU ms per learner": round(1e3 * cpu / clf.n_estimators_, 3),
            "two-point candidates per learner": round(float(clf.fit_info_["candidates"].mean()), 1),
            "fit s": round(seconds, 2)}


def default_fit(learner, n, d):
    X, y = data(n, d, seed=1)
    start, cpu = time.perf_counter(), time.process_time()
    clf = REBELClassifier(weak_learner=learner, n_jobs=THREADS).fit(X, y)
    seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
    return {"learner": learner, "N": n, "d": d, "learners kept": int(clf.n_estimators_),
            "iterations": int(clf.fit_info_["n_iterations"]), "stop": clf.fit_info_["stop_reason"],
            "fit s": round(seconds, 2), "CPU s": round(cpu, 2), "under 30 s": seconds < 30}


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="fewer sizes and learners, no default fit")
    parser.add_argument("--learners", type=int, default=1000, help="learners per timed fit")
    parser.add_argument("--defaults", nargs="*", default=["similarity", "hybrid"], help="learners of the default fits")
    args = parser.parse_args()
    sizes = [(1000, 10), (2000, 10), (5000, 10), (1000, 30), (1000, 100)] if not args.quick else [(1000, 10), (2000, 10)]
    learners = args.learners if not args.quick else 200
    rows = [per_learner(learner, n, d, learners) for learner in ("similarity", "hybrid") for n, d in sizes]
    defaults = [default_fit(learner, 5000, 30) for learner in args.defaults] if not args.quick else []
    lines = [f"Seconds per learner, {learners} learners, {THREADS} threads, early stopping off:", ""]
    lines += harness.markdown_table(rows)
    if defaults:
        lines += ["", "Default fits on 5 000 x 30 (target: under 30 s):", ""] + harness.markdown_table(defaults)
    name = "hybrid_speed_quick" if args.quick else "hybrid_speed"
    harness.record(name, {"per_learner": rows, "default": defaults}, lines, threads=THREADS)
    print("\n".join(lines))


if __name__ == "__main__":
    main()
