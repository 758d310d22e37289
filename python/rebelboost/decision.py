"""Decisions from probabilities: the minimum-expected-cost class for a cost matrix (the "two-step")."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

import numpy as np
from numpy.typing import ArrayLike, NDArray

__all__ = ["predict_min_cost"]


class _ProbabilisticClassifier(Protocol):
    """What predict_min_cost needs of an estimator: classes_ and predict_proba."""

    classes_: Any

    def predict_proba(self, X: Any, /) -> Any: ...


def predict_min_cost(estimator: _ProbabilisticClassifier, X: ArrayLike,
                     cost_matrix: ArrayLike | Mapping[tuple[Any, Any], float]) -> NDArray[Any]:
    """Labels of least expected cost: ``classes_[argmin_k sum_i P(i | x) C[i, k]]`` for every row of X.

    The Bayes decision for a cost matrix, built on an estimator's probabilities: use calibrated ones, e.g.
    ``CalibratedClassifierCV(REBELClassifier(), method="temperature", cv=5)`` fitted with uniform costs
    (docs/guide/probabilities.md; ``bench/results/calibration.md``).

    Parameters
    ----------
    estimator : fitted classifier with ``classes_`` and ``predict_proba``
    X : array-like of shape (n_samples, n_features)
    cost_matrix : array of shape (n_classes, n_classes) or dict
        ``cost_matrix[i, k]``: the cost of predicting ``classes_[k]`` when the truth is ``classes_[i]``; as
        REBELClassifier's ``cost_matrix`` (zero diagonal, finite, >= 0; a dict sets entries, others are 1).
    """
    from rebelboost.rebel import _check_cost_matrix

    classes = np.asarray(estimator.classes_)
    cost = _check_cost_matrix(cost_matrix, classes)
    proba = np.asarray(estimator.predict_proba(X), dtype=np.float64)
    return classes[np.argmin(proba @ cost, axis=1)]
