"""
AdaBoost on breast cancer: test error after each tree
=====================================================

Fit ``AdaBoostClassifier`` with stumps, then follow the test error tree by tree with
``staged_predict`` (the first k trees' prediction for every k).
"""

import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import load_breast_cancer
from sklearn.model_selection import train_test_split

from rebelboost import AdaBoostClassifier

X, y = load_breast_cancer(return_X_y=True)
X_train, X_test, y_train, y_test = train_test_split(X, y, random_state=0, stratify=y)

clf = AdaBoostClassifier(n_estimators=200, max_depth=1).fit(X_train, y_train)
print(f"{clf.n_estimators_} trees, test accuracy {clf.score(X_test, y_test):.4f}")

errors = [np.mean(pred != y_test) for pred in clf.staged_predict(X_test)]
train_errors = [np.mean(pred != y_train) for pred in clf.staged_predict(X_train)]
fig, ax = plt.subplots(figsize=(6, 3.5))
ax.plot(np.arange(1, len(errors) + 1), errors, label="test")
ax.plot(np.arange(1, len(train_errors) + 1), train_errors, label="train")
ax.set_xlabel("trees")
ax.set_ylabel("error")
ax.set_xscale("log")
ax.legend()
fig.tight_layout()
