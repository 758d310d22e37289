"""Every bad input gets a clear ValueError naming the problem (never a crash or a silently wrong model)."""

import re

import numpy as np
import pytest
from sklearn.exceptions import NotFittedError

import rebelboost
from rebelboost import AdaBoostClassifier


@pytest.fixture
def Xy():
    rng = np.random.RandomState(0)
    X = rng.normal(size=(40, 3))
    y = (X[:, 0] > 0).astype(int)
    return X, y


def fit(X, y, **kw):
    sample_weight = kw.pop("sample_weight", None)
    return AdaBoostClassifier(**{"n_estimators": 5, **kw}).fit(X, y, sample_weight=sample_weight)


def test_inf_in_features(Xy):
    X, y = Xy
    X = X.copy()
    X[3, 1] = np.inf
    with pytest.raises(ValueError, match="infinity"):
        fit(X, y)
    X[3, 1] = -np.inf
    with pytest.raises(ValueError, match="infinity"):
        fit(X, y)


def test_inf_at_predict_time(Xy):
    X, y = Xy
    clf = fit(X, y)
    X2 = X.copy()
    X2[0, 0] = np.inf
    with pytest.raises(ValueError, match="infinity"):
        clf.predict(X2)


def test_nan_in_labels(Xy):
    X, y = Xy
    y = y.astype(float)
    y[5] = np.nan
    with pytest.raises(ValueError, match="y contains NaN"):
        fit(X, y)


def test_continuous_labels_rejected(Xy):
    X, _ = Xy
    with pytest.raises(ValueError, match="Unknown label type"):
        fit(X, np.linspace(0, 1, len(X)))


def test_wrong_shapes(Xy):
    X, y = Xy
    with pytest.raises(ValueError, match="Expected 2D array"):
        fit(X[:, 0], y)
    with pytest.raises(ValueError, match="inconsistent numbers of samples"):
        fit(X, y[:-1])
    with pytest.raises(ValueError, match="dim 3"):
        fit(X.reshape(40, 3, 1), y)
    with pytest.raises(ValueError, match="0 sample"):
        fit(X[:0], y[:0])
    with pytest.raises(ValueError, match="0 feature"):
        fit(X[:, :0], y)


def test_predict_wrong_feature_count(Xy):
    X, y = Xy
    clf = fit(X, y)
    with pytest.raises(ValueError, match="X has 2 features, but AdaBoostClassifier is expecting 3"):
        clf.predict(X[:, :2])


def test_one_class(Xy):
    X, _ = Xy
    with pytest.raises(ValueError, match="only 1 class"):
        fit(X, np.zeros(len(X)))


def test_more_than_two_classes_points_to_rebel(Xy):
    X, _ = Xy
    y = np.arange(len(X)) % 3
    with pytest.raises(ValueError, match="Only binary classification is supported.*REBELClassifier"):
        fit(X, y)


@pytest.mark.parametrize(
    "bad, message",
    [
        (-1.0, "Negative values in data passed to `sample_weight`"),
        (np.nan, "sample_weight contains NaN"),
        (np.inf, "sample_weight contains infinity"),
    ],
)
def test_bad_sample_weight_values(Xy, bad, message):
    X, y = Xy
    sw = np.ones(len(y))
    sw[2] = bad
    with pytest.raises(ValueError, match=re.escape(message) if "`" in message else message):
        fit(X, y, sample_weight=sw)


def test_labels_of_mixed_types(Xy):
    X, y = Xy
    mixed = np.empty(len(y), dtype=object)
    mixed[y == 1] = "yes"
    mixed[y != 1] = 0.5
    with pytest.raises(ValueError, match=r"y mixes label types .*\(float, str\)"):
        fit(X, mixed)


def test_sample_weight_shape_and_sum(Xy):
    X, y = Xy
    with pytest.raises(ValueError, match=r"sample_weight.shape == \(39,\), expected \(40,\)"):
        fit(X, y, sample_weight=np.ones(39))
    with pytest.raises(ValueError, match="at least one non-zero"):
        fit(X, y, sample_weight=np.zeros(40))
    sw = np.where(y == 1, 1.0, 0.0)
    with pytest.raises(ValueError, match="only 1 class with positive weight"):
        fit(X, y, sample_weight=sw)
    # Finite weights whose sum overflows: a clear error (it used to give a model of NaN scores).
    with pytest.raises(ValueError, match="sums to more than the largest"):
        fit(X, y, sample_weight=np.full(40, 1e308))
    with pytest.raises(ValueError, match="sums to more than the largest double"):  # the core's own check
        rebelboost._core.train(np.asarray(X, dtype=np.float64), (y == y[0]).astype(np.int32), np.full(40, 1e308), 2,
                               "adaboost", 5, 1, 256, 1.0, 1)


def _in(low, high):
    return re.escape(f"must be an int in the range [{low}, {high}]")


@pytest.mark.parametrize(
    "param, value, message",
    [
        ("n_estimators", 0, _in(1, 1000000) + r". Got 0 instead"),
        ("n_estimators", 10**10, _in(1, 1000000) + r". Got 10000000000 instead"),  # not pybind11's TypeError
        ("n_estimators", 2.5, _in(1, 1000000)),
        ("max_depth", 0, _in(1, 8)),
        ("max_depth", 9, _in(1, 8)),
        ("max_depth", -(2**70), _in(1, 8)),
        ("n_bins", 2, _in(3, 256)),
        ("n_bins", 257, _in(3, 256)),
        ("learning_rate", 0.0, re.escape("must be a float in the range (0.0, inf)")),
        ("learning_rate", np.nan, "Got nan instead"),
        ("learning_rate", np.inf, "Got inf instead"),
        ("n_jobs", 0, re.escape("must be an int in the range (-inf, -1], an int in the range [1, inf) or None")),
        ("n_jobs", 1.5, "Got 1.5 instead"),
        ("random_state", -3, "Got -3 instead"),
        ("random_state", "seed", "Got 'seed' instead"),
        ("verbose", -1, "Got -1 instead"),
        ("quick", "yes", "Got 'yes' instead"),
        ("criterion", "variance", re.escape("must be a str among {")),
        ("subsample", 0.0, re.escape("must be a float in the range (0.0, 1.0]")),
    ],
)
def test_bad_parameters(Xy, param, value, message):
    X, y = Xy
    with pytest.raises(ValueError, match=f"The '{param}' parameter of AdaBoostClassifier " + ".*" + message):
        fit(X, y, **{param: value})


def test_parameter_errors_name_every_estimator(Xy):
    from rebelboost import REBELClassifier, VEBBoostClassifier

    X, y = Xy
    with pytest.raises(ValueError, match=re.escape("The 'lam' parameter of VEBBoostClassifier must be a float in the "
                                                   "range [0.0, 1.0]. Got 1.5 instead.")):
        VEBBoostClassifier(lam=1.5).fit(X, y)
    with pytest.raises(ValueError, match="The 'cost_matrix' parameter of REBELClassifier"):
        REBELClassifier(cost_matrix="uniform").fit(X, y)
    # validate_parameters is the same check, for parameters that did not come through __init__ (a file).
    clf = AdaBoostClassifier()
    clf.max_depth = 12
    with pytest.raises(ValueError, match=_in(1, 8)):
        rebelboost._validation.validate_parameters(clf)


def test_huge_n_jobs_is_clamped_not_a_crash(Xy):
    # Asking OpenMP for a million threads crashed in libgomp (SIGSEGV): now clamped to 4 per core, with a warning.
    from rebelboost._validation import MAX_THREADS_PER_CORE, resolve_n_jobs, usable_cores

    X, y = Xy
    limit = MAX_THREADS_PER_CORE * usable_cores()
    with pytest.warns(UserWarning, match=f"n_jobs=1000000 .*; using {limit} threads"):
        clf = AdaBoostClassifier(n_estimators=5, n_jobs=10**6).fit(X, y)
    reference = AdaBoostClassifier(n_estimators=5, n_jobs=1).fit(X, y)
    assert clf._model.to_bytes() == reference._model.to_bytes()
    assert resolve_n_jobs(None) == resolve_n_jobs(-1) == usable_cores()
    assert resolve_n_jobs(-usable_cores()) == 1 and resolve_n_jobs(limit) == limit
    if usable_cores() >= 2:
        assert resolve_n_jobs(-2) == usable_cores() - 1


def test_non_numeric_features(Xy):
    X, y = Xy
    X = X.astype(object)
    X[0, 0] = "abc"
    with pytest.raises(ValueError, match="X column 0 is not numeric \\('abc' in row 0, str\\)"):
        fit(X, y)


def test_sparse_input_rejected(Xy):
    sparse = pytest.importorskip("scipy.sparse")
    X, y = Xy
    with pytest.raises(TypeError, match="dense data is required"):
        fit(sparse.csr_matrix(X), y)


def test_predict_before_fit(Xy):
    X, _ = Xy
    with pytest.raises(NotFittedError):
        AdaBoostClassifier().predict(X)


def test_callback_exception_propagates(Xy):
    X, y = Xy

    def boom(record):
        raise RuntimeError("stop here")

    clf = AdaBoostClassifier(n_estimators=20, callbacks=[boom])
    with pytest.raises(RuntimeError, match="stop here"):
        clf.fit(X, y)
    # The trees finished before the exception are kept (the one whose callback raised included).
    assert clf.fit_info_["stop_reason"] == "error" and clf.n_estimators_ == 1


def test_core_rejects_bad_labels_and_dtypes(Xy):
    from rebelboost import _core

    X, y = Xy
    with pytest.raises(ValueError, match="label index 2 at row 0 is outside"):
        _core.train(X, np.full(len(y), 2, dtype=np.int32), None, 2, "adaboost", 5, 1, 256, 1.0, 1)
    with pytest.raises(ValueError, match="eval set 0: label index 7 at row 0 is outside"):
        _core.train(X, y.astype(np.int32), None, 2, "adaboost", 5, 1, 256, 1.0, 1,
                    eval_sets=[(X, np.full(len(y), 7, dtype=np.int32), None)])
    with pytest.raises(ValueError, match="eval set 0 has 2 features; the training data has 3"):
        _core.train(X, y.astype(np.int32), None, 2, "adaboost", 5, 1, 256, 1.0, 1,
                    eval_sets=[(np.ascontiguousarray(X[:, :2]), y.astype(np.int32), None)])
    with pytest.raises(ValueError, match="dtype float32 or float64"):
        _core.train(X.astype(np.int64), y.astype(np.int32), None, 2, "adaboost", 5, 1, 256, 1.0, 1)
    with pytest.raises(ValueError, match="infinite value"):
        Xi = X.copy()
        Xi[1, 2] = np.inf
        _core.train(Xi, y.astype(np.int32), None, 2, "adaboost", 5, 1, 256, 1.0, 1)


def test_predict_fast_path_agrees_with_the_general_path():
    # Plain float ndarrays skip scikit-learn's validate_data (its ~100 us dominate small predictions):
    # any layout or stride gives what a list of lists (the general path) gives, and inf is still refused.
    rng = np.random.RandomState(0)
    X = rng.normal(size=(300, 5))
    X[rng.rand(*X.shape) < 0.05] = np.nan
    clf = AdaBoostClassifier(n_estimators=15, max_depth=2).fit(X, X[:, 0] > 0)
    reference = clf.decision_function(X[::-1].tolist())
    wide = np.zeros((600, 10))
    wide[::2, ::2] = X[::-1]
    for view in (X[::-1], np.asfortranarray(X[::-1]), wide[::2, ::2], X[::-1].astype(np.float32).astype(np.float64)):
        np.testing.assert_array_equal(clf.decision_function(view), reference)
    with pytest.raises(ValueError, match="Input X contains infinity"):
        clf.predict(np.where(X > 2, np.inf, X))
    with pytest.raises(ValueError, match="X has 4 features, but AdaBoostClassifier is expecting 5"):
        clf.predict(X[:, :4])
