"""
Margin distributions
====================

Boosting keeps raising the margins of the training rows after their training error is zero (Schapire et al.
1998). ``rebelboost.plot.plot_margins`` draws the cumulative distribution of the normalised margins (the
true class's score over the best other class's, divided by the largest margin the learners so far could
give, so in [-1, 1]) after chosen numbers of learners; the curve's height at 0 is the training error.
"""

import matplotlib.pyplot as plt
from sklearn.datasets import make_classification

from rebelboost import AdaBoostClassifier
from rebelboost.plot import plot_margins

X, y = make_classification(n_samples=1000, n_features=10, n_informative=5, random_state=0)
clf = AdaBoostClassifier(n_estimators=500, max_depth=2).fit(X, y)

fig, ax = plt.subplots(figsize=(6, 4))
plot_margins(clf, X, y, iterations=(5, 50, 500), ax=ax)
fig.tight_layout()
