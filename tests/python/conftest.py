"""Shared fixtures: small deterministic data sets."""

import numpy as np
import pytest


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
