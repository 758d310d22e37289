"""Could the similarity's default stop sooner on 5 000 x 30? (issue 22 point 3; bench/results/hybrid_speed.md)

One fit of `learners` similarities (early stopping off, 2 threads) on 3 750 rows of bench/hybrid_speed.py's
generator (make_classification, 10 classes, 30 features, seed 1; 10 000 rows drawn, the first 5 000 split
75/25 stratified like the default's carve, the last 5 000 the test set), its staged validation error and log
loss, and the stopping rules (metric x patience, tol 1e-7, the best stage kept) replayed on those curves
offline, against the stage of least validation log loss over the whole fit.

    OMP_WAIT_POLICY=passive nice -n 10 python bench/experiments/similarity_stopping_5000x30.py 10000
"""
import sys
import time

import numpy as np
from sklearn.datasets import make_classification
from sklearn.model_selection import train_test_split

from rebelboost import REBELClassifier


def curves(clf, X, y):
    """Per stage: the error and the log loss on (X, y)."""
    columns = np.searchsorted(clf.classes_, y)
    err, loss = [], []
    for p in clf.staged_predict_proba(X):
        err.append(float(np.mean(clf.classes_[p.argmax(1)] != y)))
        loss.append(float(-np.mean(np.log(np.clip(p[np.arange(len(y)), columns], 1e-15, None)))))
    return np.array(err), np.array(loss)


def stop(metric, patience, tol=1e-7):
    """(iterations run, learners kept) of early stopping on metric."""
    best, best_t = np.inf, 0
    for t, v in enumerate(metric):
        if v < best - tol:
            best, best_t = v, t
        elif t - best_t >= patience:
            return t + 1, best_t + 1
    return len(metric), best_t + 1


def main():
    learners = int(sys.argv[1]) if len(sys.argv) > 1 else 10000
    X, y = make_classification(n_samples=10000, n_features=30, n_informative=10, n_redundant=0, n_classes=10,
                               n_clusters_per_class=1, random_state=1)
    X_fit, X_val, y_fit, y_val = train_test_split(X[:5000], y[:5000], test_size=0.25, stratify=y[:5000],
                                                  random_state=0)
    clf = REBELClassifier(weak_learner="similarity", n_estimators=learners, early_stopping=False, n_jobs=2)
    start, cpu = time.perf_counter(), time.process_time()
    clf.fit(X_fit, y_fit)
    print(f"fit {time.perf_counter() - start:.1f} s wall, {time.process_time() - cpu:.1f} s CPU")
    val_err, val_loss = curves(clf, X_val, y_val)
    test_err, _ = curves(clf, X[5000:], y[5000:])
    ref = int(np.argmin(val_loss)) + 1
    print(f"least validation log loss at {ref} learners: test error {100 * test_err[ref - 1]:.2f} %")
    for name, metric in (("log loss", val_loss), ("error", val_err)):
        for patience in (500, 200, 100, 50):
            run, kept = stop(metric, patience)
            print(f"{name} patience {patience}: {run} iterations, {kept} kept, test error "
                  f"{100 * test_err[kept - 1]:.2f} % ({100 * (test_err[kept - 1] - test_err[ref - 1]):+.2f} points)")


if __name__ == "__main__":
    main()
