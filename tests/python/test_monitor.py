"""The training monitor's own log loss (rebelboost._monitor.log_loss_of_indices) is scikit-learn's."""

import numpy as np
import pytest
from sklearn.metrics import log_loss

from rebelboost._monitor import log_loss_of_indices


@pytest.mark.parametrize("K", [2, 3, 10])
@pytest.mark.parametrize("weighted", [False, True])
def test_equals_scikit_learns_log_loss(K, weighted):
    rng = np.random.default_rng(K + 10 * weighted)
    n = 500
    proba = rng.random((n, K)) ** 4  # many near 0
    proba[:20] = 0.0
    proba[np.arange(20), rng.integers(0, K, 20)] = 1.0  # certain rows: clipped at eps and 1 - eps
    proba /= proba.sum(axis=1, keepdims=True)
    y = rng.integers(0, K, n)
    y[:10] = np.argmax(proba[:10], axis=1)  # certain and right
    w = rng.random(n) * 3 if weighted else None
    want = log_loss(y, proba, sample_weight=w, labels=np.arange(K))
    got = log_loss_of_indices(y, proba, w)
    assert np.isfinite(got) and got == pytest.approx(want, rel=1e-14, abs=0)
    if K == 2:  # the probability of class 1 alone, as scikit-learn reads a 1-D array
        want_1d = log_loss(y, proba[:, 1], sample_weight=w, labels=[0, 1])
        assert log_loss_of_indices(y, proba[:, 1], w) == pytest.approx(want_1d, rel=1e-14, abs=0)


@pytest.mark.parametrize("loss", ["exponential", "logistic", "squared"])
@pytest.mark.parametrize("K", [2, 3, 10])
def test_true_class_log_proba_is_the_log_of_the_link(loss, K):
    """REBEL's log form of its link (the monitor's log loss, every iteration) against the log of
    _scores_to_proba, including rows whose every score is far below zero (the sum of expit underflows:
    the log-sum-exp branch) and scores at the file's limit."""
    from rebelboost import REBELClassifier
    from rebelboost._monitor import log_loss_of_log_proba

    rng = np.random.default_rng(K)
    n = 400
    scores = rng.normal(scale=3.0, size=(n, K))
    scores[:20] = -400.0 - rng.random((20, K)) * 100.0  # expit(2 H) underflows in every class
    scores[20:30] = rng.choice([-1e300, 1e300], size=(10, K))
    scores[30:40] = 50.0 + rng.random((10, K))  # every class near certain
    if K == 2:  # two classes: one score column, H_1 - H_0, as the monitor gets it
        scores = scores[:, 1] - scores[:, 0]
    y = rng.integers(0, K, n)
    est = REBELClassifier()
    est.loss_ = loss
    with np.errstate(all="ignore"):
        want = np.log(est._scores_to_proba(scores)[np.arange(n), y])
        got = est._true_class_log_proba(scores, y)
    assert got.shape == (n,) and not np.isnan(got).any() and np.all(got <= 1e-12)
    finite = np.isfinite(want)
    np.testing.assert_allclose(got[finite], want[finite], rtol=1e-12, atol=1e-12)
    assert np.all(got[~finite] < -700)  # where the direct form's probability underflows to 0
    want_loss = log_loss_of_indices(y, est._scores_to_proba(scores))
    assert log_loss_of_log_proba(got) == pytest.approx(want_loss, rel=1e-12)
