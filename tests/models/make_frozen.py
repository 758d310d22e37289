"""Writes the frozen model files of tests/models/ (run once per format version, then never again).

The files are committed: tests check that later versions still load them and predict the same. Existing
files are never overwritten.
"""

import os

import numpy as np

from rebelboost import AdaBoostClassifier, REBELClassifier, VEBBoostClassifier


def freeze(name, clf, X, y, X_test):
    if os.path.exists(f"{name}.rbm"):
        return
    clf.fit(X, y)
    clf.save(f"{name}.rbm")
    np.savez(f"{name}_expected.npz", X=X_test, scores=clf.decision_function(X_test),
             labels=clf.predict(X_test).astype(str))


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
