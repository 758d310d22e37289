"""VEB-Boost: the variance-penalised cost falls every iteration; the step is the Lemma 1 minimiser."""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rebelboost import AdaBoostClassifier, VEBBoostClassifier


def veb_cost(y_pm, H, lam):
    """VEB-Boost, Theorem 2 (docs/methods/veb.md): (sum e^{-yH})^2 + lam (n sum e^{-2yH} - (sum e^{-yH})^2)."""
    e = np.exp(-y_pm * H)
    return e.sum() ** 2 + lam * (len(e) * np.sum(e**2) - e.sum() ** 2)


def data(seed, n=200, noise=0.8):
    rng = np.random.RandomState(seed)
    X = rng.normal(size=(n, 4)).round(2)
    y = (X[:, 0] + X[:, 1] * X[:, 2] + noise * rng.normal(size=n) > 0).astype(int)
    return X, y


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10_000), lam=st.floats(0.0, 1.0), depth=st.integers(1, 3), lr=st.sampled_from([1.0, 0.3]))
def test_variance_penalised_cost_never_increases(seed, lam, depth, lr):
    X, y = data(seed)
    clf = VEBBoostClassifier(lam=lam, n_estimators=30, max_depth=depth, learning_rate=lr, n_jobs=1).fit(X, y)
    y_pm = 2 * y - 1
    costs = [veb_cost(y_pm, np.zeros(len(y)), lam)]
    costs += [veb_cost(y_pm, H, lam) for H in clf.staged_decision_function(X)]
    # (the bias is a stage too: it is VEB's step for the learner f = +1)
    costs.insert(1, veb_cost(y_pm, np.full(len(y), clf._model.bias[0]), lam))
    assert all(b <= a * (1 + 1e-10) for a, b in zip(costs, costs[1:]))
    engine = clf.fit_info_["train_loss"]
    np.testing.assert_allclose(engine, np.array(costs[2:]) / costs[0], rtol=1e-8)


def test_step_minimises_lemma1_cost():
    """The step is 1/4 ln(U_correct / U_wrong): the minimiser of U_I e^{-2a} + U_J e^{2a}, not its inverse."""
    X, y = data(1)
    lam = 0.5
    clf = VEBBoostClassifier(lam=lam, n_estimators=2, n_jobs=1).fit(X, y)
    y_pm = 2 * y - 1
    n = len(y)
    H = np.full(n, clf._model.bias[0])
    w = np.exp(-y_pm * H)
    w /= w.sum()
    u = lam * n * w**2 + (1 - lam) * w
    f = clf._model.tree_outputs(X.astype(np.float64), 1)[:, 0]
    correct, wrong = u[f == y_pm].sum(), u[f != y_pm].sum()
    eps = (correct + wrong) / n
    expected = 0.25 * np.log((correct + eps) / (wrong + eps))
    assert expected > 0
    assert clf.estimator_weights_[0] == pytest.approx(expected, rel=1e-9)
    grid = np.linspace(-1, 1, 2001)
    lemma1 = correct * np.exp(-2 * grid) + wrong * np.exp(2 * grid)
    assert abs(grid[lemma1.argmin()] - 0.25 * np.log(correct / wrong)) < 1e-3


def test_lam_zero_weights_like_adaboost():
    """lam = 0: u = w, so the trees are AdaBoost's and every step is half of AdaBoost's... for the first tree."""
    X, y = data(2)
    ada = AdaBoostClassifier(n_estimators=1).fit(X, y)
    veb = VEBBoostClassifier(lam=0.0, n_estimators=1).fit(X, y)
    a, v = ada._model.trees()[0], veb._model.trees()[0]
    assert a["feature"][0] == v["feature"][0] and a["threshold"][0] == v["threshold"][0]


def test_stops_without_edge_and_rejects_bad_lam():
    X = np.zeros((20, 2))
    y = np.arange(20) % 2
    clf = VEBBoostClassifier(n_estimators=10).fit(X, y)
    assert clf.n_estimators_ == 0 and clf.fit_info_["stop_reason"] == "no_edge"
    for lam in (-0.1, 1.5, np.nan, "x"):
        with pytest.raises(ValueError, match=r"The .lam. parameter of VEBBoostClassifier must be a float in the range \[0.0, 1.0\]"):
            VEBBoostClassifier(lam=lam).fit(*data(0))
    with pytest.raises(ValueError, match="Only binary classification is supported"):
        VEBBoostClassifier().fit(X, np.arange(20) % 3)


def test_veb_thread_determinism_and_round_trip(tmp_path):
    import rebelboost

    X, y = data(3, n=3000)
    a = VEBBoostClassifier(n_estimators=20, max_depth=2, n_jobs=1).fit(X, y)
    b = VEBBoostClassifier(n_estimators=20, max_depth=2, n_jobs=2).fit(X, y)
    assert a._model.to_bytes() == b._model.to_bytes()
    a.save(tmp_path / "veb.rbm")
    loaded = rebelboost.load(tmp_path / "veb.rbm")
    assert type(loaded) is VEBBoostClassifier and loaded.lam == a.lam
    np.testing.assert_array_equal(loaded.decision_function(X), a.decision_function(X))
