"""Soft cascades: the certified target holds on new rows (20 random splits), the report matches the
calibration rows, files and pickles keep the thresholds, bad targets, labels and too small sets are refused."""

import pickle

import numpy as np
import pytest

import rebelboost
from rebelboost import AdaBoostClassifier, REBELClassifier, VEBBoostClassifier


def noisy(n, n_classes, seed):
    rng = np.random.RandomState(seed)
    X = rng.normal(size=(n, 5))
    X[rng.rand(*X.shape) < 0.03] = np.nan
    signal = np.nan_to_num(X[:, 0]) + 0.7 * np.nan_to_num(X[:, 1]) + rng.normal(scale=0.6, size=n)
    y = np.digitize(signal, [-0.5, 0.5]) if n_classes == 3 else signal > 0
    return X, np.where(y == 1, "one", np.where(y == 2, "two", "zero")) if n_classes == 3 else y.astype(int)


@pytest.mark.parametrize("make,n_classes", [(lambda: AdaBoostClassifier(n_estimators=150, max_depth=2), 2),
                                            (lambda: VEBBoostClassifier(n_estimators=100, max_depth=1), 2),
                                            (lambda: REBELClassifier(n_estimators=120, max_depth=2), 3),
                                            (lambda: REBELClassifier(n_estimators=60, weak_learner="similarity"), 3)])
@pytest.mark.parametrize("target", [0.02, 0.05])
def test_accuracy_loss_on_the_calibration_rows_stays_below_the_certified_bound(make, n_classes, target):
    X, y = noisy(1500, n_classes, 1)
    if getattr(make(), "weak_learner", "tree") == "similarity":
        X = np.nan_to_num(X)  # similarities compare whole rows: no NaN
    clf = make().fit(X[:900], y[:900])
    X_val, y_val = X[900:], y[900:]
    clf.calibrate_cascade(X_val, y_val, max_accuracy_loss=target)
    full = clf.predict(X_val)
    labels, counts = clf.predict(X_val, cascade=True, return_n_learners=True)
    lost = np.sum((full == y_val) & (labels != y_val))
    report = clf.cascade_report_
    # A candidate passes only when its one-sided Clopper-Pearson bound is within the target.
    assert report["harmful"] == lost and report["n_rows"] == len(y_val)
    assert lost / len(y_val) <= report["harm_bound"] <= target
    low, high = report["harm_interval"]
    assert low <= report["harm"] <= high
    assert report["mean_learners"] == pytest.approx(counts.mean())
    assert report["learners_interval"][0] <= counts.mean() <= report["learners_interval"][1]
    assert counts.mean() < clf.n_estimators_  # rows do leave early
    assert report["every"] in (4, 8, 16) and clf.cascade_["every"] == report["every"]  # every=None: chosen
    # The same rows one at a time (the core's one-row path) follow the same cascade.
    for r in range(0, len(X_val), 37):
        assert clf.predict(X_val[r : r + 1], cascade=True)[0] == labels[r]


@pytest.mark.parametrize("make,n_classes,kind", [
    (lambda: AdaBoostClassifier(n_estimators=120, max_depth=2), 2, "max_accuracy_loss"),
    (lambda: REBELClassifier(n_estimators=80, max_depth=2), 3, "max_disagreement")])
def test_the_target_holds_on_new_rows_at_the_stated_confidence(make, n_classes, kind):
    # 20 random calibration / test splits of rows the model never saw: the realised harm on the test rows
    # exceeds the target with probability at most 10 % per split (confidence 0.9), so more than 6 of 20
    # has probability below 0.3 % (binomial tail); the former in-sample calibration broke it in most splits.
    X, y = noisy(12000, n_classes, 5)
    clf = make().fit(X[:2000], y[:2000])
    pool_X, pool_y = X[2000:], y[2000:]
    full = clf.predict(pool_X)
    target, over, speedups = 0.02, 0, []
    rng = np.random.RandomState(0)
    for _ in range(20):
        order = rng.permutation(len(pool_y))
        cal, test = order[:800], order[800:]
        clf.calibrate_cascade(pool_X[cal], pool_y[cal], confidence=0.9, **{kind: target})
        labels, counts = clf.predict(pool_X[test], cascade=True, return_n_learners=True)
        if kind == "max_accuracy_loss":
            harm = np.mean((full[test] == pool_y[test]) & (labels != pool_y[test]))
        else:
            harm = np.mean(labels != full[test])
        over += harm > target
        speedups.append(clf.n_estimators_ / counts.mean())
    assert over <= 6
    assert np.mean(speedups) > 1.2


def test_disagreement_and_recall_targets():
    X, y = noisy(2000, 2, 2)
    clf = AdaBoostClassifier(n_estimators=150, max_depth=2).fit(X[:1000], y[:1000])
    X_val, y_val = X[1000:], y[1000:]
    full = clf.predict(X_val)
    clf.calibrate_cascade(X_val, y_val, max_disagreement=0.01, every=3)
    assert np.sum(clf.predict(X_val, cascade=True) != full) < 10
    assert clf.cascade_["every"] == 3 and clf.cascade_["thresholds"].shape[1] == 2
    clf.calibrate_cascade(X_val, y_val, min_recall=0.95)
    labels, counts = clf.predict(X_val, cascade=True, return_n_learners=True)
    found = (y_val == 1) & (full == 1)
    assert clf.cascade_report_["n_rows"] == found.sum()
    assert np.sum(found & (labels == 0)) < 0.05 * found.sum()
    assert np.all(clf.cascade_["thresholds"][:, 1] == np.inf)  # a detection cascade only rejects early
    assert counts.mean() < clf.n_estimators_


def test_cascade_survives_files_pickles_and_truncation(tmp_path):
    X, y = noisy(1200, 3, 3)
    clf = REBELClassifier(n_estimators=80, max_depth=2).fit(X[:700], y[:700])
    clf.calibrate_cascade(X[700:], y[700:], max_accuracy_loss=0.05, every=2)
    want = clf.predict(X[700:], cascade=True, return_n_learners=True)
    clf.save(tmp_path / "m.rbm")
    for back in (rebelboost.load(tmp_path / "m.rbm"), pickle.loads(pickle.dumps(clf))):
        got = back.predict(X[700:], cascade=True, return_n_learners=True)
        np.testing.assert_array_equal(got[0], want[0])
        np.testing.assert_array_equal(got[1], want[1])
        np.testing.assert_array_equal(back.cascade_["thresholds"], clf.cascade_["thresholds"])
    assert clf.cascade_report_["every"] == 2
    clf.truncate(31)  # checkpoints after learner 30 go with the learners
    assert clf.cascade_["thresholds"].shape[0] == 15
    assert not hasattr(clf, "cascade_report_")  # the certificate was for the whole model
    clf.predict(X[:5], cascade=True)


def test_cascade_errors():
    X, y = noisy(600, 3, 4)
    clf = REBELClassifier(n_estimators=30, max_depth=2).fit(X[:400], y[:400])
    with pytest.raises(ValueError, match="no soft cascade"):
        clf.predict(X, cascade=True)
    with pytest.raises(ValueError, match="exactly one target"):
        clf.calibrate_cascade(X[400:], y[400:])
    with pytest.raises(ValueError, match="exactly one target"):
        clf.calibrate_cascade(X[400:], y[400:], max_accuracy_loss=0.1, max_disagreement=0.1)
    with pytest.raises(ValueError, match=r"in \[0, 1\]"):
        clf.calibrate_cascade(X[400:], y[400:], max_accuracy_loss=1.5)
    with pytest.raises(ValueError, match="every must be"):
        clf.calibrate_cascade(X[400:], y[400:], max_accuracy_loss=0.1, every=0)
    with pytest.raises(ValueError, match="labels the model was not trained on"):
        clf.calibrate_cascade(X[400:], np.where(y[400:] == "one", "ten", y[400:]), max_accuracy_loss=0.1)
    with pytest.raises(ValueError, match="binary model"):
        clf.calibrate_cascade(X[400:], y[400:], min_recall=0.9)
    with pytest.raises(ValueError, match="1-D with one label per row"):
        clf.calibrate_cascade(X[400:], y[:10], max_accuracy_loss=0.1)
    with pytest.raises(ValueError, match="no harm at all cannot be certified"):
        clf.calibrate_cascade(X[400:], y[400:], max_accuracy_loss=0.0)
    with pytest.raises(ValueError, match="too small for this target.*needs at least 817 rows, got 200"):
        clf.calibrate_cascade(X[400:], y[400:], max_accuracy_loss=0.005)
    for bad in (0.0, 1.0, "high", True):
        with pytest.raises(ValueError, match=r"confidence must be a number in \(0, 1\)"):
            clf.calibrate_cascade(X[400:], y[400:], max_accuracy_loss=0.1, confidence=bad)
    with pytest.raises(ValueError, match="theta_0 \\+ theta_1"):
        AdaBoostClassifier(n_estimators=10).fit(X, y == "one")._model.with_cascade(1, np.array([[-1.0, 0.5]]))


def test_the_confidence_default_is_the_cores():
    # One default: the estimator's equals C++'s CascadeTarget, which the binding passes on when none is given.
    import inspect

    X = np.random.default_rng(0).normal(size=(1500, 4))
    y = (X[:, 0] > 0).astype(int)
    clf = AdaBoostClassifier(n_estimators=40, max_depth=1).fit(X[:600], y[:600])
    _, report = clf._model.calibrate_cascade(np.ascontiguousarray(X[600:]), y[600:].astype(np.int32), "accuracy_loss", 0.02)
    default = inspect.signature(AdaBoostClassifier.calibrate_cascade).parameters["confidence"].default
    assert report["confidence"] == default


@pytest.mark.parametrize("n_classes", [2, 3])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_inf_is_refused_in_any_chunk_on_every_path(n_classes, dtype):
    # Rows that may stop early are checked for +-inf a chunk at a time, as they are read (PredictOptions
    # reject_inf), and so are the scores: one inf in the first, a middle or the last row is refused on every
    # path and row count, and NaN stays a missing value.
    X, y = noisy(900, n_classes, seed=5)
    make = AdaBoostClassifier if n_classes == 2 else REBELClassifier
    clf = make(n_estimators=60, max_depth=2).fit(X[:600], y[:600])
    clf.calibrate_cascade(X[600:], y[600:], max_accuracy_loss=0.05)
    pool = np.random.RandomState(1).normal(size=(3000, 5)).astype(dtype)
    paths = [{}, {"early_exit": True}, {"cascade": True}]
    for n_rows in (2, 17, 700, 3000):
        Z = pool[:n_rows]
        expected = {i: clf.predict(Z, **p) for i, p in enumerate(paths)}
        for at in sorted({0, n_rows // 2, n_rows - 1}):
            for bad in (np.inf, -np.inf):
                W = Z.copy()
                W[at, 4] = bad
                for p in paths:
                    with pytest.raises(ValueError, match="Input X contains infinity"):
                        clf.predict(W, **p)
                for scores in (clf.decision_function, clf.predict_proba):  # the same check, in the same read
                    with pytest.raises(ValueError, match="Input X contains infinity"):
                        scores(W)
        W = Z.copy()
        W[n_rows - 1, 4] = np.nan
        for i, p in enumerate(paths):
            labels = clf.predict(W, **p)
            np.testing.assert_array_equal(labels[:-1], expected[i][:-1])
        np.testing.assert_array_equal(clf.decision_function(W)[:-1], clf.decision_function(Z)[:-1])
