"""
Per-feature contributions
=========================

``decision_function(X, pred_contrib=True)`` splits every score into one exact share per feature (path-dependent
TreeSHAP over the trees' node covers) plus the expected value; ``rebelboost.plot.plot_contributions`` draws them
as a beeswarm: one row of points per feature, each point a sample at its contribution, coloured by the
feature's value (blue low, red high). For a multi-class REBEL model, ``target`` picks the class score.
"""

import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import load_breast_cancer, load_wine

from rebelboost import AdaBoostClassifier, REBELClassifier
from rebelboost.plot import plot_contributions

X, y = load_breast_cancer(return_X_y=True, as_frame=True)
clf = AdaBoostClassifier(n_estimators=150, max_depth=3).fit(X, y)
contrib = clf.decision_function(X, pred_contrib=True)
assert np.allclose(contrib.sum(axis=1), clf.decision_function(X))  # features + expected value = the score

Xw, yw = load_wine(return_X_y=True, as_frame=True)
rebel = REBELClassifier(n_estimators=60, max_depth=2).fit(Xw, yw)

fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4.5))
plot_contributions(clf, X, max_num_features=10, ax=left)
plot_contributions(rebel, Xw, target=0, max_num_features=8, ax=right)
left.set_title("AdaBoost, breast cancer: the score")
right.set_title("REBEL, wine: the score of class 0")
fig.tight_layout()
