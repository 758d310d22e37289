"""Gradient-boosted regression trees on rebelboost's engine (docs/guide/regression.md)."""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils.validation import _check_sample_weight, check_is_fitted, validate_data

from rebelboost import _core
from rebelboost._base import BaseBoostingClassifier, EvalSet
from rebelboost._monitor import EvalData, TrainingMonitor
from rebelboost._params import constraints_for
from rebelboost._registry import register
from rebelboost._typing import Callback
from rebelboost._validation import (
    _as_float_matrix,
    _check_frame_columns,
    check_predict_data,
    eval_set_items,
    split_validation,
)

if TYPE_CHECKING:
    from typing_extensions import Self

    from rebelboost._base import _fit_context
else:
    from sklearn.base import _fit_context

__all__ = ["BoostingRegressor"]

_MAX_ABS_TARGET = _core.MAX_ABS_TARGET  # the core's kMaxAbsTarget (squared errors stay finite), read from it


def _check_targets(y: ArrayLike, what: str) -> NDArray[np.float64]:
    y = np.asarray(y, dtype=np.float64)
    bad = ~(np.abs(y) <= _MAX_ABS_TARGET)
    if bad.any():
        row = int(np.flatnonzero(bad)[0])
        kind = "not finite" if not np.isfinite(y[row]) else "beyond 1e150, the core's kMaxAbsTarget (squared errors must stay finite)"
        raise ValueError(f"{what} at row {row} is {y[row]!r}: {kind}")
    return np.ascontiguousarray(y)


class BoostingRegressor(RegressorMixin, BaseEstimator):
    """Gradient boosting of regression trees for the squared error.

    Each iteration grows a regression tree on the residuals ``y - H`` by the variance criterion (the
    QuickBoost family's "variance" split, docs/quickboost.md), layer by layer up to ``max_depth``, on
    binned features (NaN is a missing value routed by each split); its leaves hold the weighted mean
    residual, shrunk by ``learning_rate``. The model is the same for every ``n_jobs`` (integer histograms).

    Parameters
    ----------
    n_estimators : int, default=100
        Trees to grow (fewer when a tree has no split left, or early stopping stops).
    learning_rate : float, default=0.1
        Shrinkage of every tree's leaves, in (0, 1].
    max_depth : int, default=6
        Depth of every tree, 1 to 8 (at most 2**max_depth leaves).
    min_samples_leaf : int, default=20
        Least sample weight of a leaf, in units of the mean sample weight (without sample weights: rows).
    n_bins : int, default=256
        Value bins per feature plus one bin for NaN, 3 to 256.
    subsample : float, default=1.0
        Fraction of rows each tree is grown on (a fresh seeded draw per tree; every row is updated).
    feature_fraction : float, default=1.0
        Fraction of features each tree may split on.
    quick : True, False or "auto", default="auto"
        QuickBoost for the variance criterion (:doc:`/quickboost`): a tree layer may be searched by the
        pruned pass, which completes only the features whose error on the rows of largest ``w r**2`` does
        not already prove they lose. The model is the same bit for bit in every mode; "auto" picks the
        pruned pass or the full scan (with histogram subtraction) per layer from measured costs.
    early_stopping : bool, default=False
        Stop when the score on validation data has not improved by more than ``tol`` for
        ``n_iter_no_change`` trees, and keep the best iteration's trees. The validation data is the first
        ``eval_set`` given to fit, else a random ``validation_fraction`` of the training rows.
    validation_fraction, n_iter_no_change, tol : as scikit-learn's HistGradientBoostingRegressor.
    scoring : {"rmse", "mae", "loss"}, default="rmse"
        Validation metric ("loss": the weighted mean squared error).
    random_state : int, RandomState or None
        Seeds subsample, feature_fraction, the validation split and (int only) the bin-edge sample.
    n_jobs : int or None
        Threads (None: every usable core); the model never depends on it.
    verbose : int, default=0
        1: a progress bar; 2: log every 10 trees; 3: every tree.
    warm_start : bool, default=False
        Keep the fitted trees and add more up to ``n_estimators`` (same data and parameters: the result
        equals growing them all at once).
    callbacks : list of callables or None
        Called after every tree with its record (iteration, train_loss, eval); a true result stops training.

    Attributes
    ----------
    n_estimators_ : int
        Trees fitted (after early stopping: the best iteration's).
    best_iteration_ : int or None
        Trees with the lowest validation score (None without validation data).
    evals_result_ : dict
        Per validation set, the ``scoring`` after every tree.
    fit_info_ : dict
        How training ended (``stop_reason``) and per-iteration training figures.
    feature_importances_ : ndarray of shape (n_features,)
        Split gains weighted by each tree's step, normalised to sum 1.
    n_features_in_ : int
        Features seen in fit.
    feature_names_in_ : ndarray of str
        Column names seen in fit (DataFrames only).
    """

    _loss = "squared_error"

    # The one table of parameters (rebelboost._params): constraints and the core's arguments come from it.
    _parameter_constraints: dict = constraints_for("squared_error")

    def __init__(
        self,
        n_estimators: int = 100,
        learning_rate: float = 0.1,
        max_depth: int = 6,
        min_samples_leaf: int = 20,
        n_bins: int = 256,
        subsample: float = 1.0,
        feature_fraction: float = 1.0,
        quick: bool | Literal["auto"] = "auto",
        early_stopping: bool = False,
        validation_fraction: float = 0.1,
        n_iter_no_change: int = 10,
        tol: float = 1e-7,
        scoring: Literal["rmse", "mae", "loss"] = "rmse",
        random_state: int | np.random.RandomState | None = None,
        n_jobs: int | None = None,
        verbose: int = 0,
        warm_start: bool = False,
        callbacks: list[Callback] | None = None,
    ) -> None:
        self.n_estimators = n_estimators
        self.learning_rate = learning_rate
        self.max_depth = max_depth
        self.min_samples_leaf = min_samples_leaf
        self.n_bins = n_bins
        self.subsample = subsample
        self.feature_fraction = feature_fraction
        self.quick = quick
        self.early_stopping = early_stopping
        self.validation_fraction = validation_fraction
        self.n_iter_no_change = n_iter_no_change
        self.tol = tol
        self.scoring = scoring
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.verbose = verbose
        self.warm_start = warm_start
        self.callbacks = callbacks

    # ---- fit -------------------------------------------------------------------------------------
    def _fit_data(self, X, y, sample_weight, reset):
        _check_frame_columns(X)
        X, y = validate_data(self, X, y, reset=reset, accept_sparse=False, dtype=[np.float64, np.float32],
                             ensure_all_finite="allow-nan", y_numeric=True)
        X = _as_float_matrix(X)
        y = _check_targets(y, "y")
        if sample_weight is not None:
            sample_weight = _check_sample_weight(sample_weight, X, dtype=np.float64, ensure_non_negative=True)
        return X, y, sample_weight

    def _eval_sets(self, eval_set, dtype):
        out = []
        for i, item in eval_set_items(eval_set):
            X_val = np.ascontiguousarray(check_predict_data(self, item[0]), dtype=dtype)
            y_val = _check_targets(item[1], f"eval_set[{i}]: y")
            if y_val.ndim != 1 or len(y_val) != X_val.shape[0]:
                raise ValueError(f"eval_set[{i}]: y must be 1-D with one target per row of X ({X_val.shape[0]})")
            weight = None if len(item) == 2 or item[2] is None else _check_sample_weight(
                item[2], X_val, dtype=np.float64, ensure_non_negative=True)
            out.append(EvalData(f"valid_{i}", X_val, y_val, weight))
        return out

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X: ArrayLike, y: ArrayLike, sample_weight: ArrayLike | None = None,
            eval_set: EvalSet | None = None) -> Self:
        """Fit on X (n_samples, n_features; NaN = missing) and real targets y.

        sample_weight : array of shape (n_samples,), optional. Non-negative frequencies.
        eval_set : list of (X, y) or (X, y, sample_weight) tuples, optional. Validation data watched after
            every tree (``evals_result_``); early stopping watches the first.
        """
        warm = bool(self.warm_start) and hasattr(self, "_model")
        if warm and self.n_estimators < self.n_estimators_:
            raise ValueError(f"warm_start=True: n_estimators={self.n_estimators} is less than the "
                             f"{self.n_estimators_} trees already fitted; use truncate() to keep fewer")
        X, y, sample_weight = self._fit_data(X, y, sample_weight, reset=not warm)
        bin_seed, seed = self._seeds(warm)
        evals = self._eval_sets(eval_set, X.dtype)
        if self.early_stopping and not evals:
            X, y, sample_weight, validation = split_validation(X, y, sample_weight, self.validation_fraction, seed,
                                                               stratify=False)
            evals = [validation]
        monitor = TrainingMonitor(self, 1, evals, self.scoring, self.early_stopping, self.n_iter_no_change, self.tol,
                                  int(self.verbose), self.callbacks)
        try:
            model, history, stop_reason, stop_message, error, stage_seconds = _core.train_regressor(
                X, y, sample_weight, seed=seed, bin_seed=bin_seed, callback=monitor if monitor.needed else None,
                init_model=self._model if warm else None, eval_sets=[e.core_tuple() for e in evals],
                **self._core_params())
        except BaseException:
            monitor.close()
            raise
        if error is not None:
            stop_reason = "interrupted" if isinstance(error, KeyboardInterrupt) else "error"
        if stop_reason == "diverged":
            warnings.warn(f"BoostingRegressor: {stop_message}", ConvergenceWarning, stacklevel=2)
        self._model = model
        self._record_fit(history, stop_reason, monitor, stage_seconds)
        monitor.close(stop_reason, self._model.n_learners)
        if error is not None:
            raise error
        return self

    # The classifiers' machinery that does not depend on classes (_base.py).
    _core_params = BaseBoostingClassifier._core_params
    _seeds = BaseBoostingClassifier._seeds
    _record_fit = BaseBoostingClassifier._record_fit
    truncate = BaseBoostingClassifier.truncate
    _threads = BaseBoostingClassifier._threads
    _prepared = BaseBoostingClassifier._prepared
    n_estimators_ = BaseBoostingClassifier.n_estimators_
    feature_importances_ = BaseBoostingClassifier.feature_importances_
    feature_importances = BaseBoostingClassifier.feature_importances
    __sklearn_is_fitted__ = BaseBoostingClassifier.__sklearn_is_fitted__
    save = BaseBoostingClassifier.save

    def __getstate__(self) -> dict[str, Any]:  # the model as its file bytes
        state = dict(super().__getstate__())
        if "_model" in state:
            state["_model"] = state["_model"].to_bytes()
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        state = dict(state)
        if isinstance(state.get("_model"), (bytes, bytearray)):
            state["_model"] = _core.Model.from_bytes(bytes(state["_model"]))
        super().__setstate__(state)

    def _fitted_metadata(self) -> dict[str, Any]:
        return {}

    def _restore_fitted_metadata(self, meta: dict[str, Any]) -> None:
        pass

    # ---- predict ---------------------------------------------------------------------------------
    def predict(self, X: ArrayLike, n_iter: int | None = None, *, pred_contrib: bool = False) -> NDArray[np.float64]:
        """Predicted values H(x) = bias + sum of the trees' shrunk leaves; ``n_iter``: use the first trees only.

        pred_contrib : bool, default=False
            Return each feature's exact contribution instead (path-dependent TreeSHAP with the trees' node
            covers; docs/guide/explanations.md), shape ``(n_samples, n_features + 1)``, the expected value
            last; each row sums to the prediction up to rounding.
        """
        model, X, threads, n_trees = self._prepared(X, n_iter)
        if pred_contrib:
            return model.contributions(X, threads, n_trees, True)[:, 0, :]
        return model.decision_function(X, threads, n_trees, True)

    def staged_predict(self, X: ArrayLike) -> Iterator[NDArray[np.float64]]:
        """Yield the predictions after each tree (1, 2, ..., ``n_estimators_`` trees)."""
        check_is_fitted(self)
        X = check_predict_data(self, X)
        steps = self._model.steps()[:, 0]
        scores = np.full(X.shape[0], self._model.bias[0], dtype=np.float64)
        chunk = max(1, (1 << 24) // max(1, 8 * X.shape[0]))
        for first in range(0, len(steps), chunk):
            outputs = self._model.learner_outputs(X, self._threads(), first, chunk)
            for t in range(outputs.shape[1]):
                scores += outputs[:, t] * steps[first + t]
                yield scores.copy()

    def _present_scores(self, scores: NDArray[np.float64]) -> NDArray[np.float64]:
        return scores

    def __sklearn_tags__(self) -> Any:
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True
        return tags


register(BoostingRegressor)  # model files may name it (rebelboost._registry)
