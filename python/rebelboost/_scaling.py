"""``similarity_scaling="auto"``: the scaling of the distances chosen from the training rows themselves.

A Localized Similarity compares a query with training points by their distance, so it works where nearest
neighbours work. "auto" scores both scalings by the leave-one-out error of the k-nearest-neighbour vote
(k = 1, 3, 5, 7, 9, averaged per row) on the rows the model trains on (at most ``AUTO_SCALING_ROWS`` of
them, a seeded sample) and takes "global" only when it is better by at least ``AUTO_SCALING_Z`` standard
errors of the paired per-row difference; otherwise "feature", which is safe for features in different
units. docs/guide/similarity.md "Defaults" has the measurements behind the rule.
"""

from __future__ import annotations

import numpy as np
from sklearn.neighbors import NearestNeighbors

__all__ = ["AUTO_SCALING_ROWS", "AUTO_SCALING_Z", "NEIGHBOURS", "choose_scaling", "scaled_for_distances",
           "leave_one_out_wrong"]

# Rows the choice looks at: the leave-one-out scan costs rows^2 x features (2 000 x 2 000 x 784 pixels is
# 3e9 multiply-adds, about a second), whatever the size of X.
AUTO_SCALING_ROWS = 2_000
NEIGHBOURS = (1, 3, 5, 7, 9)
# One nearest neighbour alone flipped on a single row of 213 (breast cancer); two standard errors of the
# paired difference separated digits (z 3.3 to 5.5) from every set where validation preferred "feature".
AUTO_SCALING_Z = 2.0


def scaled_for_distances(X, scaling):
    """X centred and scaled as the similarity learners scale it (the core's standardization, unweighted):
    each feature by its standard deviation ("feature"; constant features by 1) or all by the root mean
    square of the deviations ("global")."""
    X = np.asarray(X, dtype=np.float64)
    centred = X - X.mean(axis=0)
    deviation = centred.std(axis=0)
    if scaling == "feature":
        return centred / np.where(deviation > 0, deviation, 1.0)
    overall = float(np.sqrt(np.mean(deviation ** 2)))
    return centred / (overall if overall > 0 else 1.0)


def leave_one_out_wrong(X, y):
    """Per row, the share of the votes of its k nearest other rows (Euclidean; k in NEIGHBOURS, at most
    n - 1) that name another label than its own (a tie of votes goes to the lowest class index)."""
    ks = [k for k in NEIGHBOURS if k < X.shape[0]]
    order = NearestNeighbors(n_neighbors=max(ks), algorithm="brute").fit(X).kneighbors(return_distance=False)
    rows = np.arange(X.shape[0])
    votes = np.zeros((X.shape[0], int(y.max()) + 1))
    wrong = np.zeros(X.shape[0])
    for j in range(max(ks)):
        np.add.at(votes, (rows, y[order[:, j]]), 1.0)
        if j + 1 in ks:
            wrong += votes.argmax(axis=1) != y
    return wrong / len(ks)


def choose_scaling(X, y, seed):
    """"global" or "feature" for the rows X (class indices y) that a similarity model is about to train on."""
    n = X.shape[0]
    if n < 3 or not np.isfinite(X).all():  # NaN and inf: the core's own check names the row and feature
        return "feature"
    if n > AUTO_SCALING_ROWS:
        rows = np.sort(np.random.default_rng(seed).choice(n, AUTO_SCALING_ROWS, replace=False))
        X, y = X[rows], y[rows]
    wrong = {}
    for scaling in ("feature", "global"):
        with np.errstate(all="ignore"):
            Z = scaled_for_distances(X, scaling)
        if not np.isfinite(Z).all():  # deviations beyond the float range: nothing to compare
            return "feature"
        wrong[scaling] = leave_one_out_wrong(Z, y)
    return "global" if paired_z(wrong["feature"] - wrong["global"]) >= AUTO_SCALING_Z else "feature"


def paired_z(difference):
    """Mean of the per-row differences over its standard error (0 when every difference is 0)."""
    spread = float(np.std(difference, ddof=1))
    mean = float(np.mean(difference))
    if spread == 0.0:
        return 0.0 if mean == 0.0 else np.copysign(np.inf, mean)
    return mean / (spread / np.sqrt(len(difference)))
