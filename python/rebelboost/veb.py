"""VEB-Boost (Shivaswamy & Jebara): AdaBoost with a sample-variance penalty, on the shared tree engine."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

import numpy as np

from rebelboost._base import BinaryBoostingClassifier
from rebelboost._params import constraints_for
from rebelboost._typing import Callback

__all__ = ["VEBBoostClassifier"]


class VEBBoostClassifier(BinaryBoostingClassifier):
    """Binary Variational Empirical Bernstein Boosting with depth-``max_depth`` trees.

    Each iteration trains a tree on the weights ``u = lam n w^2 + (1 - lam) w`` (w normalised; sample
    weights act as frequencies) and takes the step ``alpha = 1/4 ln(sum_correct u / sum_wrong u)``
    (smoothed like AdaBoost's). This minimises the variational bound of the paper's Lemma 1, so the
    variance-penalised cost ``(sum e^{-yH})^2 + lam (n sum e^{-2yH} - (sum e^{-yH})^2)`` falls every
    iteration; training stops when a tree has no edge (alpha <= 0). ``lam = 0`` is AdaBoost's
    reweighting with half the step. ``predict_proba`` uses AdaBoost's logistic link of the score: a monotone
    probability (a ranking), not a calibrated posterior.

    Parameters
    ----------
    lam : float in [0, 1], default=0.5
        Weight of the sample-variance penalty.
    n_estimators, max_depth, n_bins, learning_rate, n_jobs, random_state, verbose, quick, criterion
        As in :class:`rebelboost.AdaBoostClassifier` (also weight_trim, subsample, feature_fraction) (the tree search sees the weights u).

    Attributes
    ----------
    As :class:`rebelboost.AdaBoostClassifier`; ``fit_info_["train_loss"]`` is the variance-penalised cost
    normalised to 1 at the start.
    """

    _loss = "veb"
    _parameter_constraints: dict = constraints_for(_loss)

    def __init__(
        self,
        lam: float = 0.5,
        n_estimators: int = 200,
        max_depth: int = 1,
        n_bins: int = 256,
        learning_rate: float = 1.0,
        n_jobs: int | None = None,
        random_state: int | np.random.RandomState | None = None,
        verbose: int = 0,
        quick: bool | Literal["auto"] = "auto",
        weight_trim: float = 1.0,
        subsample: float = 1.0,
        feature_fraction: float = 1.0,
        criterion: str = "loss",
        early_stopping: bool = False,
        validation_fraction: float = 0.1,
        n_iter_no_change: int = 10,
        tol: float = 1e-7,
        scoring: str = "loss",
        warm_start: bool = False,
        callbacks: list[Callback] | None = None,
        class_weight: Mapping[Any, float] | Literal["balanced"] | None = None,
    ) -> None:
        self.lam = lam
        self.n_estimators = n_estimators
        self.max_depth = max_depth
        self.n_bins = n_bins
        self.learning_rate = learning_rate
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.verbose = verbose
        self.quick = quick
        self.weight_trim = weight_trim
        self.subsample = subsample
        self.feature_fraction = feature_fraction
        self.criterion = criterion
        self.early_stopping = early_stopping
        self.validation_fraction = validation_fraction
        self.n_iter_no_change = n_iter_no_change
        self.tol = tol
        self.scoring = scoring
        self.warm_start = warm_start
        self.callbacks = callbacks
        self.class_weight = class_weight
