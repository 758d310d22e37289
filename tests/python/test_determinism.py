"""Same data and seed give the same model bit for bit, whatever the thread count."""

import numpy as np
import pytest

from rebelboost import AdaBoostClassifier


@pytest.mark.parametrize("max_depth", [1, 2, 4])
@pytest.mark.parametrize("weighted", [False, True])
def test_thread_count_does_not_change_the_model(binary_data_nan, max_depth, weighted):
    X, y = binary_data_nan
    X = np.tile(X, (60, 1))  # > 16k rows: several weight-update blocks
    y = np.tile(y, 60)
    sw = np.random.RandomState(0).exponential(size=len(y)) if weighted else None
    models = [
        AdaBoostClassifier(n_estimators=15, max_depth=max_depth, n_jobs=n).fit(X, y, sample_weight=sw)._model.to_bytes()
        for n in (1, 2, 3)
    ]
    assert models[0] == models[1] == models[2]


def test_refit_is_identical(binary_data):
    X, y = binary_data
    clf = AdaBoostClassifier(n_estimators=10, max_depth=2)
    a = clf.fit(X, y)._model.to_bytes()
    b = clf.fit(X, y)._model.to_bytes()
    assert a == b


def test_bin_subsample_seed():
    from rebelboost import _core

    rng = np.random.RandomState(0)
    X = rng.normal(size=(3000, 2))
    y = (X[:, 0] > 0).astype(np.int32)

    def fit(seed, threads=1):
        return _core.train(X, y, None, 2, "adaboost", 3, 1, 32, 1.0, threads, bin_subsample=500, bin_seed=seed)[0].to_bytes()

    assert fit(5) == fit(5) == fit(5, threads=2)
    assert fit(5) != fit(6)  # a different subsample gives other edges
