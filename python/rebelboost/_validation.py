"""Input validation and conversion: everything is checked here, then the core is called once."""

from __future__ import annotations

import os
import warnings

import numpy as np
from sklearn.utils.multiclass import check_classification_targets, type_of_target
from sklearn.utils.validation import _check_sample_weight, validate_data

from rebelboost import _core

__all__ = ["check_fit_data", "check_predict_data", "resolve_n_jobs", "check_binary_classes", "validate_parameters"]

# Bounds on what a parameter may ask for (documented in the README).
MAX_ESTIMATORS = _core.MAX_TREES  # trees: a model this large is already gigabytes (the core's limit)
MAX_THREADS_PER_CORE = 4    # n_jobs above this many threads per usable core is clamped


def validate_parameters(estimator):
    """Check every parameter of a rebelboost estimator against its ``_parameter_constraints``.

    The same check fit runs first; ``rebelboost.load`` calls it on the parameters read from a file. Raises
    scikit-learn's InvalidParameterError (a ValueError) naming the parameter, the allowed values and the
    value given.
    """
    estimator._validate_params()


def _as_float_matrix(X):
    """Return X as float32 or float64 without copying when it already is one (any memory order)."""
    if X.dtype in (np.float32, np.float64):
        return X if X.dtype.isnative else X.astype(X.dtype.newbyteorder("="))
    return X.astype(np.float64)


def check_fit_data(estimator, X, y, sample_weight):
    """Validate (X, y, sample_weight) for fit.

    Returns (X float32/float64 2-D, y_encoded int32, classes, sample_weight float64 or None). NaN is
    allowed in X (missing value); inf in X, NaN in y, wrong shapes, more classes than the core's limit,
    negative or non-finite weights raise ValueError naming the problem.
    """
    X, y = validate_data(
        estimator,
        X,
        y,
        accept_sparse=False,
        dtype=[np.float64, np.float32],
        ensure_all_finite="allow-nan",
        order=None,
        y_numeric=False,
    )
    X = _as_float_matrix(X)
    try:
        check_classification_targets(y)
        classes, y_encoded = np.unique(y, return_inverse=True)
    except TypeError:  # e.g. str and float labels in one object array: they have no order
        kinds = sorted({type(v).__name__ for v in np.asarray(y, dtype=object).ravel()})
        raise ValueError(f"y mixes label types that cannot be sorted together ({', '.join(kinds)}); "
                         "use labels of one type") from None
    if len(classes) > _core.MAX_CLASSES:
        raise ValueError(f"y has {len(classes)} distinct classes, more than the limit of {_core.MAX_CLASSES} classes "
                         "rebelboost supports; is y a continuous target?")
    if sample_weight is not None:
        sample_weight = _check_sample_weight(sample_weight, X, dtype=np.float64, ensure_non_negative=True)
        if not np.all(np.isfinite(sample_weight)):
            raise ValueError("sample_weight contains NaN or infinity; weights must be finite and >= 0")
        with np.errstate(over="ignore"):
            total = sample_weight.sum()
        if not total > 0:
            raise ValueError("sample_weight sums to zero; at least one weight must be positive")
        if not np.isfinite(total):
            raise ValueError("sample_weight sums to more than the largest float64; divide the weights by a constant")
    return X, y_encoded.astype(np.int32, copy=False), classes, sample_weight


def check_binary_classes(estimator, y_raw_classes, y_encoded, sample_weight, y_type_source):
    """Raise the scikit-learn style error unless there are exactly 2 classes (with positive weight)."""
    name = type(estimator).__name__
    n_classes = len(y_raw_classes)
    if n_classes > 2:
        y_type = type_of_target(y_type_source, input_name="y")
        raise ValueError(
            f"Only binary classification is supported. The type of the target is {y_type}. "
            f"{name} is a binary classifier and y has {n_classes} classes; "
            "use rebelboost.REBELClassifier for multi-class (and cost-sensitive) problems."
        )
    if n_classes < 2:
        raise ValueError(
            f"y has only 1 class ({y_raw_classes[0]!r}); {name} needs 2 classes to train "
            "(use rebelboost.REBELClassifier for more than 2)."
        )
    if sample_weight is not None:
        present = np.bincount(y_encoded, weights=sample_weight, minlength=2) > 0
        if not present.all():
            raise ValueError(
                "sample_weight leaves only 1 class with positive weight; "
                f"{name} needs 2 classes with positive weight to train."
            )


def check_predict_data(estimator, X):
    """Validate X for prediction against the fitted n_features_in_ / feature_names_in_."""
    if (
        type(X) is np.ndarray
        and X.ndim == 2
        and X.dtype in (np.float32, np.float64)
        and X.dtype.isnative
        and X.shape[0] > 0
        and X.shape[1] == getattr(estimator, "n_features_in_", -1)
        and not hasattr(estimator, "feature_names_in_")
    ):
        # The common case, checked directly (scikit-learn's validate_data costs ~100 us per call, which
        # dominates predicting a few rows); anything else takes the general path below.
        if np.isinf(X).any():
            raise ValueError(f"Input X contains infinity or a value too large for dtype('{X.dtype}').")
        return X
    X = validate_data(
        estimator,
        X,
        accept_sparse=False,
        dtype=[np.float64, np.float32],
        ensure_all_finite="allow-nan",
        reset=False,
    )
    return _as_float_matrix(X)


def usable_cores():
    """Cores this process may run on (its CPU affinity), at least 1."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not Linux
        return os.cpu_count() or 1


def resolve_n_jobs(n_jobs):
    """Thread count for the core, scikit-learn's convention: None or -1 -> every usable core; k > 0 -> k;
    -k -> cores + 1 - k (at least 1). More than MAX_THREADS_PER_CORE threads per usable core is clamped to
    that, with a warning: beyond it threads only wait for cores, and asking the OpenMP runtime for
    thousands of threads crashes it. (0 is refused by the parameter constraints.)
    """
    n_cpus = usable_cores()
    if n_jobs is None:
        return n_cpus
    n_jobs = int(n_jobs)
    if n_jobs < 0:
        return max(1, n_cpus + 1 + n_jobs)
    limit = MAX_THREADS_PER_CORE * n_cpus
    if n_jobs > limit:
        warnings.warn(f"n_jobs={n_jobs} is more than {MAX_THREADS_PER_CORE} threads for each of the {n_cpus} usable "
                      f"cores; using {limit} threads", UserWarning, stacklevel=3)
        return limit
    return n_jobs
