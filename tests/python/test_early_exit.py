"""Exact early exit: predict(early_exit=True) gives the labels of full evaluation on every row."""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sklearn.datasets import load_digits

from rebelboost import AdaBoostClassifier, REBELClassifier, VEBBoostClassifier


def check_exact(clf, X):
    """Early exit equals full evaluation in batches and row by row; returns the learners per row."""
    full = clf.predict(X)
    labels, counts = clf.predict(X, early_exit=True, return_n_learners=True)
    np.testing.assert_array_equal(labels, full)
    assert counts.max() <= clf.n_estimators_
    for r in range(0, len(X), 11):
        assert clf.predict(X[r : r + 1], early_exit=True)[0] == full[r]
    full_counts = clf.predict(X, return_n_learners=True)[1]
    assert np.all(full_counts == clf.n_estimators_)
    return counts


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    kind=st.sampled_from(["adaboost", "veb", "rebel2", "rebel4", "similarity3"]),
    depth=st.integers(1, 6),
    seed=st.integers(0, 10_000),
    nan_fraction=st.sampled_from([0.0, 0.1, 0.4]),
    learning_rate=st.sampled_from([1.0, 0.3]),
    dtype=st.sampled_from([np.float32, np.float64]),
)
def test_early_exit_equals_full_evaluation(kind, depth, seed, nan_fraction, learning_rate, dtype):
    rng = np.random.RandomState(seed)
    X = rng.normal(size=(300, 4))
    if kind.startswith("similarity"):
        nan_fraction = 0.0  # similarities compare whole rows: no NaN
    X[rng.rand(*X.shape) < nan_fraction] = np.nan
    signal = np.nan_to_num(X[:, 0]) + 0.5 * np.nan_to_num(X[:, 1]) + rng.normal(scale=0.5, size=300)
    if kind.startswith(("rebel", "similarity")):
        y = np.digitize(signal, np.quantile(signal, np.linspace(0, 1, int(kind[-1]) + 1)[1:-1]))
        learner = "similarity" if kind.startswith("similarity") else "tree"
        clf = REBELClassifier(n_estimators=40, max_depth=depth, learning_rate=learning_rate, weak_learner=learner)
    else:
        y = signal > 0
        est = AdaBoostClassifier if kind == "adaboost" else VEBBoostClassifier
        clf = est(n_estimators=40, max_depth=depth, learning_rate=learning_rate)
    clf.fit(X, y)
    X_test = rng.normal(size=(200, 4)).astype(dtype)
    X_test[rng.rand(*X_test.shape) < nan_fraction] = np.nan
    X_test[::17, 0] = 0.0  # rows on thresholds and ties in the data
    check_exact(clf, X_test)


def test_early_exit_on_digits_saves_learners():
    X, y = load_digits(return_X_y=True)
    clf = REBELClassifier(n_estimators=150, max_depth=2).fit(X[:1200], y[:1200])
    counts = check_exact(clf, X[1200:].astype(np.float64))
    # Some rows leave early (the bound is not vacuous), none before the first checkpoint.
    assert counts.mean() < clf.n_estimators_
    assert counts.min() >= 8


def test_early_exit_with_n_iter():
    rng = np.random.RandomState(3)
    X = rng.normal(size=(400, 3))
    clf = AdaBoostClassifier(n_estimators=60, max_depth=2).fit(X, X[:, 0] + rng.normal(size=400) > 0)
    assert clf.n_estimators_ == 60
    for n_iter in (0, 5, 33, 60):
        labels, counts = clf.predict(X, n_iter=n_iter, early_exit=True, return_n_learners=True)
        np.testing.assert_array_equal(labels, clf.predict(X, n_iter=n_iter))
        assert counts.max() <= n_iter


@pytest.mark.parametrize("early_exit", [False, True])
def test_return_n_learners_shape_and_type(early_exit):
    rng = np.random.RandomState(0)
    X = rng.normal(size=(50, 3))
    clf = VEBBoostClassifier(n_estimators=20).fit(X, X[:, 1] > 0)
    labels, counts = clf.predict(X, early_exit=early_exit, return_n_learners=True)
    assert labels.shape == counts.shape == (50,)
    assert counts.dtype == np.uint32


PILOT_ROWS = 256  # predict::Engine::kExitPilotRows: batches of at most this many rows all take the stopping path


def test_large_batches_run_in_full_where_the_pilot_rows_stopped_late():
    # Batches above PILOT_ROWS rows: the first PILOT_ROWS (the pilot) stop early; the rest do only if those needed at
    # most 40 % of the learners (tests/cpp/predict/early_exit_test.cpp covers that branch), else they run
    # through all of them. Labels are those of full evaluation either way; pilot rows stop where the one-row
    # path does.
    rng = np.random.RandomState(7)
    X = rng.normal(size=(4000, 6))
    y = X[:, 0] + np.random.RandomState(7).normal(scale=1.0, size=4000) > 0
    clf = AdaBoostClassifier(n_estimators=300, max_depth=2).fit(X[:1000], y[:1000])
    X_test = X[1000:]
    labels, counts = clf.predict(X_test, early_exit=True, return_n_learners=True)
    np.testing.assert_array_equal(labels, clf.predict(X_test))
    assert counts[:PILOT_ROWS].mean() > 0.4 * clf.n_estimators_
    assert counts[:PILOT_ROWS].min() < clf.n_estimators_
    assert np.all(counts[PILOT_ROWS:] == clf.n_estimators_)
    for r in range(0, PILOT_ROWS, 17):
        one, count = clf.predict(X_test[r : r + 1], early_exit=True, return_n_learners=True)
        assert one[0] == labels[r] and count[0] == counts[r]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_wide_rows_copy_their_columns_as_far_as_they_get(dtype):
    # 300 features, most used by few trees: rows that stop early never copy the columns of later trees.
    # Stopping batches (packed groups, columns copied lazily) give the classes and learner counts of the
    # one-row path, with NaN in columns only late trees read.
    rng = np.random.RandomState(11)
    X = rng.normal(size=(3000, 300))
    y = np.digitize(X[:, :20].sum(axis=1) + rng.normal(scale=2.0, size=3000), [-3.0, 3.0])
    clf = REBELClassifier(n_estimators=150, max_depth=2).fit(X[:2000], y[:2000])
    X_test = X[2000:].astype(dtype)
    X_test[rng.rand(*X_test.shape) < 0.05] = np.nan
    check_exact(clf, X_test)
    # Exact exit decides this model's rows only in the last quarter, which is never checked; axis-aligned
    # classes are decided before it, so rows leave there.
    easy = REBELClassifier(n_estimators=150, max_depth=2).fit(X[:2000], (X[:2000, 0] > 0) + (X[:2000, 1] > 1))
    counts = check_exact(easy, X_test)
    assert counts.mean() < easy.n_estimators_
    clf.calibrate_cascade(X_test[:500], y[2000:2500], max_accuracy_loss=0.05)
    labels, counts = clf.predict(X_test, cascade=True, return_n_learners=True)
    for r in range(0, len(X_test), 13):
        one, count = clf.predict(X_test[r : r + 1], cascade=True, return_n_learners=True)
        assert one[0] == labels[r] and count[0] == counts[r]


@pytest.mark.parametrize("check_every", [0, 4, 12, 32])
def test_exact_exit_checks_only_where_a_quarter_of_the_learners_remain(check_every):
    # A row leaves at a checkpoint (a multiple of the spacing, 32 by default) that leaves at least n // 4
    # of the n learners unevaluated, or takes all n: the checks after that point cost more than they could
    # save. Batches and single rows agree on the count; labels stay those of full evaluation.
    X, y = load_digits(return_X_y=True)
    clf = REBELClassifier(n_estimators=130, max_depth=2).fit(X[:1200], y[:1200])
    model, n = clf._model, 130
    X_test = np.ascontiguousarray(X[1200:1200 + PILOT_ROWS], dtype=np.float64)  # every row may stop early
    labels, counts = model.predict(X_test, 1, -1, True, False, True, check_every, False)
    np.testing.assert_array_equal(labels, model.predict(X_test, 1))
    every = 32 if check_every == 0 else -(-check_every // 4) * 4
    early = counts[counts < n]
    assert early.size > 0
    assert np.all(early % every == 0) and early.max() <= n - n // 4
    for r in range(0, len(X_test), 37):
        one = model.predict(X_test[r : r + 1], 1, -1, True, False, True, check_every, False)
        assert one[0][0] == labels[r] and one[1][0] == counts[r]
