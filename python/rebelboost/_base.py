"""Shared machinery of the rebelboost estimators: fit through the core, predict, staged output, pickling."""

from __future__ import annotations

import warnings
from numbers import Integral, Real

import numpy as np
from scipy.special import expit
from sklearn.base import BaseEstimator, ClassifierMixin, _fit_context
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted

from rebelboost import _core
from rebelboost._validation import (
    MAX_ESTIMATORS,
    check_binary_classes,
    check_fit_data,
    check_predict_data,
    resolve_n_jobs,
)

__all__ = ["BaseBoostingClassifier", "BinaryBoostingClassifier"]

_STAGED_OUTPUT_BYTES = 1 << 24  # staged prediction holds at most this many tree outputs (int8) at a time


class BaseBoostingClassifier(ClassifierMixin, BaseEstimator):
    """Common base: subclasses set ``_loss`` and may override ``_check_classes``."""

    _loss = "adaboost"

    # ---- parameters ------------------------------------------------------------------------------
    # The one place where parameters are checked: scikit-learn's machinery applies these constraints in
    # fit (through _fit_context) and validate_parameters() applies them to a model loaded from a file.
    _parameter_constraints: dict = {
        "n_estimators": [Interval(Integral, 1, MAX_ESTIMATORS, closed="both")],
        "max_depth": [Interval(Integral, 1, 8, closed="both")],
        "n_bins": [Interval(Integral, 3, 256, closed="both")],
        "learning_rate": [Interval(Real, 0.0, None, closed="neither")],
        "n_jobs": [Interval(Integral, None, -1, closed="right"), Interval(Integral, 1, None, closed="left"), None],
        "random_state": ["random_state"],
        "verbose": ["verbose"],
        "quick": ["boolean", StrOptions({"auto"})],
        "weight_trim": [Interval(Real, 0.0, 1.0, closed="right")],
        "subsample": [Interval(Real, 0.0, 1.0, closed="right")],
        "feature_fraction": [Interval(Real, 0.0, 1.0, closed="right")],
        "criterion": [StrOptions({"loss", "gini"})],
    }

    def _core_params(self):
        """The validated parameters converted to the core's arguments."""
        quick = self.quick
        return dict(
            weight_trim=float(self.weight_trim),
            subsample=float(self.subsample),
            feature_fraction=float(self.feature_fraction),
            criterion=0 if getattr(self, "criterion", "loss") == "loss" else 1,
            quick=2 if isinstance(quick, str) else int(bool(quick)),
            n_estimators=int(self.n_estimators),
            max_depth=int(self.max_depth),
            n_bins=int(self.n_bins),
            learning_rate=float(self.learning_rate),
            n_threads=resolve_n_jobs(self.n_jobs),
        )

    def _bin_seed(self):
        """random_state picks the rows used to find bin edges when n_samples > 200 000 (-1: evenly spaced)."""
        rs = self.random_state
        if rs is None:
            return -1
        if isinstance(rs, np.random.RandomState):
            return int(rs.randint(0, 2**31 - 1))
        return int(rs)

    # ---- fit -------------------------------------------------------------------------------------
    def _check_classes(self, classes, y_encoded, sample_weight, y):
        """Hook: binary estimators reject anything but 2 classes."""

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, sample_weight=None):
        """Fit on X (n_samples, n_features; NaN = missing) and labels y of any type.

        sample_weight : array of shape (n_samples,), optional; non-negative frequencies (weight 2 on a row
        gives the model of the row twice).
        """
        params = self._core_params()
        X, y_encoded, classes, sample_weight = check_fit_data(self, X, y, sample_weight)
        self._check_classes(classes, y_encoded, sample_weight, y)
        callback = self._progress_callback() if self.verbose else None
        model, history, stop_reason, stop_message = _core.train(
            X,
            y_encoded,
            sample_weight,
            len(classes),
            self._loss,
            bin_seed=self._bin_seed(),
            seed=max(0, self._bin_seed()),
            callback=callback,
            **params,
            **self._core_extra(),
        )
        if stop_reason == "diverged":
            warnings.warn(f"{type(self).__name__}: {stop_message}; lower learning_rate", ConvergenceWarning, stacklevel=3)
        self.classes_ = classes
        self._model = model
        self.fit_info_ = {
            "stop_reason": stop_reason,
            "n_iterations": len(history),
            "train_loss": np.array([h["train_loss"] for h in history]),
            "weighted_error": np.array([h["weighted_error"] for h in history]),
            "bin_accumulations": np.array([h["bin_accumulations"] for h in history], dtype=np.int64),
            "quick_nodes": np.array([h["quick_nodes"] for h in history], dtype=np.int64),
            "full_nodes": np.array([h["full_nodes"] for h in history], dtype=np.int64),
            "features_pruned": np.array([h["features_pruned"] for h in history], dtype=np.int64),
            "heavy_rebuilds": np.array([h["heavy_rebuilds"] for h in history], dtype=np.int64),
            "mass90_fraction": np.array([h["mass90_fraction"] for h in history]),
        }
        return self

    def _core_extra(self):
        """Hook: extra keyword arguments for the core's train()."""
        return {}

    def _fitted_metadata(self):
        """Hook: fitted state beyond classes and features that the model file's metadata keeps (JSON)."""
        return {}

    def _restore_fitted_metadata(self, meta):
        """Hook: set that state again from the metadata of a loaded file (ValueError/TypeError if bad)."""

    def _progress_callback(self):
        every = max(1, int(self.verbose) if self.verbose > 1 else 10)
        name = type(self).__name__

        def report(info):
            it = info["iteration"] + 1
            if it == 1 or it % every == 0:
                print(f"[{name}] iteration {it}: train loss {info['train_loss']:.6g}", flush=True)
            return True

        return report

    # ---- predict ---------------------------------------------------------------------------------
    def _threads(self):
        return resolve_n_jobs(self.n_jobs)

    def decision_function(self, X):
        """Scores H(x) = a_0 + sum_t f_t(x) a_t: shape (n_samples,) for binary models."""
        check_is_fitted(self)
        X = check_predict_data(self, X)
        return self._present_scores(self._model.decision_function(X, self._threads()))

    def predict(self, X):
        """Predicted class labels (from ``classes_``)."""
        return self._scores_to_labels(self.decision_function(X))

    def staged_decision_function(self, X):
        """Yield the scores after each of the n_estimators_ stages (1, 2, ..., T trees)."""
        check_is_fitted(self)
        X = check_predict_data(self, X)
        steps = [tree["step"] for tree in self._model.trees()]
        scores = np.broadcast_to(self._model.bias, (X.shape[0], self._model.n_outputs)).astype(np.float64)
        chunk = max(1, _STAGED_OUTPUT_BYTES // max(1, X.shape[0]))  # trees whose outputs are held at once
        for first in range(0, len(steps), chunk):
            outputs = self._model.tree_outputs(X, self._threads(), first, chunk)
            for t in range(outputs.shape[1]):
                scores += outputs[:, t, None].astype(np.float64) * steps[first + t][None, :]
                yield self._present_scores(scores[:, 0].copy() if self._model.n_outputs == 1 else scores.copy())

    def staged_predict(self, X):
        """Yield the predicted labels after each stage."""
        for scores in self.staged_decision_function(X):
            yield self._scores_to_labels(scores)

    def staged_predict_proba(self, X):
        """Yield ``predict_proba`` after each stage."""
        for scores in self.staged_decision_function(X):
            yield self._scores_to_proba(scores)

    def predict_proba(self, X):
        """Class probabilities, columns in the order of ``classes_``."""
        return self._scores_to_proba(self.decision_function(X))

    def predict_log_proba(self, X):
        """Logarithm of ``predict_proba``."""
        with np.errstate(divide="ignore"):
            return np.log(self.predict_proba(X))

    def _present_scores(self, scores):
        """Hook: the model's scores as decision_function returns them."""
        return scores

    def _scores_to_labels(self, scores):
        if scores.ndim == 1:
            return self.classes_[(scores > 0).astype(np.intp)]
        return self.classes_[np.argmax(scores, axis=1)]

    # ---- fitted attributes -----------------------------------------------------------------------
    @property
    def n_estimators_(self):
        """Number of trees actually fitted (training stops early when a learner has no edge)."""
        check_is_fitted(self)
        return self._model.n_trees

    @property
    def feature_importances_(self):
        """Split gains weighted by each tree's |step|, normalised to sum 1 (zeros if nothing split)."""
        check_is_fitted(self)
        return self._model.feature_importances()

    @property
    def estimator_weights_(self):
        """Step a_t of every tree: (n_estimators_,) for binary models, (n_estimators_, K) otherwise."""
        check_is_fitted(self)
        steps = np.array([t["step"] for t in self._model.trees()]).reshape(-1, self._model.n_outputs)
        return steps[:, 0] if self._model.n_outputs == 1 else steps

    def __sklearn_is_fitted__(self):
        return hasattr(self, "_model")

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True
        return tags

    # ---- persistence -----------------------------------------------------------------------------
    def save(self, path):
        """Write the fitted model to ``path`` in rebelboost's binary format (atomic: temp file + rename)."""
        from rebelboost.serialization import save

        save(self, path)

    def __getstate__(self):
        state = super().__getstate__() if hasattr(super(), "__getstate__") else dict(self.__dict__)
        state = dict(state)
        if "_model" in state:
            state["_model"] = state["_model"].to_bytes()
        return state

    def __setstate__(self, state):
        state = dict(state)
        if "_model" in state and isinstance(state["_model"], (bytes, bytearray)):
            state["_model"] = _core.Model.from_bytes(bytes(state["_model"]))
        if hasattr(super(), "__setstate__"):
            super().__setstate__(state)
        else:  # pragma: no cover
            self.__dict__.update(state)


class BinaryBoostingClassifier(BaseBoostingClassifier):
    """Base of the binary estimators (K = 1 score): exactly 2 classes, logistic link, binary-only tags."""

    def _check_classes(self, classes, y_encoded, sample_weight, y):
        check_binary_classes(self, classes, y_encoded, sample_weight, y)

    def _scores_to_proba(self, scores):
        # Thesis App. 7.1: the score estimates half the log-odds, P(y = +1 | x) = 1 / (1 + e^{-2H}).
        p1 = expit(2.0 * np.asarray(scores, dtype=np.float64))
        return np.column_stack([1.0 - p1, p1])

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False
        return tags
