"""A user's script, written as the README's examples use rebelboost: CI type-checks it with
``mypy --strict`` (tests/typing/mypy.ini) against the installed package, so the public API's annotations
are complete enough for a strictly typed caller. It is checked, not run."""

from __future__ import annotations

import io

import dask.array as da
import numpy as np
from distributed import Client, LocalCluster
from numpy.typing import NDArray
from sklearn.datasets import load_breast_cancer, load_digits
from sklearn.model_selection import train_test_split

import rebelboost
from rebelboost import AdaBoostClassifier, REBELClassifier, VEBBoostClassifier, predict_min_cost
from rebelboost.dask import DaskREBELClassifier
from rebelboost.plot import plot_importance, plot_metric


def binary() -> float:
    X, y = load_breast_cancer(return_X_y=True)
    X_train, X_test, y_train, y_test = train_test_split(X, y, random_state=0)
    clf = AdaBoostClassifier(n_estimators=200, max_depth=1).fit(X_train, y_train)
    proba: NDArray[np.float64] = clf.predict_proba(X_test)
    scores: NDArray[np.float64] = clf.decision_function(X_test)
    clf.save("model.rbm")
    loaded = rebelboost.load("model.rbm")
    assert (loaded.predict(X_test) == clf.predict(X_test)).all()
    veb = VEBBoostClassifier(lam=0.5).fit(X_train, y_train)
    labels, learners = clf.calibrate_cascade(X_test, y_test, max_accuracy_loss=0.01).predict(
        X_test, cascade=True, return_n_learners=True)
    exact: NDArray[np.float64] = clf.predict(X_test, early_exit=True)
    importance: NDArray[np.float64] = clf.feature_importances("split", normalize=False)
    for staged in veb.staged_predict_proba(X_test):
        assert staged.shape == proba.shape
    return float(scores.sum() + learners.mean() + labels.size + exact.size + importance.sum())


def costs() -> list[int]:
    X, y = load_digits(return_X_y=True)
    C = np.ones((10, 10)) - np.eye(10)
    C[8, 1] = 20.0
    reb = REBELClassifier(n_estimators=100, max_depth=2, cost_matrix=C).fit(X[:1200], y[:1200])
    reb.fit(X, y, eval_set=[(X[1200:], y[1200:])])
    best: int | None = reb.best_iteration_
    reb.truncate(50 if best is None else min(best, 50))
    labels = predict_min_cost(reb, X[:5], {(8, 1): 20.0})
    document: str = rebelboost.to_json(reb)
    with io.StringIO() as out:
        rebelboost.to_json(reb, out)
    again = rebelboost.from_json(document)
    shap_model = rebelboost.to_shap(again)
    plot_importance(reb, max_num_features=10)
    plot_metric(reb)
    return [int(v) for v in labels] + [len(shap_model["trees"]), reb.n_estimators_]


def similarity() -> None:
    X, y = load_digits(return_X_y=True)
    clf = REBELClassifier(weak_learner="similarity", n_estimators=20).fit(X[:300], y[:300])
    kinds = clf.learners_["kind"][:5]
    explained = clf.explain(X[:3])
    print(kinds, explained["contribution"].shape, rebelboost.__version__, rebelboost.get_cmake_dir())


def distributed() -> None:
    with LocalCluster(n_workers=2, threads_per_worker=1) as cluster, Client(cluster) as client:
        X = da.random.random((20_000, 20), chunks=(5_000, 20))
        y = (X[:, 0] + X[:, 1] > 1).astype(int)
        clf = DaskREBELClassifier(n_estimators=50, max_depth=3, client=client).fit(X, y)
        print(clf.predict(X[:10]).compute())
        clf.to_local().save("model.rbm")


def misuses(clf: AdaBoostClassifier, X: NDArray[np.float64]) -> None:
    """Calls the annotations must refuse: strict mode reports an unused ``type: ignore``, so if one of these
    stopped being an error (an annotation lost, or widened to Any) the check fails."""
    AdaBoostClassifier(n_estimators="10")  # type: ignore[arg-type]
    count: str = clf.n_estimators_  # type: ignore[assignment]
    clf.fit(X, [0, 1]).predict(X, n_iter="3")  # type: ignore[call-overload]
    rebelboost.load(3)  # type: ignore[arg-type]
    proba: list[float] = clf.predict_proba(X)  # type: ignore[assignment]
    print(count, proba)
