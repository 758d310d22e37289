"""The similarity selection's stages (_rebelboost_testing.similarity_*) against independent numpy
computations: binarization = signs of the top eigenvector of U^T U (numpy.linalg.eigh on the N x N matrix);
the isolated point and the chosen one-point learner = brute force over every point.

The stages are bound in their own module, which no wheel holds: build it with
``-DREBELBOOST_BUILD_TESTING_MODULE=ON`` and put its folder (``BUILD/python``) on PYTHONPATH. Without it
these tests are skipped, unless REBELBOOST_REQUIRE_TESTING_MODULE=1 (CI, .ci/run) turns the skip into a
failure."""

import importlib
import os

import numpy as np
import pytest

try:
    _testing = importlib.import_module("_rebelboost_testing")
except ImportError:
    if os.environ.get("REBELBOOST_REQUIRE_TESTING_MODULE") == "1":
        raise
    pytest.skip("_rebelboost_testing is not built (cmake -DREBELBOOST_BUILD_TESTING_MODULE=ON; its folder on "
                "PYTHONPATH)", allow_module_level=True)


def signed_weights(n, K, rng, spread=2.0):
    """s_nk = y_nk w_nk: w > 0 log-uniform, negative in the slot of a random label."""
    w = 10.0 ** (-spread * rng.rand(n, K))
    y = rng.randint(0, K, size=n)
    w[np.arange(n), y] *= -1
    return w


def eq53_loss(s, f):
    """2 sum_k sqrt(s+_k s-_k) of +-1 outputs f (thesis Eq. 5.2-5.3)."""
    agree = (s > 0) == (f[:, None] > 0)
    plus = np.where(agree, np.abs(s), 0).sum(axis=0)
    minus = np.where(agree, 0, np.abs(s)).sum(axis=0)
    return 2 * np.sqrt(plus * minus).sum()


@pytest.mark.parametrize("n,K,seed", [(8, 2, 0), (30, 3, 1), (60, 5, 2), (45, 7, 3)])
def test_binarization_is_the_sign_of_the_top_eigenvector_of_UtU(n, K, seed):
    s = signed_weights(n, K, np.random.RandomState(seed))
    side, eigenvalue = _testing.similarity_binarize(s)
    U = s / np.sqrt(np.abs(s).sum(axis=0))  # row n is u_n
    values, vectors = np.linalg.eigh(U @ U.T)  # U^T U of the thesis, N x N
    v = vectors[:, -1]
    assert eigenvalue == pytest.approx(values[-1], rel=1e-10)
    assert eigenvalue >= (U ** 2).sum() / K * (1 - 1e-12)  # Eq. 5.7
    clear = np.abs(v) > 1e-9
    agree = side[clear] == np.where(v[clear] > 0, 1, -1)
    assert agree.all() or not agree.any()  # equal up to the eigenvector's sign


def test_isolated_point_and_one_point_learner_equal_brute_force():
    one_point = 0
    for seed in range(8):
        rng = np.random.RandomState(seed)
        n, K, d = 25 + 10 * (seed % 6), 2 + seed % 4, 1 + seed % 3
        X = rng.normal(size=(n, d))
        s = signed_weights(n, K, rng, spread=3.0)
        losses = [eq53_loss(s, np.where(np.arange(n) == i, 1.0, -1.0)) for i in range(n)]
        best = int(np.argmin(losses))
        assert _testing.similarity_isolated_point(X, s) == best
        chosen = _testing.similarity_select(X, s)
        assert np.all(np.abs(chosen["outputs"]) <= 1)
        if chosen["kind"] != 1:
            continue
        one_point += 1  # the one-point learner won: its anchor and tau are the brute-force ones
        D = ((X - X[best]) ** 2).sum(axis=1)
        tau = 0.5 * np.min(np.delete(D, best))
        assert chosen["i"] == best and chosen["tau"] == pytest.approx(tau, rel=1e-12)
        np.testing.assert_allclose(chosen["outputs"], (tau - D) / (tau + D), rtol=1e-10, atol=1e-12)
    assert one_point >= 4  # random labels: isolation usually wins
