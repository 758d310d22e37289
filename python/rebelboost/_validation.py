"""Input validation and conversion of the data (X, y, weights, eval sets) before the core is called once.

Parameters are checked against the one parameter table (rebelboost._params); rules the core also needs
(weights, cost matrices, parameter bounds) are checked by the core alone (docs/design/parameters.md)."""

from __future__ import annotations

import numbers
import os
import warnings

import numpy as np
from sklearn.utils._param_validation import InvalidParameterError
from sklearn.utils.class_weight import compute_class_weight
from sklearn.utils.multiclass import check_classification_targets, type_of_target
from sklearn.utils.validation import _check_sample_weight, validate_data

from rebelboost import _core

__all__ = ["check_fit_data", "check_eval_sets", "check_predict_data", "resolve_n_jobs", "check_binary_classes",
           "validate_parameters"]

MAX_THREADS_PER_CORE = 4    # n_jobs above this many threads per usable core is clamped


def validate_parameters(estimator):
    """Check every parameter of a rebelboost estimator against its ``_parameter_constraints``.

    The same check fit runs first; ``rebelboost.load`` calls it on the parameters read from a file. Raises
    scikit-learn's InvalidParameterError (a ValueError) naming the parameter, the allowed values and the
    value given.
    """
    estimator._validate_params()


def _check_frame_columns(X):
    """A DataFrame's datetime, timedelta, period and non-numeric (string, category of strings) columns are a
    ValueError naming the first one (numpy's DTypePromotionError or "could not convert string to float" named
    neither the column nor the row); so is a string column of a numpy array, by its index."""
    dtypes = getattr(X, "dtypes", None)
    if dtypes is None or not hasattr(dtypes, "items"):
        if isinstance(X, np.ndarray) and X.ndim == 2 and X.dtype.kind in "OUS":
            for j in range(X.shape[1]):
                _check_numeric_column(X[:, j], f"X column {j}")
        return
    for position, (name, dtype) in enumerate(dtypes.items()):
        kind = getattr(dtype, "kind", "O")
        if kind in "mM" or type(dtype).__name__ in ("DatetimeTZDtype", "PeriodDtype"):
            what = "time spans (timedelta)" if kind == "m" else "datetimes"
            raise ValueError(f"X column {name!r} holds {what} ({dtype}), which are not numeric features; convert "
                             "them to numbers first (e.g. seconds since an origin, or day of week)")
        if kind in "OUS" or type(dtype).__name__ in ("StringDtype", "CategoricalDtype", "ArrowDtype"):
            _check_numeric_column(X.iloc[:, position], f"X column {name!r}")


def _check_numeric_column(column, label):
    """A ValueError naming the column and the first row holding a string that is not a number; anything else
    (numbers, numeric strings, None, pd.NA, other objects) is left to scikit-learn's conversion as before."""
    values = np.asarray(column, dtype=object)
    try:
        values.astype(np.float64)
    except (TypeError, ValueError):
        for row, value in enumerate(values):
            if not isinstance(value, (str, bytes)):  # None, pd.NA, objects: left to the usual conversion
                continue
            try:
                float(value)
            except ValueError:
                raise ValueError(f"{label} is not numeric ({value!r} in row {row}, {type(value).__name__}); "
                                 "encode it as numbers first (e.g. sklearn's OrdinalEncoder or OneHotEncoder "
                                 "in a pipeline)") from None


def _check_class_weight_labels(class_weight, classes):
    """A class_weight dict naming a label that is not a class of y: scikit-learn said "The classes, [0, 1],
    are not in class_weight", as if the classes were missing rather than the label unknown."""
    if not isinstance(class_weight, dict):
        return
    known = set(classes.tolist())
    unknown = [label for label in class_weight if (label.item() if isinstance(label, np.generic) else label) not in known]
    if unknown:
        raise ValueError(f"class_weight names label {unknown[0]!r}, which is not a class of y (the classes are "
                         f"{classes.tolist()[:10]}{' ...' if len(classes) > 10 else ''})")


def _as_float_matrix(X):
    """Return X as float32 or float64 without copying when it already is one (any memory order)."""
    if X.dtype in (np.float32, np.float64):
        return X if X.dtype.isnative else X.astype(X.dtype.newbyteorder("="))
    return X.astype(np.float64)


def check_fit_data(estimator, X, y, sample_weight, class_weight=None, reset=True):
    """Validate (X, y, sample_weight) for fit.

    Returns (X float32/float64 2-D, y_encoded int32, classes, sample_weight float64 or None, class_weights):
    the weights include class_weight (scikit-learn's definition: ``compute_sample_weight(class_weight, y)``
    times sample_weight), class_weights is the (n_classes,) multiplier per class or None. NaN is allowed in
    X (missing value); inf in X, NaN in y, wrong shapes, more classes than the core's limit, negative or
    non-finite weights raise ValueError naming the problem. reset=False (warm start) checks X against the
    features seen before.
    """
    _check_frame_columns(X)
    X, y = validate_data(
        estimator,
        X,
        y,
        reset=reset,
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
    class_weights = None
    if class_weight is not None:
        _check_class_weight_labels(class_weight, classes)
        class_weights = np.asarray(compute_class_weight(class_weight, classes=classes, y=y), dtype=np.float64)
        if not np.all(np.isfinite(class_weights)) or np.any(class_weights < 0):
            raise ValueError(f"class_weight must give every class a finite weight >= 0, got {class_weights.tolist()}")
        per_row = class_weights[y_encoded]
        sample_weight = per_row if sample_weight is None else sample_weight * per_row
    # Finite, >= 0, a positive and finite sum: the core's one check of the weights (check_data in booster.cpp).
    return X, y_encoded.astype(np.int32, copy=False), classes, sample_weight, class_weights


def eval_set_items(eval_set):
    """fit's eval_set as (index, tuple) pairs: None -> none, one tuple -> a list of it; anything but (X, y) or
    (X, y, sample_weight) tuples is a ValueError."""
    if eval_set is None:
        return []
    if isinstance(eval_set, tuple):
        eval_set = [eval_set]
    if not isinstance(eval_set, list):
        raise ValueError("eval_set must be a list of (X, y) or (X, y, sample_weight) tuples")
    for i, item in enumerate(eval_set):
        if not isinstance(item, tuple) or len(item) not in (2, 3):
            raise ValueError(f"eval_set[{i}] must be a tuple (X, y) or (X, y, sample_weight)")
    return list(enumerate(eval_set))


def check_eval_sets(estimator, eval_set, classes, dtype, class_weights):
    """Validate fit's eval_set: a list of (X, y) or (X, y, sample_weight) tuples.

    Returns one EvalData per set, named "valid_0", "valid_1", ...: X checked like predict's input and cast to
    the training dtype, labels encoded as indices into ``classes`` (a label not seen in training is an
    error naming it), weights checked and multiplied by the class weights.
    """
    from rebelboost._monitor import EvalData

    out = []
    for i, item in eval_set_items(eval_set):
        X_val = np.ascontiguousarray(check_predict_data(estimator, item[0]), dtype=dtype)
        y_val = np.asarray(item[1])
        if y_val.ndim != 1 or len(y_val) != X_val.shape[0]:
            raise ValueError(f"eval_set[{i}]: y must be 1-D with one label per row of X ({X_val.shape[0]})")
        index = np.searchsorted(classes, y_val)
        known = (index < len(classes)) & (classes[np.minimum(index, len(classes) - 1)] == y_val)
        if not known.all():
            raise ValueError(f"eval_set[{i}]: labels {np.unique(y_val[~known])[:5].tolist()} were not in the "
                             f"training labels {classes.tolist()[:10]}")
        weight = None if len(item) == 2 or item[2] is None else _check_sample_weight(
            item[2], X_val, dtype=np.float64, ensure_non_negative=True)
        if class_weights is not None:
            weight = class_weights[index] if weight is None else weight * class_weights[index]
        out.append(EvalData(f"valid_{i}", X_val, index.astype(np.int32), weight))
    return out


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


def split_validation(X, y_encoded, sample_weight, fraction, seed, stratify=True):
    """Early stopping without an eval_set: a ``fraction`` of the rows (seeded; stratified by class for the
    classifiers, plain for the regressor) becomes the validation set "validation" (scikit-learn's
    HistGradientBoosting carves it the same way). Returns (X_train, y_train, weight_train, EvalData)."""
    from sklearn.model_selection import train_test_split

    from rebelboost._monitor import EvalData

    rows = np.arange(X.shape[0])
    train, val = train_test_split(rows, test_size=fraction, stratify=y_encoded if stratify else None, random_state=seed)
    train.sort()
    val.sort()
    weight = (None, None) if sample_weight is None else (sample_weight[train], sample_weight[val])
    validation = EvalData("validation", np.ascontiguousarray(X[val]), y_encoded[val], weight[1])
    return np.ascontiguousarray(X[train]), y_encoded[train], weight[0], validation


def check_n_iter(estimator, n_iter):
    """n_iter for prediction or truncate: None means every learner; otherwise an int in [0, n_estimators_]."""
    n_trees = estimator._model.n_learners
    if n_iter is None:
        return n_trees
    if not isinstance(n_iter, numbers.Integral) or isinstance(n_iter, bool) or not 0 <= n_iter <= n_trees:
        raise ValueError(f"n_iter must be None or an int in the range [0, {n_trees}] (the model has {n_trees} "
                         f"{'trees' if estimator._model.learner == 'tree' else 'similarities'}), got {n_iter!r}")
    return int(n_iter)


def check_predict_data(estimator, X, check_inf=True):
    """Validate X for prediction against the fitted n_features_in_ / feature_names_in_.

    Plain float ndarrays of the right width are returned as they are; with ``check_inf=False`` the caller
    promises that the core refuses inf in them (``check_inf=True`` of its calls), which costs less than
    numpy's ``isinf`` for a few rows.
    """
    if (
        type(X) is np.ndarray
        and X.ndim == 2
        and X.dtype.char in "fd"
        and X.dtype.isnative
        and X.shape[0] > 0
        and X.shape[1] == getattr(estimator, "n_features_in_", -1)
        and not hasattr(estimator, "feature_names_in_")
    ):
        # The common case, checked directly (scikit-learn's validate_data costs ~100 us per call, which
        # dominates predicting a few rows); anything else takes the general path below.
        if check_inf and np.isinf(X).any():
            raise ValueError(f"Input X contains infinity or a value too large for dtype('{X.dtype}').")
        return X
    _check_frame_columns(X)
    _check_column_order(estimator, X)
    X = validate_data(
        estimator,
        X,
        accept_sparse=False,
        dtype=[np.float64, np.float32],
        ensure_all_finite="allow-nan",
        reset=False,
    )
    return _as_float_matrix(X)


def _check_column_order(estimator, X):
    """A DataFrame holding exactly the fitted columns in another order: scikit-learn's error (every
    scikit-learn estimator refuses it, and the estimator checks require it), with the one-line fix. The
    command line matches a file's columns by name instead (docs/guide/cli.md), which gives the same
    predictions as that fix."""
    names = getattr(estimator, "feature_names_in_", None)
    columns = getattr(X, "columns", None)
    if names is None or columns is None or not all(isinstance(c, str) for c in columns):
        return
    columns, names = list(columns), list(names)
    if columns != names and len(columns) == len(names) and sorted(columns) == sorted(names):
        first = next(i for i, (a, b) in enumerate(zip(columns, names)) if a != b)
        raise ValueError("The feature names should match those that were passed during fit.\n"
                         "Feature names must be in the same order as they were in fit.\n"
                         f"Column {first} is {columns[first]!r}, fit saw {names[first]!r} there; select the columns in "
                         "the fitted order with X[model.feature_names_in_] (the command line's predict and "
                         "evaluate match a file's columns by name and give those predictions)")


def usable_cores():
    """Cores this process may run on (its CPU affinity), at least 1."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not Linux
        return os.cpu_count() or 1


def resolve_n_jobs(n_jobs):
    """Thread count for the core, scikit-learn's convention: None or -1 -> every usable core; k > 0 -> k;
    -k -> cores + 1 - k, a ValueError when that leaves no core (k > cores). More than MAX_THREADS_PER_CORE threads per usable core is clamped to
    that, with a warning: beyond it threads only wait for cores, and asking the OpenMP runtime for
    thousands of threads crashes it. (0 is refused by the parameter constraints.)
    """
    n_cpus = usable_cores()
    if n_jobs is None:
        return n_cpus
    n_jobs = int(n_jobs)
    if n_jobs < -n_cpus:  # all cores but k - 1 >= n_cpus: nothing left (joblib's silent 1 hid the typo)
        # InvalidParameterError (a ValueError): a parameter error, exit code 2 on the command line.
        raise InvalidParameterError(f"n_jobs={n_jobs} asks for every usable core but {-n_jobs - 1}, and this process "
                                    f"may use {n_cpus}; use -1 to -{n_cpus} (all cores but k - 1), a positive count, "
                                    "or None")
    if n_jobs < 0:
        return n_cpus + 1 + n_jobs
    limit = MAX_THREADS_PER_CORE * n_cpus
    if n_jobs > limit:
        warnings.warn(f"n_jobs={n_jobs} is more than {MAX_THREADS_PER_CORE} threads for each of the {n_cpus} usable "
                      f"cores; using {limit} threads", UserWarning, stacklevel=3)
        return limit
    return n_jobs
