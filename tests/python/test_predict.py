"""Prediction paths: one row and batches, float32 and float64, give the reference scores and classes."""

import numpy as np
import pytest

from rebelboost import AdaBoostClassifier, REBELClassifier, VEBBoostClassifier


def reference_scores(clf, X):
    """H = a_0 + sum_t f_t(x) a_t in learner order, from the per-learner outputs (an independent path)."""
    outputs = clf._model.tree_outputs(np.asarray(X, dtype=np.float64), 1).astype(np.float64)
    steps = np.array([t["step"] for t in clf._model.trees()]).reshape(-1, clf._model.n_outputs)
    scores = np.broadcast_to(clf._model.bias, (len(X), clf._model.n_outputs)).copy()
    for t in range(steps.shape[0]):  # learner order, as the core adds them
        scores += outputs[:, t, None] * steps[t]
    return scores


def fitted(kind, depth, seed=0):
    rng = np.random.RandomState(seed)
    X = rng.normal(size=(500, 6))
    X[rng.rand(*X.shape) < 0.05] = np.nan
    if kind == "rebel":
        y = np.digitize(np.nan_to_num(X[:, 0] + X[:, 1]), [-0.6, 0.6])
        return REBELClassifier(n_estimators=30, max_depth=depth).fit(X, y), rng
    y = np.nan_to_num(X[:, 0]) * np.nan_to_num(X[:, 1]) > 0
    est = AdaBoostClassifier if kind == "adaboost" else VEBBoostClassifier
    return est(n_estimators=30, max_depth=depth).fit(X, y), rng


@pytest.mark.parametrize("kind", ["adaboost", "veb", "rebel"])
@pytest.mark.parametrize("depth", [1, 3, 7])
def test_batch_and_one_row_give_the_reference(kind, depth):
    clf, rng = fitted(kind, depth)
    X = rng.normal(size=(300, 6)).astype(np.float32).astype(np.float64)
    X[rng.rand(*X.shape) < 0.1] = np.nan
    want = reference_scores(clf, X)
    labels = clf.classes_[np.argmax(want, axis=1)] if want.shape[1] > 1 else clf.classes_[(want[:, 0] > 0).astype(int)]
    for dtype in (np.float64, np.float32):
        Xd = X.astype(dtype)
        raw = clf._model.decision_function(Xd, 2)
        np.testing.assert_array_equal(raw.reshape(len(X), -1), want)
        np.testing.assert_array_equal(clf.predict(Xd), labels)
        for r in range(0, 300, 7):  # one row at a time: the core's one-row path
            np.testing.assert_array_equal(clf._model.decision_function(Xd[r : r + 1], 1).reshape(1, -1), want[r : r + 1])
            assert clf.predict(Xd[r : r + 1])[0] == labels[r]


def test_predict_reports_learners_per_row():
    clf, rng = fitted("adaboost", 2)
    X = rng.normal(size=(40, 6))
    labels, counts = clf.predict(X, return_n_learners=True)
    np.testing.assert_array_equal(labels, clf.predict(X))
    assert counts.dtype == np.uint32 and counts.shape == (40,)
    assert np.all(counts == clf.n_estimators_)


def test_one_row_refuses_inf_and_wrong_width():
    clf, _ = fitted("rebel", 2)
    row = np.zeros((1, 6))
    row[0, 3] = -np.inf
    for method in (clf.predict, clf.decision_function, clf.predict_proba):
        with pytest.raises(ValueError, match="Input X contains infinity"):
            method(row)
        with pytest.raises(ValueError, match="Input X contains infinity"):
            method(row.astype(np.float32))
    with pytest.raises(ValueError, match="X has 5 features"):
        clf.predict(np.zeros((1, 5)))
