"""Thread scaling and thread-count determinism: fit and batch-prediction time at 1 to N threads, and whether
every thread count gives the same model, byte for byte.

A 2-core machine cannot show either beyond 2 threads; run this where there are more cores. Per model, for
each thread count: the fit's wall time, the model's to_bytes() digest, the digest of decision_function on
held-out rows, and the wall time of a batch prediction (best of 3). "same" compares each digest with the one
thread fit's. Data are synthetic and seeded (scikit-learn's generators), so any machine builds the same set.

    OMP_WAIT_POLICY=passive python bench/thread_scaling.py --threads 1,2,4,8,16 [--out-dir bench/results]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from harness import environment, environment_line, record  # noqa: E402


def datasets():
    from sklearn.datasets import make_classification, make_friedman1, make_hastie_10_2

    X, y = make_hastie_10_2(n_samples=400_000, random_state=0)
    hastie = (X[:200_000].astype(np.float32), y[:200_000], X[200_000:].astype(np.float32))
    X, y = make_classification(250_000, 50, n_informative=20, n_classes=5, random_state=0)
    five = (X[:50_000], y[:50_000], X[50_000:])
    X, y = make_friedman1(400_000, 20, noise=1.0, random_state=0)
    friedman = (X[:200_000].astype(np.float32), y[:200_000], X[200_000:].astype(np.float32))
    X, y = make_classification(5_000, 20, n_informative=10, n_classes=4, random_state=1)
    small = (X[:3_000], y[:3_000], X[3_000:])
    return hastie, five, friedman, small


def models():
    from rebelboost import AdaBoostClassifier, BoostingRegressor, REBELClassifier, VEBBoostClassifier

    hastie, five, friedman, small = datasets()
    return [
        ("AdaBoost depth 2, 300 trees, Hastie 200 000 x 10", hastie,
         lambda j: AdaBoostClassifier(n_estimators=300, max_depth=2, quick=False, n_jobs=j)),
        ("AdaBoost depth 2, 300 trees, quick=True, Hastie", hastie,
         lambda j: AdaBoostClassifier(n_estimators=300, max_depth=2, quick=True, n_jobs=j)),
        ("VEB-Boost depth 2, 200 trees, Hastie", hastie,
         lambda j: VEBBoostClassifier(n_estimators=200, max_depth=2, n_jobs=j)),
        ("REBEL depth 3, 200 trees, 50 000 x 50, 5 classes", five,
         lambda j: REBELClassifier(n_estimators=200, max_depth=3, n_jobs=j)),
        ("BoostingRegressor depth 6, 200 trees, friedman1 200 000 x 20", friedman,
         lambda j: BoostingRegressor(n_estimators=200, max_depth=6, early_stopping=False, n_jobs=j)),
        ("REBEL hybrid, 150 learners, 3 000 x 20, 4 classes", small,
         lambda j: REBELClassifier(n_estimators=150, weak_learner="hybrid", early_stopping=False, n_jobs=j)),
    ]


def digest(data) -> str:
    return hashlib.sha256(np.ascontiguousarray(data).tobytes() if isinstance(data, np.ndarray) else data).hexdigest()[:12]


def measure(name, data, make, threads):
    X, y, X_test = data
    rows = []
    for j in threads:
        est = make(j)
        start = time.perf_counter()
        est.fit(X, y)
        fit_s = time.perf_counter() - start
        scores = est.predict(X_test) if not hasattr(est, "decision_function") else est.decision_function(X_test)
        predict = []
        for _ in range(3):
            start = time.perf_counter()
            est.predict(X_test)
            predict.append(time.perf_counter() - start)
        rows.append({"model": name, "threads": j, "fit_s": fit_s, "predict_ms": 1e3 * min(predict),
                     "rows_predicted": len(X_test), "model_digest": digest(est._model.to_bytes()),
                     "scores_digest": digest(np.asarray(scores, dtype=np.float64))})
        print(json.dumps(rows[-1]), flush=True)
    base = rows[0]
    for r in rows:
        r["fit_speedup"] = base["fit_s"] / r["fit_s"]
        r["predict_speedup"] = base["predict_ms"] / r["predict_ms"]
        r["same"] = r["model_digest"] == base["model_digest"] and r["scores_digest"] == base["scores_digest"]
    return rows


def report(rows):
    lines = ["# Thread scaling and thread-count determinism", "",
             "Fit: wall time of one fit; predict: best of 3 batch predictions of the held-out rows (predict()). "
             "Same: the model's to_bytes() and its decision_function on the held-out rows have the digests of "
             "the 1-thread fit.", "",
             "| model | threads | fit s | fit speed-up | predict ms (rows) | predict speed-up | same as 1 thread |",
             "|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['model']} | {r['threads']} | {r['fit_s']:.2f} | {r['fit_speedup']:.2f}x | "
                     f"{r['predict_ms']:.1f} ({r['rows_predicted']}) | {r['predict_speedup']:.2f}x | "
                     f"{'yes' if r['same'] else 'NO'} |")
    return lines


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", default="1,2,4,8,16")
    parser.add_argument("--out-dir", default=None, help="write thread_scaling.md/.json there")
    args = parser.parse_args(argv)
    threads = [int(t) for t in args.threads.split(",")]
    env = environment(max(threads))  # versions, commit, cores, OpenMP settings, load before the run
    rows = []
    for name, data, make in models():
        rows += measure(name, data, make, threads)
    lines = report(rows)
    print("\n".join(lines + ["", f"Environment: {environment_line(env=env)}"]))
    if args.out_dir:
        record("thread_scaling", rows, lines, out_dir=args.out_dir, env=env)
    return 0 if all(r["same"] for r in rows) else 1


if __name__ == "__main__":
    raise SystemExit(main())
