"""
A soft cascade: fewer learners per row
======================================

``calibrate_cascade`` sets, on validation rows, a threshold after every ``every`` learners at which a row
may leave early; ``predict(X, cascade=True)`` then evaluates fewer learners per row, within the budget of
accuracy given.
"""

import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import make_classification
from sklearn.model_selection import train_test_split

from rebelboost import AdaBoostClassifier

X, y = make_classification(n_samples=6000, n_features=20, n_informative=8, random_state=0)
X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.3, random_state=0)
X_fit, X_val, y_fit, y_val = train_test_split(X_train, y_train, test_size=0.25, random_state=0)

clf = AdaBoostClassifier(n_estimators=300, max_depth=2).fit(X_fit, y_fit)
clf.calibrate_cascade(X_val, y_val, max_accuracy_loss=0.005, every=4)
labels, learners = clf.predict(X_test, cascade=True, return_n_learners=True)
print(f"full model: error {np.mean(clf.predict(X_test) != y_test):.4f}, {clf.n_estimators_} learners per row")
print(f"cascade:    error {np.mean(labels != y_test):.4f}, {learners.mean():.1f} learners per row on average")

fig, ax = plt.subplots(figsize=(6, 3.5))
ax.hist(learners, bins=40)
ax.set_xlabel("learners evaluated")
ax.set_ylabel("rows")
fig.tight_layout()
