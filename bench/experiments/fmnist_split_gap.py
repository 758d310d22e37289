"""Is time_to_accuracy.py's validation split easier than the test set for every method, or only for REBEL?
A 1-nearest-neighbour rule (no training choices at all) on the same 50 000 / 10 000 split of the training
set and the 10 000 test images: its validation and test error, and the distance from each validation / test
image to its nearest training image. Writes bench/results/fmnist_split_gap.md.

    python bench/experiments/fmnist_split_gap.py
"""

from __future__ import annotations

import os

import numpy as np
from sklearn.neighbors import NearestNeighbors

from time_to_accuracy import RESULTS, split


def main():
    Xtr, ytr, Xva, yva, Xte, yte = split()
    nn = NearestNeighbors(n_neighbors=1, algorithm="brute").fit(Xtr)
    lines = ["# Fashion-MNIST: validation split vs test set for a 1-NN rule", "",
             "`python bench/experiments/fmnist_split_gap.py` (time_to_accuracy.py's split: 50 000 / 10 000 rows of the "
             "training set, seed 0; the 10 000 test images). A 1-NN rule has no stage or parameter to pick, so its "
             "test - validation gap is the split's, not a selection effect.", "",
             "| set | 1-NN error | distance to the nearest training image: median | 10th percentile | share < 500 | share < 1 000 |",
             "|---|---|---|---|---|---|"]
    errors = {}
    for name, X, y in (("validation", Xva, yva), ("test", Xte, yte)):
        distance, index = nn.kneighbors(X)
        distance = distance[:, 0]
        errors[name] = np.mean(ytr[index[:, 0]] != y)
        lines.append(f"| {name} | {100 * errors[name]:.2f} % | {np.median(distance):.0f} | "
                     f"{np.percentile(distance, 10):.0f} | {100 * np.mean(distance < 500):.2f} % | "
                     f"{100 * np.mean(distance < 1000):.2f} % |")
    gap = errors["test"] - errors["validation"]
    se = np.sqrt(sum(e * (1 - e) / 10_000 for e in errors.values()))
    lines += ["", f"Test - validation: {100 * gap:+.2f} points (standard error of the difference of two independent "
              f"10 000-image error rates: {100 * se:.2f} points)."]
    with open(os.path.join(RESULTS, "fmnist_split_gap.md"), "w") as handle:
        handle.write("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
