"""``similarity_scaling="auto"``: the scaling of the distances chosen from the training rows themselves.

A Localized Similarity compares a query with training points by their distance, so it works where nearest
neighbours work. "auto" therefore scores both scalings by the leave-one-out error of the 1-nearest-neighbour
rule on the rows the model trains on (at most ``AUTO_SCALING_ROWS`` of them, a seeded sample) and takes
"global" only when its error is strictly lower; on a tie, "feature", which is safe for features in
different units. docs/guide/similarity.md "Defaults" has the measurements behind the rule.
"""

from __future__ import annotations

import numpy as np
from sklearn.neighbors import NearestNeighbors

__all__ = ["AUTO_SCALING_ROWS", "choose_scaling", "scaled_for_distances", "leave_one_out_1nn_error"]

# Rows the choice looks at: the leave-one-out scan costs rows^2 x features (2 000 x 2 000 x 784 pixels is
# 3e9 multiply-adds, about a second), whatever the size of X.
AUTO_SCALING_ROWS = 2_000


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


def leave_one_out_1nn_error(X, y):
    """Share of rows whose nearest other row (Euclidean; the first on ties) has another label."""
    nearest = NearestNeighbors(n_neighbors=1, algorithm="brute").fit(X).kneighbors(return_distance=False)[:, 0]
    return float(np.mean(y[nearest] != y))


def choose_scaling(X, y, seed):
    """"global" or "feature" for the rows X (class indices y) that a similarity model is about to train on."""
    n = X.shape[0]
    if n < 3 or not np.isfinite(X).all():  # NaN and inf: the core's own check names the row and feature
        return "feature"
    if n > AUTO_SCALING_ROWS:
        rows = np.sort(np.random.default_rng(seed).choice(n, AUTO_SCALING_ROWS, replace=False))
        X, y = X[rows], y[rows]
    errors = {}
    for scaling in ("feature", "global"):
        with np.errstate(all="ignore"):
            Z = scaled_for_distances(X, scaling)
        if not np.isfinite(Z).all():  # deviations beyond the float range: nothing to compare
            return "feature"
        errors[scaling] = leave_one_out_1nn_error(Z, y)
    return "global" if errors["global"] < errors["feature"] else "feature"
