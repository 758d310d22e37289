"""
A cascade's learners against its accuracy
=========================================

``rebelboost.plot.plot_cascade`` puts a calibrated soft cascade on the accuracy-cost plane: its mean
learners per row and its accuracy on new rows, next to the model cut after its first t learners (every t),
the exact early exit (the full model's labels) and all the learners.
"""

import matplotlib.pyplot as plt
from sklearn.datasets import make_classification
from sklearn.model_selection import train_test_split

from rebelboost import AdaBoostClassifier
from rebelboost.plot import plot_cascade

X, y = make_classification(n_samples=6000, n_features=20, n_informative=8, random_state=0)
X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.3, random_state=0)
X_fit, X_val, y_fit, y_val = train_test_split(X_train, y_train, test_size=0.25, random_state=0)

clf = AdaBoostClassifier(n_estimators=300, max_depth=2).fit(X_fit, y_fit)
clf.calibrate_cascade(X_val, y_val, max_accuracy_loss=0.01)

fig, ax = plt.subplots(figsize=(6, 4))
plot_cascade(clf, X_test, y_test, ax=ax)
fig.tight_layout()
