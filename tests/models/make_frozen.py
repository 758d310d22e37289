"""Writes the frozen model files of tests/models/ (run once per format version, then never again).

The files are committed: tests check that later versions still load them and predict the same.
"""

import numpy as np

from rebelboost import AdaBoostClassifier

rng = np.random.RandomState(2026)
X = rng.normal(size=(300, 5))
X[rng.rand(*X.shape) < 0.05] = np.nan
noise = rng.rand(300) < 0.1
y = np.where((np.nan_to_num(X[:, 0]) * np.nan_to_num(X[:, 1]) > 0) ^ noise, "same", "diff")
clf = AdaBoostClassifier(n_estimators=25, max_depth=3).fit(X, y)
clf.save("adaboost_v1.rbm")
X_test = rng.normal(size=(50, 5))
X_test[::7, 2] = np.nan
np.savez("adaboost_v1_expected.npz", X=X_test, scores=clf.decision_function(X_test), labels=clf.predict(X_test).astype(str))
