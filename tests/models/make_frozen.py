"""Writes the frozen model files of tests/models/ (run once per format version, then never again).

The files are committed: tests check that later versions still load them and predict the same. Existing
files are never overwritten.
"""

import os

import numpy as np

from rebelboost import AdaBoostClassifier, REBELClassifier, VEBBoostClassifier


def freeze(name, clf, X, y, X_test, calibrate=None):
    """calibrate: (X_val, y_val, kwargs) of a soft cascade to store too (format version 2 on)."""
    if os.path.exists(f"{name}.rbm"):
        return
    clf.fit(X, y)
    extra = {}
    if calibrate is not None:
        clf.calibrate_cascade(calibrate[0], calibrate[1], **calibrate[2])
        labels, learners = clf.predict(X_test, cascade=True, return_n_learners=True)
        extra = dict(cascade_labels=labels.astype(str), cascade_learners=learners)
    clf.save(f"{name}.rbm")
    np.savez(f"{name}_expected.npz", X=X_test, scores=clf.decision_function(X_test),
             labels=clf.predict(X_test).astype(str), **extra)


rng = np.random.RandomState(2026)
X = rng.normal(size=(300, 5))
X[rng.rand(*X.shape) < 0.05] = np.nan
noise = rng.rand(300) < 0.1
y = np.where((np.nan_to_num(X[:, 0]) * np.nan_to_num(X[:, 1]) > 0) ^ noise, "same", "diff")
X_test = rng.normal(size=(50, 5))
X_test[::7, 2] = np.nan
freeze("adaboost_v1", AdaBoostClassifier(n_estimators=25, max_depth=3), X, y, X_test)
freeze("veb_v1", VEBBoostClassifier(n_estimators=20, max_depth=2), X, y, X_test)
y3 = np.digitize(np.nan_to_num(X[:, 0] + X[:, 2]), [-0.7, 0.7])
freeze("rebel_v1", REBELClassifier(n_estimators=20, max_depth=3, cost_matrix=np.array([[0, 1, 4], [1, 0, 1], [2, 1, 0.0]])),
       X, y3, X_test)
# Format version 2 added similarity models (no NaN: similarities compare whole rows).
freeze("rebel_similarity_v2", REBELClassifier(weak_learner="similarity", n_estimators=30, cost_matrix={(0, 2): 3.0}),
       np.nan_to_num(X), y3, np.nan_to_num(X_test))
# Format version 3 added the soft cascade: an AdaBoost model with one calibrated on a held-out third.
freeze("adaboost_cascade_v3", AdaBoostClassifier(n_estimators=40, max_depth=2), X[:200], y[:200], X_test,
       calibrate=(X[200:], y[200:], dict(max_accuracy_loss=0.05, every=2)))
