"""
Early stopping, eval sets and warm start
========================================

``REBELClassifier`` on the 10 digit classes: early stopping watches the validation log-loss of an
``eval_set`` and keeps the best iteration's trees. Training then resumes with ``warm_start=True``: pass
the same ``eval_set`` again (without it, early stopping would carve its own validation split out of the
training rows, and those are not the rows the trees were trained on).
"""

import matplotlib.pyplot as plt
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split

from rebelboost import REBELClassifier

X, y = load_digits(return_X_y=True)
X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.25, random_state=0, stratify=y)
X_train, X_val, y_train, y_val = train_test_split(X_train, y_train, test_size=0.25, random_state=0,
                                                  stratify=y_train)

clf = REBELClassifier(n_estimators=400, max_depth=2, early_stopping=True, scoring="log_loss",
                      n_iter_no_change=20)
clf.fit(X_train, y_train, eval_set=[(X_val, y_val)])
curve = clf.evals_result_["valid_0"]["log_loss"]
print(f"best iteration {clf.best_iteration_} of {len(curve)}; test accuracy {clf.score(X_test, y_test):.4f}")

# Keep 50 trees, then grow again to at most 400 with the same validation data.
clf.truncate(50)
clf.set_params(warm_start=True).fit(X_train, y_train, eval_set=[(X_val, y_val)])
print(f"after the warm start: {clf.n_estimators_} trees, test accuracy {clf.score(X_test, y_test):.4f}")

fig, ax = plt.subplots(figsize=(6, 3.5))
ax.plot(range(1, len(curve) + 1), curve)
ax.axvline(len(curve) - 20, color="gray", linestyle=":", label="best iteration")
ax.set_xlabel("trees")
ax.set_ylabel("validation log-loss")
ax.legend()
fig.tight_layout()
