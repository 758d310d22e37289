"""similarity_scaling="auto": the leave-one-out k-nearest-neighbour choice between "feature" and "global"."""

from __future__ import annotations

import json

import numpy as np
import pytest
from sklearn.datasets import load_digits, load_wine

import rebelboost
from rebelboost import REBELClassifier
from rebelboost._scaling import (AUTO_SCALING_ROWS, AUTO_SCALING_Z, NEIGHBOURS, choose_scaling, leave_one_out_wrong,
                                 scaled_for_distances)


def slow_loo_wrong(X, y):
    """Per row, by the definitions: the distances to every other row, sorted; for each k the majority label of
    the k nearest (the lowest label on a tie of votes); the share of the k whose vote is wrong."""
    out = []
    for i in range(len(X)):
        d = [(float(np.sum((X[i] - X[j]) ** 2)), j) for j in range(len(X)) if j != i]
        nearest = [j for _, j in sorted(d)]
        wrong = 0
        for k in NEIGHBOURS:
            counts = {}
            for j in nearest[:k]:
                counts[y[j]] = counts.get(y[j], 0) + 1
            vote = min(c for c in counts if counts[c] == max(counts.values()))
            wrong += vote != y[i]
        out.append(wrong / len(NEIGHBOURS))
    return np.array(out)


def slow_scaled(X, scaling):
    deviation = X.std(axis=0)
    if scaling == "feature":
        return (X - X.mean(axis=0)) / np.where(deviation > 0, deviation, 1.0)
    return (X - X.mean(axis=0)) / np.sqrt(np.mean(deviation ** 2))


@pytest.mark.parametrize("seed", range(4))
def test_the_votes_and_the_scalings_agree_with_their_definitions(seed):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(60, 4)) * np.array([1.0, 10.0, 0.1, 3.0]) + rng.normal(size=4)
    y = (X[:, 0] + 0.1 * X[:, 1] > 0).astype(int) + (X[:, 3] > 1)
    wrong = {}
    for scaling in ("feature", "global"):
        Z = scaled_for_distances(X, scaling)
        np.testing.assert_allclose(Z, slow_scaled(X, scaling), rtol=1e-12, atol=1e-12)
        wrong[scaling] = slow_loo_wrong(Z, y)
        np.testing.assert_array_equal(leave_one_out_wrong(Z, y), wrong[scaling])
    diff = wrong["feature"] - wrong["global"]
    z = diff.mean() / (diff.std(ddof=1) / np.sqrt(len(diff)))
    assert choose_scaling(X, y, 0) == ("global" if z >= AUTO_SCALING_Z else "feature")


def test_units_decide_the_choice():
    rng = np.random.default_rng(5)
    X = rng.normal(size=(200, 2))
    y = (X[:, 0] > 0).astype(int)
    # The label lives in a feature with a small range beside a wide noise feature: only "feature" sees it.
    assert choose_scaling(X * np.array([0.001, 100.0]), y, 0) == "feature"
    # A feature with a tiny deviation and no information: "feature" would blow it up to the others' size.
    noisy = np.column_stack([X, 1e-3 * rng.normal(size=(200, 6))])
    assert choose_scaling(noisy, y, 0) == "global"
    # Constant features (scale 1, as in the core) and a constant set change nothing and do not fail.
    assert choose_scaling(np.column_stack([X, np.ones(200)]), y, 0) == choose_scaling(X, y, 0)
    assert choose_scaling(np.zeros((10, 3)), np.arange(10) % 2, 0) == "feature"
    assert choose_scaling(noisy[:5], y[:5], 0) in ("feature", "global")  # fewer rows than neighbours


def test_non_finite_rows_leave_the_error_to_the_core():
    X, y = load_wine(return_X_y=True)
    X = X.copy()
    X[4, 2] = np.nan
    assert choose_scaling(X, y, 0) == "feature"
    with pytest.raises(ValueError, match="row 4, feature 2"):
        REBELClassifier(weak_learner="similarity", n_estimators=3).fit(X, y)
    huge = np.full((20, 2), 1e300)
    huge[::2] *= -1
    assert choose_scaling(huge, np.arange(20) % 2, 0) == "feature"  # deviations overflow: nothing to compare


def test_a_sample_of_rows_bounds_the_cost():
    rng = np.random.default_rng(0)
    n = AUTO_SCALING_ROWS + 500
    X = rng.normal(size=(n, 3)) * np.array([1.0, 1.0, 1e-3])
    y = (X[:, 0] > 0).astype(int)
    assert choose_scaling(X, y, 0) == choose_scaling(X, y, 0)  # seeded
    assert choose_scaling(X, y, 0) == "global"


@pytest.mark.parametrize("loader, expected", [(load_digits, "global"), (load_wine, "feature")])
def test_auto_fits_the_model_of_its_choice_bit_for_bit(loader, expected):
    X, y = loader(return_X_y=True)
    X, y = X[::3], y[::3]
    auto = REBELClassifier(weak_learner="similarity", n_estimators=15, n_jobs=2).fit(X, y)
    assert auto.similarity_scaling == "auto" and auto.similarity_scaling_ == expected
    explicit = REBELClassifier(weak_learner="similarity", n_estimators=15, similarity_scaling=expected, n_jobs=1).fit(X, y)
    assert explicit.similarity_scaling_ == expected
    assert auto._model.to_bytes() == explicit._model.to_bytes()
    hybrid = REBELClassifier(weak_learner="hybrid", n_estimators=5).fit(X, y)
    assert hybrid.similarity_scaling_ == expected
    assert REBELClassifier(n_estimators=3).fit(X, y).similarity_scaling_ is None  # trees have no distances


def test_the_choice_is_made_on_the_rows_trained_on_and_kept_by_warm_start():
    X, y = load_digits(return_X_y=True)
    X, y = X[::4], y[::4]
    clf = REBELClassifier(weak_learner="similarity", n_estimators=6, warm_start=True).fit(X, y)
    assert clf.similarity_scaling_ == "global"
    clf.set_params(n_estimators=10).fit(X, y)
    assert clf.similarity_scaling_ == "global" and clf.n_estimators_ == 10
    once = REBELClassifier(weak_learner="similarity", n_estimators=10).fit(X, y)
    assert clf._model.to_bytes() == once._model.to_bytes()


def test_the_model_file_keeps_the_choice(tmp_path):
    X, y = load_digits(return_X_y=True)
    X, y = X[::5], y[::5]
    clf = REBELClassifier(weak_learner="similarity", n_estimators=4).fit(X, y)
    clf.save(tmp_path / "m.rbm")
    back = rebelboost.load(tmp_path / "m.rbm")
    assert back.similarity_scaling == "auto" and back.similarity_scaling_ == "global"
    model = rebelboost._core.Model.load(str(tmp_path / "m.rbm"))
    meta = json.loads(model.metadata)
    # A file written before "auto" existed: no fitted entry, the parameter was the scaling.
    del meta["similarity_scaling"]
    meta["params"]["similarity_scaling"] = "global"
    model.metadata = json.dumps(meta).encode()
    model.save(str(tmp_path / "old.rbm"))
    assert rebelboost.load(tmp_path / "old.rbm").similarity_scaling_ == "global"
    for bad in ("pixels", None, 3):
        meta["similarity_scaling"] = bad
        model.metadata = json.dumps(meta).encode()
        model.save(str(tmp_path / "bad.rbm"))
        with pytest.raises(rebelboost.ModelFileError, match="similarity_scaling"):
            rebelboost.load(tmp_path / "bad.rbm")
