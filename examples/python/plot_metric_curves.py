"""
Training and validation curves
==============================

``rebelboost.plot.plot_metric`` draws what fit recorded: the training loss and, for every ``eval_set``, the
validation metric after each learner, with the best iteration marked. AdaBoost's exponential loss keeps
falling on the training rows while on held-out rows it turns up after a few dozen stumps.
"""

import matplotlib.pyplot as plt
from sklearn.datasets import load_breast_cancer
from sklearn.model_selection import train_test_split

from rebelboost import AdaBoostClassifier
from rebelboost.plot import plot_metric

X, y = load_breast_cancer(return_X_y=True)
X_train, X_val, y_train, y_val = train_test_split(X, y, test_size=0.3, random_state=0, stratify=y)

clf = AdaBoostClassifier(n_estimators=150, learning_rate=0.2).fit(X_train, y_train, eval_set=[(X_val, y_val)])
print(f"best iteration {clf.best_iteration_} of {clf.n_estimators_}")

fig, ax = plt.subplots(figsize=(6, 3.5))
plot_metric(clf, ax=ax)
ax.set_yscale("log")
fig.tight_layout()
