"""Shared fixtures: small deterministic data sets; every parallel path on small data."""

import os

# Regions of 128 steps or more get threads (the default is about a millisecond of work, which the suite's
# small problems never reach), so the thread-count identity tests run the parallel code. Set before the
# extension loads; OpenMP threads sleep while waiting, as the many tiny regions would otherwise spin on a
# loaded machine (CI sets the same).
os.environ.setdefault("REBELBOOST_WORK_PER_THREAD", "64")
os.environ.setdefault("OMP_WAIT_POLICY", "passive")

import numpy as np  # noqa: E402
import pytest  # noqa: E402


@pytest.fixture
def binary_data():
    rng = np.random.RandomState(0)
    X = rng.normal(size=(300, 6))
    y = (X[:, 0] + 0.5 * X[:, 1] ** 2 - 0.3 * X[:, 2] + 0.4 * rng.normal(size=300) > 0.3).astype(int)
    return X, y


@pytest.fixture
def binary_data_nan(binary_data):
    X, y = binary_data
    X = X.copy()
    rng = np.random.RandomState(1)
    X[rng.rand(*X.shape) < 0.1] = np.nan
    return X, y
