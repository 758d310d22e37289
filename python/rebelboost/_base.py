"""Shared machinery of the rebelboost estimators: fit through the core, predict, staged output, pickling."""

from __future__ import annotations

import numbers
import warnings
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any, Literal, Union, overload

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.special import expit
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils.validation import check_is_fitted

from rebelboost import _core
from rebelboost._monitor import TrainingMonitor
from rebelboost._params import constraints_for, core_arguments, value_of
from rebelboost._registry import register
from rebelboost.serialization import save as _save_model
from rebelboost._validation import (
    check_binary_classes,
    check_eval_sets,
    check_fit_data,
    check_n_iter,
    check_predict_data,
    resolve_n_jobs,
    split_validation,
)

if TYPE_CHECKING:
    from collections.abc import Callable
    from os import PathLike
    from typing import TypeVar

    from typing_extensions import Self

    _F = TypeVar("_F", bound=Callable[..., Any])

    # scikit-learn's decorator, as it behaves: it returns the method unchanged in signature (scikit-learn
    # ships no types, so a type checker would otherwise see fit, and all that chains on it, as Any).
    def _fit_context(*, prefer_skip_nested_validation: bool) -> Callable[[_F], _F]: ...
else:
    from sklearn.base import _fit_context

__all__ = ["BaseBoostingClassifier", "BinaryBoostingClassifier"]

# fit's eval_set: (X, y) or (X, y, sample_weight) tuples, or one such tuple.
EvalSet = Union[tuple[Any, ...], Sequence[tuple[Any, ...]]]

_STAGED_OUTPUT_BYTES = 1 << 24  # staged prediction holds at most this many bytes of learner outputs at a time
_MIN_CASCADE_ROWS = 2  # calibrate_cascade: validation rows needed (docs/limitations.md)
_IMPORTANCE_TYPES = ("gain", "split", "weighted_gain")  # feature_importances(importance_type=...)
_IMPORTANCE_CHUNK = 4096  # trees read from the core at a time by feature_importances

# Per-iteration fields of the core's history kept in fit_info_ (the float ones, then the counters).
_FLOAT_INFO = ("train_loss", "weighted_error", "mass90_fraction")
_HISTORY_KEYS = _FLOAT_INFO + ("bin_accumulations", "quick_nodes", "full_nodes", "features_pruned", "heavy_rebuilds",
                               "candidates", "learner")  # learner: the kind kept, 0 tree, 1 similarity


class BaseBoostingClassifier(ClassifierMixin, BaseEstimator):
    """Common base: subclasses set ``_loss`` and may override ``_check_classes``."""

    _loss = "adaboost"

    # Fitted attributes (set by fit; documented on each estimator).
    classes_: NDArray[Any]
    n_features_in_: int
    feature_names_in_: NDArray[np.object_]
    fit_info_: dict[str, Any]
    evals_result_: dict[str, dict[str, NDArray[np.float64]]]
    best_iteration_: int | None
    cascade_report_: dict[str, Any]

    def __init_subclass__(cls, **kwargs: Any) -> None:
        # A class with a loss of its own is one a model file can name (serialization finds it in _registry);
        # subclasses that inherit their loss (the Dask estimators) are not.
        super().__init_subclass__(**kwargs)
        if "_loss" in cls.__dict__:
            register(cls)

    # ---- parameters ------------------------------------------------------------------------------
    # From the one parameter table (rebelboost._params, docs/design/parameters.md): scikit-learn's machinery
    # applies these constraints in fit (through _fit_context), and validate_parameters() applies them to a
    # model loaded from a file. Each subclass sets its own from its entry in ESTIMATORS.
    _parameter_constraints: dict = constraints_for("adaboost")

    def _core_params(self):
        """The validated parameters converted to the core's arguments (the table's ``core`` keywords)."""
        return {**core_arguments(self._loss, self), "n_threads": resolve_n_jobs(self.n_jobs)}

    def _stopping(self):
        """n_estimators, early_stopping, n_iter_no_change, validation_fraction and scoring as this fit uses
        them: a value "auto" resolved by the estimator's rule in the parameter table (rebelboost._params)."""
        return {name: value_of(self._loss, self, name)
                for name in ("n_estimators", "early_stopping", "n_iter_no_change", "validation_fraction", "scoring")}

    def _seeds(self, warm):
        """(bin_seed, seed): bin-edge rows (-1: evenly spaced) and the seed of subsample, feature_fraction and
        the early-stopping split. A RandomState is drawn from once per fresh fit; a warm start reuses the
        first fit's seeds, so it continues exactly."""
        if warm and hasattr(self, "_fit_seeds"):
            return self._fit_seeds
        rs = self.random_state
        if rs is None:
            seeds = (-1, 0)
        elif isinstance(rs, np.random.RandomState):
            drawn = int(rs.randint(0, 2**31 - 1))
            seeds = (drawn, drawn)
        else:
            seeds = (int(rs), int(rs))
        self._fit_seeds = seeds
        return seeds

    # ---- fit -------------------------------------------------------------------------------------
    def _check_classes(self, classes, y_encoded, sample_weight, y):
        """Hook: binary estimators reject anything but 2 classes."""

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X: ArrayLike, y: ArrayLike, sample_weight: ArrayLike | None = None,
            eval_set: EvalSet | None = None) -> Self:
        """Fit on X (n_samples, n_features; NaN = missing) and labels y of any type.

        Parameters
        ----------
        sample_weight : array of shape (n_samples,), optional
            Non-negative frequencies (weight 2 on a row gives the model of the row twice); multiplied by
            ``class_weight``'s weights.
        eval_set : list of (X, y) or (X, y, sample_weight) tuples, optional
            Validation data watched after every tree: ``evals_result_`` records ``scoring`` on each set
            (named "valid_0", "valid_1", ...); early stopping watches the first.

        Ctrl-C during fit raises KeyboardInterrupt within about 0.1 s; the estimator then holds the trees
        finished before it (``fit_info_["stop_reason"] == "interrupted"``), so it predicts, and
        ``warm_start=True`` resumes. An exception raised by a callback ends fit the same way.
        """
        warm = bool(self.warm_start) and hasattr(self, "_model")
        stopping = self._stopping()
        X, y_encoded, classes, sample_weight, class_weights = check_fit_data(
            self, X, y, sample_weight, self.class_weight, reset=not warm)
        if warm and not np.array_equal(classes, self.classes_):
            raise ValueError(f"warm_start=True: y has the classes {classes.tolist()[:10]}, the fitted model "
                             f"{self.classes_.tolist()[:10]}; fit again with warm_start=False")
        if warm and stopping["n_estimators"] < self.n_estimators_:
            raise ValueError(f"warm_start=True: n_estimators={stopping['n_estimators']} is less than the "
                             f"{self.n_estimators_} trees already fitted; use truncate() to keep fewer")
        self._check_classes(classes, y_encoded, sample_weight, y)
        bin_seed, seed = self._seeds(warm)
        evals = check_eval_sets(self, eval_set, classes, X.dtype, class_weights)
        carved = bool(stopping["early_stopping"] and not evals)
        all_rows = (X, y_encoded, sample_weight)  # what a refit trains on (_refit_size)
        if carved:
            X, y_encoded, sample_weight, validation = split_validation(
                X, y_encoded, sample_weight, stopping["validation_fraction"], seed)
            evals = [validation]
        self._validation_rows = len(evals[0].y) if evals else None  # read by "auto" rules (rebelboost._params)
        self._resolve_from_data(X, y_encoded, seed, warm)
        stopping = self._stopping()  # again: an "auto" rule may read what the data set (the watched rows)
        monitor = TrainingMonitor(self, len(classes), evals, stopping["scoring"], stopping["early_stopping"],
                                  stopping["n_iter_no_change"], self.tol, int(self.verbose), self.callbacks)
        try:
            model, history, stop_reason, stop_message, error, stage_seconds = self._train_core(
                X, y_encoded, sample_weight, len(classes), bin_seed, seed, monitor, evals,
                init_model=self._model if warm else None)
        except ValueError as exc:
            if warm and carved and "another bias" in str(exc):
                # The bias check compares the labels and weights of the rows trained on; this fit trains on X
                # minus its own validation split, so "other labels or sample weights" would mislead.
                raise ValueError(
                    f"warm_start=True: with early_stopping=True and no eval_set, this fit trains on X minus a "
                    f"validation split (validation_fraction={stopping['validation_fraction']}), not on the rows the "
                    f"fitted trees were trained on, so it cannot continue them; pass the eval_set the first fit "
                    f"used (fit(X, y, eval_set=[(X_val, y_val)])) or set early_stopping=False ({exc})") from None
            raise
        try:
            self._check_divergence(stop_reason, stop_message, model.n_learners if error is None else 1)
        except ValueError:
            monitor.close(stop_reason, 0)
            raise
        self.classes_ = classes
        self._model = model
        self.__dict__.pop("cascade_report_", None)  # a new model has no calibrated cascade
        self._record_fit(history, stop_reason, monitor, stage_seconds)
        monitor.close(stop_reason, self._model.n_learners)
        if error is not None:
            raise error
        n_refit = self._refit_size(carved, warm, stop_reason, stopping)
        if n_refit:
            self._refit(all_rows, n_refit, len(classes), bin_seed, seed)
        return self

    def _train_core(self, X, y_encoded, sample_weight, n_classes, bin_seed, seed, monitor, evals, init_model=None,
                    **overrides):
        """The core's train() with this fit's parameters (``overrides`` replace some): (model, history,
        stop_reason, stop_message, error, stage_seconds), stop_reason "interrupted" (Ctrl-C) or "error" (a
        callback raised) where the core returns an error. If the call raises, the monitor is closed first."""
        try:
            model, history, stop_reason, stop_message, error, stage_seconds = _core.train(
                X, y_encoded, sample_weight, n_classes, self._loss,
                bin_seed=bin_seed, seed=seed, callback=monitor if monitor.needed else None,
                init_model=init_model, eval_sets=[e.core_tuple() for e in evals],
                **{**self._core_params(), **overrides}, **self._core_extra())
        except BaseException:
            monitor.close()
            raise
        if error is not None:
            stop_reason = "interrupted" if isinstance(error, KeyboardInterrupt) else "error"
        return model, history, stop_reason, stop_message, error, stage_seconds

    def _refit_size(self, carved, warm, stop_reason, stopping):
        """Hook: learners to train again on every row after early stopping on a carve (0: keep the carve's
        model)."""
        return 0

    def _refit(self, all_rows, n_learners, n_classes, bin_seed, seed):
        """Train ``n_learners`` on every training row (``all_rows``: X, labels, weights before the carve) with
        this fit's parameters and seeds, and keep that model; ``fit_info_["refit"]`` records it. The carve's
        record stays in ``fit_info_`` and ``evals_result_`` (it picked the stage). Interrupted or failed, the
        carve's model stays and the error is raised."""
        # Progress output only: the callbacks and the eval sets watched the carve's fit, which chose the stage.
        monitor = TrainingMonitor(self, n_classes, [], "loss", False, 1, self.tol, int(self.verbose), None,
                                  total=n_learners, label="refit")
        model, history, stop_reason, stop_message, error, stage_seconds = self._train_core(
            *all_rows, n_classes, bin_seed, seed, monitor, [], n_estimators=n_learners)
        monitor.close(stop_reason, len(history))
        kept = stop_reason not in ("interrupted", "error", "diverged")
        self.fit_info_["refit"] = {
            "n_estimators": n_learners, "n_iterations": len(history), "stop_reason": stop_reason,
            "kept": kept, "seconds": float(sum(stage_seconds["wall"].values())),
            "learner": np.array([h["learner"] for h in history], dtype=np.int64)}
        if error is not None:
            raise error
        if not kept:
            warnings.warn(f"{type(self).__name__}: the refit on every row {stop_message}; the model trained on the "
                          f"rows left after the validation carve is kept", ConvergenceWarning, stacklevel=3)
            return
        self._model = model
        self.__dict__.pop("cascade_report_", None)

    def _check_divergence(self, stop_reason, stop_message, n_learners):
        """The one rule for a fit that diverged: an error when it kept no learner, else a ConvergenceWarning."""
        if stop_reason != "diverged":
            return
        if n_learners == 0:
            # Nothing kept: the "model" would predict the training prior for every row. An error, not a
            # warning that a search or a script filters away (learning_rate > 2 always does this to AdaBoost).
            raise ValueError(f"{type(self).__name__}: {stop_message}, so the fit kept no learner (it would predict "
                             f"one class for every row); lower learning_rate (1.0 or less)")
        warnings.warn(f"{type(self).__name__}: {stop_message}; lower learning_rate", ConvergenceWarning, stacklevel=4)

    def _record_fit(self, history, stop_reason, monitor, stage_seconds):
        """fit_info_, evals_result_, best_iteration_; early stopping keeps the best iteration's trees."""
        self.fit_info_ = {
            "refit": None,
            "stop_reason": stop_reason,
            "n_iterations": len(history),
            "n_replayed": sum(1 for h in history if h["replayed"]),
            "stage_seconds": stage_seconds["wall"],
            "stage_cpu_seconds": {"thread": stage_seconds["thread_cpu"], "process": stage_seconds["process_cpu"]},
            **{key: np.array([h[key] for h in history], dtype=np.float64 if key in _FLOAT_INFO else np.int64)
               for key in _HISTORY_KEYS},
        }
        self.evals_result_ = {name: {monitor.scoring: np.array(values)} for name, values in monitor.history.items()}
        self.best_iteration_ = monitor.best_iteration
        if monitor.early_stopping and self.best_iteration_ is not None:
            self._model = self._model.truncated(self.best_iteration_)

    def truncate(self, n_iter: int) -> Self:
        """Keep only the first ``n_iter`` trees (in place; returns self). ``warm_start=True`` then grows the
        model again exactly as training more trees at once would. A calibrated cascade keeps the thresholds of
        the checkpoints before the cut, but its certificate was for the whole model: ``cascade_report_`` is
        dropped; calibrate again for a guarantee."""
        check_is_fitted(self)
        self._model = self._model.truncated(check_n_iter(self, n_iter))
        self.__dict__.pop("cascade_report_", None)
        return self

    def _resolve_from_data(self, X, y_encoded, seed, warm):
        """Hook: parameters whose "auto" depends on the rows this fit trains on (after any validation carve)."""

    def _core_extra(self):
        """Hook: extra keyword arguments for the core's train()."""
        return {}

    def _fitted_metadata(self):
        """Hook: fitted state beyond classes and features that the model file's metadata keeps (JSON)."""
        return {}

    def _restore_fitted_metadata(self, meta):
        """Hook: set that state again from the metadata of a loaded file (ValueError/TypeError if bad)."""

    # ---- predict ---------------------------------------------------------------------------------
    def _threads(self):
        return resolve_n_jobs(self.n_jobs)

    def _prepared(self, X, n_iter):
        """(model, X, n_threads, n_trees) for a prediction; X validated (inf is refused by the core call),
        n_trees -1 for all."""
        model = self.__dict__.get("_model")
        if model is None:
            check_is_fitted(self)
        n_trees = -1 if n_iter is None else check_n_iter(self, n_iter)
        X = check_predict_data(self, X, check_inf=False)
        # One chunk of rows (256) runs on the calling thread anyway: skip resolving n_jobs (a system call).
        threads = 1 if X.shape[0] <= 256 else self._threads()
        return model, X, threads, n_trees

    def decision_function(self, X: ArrayLike, n_iter: int | None = None, *,
                          pred_contrib: bool = False) -> NDArray[np.float64]:
        """Scores H(x) = a_0 + sum_t f_t(x) a_t: shape (n_samples,) for binary models.

        n_iter : int, optional. Use only the first ``n_iter`` trees (0 to ``n_estimators_``; None: all).
        pred_contrib : bool, default=False
            Return each feature's exact contribution to the scores instead (path-dependent TreeSHAP with
            the trees' node covers; docs/guide/explanations.md): shape ``(n_samples, n_features + 1)``
            for binary models, ``(n_samples, n_classes, n_features + 1)`` for REBEL with more than 2
            classes, the expected value in the last column. Each row (per class) sums to the score
            ``decision_function`` returns, up to rounding. Tree models only; models loaded from files
            older than format version 5 hold no covers and raise ValueError.
        """
        model, X, threads, n_trees = self._prepared(X, n_iter)
        if pred_contrib:
            if model.learner != "tree":
                raise ValueError("pred_contrib is defined for tree models: a similarity learner depends on the whole "
                                 "distance between a row and its anchors, not on single features (see explain())")
            contributions = model.contributions(X, threads, n_trees, True)
            return self._present_contributions(contributions)
        # Positional arguments: pybind11 parses keywords slowly (~2 us), which shows on one-row calls.
        return self._present_scores(model.decision_function(X, threads, n_trees, True))

    def _present_contributions(self, contributions):
        """Hook: the core's (n, K, d + 1) contributions in the shape of decision_function's scores."""
        return contributions[:, 0, :] if contributions.shape[1] == 1 else contributions

    @overload
    def predict(self, X: ArrayLike, n_iter: int | None = None, *, early_exit: bool = False, cascade: bool = False,
                return_n_learners: Literal[False] = False) -> NDArray[Any]: ...

    @overload
    def predict(self, X: ArrayLike, n_iter: int | None = None, *, early_exit: bool = False, cascade: bool = False,
                return_n_learners: Literal[True]) -> tuple[NDArray[Any], NDArray[np.uint32]]: ...

    def predict(self, X: ArrayLike, n_iter: int | None = None, *, early_exit: bool = False, cascade: bool = False,
                return_n_learners: bool = False) -> NDArray[Any] | tuple[NDArray[Any], NDArray[np.uint32]]:
        """Predicted class labels (from ``classes_``); ``n_iter`` as in decision_function.

        early_exit : bool, default=False
            Exact early exit: a row stops as soon as its leading class beats every other class by more than
            the remaining learners could still add (the sum of their |steps|, with a safety margin for
            rounding), checked every 32 learners while at least a quarter of the learners remain (later
            checks would cost more than they save). The labels are always those of full evaluation.
        cascade : bool, default=False
            Use the soft cascade set by ``calibrate_cascade``: at each checkpoint a row leaves once the exact
            bound decides it or its margin reaches the calibrated threshold. Labels may differ from full
            evaluation, within what the calibration allowed on its validation data.
        return_n_learners : bool, default=False
            Also return, per row, how many learners were evaluated (uint32).
        """
        model, X, threads, n_trees = self._prepared(X, n_iter)
        result = model.predict(X, threads, n_trees, return_n_learners, True, bool(early_exit), 0, bool(cascade))
        if return_n_learners:
            return self.classes_.take(result[0]), result[1]
        return self.classes_.take(result)

    # ---- soft cascade ----------------------------------------------------------------------------
    def calibrate_cascade(self, X: ArrayLike, y: ArrayLike, *, max_accuracy_loss: float | None = None,
                          max_disagreement: float | None = None, min_recall: float | None = None,
                          every: int | None = None, confidence: float = 0.95) -> Self:
        """Calibrate a soft cascade (thesis §2.2, Bourdev and Brandt) whose target holds on new rows.

        After every ``every`` learners, a row whose class the exact early-exit bound decides leaves; else it
        leaves with its leading class once its margin (binary: |score|; more classes: the leader's lead)
        reaches that checkpoint's threshold. The thresholds are certified on (X, y) by Learn then Test
        (Angelopoulos et al. 2021) with Clopper-Pearson binomial tests (Clopper and Pearson 1934): with
        probability at least ``confidence`` over the draw of the calibration rows, the harm rate of the
        chosen cascade on new rows from the same distribution is at most the target. Of the certified
        candidates (a fixed family set by the model alone, see docs/cascades.md) the one with the fewest
        learners per calibration row is kept. Give exactly one target:

        max_accuracy_loss : float in (0, 1]
            Harm: a row that full evaluation classifies correctly is classified wrongly by the cascade (the
            accuracy drops by at most this much, counted over all rows).
        max_disagreement : float in (0, 1]
            Harm: a row gets another label than full evaluation gives.
        min_recall : float in [0, 1)
            Binary models (AdaBoost, VEB-Boost), detection style: rows only leave early as ``classes_[0]``
            (rejected); harm: a positive (``classes_[1]``) that full evaluation finds is rejected; at least
            this fraction of them is kept.
        every : int or None, default=None
            Learners between checkpoints. None: candidates for 4, 8 and 16 are all tested (Bonferroni over
            them, so they need more rows; with too few, 4 alone) and the certified one of least estimated
            cost, learners x (1 + 2 / every) (a check costs about two depth-2 trees), is kept.
        confidence : float in (0, 1), default=0.95

        X must be rows the model was not trained on (a validation split of the training data, never the
        test set), drawn like the rows the cascade will see. Certifying a harm rate a needs at least
        log((1 - confidence) / 3) / log(1 - a) such rows (817 for a = 0.005 at 95 %; 9 instead of 3 for
        all three spacings of ``every=None``); fewer raise ValueError. A target of 0 raises too: use
        ``predict(early_exit=True)``, which never changes a label.
        The thresholds are stored in the model (``cascade_``, saved with it, honoured by the C++ Predictor);
        ``predict(X, cascade=True)`` uses them. ``cascade_report_`` holds the calibration's figures (a dict):
        n_rows and min_rows (rows the harm is counted over, and the fewest that could certify the target),
        harmful, harm and harm_interval (Clopper-Pearson at ``confidence``) on X, harm_bound (the one-sided
        bound the test used, at most the target), target, confidence, mean_learners and learners_interval
        (normal approximation at ``confidence``) per row of X, n_learners, and the chosen candidate (every,
        shape, scale, tested). On X the harm is selected to pass, so the guarantee is the target, not harm.
        Returns self.
        """
        model = self.__dict__.get("_model")
        if model is None:
            check_is_fitted(self)
        targets = {"accuracy_loss": max_accuracy_loss, "disagreement": max_disagreement, "recall": min_recall}
        given = [(kind, value) for kind, value in targets.items() if value is not None]
        if len(given) != 1:
            raise ValueError("calibrate_cascade needs exactly one target: max_accuracy_loss, max_disagreement or "
                             f"min_recall (got {len(given)})")
        kind, value = given[0]
        if not isinstance(value, numbers.Real) or isinstance(value, bool) or not 0.0 <= value <= 1.0:
            raise ValueError(f"the cascade target must be a number in [0, 1], got {value!r}")
        if every is not None and (not isinstance(every, numbers.Integral) or isinstance(every, bool)):
            # Its range is the core's one check (check_cascade_every, docs/design/parameters.md).
            raise ValueError(f"every must be None or an int (learners between checkpoints), got {every!r}")
        if not isinstance(confidence, numbers.Real) or isinstance(confidence, bool) or not 0.0 < confidence < 1.0:
            raise ValueError(f"confidence must be a number in (0, 1), got {confidence!r}")
        X = check_predict_data(self, X)
        y = np.asarray(y)
        if y.ndim != 1 or len(y) != X.shape[0]:
            raise ValueError(f"y must be 1-D with one label per row of X ({X.shape[0]}), got shape {y.shape}")
        if X.shape[0] < _MIN_CASCADE_ROWS:
            raise ValueError(f"calibrate_cascade needs at least {_MIN_CASCADE_ROWS} rows of validation data to set "
                             f"its thresholds, got {X.shape[0]}")
        index = np.searchsorted(self.classes_, y)
        known = index < len(self.classes_)
        known[known] = self.classes_[index[known]] == y[known]
        if not known.all():
            raise ValueError(f"y holds labels the model was not trained on, e.g. {y[~known][0]!r}")
        self._model, report = model.calibrate_cascade(X, index.astype(np.int32), kind, float(value),
                                                      None if every is None else int(every),
                                                      float(confidence), self._threads())
        self.cascade_report_ = report
        return self

    @property
    def cascade_(self) -> dict[str, Any] | None:
        """The soft cascade: None, or {"every": int, "thresholds": (n_checkpoints, n_classes) array} where a
        row leaves with class k at checkpoint c (after (c + 1) * every learners) when its margin for k reaches
        thresholds[c, k] (binary: the score for classes_[1], minus the score for classes_[0]; more classes:
        the leader's lead over the runner-up)."""
        check_is_fitted(self)
        cascade = self._model.cascade
        return None if cascade is None else {"every": cascade[0], "thresholds": cascade[1]}

    def staged_decision_function(self, X: ArrayLike) -> Iterator[NDArray[np.float64]]:
        """Yield the scores after each of the ``n_estimators_`` stages (1, 2, ..., T learners)."""
        check_is_fitted(self)
        X = check_predict_data(self, X)
        steps = self._model.steps()
        scores = np.broadcast_to(self._model.bias, (X.shape[0], self._model.n_outputs)).astype(np.float64)
        itemsize = 1 if self._model.learner == "tree" else 8  # int8 +-1 or float64
        chunk = max(1, _STAGED_OUTPUT_BYTES // max(1, itemsize * X.shape[0]))  # learners whose outputs are held at once
        for first in range(0, len(steps), chunk):
            outputs = self._model.learner_outputs(X, self._threads(), first, chunk)
            for t in range(outputs.shape[1]):
                scores += outputs[:, t, None].astype(np.float64) * steps[first + t][None, :]
                yield self._present_scores(scores[:, 0].copy() if self._model.n_outputs == 1 else scores.copy())

    def staged_predict(self, X: ArrayLike) -> Iterator[NDArray[Any]]:
        """Yield the predicted labels after each stage."""
        for scores in self.staged_decision_function(X):
            yield self._scores_to_labels(scores)

    def staged_predict_proba(self, X: ArrayLike) -> Iterator[NDArray[np.float64]]:
        """Yield ``predict_proba`` after each stage."""
        for scores in self.staged_decision_function(X):
            yield self._probabilities(scores)

    def predict_proba(self, X: ArrayLike, n_iter: int | None = None) -> NDArray[np.float64]:
        """Class probabilities, columns in the order of ``classes_``; ``n_iter`` as in decision_function."""
        return self._probabilities(self.decision_function(X, n_iter=n_iter))

    def predict_log_proba(self, X: ArrayLike, n_iter: int | None = None) -> NDArray[np.float64]:
        """Logarithm of ``predict_proba``."""
        with np.errstate(divide="ignore"):
            return np.log(self.predict_proba(X, n_iter=n_iter))

    def _present_scores(self, scores):
        """Hook: the model's scores as decision_function returns them."""
        return scores

    def _true_class_log_proba(self, scores, y):
        """``log _scores_to_proba(scores)[n, y_n]`` for class indices ``y``: the terms of the validation log
        loss, which the monitor computes every iteration. Estimators whose link has a cheaper log form
        override it (REBEL)."""
        proba = np.asarray(self._scores_to_proba(scores), dtype=np.float64)
        with np.errstate(divide="ignore"):
            return np.log(proba[np.arange(len(y)), y])

    def _probabilities(self, scores):
        """predict_proba's rows for these scores: ``_scores_to_proba``, then ties broken towards predict.

        Where two classes' probabilities are closer than float64 resolves (REBEL: ``expit(2 H)`` is 1.0 for
        every H above ~18, so scores 20 and 21 both give 0.5 of two classes), the rounded rows tie while
        predict picks one. The class predict picks then keeps the row's maximum and every other entry that
        reached it is lowered by one unit in the last place: argmax(predict_proba) == predict whenever the
        scores differ, each entry moves by at most one ulp, rows still sum to 1 (to rounding).
        """
        proba = self._scores_to_proba(scores)
        index = self._scores_to_index(np.asarray(scores))
        bad = np.flatnonzero(np.argmax(proba, axis=1) != index)
        if bad.size:
            rows = proba[bad]
            top = rows.max(axis=1)
            rows[np.arange(bad.size), index[bad]] = top
            lowered = (rows >= top[:, None]) & (np.arange(rows.shape[1]) != index[bad][:, None])
            proba[bad] = np.where(lowered, np.nextafter(top, -np.inf)[:, None], rows)
        return proba

    def _scores_to_labels(self, scores):
        return self.classes_[self._scores_to_index(scores)]

    @staticmethod
    def _scores_to_index(scores):
        """Index into classes_ of the predicted class: H > 0 for 1-D (binary) scores, else argmax H."""
        if scores.ndim == 1:
            return (scores > 0).astype(np.intp)
        return np.argmax(scores, axis=1)

    # ---- fitted attributes -----------------------------------------------------------------------
    @property
    def n_estimators_(self) -> int:
        """Number of weak learners actually fitted (training stops early when a learner has no edge)."""
        check_is_fitted(self)
        return self._model.n_learners

    @property
    def feature_importances_(self) -> NDArray[np.float64]:
        """Split gains weighted by each tree's ``|step|_1``, normalised to sum 1 (zeros if nothing split): the same
        as ``feature_importances("weighted_gain")``. Tree models only: a similarity compares whole rows and
        splits no feature (AttributeError, so ``hasattr`` is False)."""
        check_is_fitted(self)
        if self._model.learner != "tree":
            raise AttributeError("feature_importances_ is defined for trees; similarities split no feature "
                                 "(see learners_ and explain())")
        return self._model.feature_importances()

    def feature_importances(self, importance_type: str = "gain", *, normalize: bool = True) -> NDArray[np.float64]:
        """Per-feature importances of a tree model, shape ``(n_features_in_,)``, float64.

        importance_type : "gain", "split" or "weighted_gain", default="gain"
            "split": how many split nodes of all the trees test the feature (LightGBM's "split", XGBoost's
            "weight"). "gain": the sum of the loss reductions (``gain`` of the model's nodes, as ``to_json``
            writes them: the decrease of the normalised training loss the split bought) of those nodes
            (LightGBM's "gain", XGBoost's "total_gain"). "weighted_gain": each node's gain times its tree's
            ``|step|_1``, what ``feature_importances_`` returns.
        normalize : bool, default=True
            Divide by the total so the importances sum to 1 (all zeros when no tree splits, e.g. a model of
            constant trees); False gives the raw counts or sums. A feature no tree splits on gets exactly 0.

        Similarity models (``weak_learner="similarity"``) raise ValueError: each of their learners depends on
        the whole distance between a row and its anchors, not on one feature, so no learner can be charged to
        a single feature.
        """
        if importance_type not in _IMPORTANCE_TYPES:
            raise ValueError(f"importance_type must be one of {sorted(_IMPORTANCE_TYPES)}, got {importance_type!r}")
        check_is_fitted(self)
        model = self._model
        if model.learner != "tree":
            raise ValueError("feature_importances is defined for tree models only: a similarity learner depends on "
                             "the whole distance between a row and its anchors, not on one feature, so no learner "
                             "can be charged to a single feature (see learners_ and explain())")
        if importance_type == "weighted_gain" and normalize:
            return model.feature_importances()  # feature_importances_ exactly (the core scales against overflow)
        importance = np.zeros(model.n_features, dtype=np.float64)
        for first in range(0, model.n_trees, _IMPORTANCE_CHUNK):
            trees = model.trees(first, _IMPORTANCE_CHUNK)
            feature = np.concatenate([tree["feature"] for tree in trees])
            split = feature >= 0
            weights = None
            if importance_type != "split":
                weights = np.concatenate([tree["gain"] for tree in trees])
                if importance_type == "weighted_gain":
                    weights = weights * np.repeat([np.abs(tree["step"]).sum() for tree in trees],
                                                  [len(tree["feature"]) for tree in trees])
                weights = weights[split]
            importance += np.bincount(feature[split], weights=weights, minlength=model.n_features)
        if normalize:
            total = importance.sum()
            if total > 0:
                importance /= total
        return importance

    @property
    def estimator_weights_(self) -> NDArray[np.float64]:
        """Step a_t of every learner: ``(n_estimators_,)`` for binary models, ``(n_estimators_, K)`` otherwise."""
        check_is_fitted(self)
        steps = self._model.steps()
        return steps[:, 0] if self._model.n_outputs == 1 else steps

    def __sklearn_is_fitted__(self):
        return hasattr(self, "_model")

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True
        return tags

    # ---- persistence -----------------------------------------------------------------------------
    def save(self, path: str | PathLike[str]) -> None:
        """Write the fitted model to ``path`` in rebelboost's binary format (atomic: temp file + rename)."""
        _save_model(self, path)

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
