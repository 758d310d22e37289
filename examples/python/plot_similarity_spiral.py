"""
Localized Similarities on a spiral
==================================

``REBELClassifier(weak_learner="similarity")`` boosts learners that compare a point with one or two
training points; on a two-arm spiral, which stumps cannot follow, they fit the arms.
"""

import matplotlib.pyplot as plt
import numpy as np

from rebelboost import REBELClassifier

def spiral(n, rng):
    t = np.sqrt(rng.uniform(0.05, 1, size=2 * n)) * 4 * np.pi  # two turns
    arm = np.repeat([0, 1], n)
    X = np.c_[t * np.cos(t + np.pi * arm), t * np.sin(t + np.pi * arm)] + rng.normal(scale=0.3, size=(2 * n, 2))
    return X, arm


rng = np.random.RandomState(0)
X, y = spiral(150, rng)
X_test, y_test = spiral(500, rng)

clf = REBELClassifier(weak_learner="similarity", n_estimators=150).fit(X, y)
trees = REBELClassifier(n_estimators=150, max_depth=1).fit(X, y)
print(f"test accuracy: similarities {clf.score(X_test, y_test):.3f}, stumps {trees.score(X_test, y_test):.3f}")

xx, yy = np.meshgrid(np.linspace(-14, 14, 120), np.linspace(-14, 14, 120))
grid = np.c_[xx.ravel(), yy.ravel()]
fig, axes = plt.subplots(1, 2, figsize=(7, 3.5))
for ax, model, name in ((axes[0], clf, "similarities"), (axes[1], trees, "stumps")):
    ax.contourf(xx, yy, model.predict(grid).reshape(xx.shape), alpha=0.3, cmap="coolwarm")
    ax.scatter(X[:, 0], X[:, 1], c=y, s=6, cmap="coolwarm")
    ax.set_title(name)
    ax.set_xticks([])
    ax.set_yticks([])
fig.tight_layout()
