"""
Feature importances
===================

``feature_importances(importance_type)`` counts the splits on each feature (``"split"``) or sums the
training-loss reductions they bought (``"gain"``); ``rebelboost.plot.plot_importance`` draws either, largest
first. Here a DataFrame gives the features their names.
"""

import matplotlib.pyplot as plt
from sklearn.datasets import load_breast_cancer

from rebelboost import AdaBoostClassifier
from rebelboost.plot import plot_importance

X, y = load_breast_cancer(return_X_y=True, as_frame=True)
clf = AdaBoostClassifier(n_estimators=150, max_depth=2).fit(X, y)

fig, (left, right) = plt.subplots(1, 2, figsize=(9, 4))
plot_importance(clf, importance_type="gain", max_num_features=10, ax=left)
plot_importance(clf, importance_type="split", max_num_features=10, ax=right)
left.set_title("total gain")
right.set_title("split count")
fig.tight_layout()
