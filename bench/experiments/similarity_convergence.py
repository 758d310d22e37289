"""Does similarity-REBEL beat trees on F-MNIST once it is allowed to fit the training set? On 1 000 rows of
the training half of split 0 of similarity_benchmark.py's 10 000-row subset (test: that split's test quarter),
similarity-REBEL (per-feature scaling, as validation picked on that split) runs up to --max-learners, stopping
when the training loss falls below 1/N; its training and test errors at checkpoints and the learner at which
the training error first reaches zero, beside tree-REBEL (<= 200 trees, depth and number picked on the
validation quarter, as in the benchmark) and a 1-nearest-neighbour rule in the same standardised units.
Writes bench/results/similarity_convergence.{md,json}.

    OMP_WAIT_POLICY=passive python bench/experiments/similarity_convergence.py
"""

from __future__ import annotations

import argparse
import json
import os
import time

import numpy as np

from rebelboost import REBELClassifier
from similarity_benchmark import load, split, tree_rebel
from similarity_locality import one_nn_error

RESULTS = os.path.join(os.path.dirname(__file__), "..", "results")
CHECKPOINTS = (200, 500, 1000, 2000, 3000, 4000, 6000, 8000)


def similarity_curve(Xtr, ytr, Xte, yte, max_learners):
    threshold = 2.0 / (len(np.unique(ytr)) * len(ytr))  # 1/N in the thesis's normalisation
    start = time.perf_counter()
    clf = REBELClassifier(weak_learner="similarity", similarity_scaling="feature", n_estimators=max_learners,
                          n_jobs=2, callbacks=[lambda record: record["train_loss"] < threshold]).fit(Xtr, ytr)
    seconds = time.perf_counter() - start
    train = np.array([np.mean(p != ytr) for p in clf.staged_predict(Xtr)])
    test = np.array([np.mean(p != yte) for p in clf.staged_predict(Xte)])
    T = clf.n_estimators_
    marks = sorted({t for t in CHECKPOINTS if t < T} | {T})
    zero = np.flatnonzero(train == 0)
    loss = clf.fit_info_["train_loss"]
    return {"fit_seconds": seconds, "n_learners": int(T), "loss_below_1_over_N": bool(loss[-1] < threshold),
            "loss_fell_every_iteration": bool(np.all(np.diff(loss) < 0)),
            "first_zero_training_error": int(zero[0] + 1) if zero.size else None,
            "checkpoints": [{"learners": t, "train_error": float(train[t - 1]), "test_error": float(test[t - 1])}
                            for t in marks]}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1000)
    parser.add_argument("--max-learners", type=int, default=4000)
    parser.add_argument("--note", default="", help="a sentence added under the command (how the run went)")
    parser.add_argument("--out", default=os.path.join(RESULTS, "similarity_convergence"))
    args = parser.parse_args()
    load_average = os.getloadavg()[0]
    X, y = load("fmnist10k")
    Xtr, ytr, Xva, yva, Xte, yte = split(X, y, 0)
    Xtr, ytr = Xtr[:args.rows], ytr[:args.rows]
    result = {"rows": args.rows, "load": load_average,
              "similarity": similarity_curve(Xtr, ytr, Xte, yte, args.max_learners),
              "tree": tree_rebel((Xtr, ytr, Xva, yva, Xte, yte))["tree-REBEL (<=200, val)"],
              "one_nn_test_error": one_nn_error("feature", Xtr, ytr, Xte, yte)}
    with open(args.out + ".json", "w") as handle:
        json.dump(result, handle, indent=1)
    s = result["similarity"]
    lines = [f"# Similarity-REBEL on {args.rows} F-MNIST rows, trained until it fits", "",
             "`OMP_WAIT_POLICY=passive python bench/experiments/similarity_convergence.py` "
             f"(training: the first {args.rows} rows of the training half of split 0 of `similarity_benchmark.py`; "
             f"test: its 2 500-row test quarter; load average at the start {result['load']:.1f}). {args.note}", "",
             f"Similarity-REBEL: {s['n_learners']} learners in {s['fit_seconds']:.0f} s (2 threads), loss below 1/N: "
             f"{s['loss_below_1_over_N']}; the loss fell in every iteration: {s['loss_fell_every_iteration']}; zero "
             f"training error first after {s['first_zero_training_error']} learners.",
             "", "| learners | training error | test error |", "|---|---|---|"]
    lines += [f"| {c['learners']} | {c['train_error']:.1%} | {c['test_error']:.1%} |" for c in s["checkpoints"]]
    lines += ["", f"tree-REBEL on the same rows (<= 200 trees, {result['tree']['choice']}, picked on validation): "
              f"{result['tree']['error']:.1%}; 1-NN in the same units: {result['one_nn_test_error']:.1%}."]
    with open(args.out + ".md", "w") as handle:
        handle.write("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
