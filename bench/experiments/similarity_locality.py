"""Why similarity-REBEL needs many learners on some data, and where it loses to trees: how local its
learners are, and how good the metric they compare points with is. On split 0 of the similarity benchmark
(50/25/25), for each data set and similarity_scaling, 200 learners on the training half: the learner kinds,
the share of training points a two-point learner reaches (|f_t(x_n)| > 0.1, median over learners), the
training error after 200, the two-point candidates visited per iteration, the test error after 200, and the
test error of a 1-nearest-neighbour classifier in the same standardised units (Euclidean distance is all a
similarity sees). Writes bench/results/similarity_locality.{md,json}.

    OMP_WAIT_POLICY=passive python bench/experiments/similarity_locality.py
"""

from __future__ import annotations

import json
import os

import numpy as np
from sklearn.neighbors import KNeighborsClassifier

from rebelboost import REBELClassifier
from similarity_benchmark import load, split

RESULTS = os.path.join(os.path.dirname(__file__), "..", "results")


def standardised(scaling, Xtr, *others):
    """The similarity learners' units: per-feature or one global scale (constant features scale 1)."""
    mean = Xtr.mean(axis=0)
    if scaling == "feature":
        scale = Xtr.std(axis=0)
        scale[scale == 0] = 1.0
    else:
        scale = np.sqrt(np.mean((Xtr - mean) ** 2)) or 1.0
    return [(X - mean) / scale for X in (Xtr, *others)]


def one_nn_error(scaling, Xtr, ytr, Xte, yte):
    Ztr, Zte = standardised(scaling, Xtr, Xte)
    return float(np.mean(KNeighborsClassifier(n_neighbors=1).fit(Ztr, ytr).predict(Zte) != yte))


def measure(name, scaling, Xtr, ytr, Xte, yte):
    clf = REBELClassifier(weak_learner="similarity", similarity_scaling=scaling, n_estimators=200,
                          n_jobs=2).fit(Xtr, ytr)
    reach = (np.abs(clf.explain(Xtr)["output"]) > 0.1).mean(axis=0)
    kinds = clf.learners_["kind"]
    two = kinds == "two_point"
    return {"data": name, "scaling": scaling, "N": len(ytr), "d": Xtr.shape[1],
            "one_point": int(np.sum(kinds == "one_point")), "two_point": int(np.sum(two)),
            "constant": int(np.sum(kinds == "constant")),
            "reach_two_point_median": float(np.median(reach[two])) if two.any() else None,
            "train_error_200": float(np.mean(clf.predict(Xtr) != ytr)),
            "test_error_200": float(np.mean(clf.predict(Xte) != yte)),
            "one_nn_test_error": one_nn_error(scaling, Xtr, ytr, Xte, yte),
            "candidates": float(clf.fit_info_["candidates"].mean())}


def write(rows):
    out = os.path.join(RESULTS, "similarity_locality")
    with open(out + ".json", "w") as handle:
        json.dump(rows, handle, indent=1)
    lines = ["# How local are the learners, and how good is their metric? (split 0, 200 similarities)", "",
             "`OMP_WAIT_POLICY=passive python bench/experiments/similarity_locality.py` "
             "(split 0 of `similarity_benchmark.py`: fit on the training half, test on the test quarter)", "",
             "| data (N, d) | scaling | one-point / two-point / constant | training points a two-point learner "
             "reaches (\\|f\\| > 0.1, median) | training error after 200 | candidates / iteration | test error "
             "after 200 | 1-NN test error, same units |",
             "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        reach = "-" if r["reach_two_point_median"] is None else f"{r['reach_two_point_median']:.1%}"
        lines.append(f"| {r['data']} ({r['N']}, {r['d']}) | {r['scaling']} | {r['one_point']} / {r['two_point']} / "
                     f"{r['constant']} | {reach} | {r['train_error_200']:.1%} | {r['candidates']:.0f} | "
                     f"{r['test_error_200']:.1%} | {r['one_nn_test_error']:.1%} |")
    with open(out + ".md", "w") as handle:
        handle.write("\n".join(lines) + "\n")
    print("\n".join(lines))


def main():
    rows = []
    for name in ("wine", "breast_cancer", "digits", "fmnist10k"):
        X, y = load(name)
        Xtr, ytr, _, _, Xte, yte = split(X, y, 0)
        for scaling in ("feature", "global"):
            rows.append(measure(name, scaling, Xtr, ytr, Xte, yte))
            print(rows[-1], flush=True)
    write(rows)


if __name__ == "__main__":
    main()
