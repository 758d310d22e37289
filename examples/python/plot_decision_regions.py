"""
Decision regions of trees and similarities
==========================================

``rebelboost.plot.plot_decision_regions`` colours a grid over 2-D data by the predicted class. Trees cut
the plane along the axes; Localized Similarities (``weak_learner="similarity"``, thesis Ch. 5) compare a
point to anchors, so their regions follow the data's shape (the thesis's Fig. 5.2).
"""

import matplotlib.pyplot as plt
from sklearn.datasets import make_moons

from rebelboost import REBELClassifier
from rebelboost.plot import plot_decision_regions

X, y = make_moons(n_samples=300, noise=0.25, random_state=0)

fig, axes = plt.subplots(1, 2, figsize=(9, 4))
for ax, learner in zip(axes, ["tree", "similarity"]):
    clf = REBELClassifier(n_estimators=100, max_depth=2, weak_learner=learner).fit(X, y)
    plot_decision_regions(clf, X, y, ax=ax)
    ax.set_title(f"{learner}: training accuracy {clf.score(X, y):.3f}")
fig.tight_layout()
