"""What fit watches once per iteration: validation metrics, early stopping, progress output, user callbacks."""

from __future__ import annotations

import logging
import sys

import numpy as np

__all__ = ["EvalData", "TrainingMonitor", "METRICS", "REGRESSION_METRICS", "log_loss_of_indices", "log_loss_of_log_proba"]

logger = logging.getLogger("rebelboost")

METRICS = ("loss", "error", "log_loss", "expected_cost")
REGRESSION_METRICS = ("loss", "rmse", "mae")  # BoostingRegressor ("loss": the weighted mean squared error)
# Metrics that count mistakes: equal values are common on a small validation set, and of two models with
# the same validation error the later one has the larger training margins, so the model kept is the latest
# of equal best values. The patience still counts from the last improvement beyond tol, for every metric: a
# tie is no evidence that training more helps, and a validation error that sits at its best would otherwise
# never stop a fit (docs/guide/similarity.md "Defaults").
LATE_TIES = ("error", "expected_cost")
_LOG_EPS = float(np.log(np.finfo(np.float64).eps))  # scikit-learn's log loss clips p to [eps, 1 - eps]
_LOG_ONE_MINUS_EPS = float(np.log1p(-np.finfo(np.float64).eps))


def log_loss_of_indices(y, proba, sample_weight=None):
    """scikit-learn's ``log_loss(y, proba, sample_weight=..., labels=range(K))`` for class indices ``y`` and
    rows of probabilities, by its definition (probabilities clipped to [eps, 1 - eps], the weighted mean of
    -log of the true class's) but without its input validation, which cost 1.5-3 ms per call on 1 250 x 10
    rows: every iteration of a fit that watches the log loss, a similarity's default. The monitor's inputs
    are its own, already checked. Binary 1-D probabilities are those of class 1, as scikit-learn reads them.
    tests/python/test_monitor.py compares the two."""
    proba = np.asarray(proba, dtype=np.float64)
    if proba.ndim == 1:
        proba = np.column_stack([1.0 - proba, proba])
    with np.errstate(divide="ignore"):
        return log_loss_of_log_proba(np.log(proba[np.arange(len(y)), y]), sample_weight)


def log_loss_of_log_proba(log_p, sample_weight=None):
    """The same log loss from ``log P(true class)`` per row (``_true_class_log_proba``): scikit-learn's clip
    of the probabilities to [eps, 1 - eps] made in log space."""
    terms = -np.clip(log_p, _LOG_EPS, _LOG_ONE_MINUS_EPS)
    return float(terms.mean() if sample_weight is None else np.average(terms, weights=sample_weight))


class EvalData:
    """One validation set as the core needs it (X converted, labels as class indices) plus its name."""

    def __init__(self, name, X, y_encoded, sample_weight):
        self.name = name
        self.X = X
        self.y = y_encoded
        self.sample_weight = sample_weight

    def core_tuple(self):
        return (self.X, self.y, self.sample_weight)


class TrainingMonitor:
    """The core's per-iteration callback: records the metric on every eval set, decides early stopping,
    draws the progress bar or logs, and runs the user's callbacks. Returns False to stop training.

    Iteration k (1-based) is the model with its first k trees; ``history[name][k - 1]`` is its metric.
    """

    def __init__(self, estimator, n_classes, evals, scoring, early_stopping, n_iter_no_change, tol, verbose, callbacks,
                 total=None, label=""):
        self.estimator = estimator
        self.total = total  # the progress bar's length (None: the estimator's n_estimators)
        self.label = label  # after the estimator's name in the bar and the log lines (a refit's "refit")
        self.n_classes = n_classes
        self.evals = evals
        self.scoring = scoring
        self.early_stopping = early_stopping and bool(evals)
        self.n_iter_no_change = n_iter_no_change
        self.tol = tol
        self.verbose = verbose
        self.callbacks = list(callbacks or [])
        for callback in self.callbacks:
            if not callable(callback):
                raise ValueError(f"callbacks must hold callables (each takes the iteration's record), got {callback!r}")
        self.history = {e.name: [] for e in evals}
        self.best_value = np.inf
        self.best_for_patience = 0  # last iteration that improved on the best by more than tol
        self.last = None
        self._bar = None
        self._log_handler = None

    @property
    def needed(self):
        """Whether fit must call back at all (no eval set, no output and no callback: no per-iteration cost)."""
        return bool(self.evals or self.verbose or self.callbacks)

    # ---- metrics ---------------------------------------------------------------------------------
    def _metric(self, data, raw_scores, eval_loss):
        if self.scoring == "loss":
            return float(eval_loss)
        est = self.estimator
        scores = est._present_scores(raw_scores)
        w = data.sample_weight
        if self.scoring in ("rmse", "mae"):  # the regressor: y holds real targets
            error = np.asarray(scores, dtype=np.float64).reshape(-1) - data.y
            if self.scoring == "mae":
                return float(np.average(np.abs(error), weights=w))
            return float(np.sqrt(np.average(error * error, weights=w)))
        if self.scoring == "log_loss":
            return log_loss_of_log_proba(est._true_class_log_proba(scores, data.y), w)
        predicted = est._scores_to_index(scores)
        if self.scoring == "error":
            return float(np.average(predicted != data.y, weights=w))
        cost = getattr(est, "cost_matrix_", None)
        if cost is None:
            cost = 1.0 - np.eye(self.n_classes)
        return float(np.average(cost[data.y, predicted], weights=w))

    # ---- the callback ----------------------------------------------------------------------------
    def __call__(self, record):
        k = record["iteration"] + 1
        evals = {}
        for e, data in enumerate(self.evals):
            value = self._metric(data, record["eval_scores"][e], record["eval_loss"][e])
            self.history[data.name].append(value)
            evals[data.name] = {self.scoring: value}
        stop = False
        if self.evals:
            value = evals[self.evals[0].name][self.scoring]
            if value < self.best_value - self.tol:
                self.best_for_patience = k
            self.best_value = min(self.best_value, value)
            stop = self.early_stopping and k - self.best_for_patience >= self.n_iter_no_change
        self.last = {"iteration": k, "train_loss": record["train_loss"], "weighted_error": record["weighted_error"],
                     "eval": evals}
        self._report(record["replayed"])
        if not record["replayed"]:
            for callback in self.callbacks:
                stop = bool(callback(dict(self.last))) or stop
        return not stop

    @property
    def best_iteration(self):
        """Number of trees with the lowest metric on the first eval set (on ties the first such, the last for
        the metrics in LATE_TIES); None without."""
        if not self.evals or not self.history[self.evals[0].name]:
            return None
        values = np.asarray(self.history[self.evals[0].name])
        if self.scoring in LATE_TIES:
            return len(values) - int(np.argmin(values[::-1]))
        return int(np.argmin(values)) + 1

    # ---- progress --------------------------------------------------------------------------------
    def _summary(self):
        last = self.last
        parts = [f"train loss {last['train_loss']:.6g}"]
        for name, values in last["eval"].items():
            parts.extend(f"{name} {metric} {value:.6g}" for metric, value in values.items())
        return parts

    def _report(self, replayed):
        if self.verbose == 1:
            if self._bar is None:
                from tqdm.auto import tqdm

                stopping = getattr(self.estimator, "_stopping", None)  # the classifiers resolve n_estimators="auto"
                total = self.total or int(stopping()["n_estimators"] if stopping is not None else self.estimator.n_estimators)
                self._bar = tqdm(total=total, desc=self._name(), unit="tree", file=sys.stderr, leave=True)
            self._bar.set_postfix_str(", ".join(self._summary()), refresh=False)
            self._bar.update(1)
        elif self.verbose >= 2 and not replayed:
            k = self.last["iteration"]
            if self.verbose >= 3 or k == 1 or k % 10 == 0:
                self._log(f"[{self._name()}] iteration {k}: " + ", ".join(self._summary()))

    def _name(self):
        return type(self.estimator).__name__ + (f" {self.label}" if self.label else "")

    def _log(self, message):
        if self.verbose >= 2 and self._log_handler is None and not logger.hasHandlers():
            # Logging is not configured: show the lines on stderr for the duration of fit.
            self._log_handler = logging.StreamHandler(sys.stderr)
            logger.addHandler(self._log_handler)
            self._saved_level = logger.level
            logger.setLevel(logging.INFO)
        logger.info(message)

    def close(self, stop_reason=None, n_trees=None):
        """End of fit: close the bar, log how training ended (stop_reason None: fit failed)."""
        if self._bar is not None:
            self._bar.close()
            self._bar = None
        if self.verbose >= 2 and stop_reason is not None:
            best = self.best_iteration
            self._log(f"[{self._name()}] stopped ({stop_reason}) with {n_trees} trees"
                      + (f"; best iteration {best}" if best is not None else ""))
        if self._log_handler is not None:
            logger.removeHandler(self._log_handler)
            logger.setLevel(self._saved_level)
            self._log_handler = None

