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
