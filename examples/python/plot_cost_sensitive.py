"""
Cost-sensitive REBEL
====================

A cost matrix makes one mistake expensive: here the mistake a small uniform-cost model makes most often
on the digits costs 20 instead of 1. REBEL trained with the costs makes that mistake less often, at the
price of others.
"""

import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import load_digits
from sklearn.metrics import confusion_matrix
from sklearn.model_selection import train_test_split

from rebelboost import REBELClassifier

X, y = load_digits(return_X_y=True)
X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.5, random_state=0, stratify=y)

uniform = REBELClassifier(n_estimators=30, max_depth=1).fit(X_train, y_train)
cm = confusion_matrix(y_test, uniform.predict(X_test), labels=np.arange(10))
np.fill_diagonal(cm, 0)
true, predicted = np.unravel_index(np.argmax(cm), cm.shape)
C = np.ones((10, 10)) - np.eye(10)
C[true, predicted] = 20.0
print(f"the expensive mistake: a {true} predicted as {predicted}")

results = {}
for name, costs in (("uniform", None), ("costs", C)):
    clf = REBELClassifier(n_estimators=30, max_depth=1, cost_matrix=costs).fit(X_train, y_train)
    pred = clf.predict(X_test)
    cm = confusion_matrix(y_test, pred, labels=np.arange(10))
    results[name] = cm
    print(f"{name:8s}: {true} -> {predicted} mistakes {cm[true, predicted]:2d}, error {np.mean(pred != y_test):.4f}, "
          f"mean cost {np.sum(cm * C) / len(y_test):.4f}")

fig, axes = plt.subplots(1, 2, figsize=(7, 3.5))
for ax, (name, cm) in zip(axes, results.items()):
    ax.imshow(np.log1p(cm), cmap="Blues")
    ax.set_title(name)
    ax.set_xlabel("predicted")
    ax.set_ylabel("true")
fig.tight_layout()
