"""Benchmark data: Fashion-MNIST from Debian's dataset-fashion-mnist package, and synthetic tasks."""

from __future__ import annotations

import gzip
import os

import numpy as np

FASHION_DIR = os.environ.get("FASHION_MNIST_DIR", "/usr/share/datasets/fashion-mnist")


def _read_idx(path):
    with gzip.open(path, "rb") as handle:
        data = handle.read()
    magic = int.from_bytes(data[:4], "big")
    ndim = magic & 0xFF
    shape = [int.from_bytes(data[4 + 4 * i : 8 + 4 * i], "big") for i in range(ndim)]
    return np.frombuffer(data, dtype=np.uint8, offset=4 + 4 * ndim).reshape(shape)


def fashion_mnist():
    """(X_train, y_train, X_test, y_test): 60 000 / 10 000 rows of 784 uint8 pixels, labels 0-9."""
    if not os.path.isdir(FASHION_DIR):
        raise SystemExit(
            f"Fashion-MNIST not found in {FASHION_DIR}: apt-get install dataset-fashion-mnist "
            "(or set FASHION_MNIST_DIR)"
        )
    X_train = _read_idx(os.path.join(FASHION_DIR, "train-images-idx3-ubyte.gz")).reshape(60000, -1)
    y_train = _read_idx(os.path.join(FASHION_DIR, "train-labels-idx1-ubyte.gz"))
    X_test = _read_idx(os.path.join(FASHION_DIR, "t10k-images-idx3-ubyte.gz")).reshape(10000, -1)
    y_test = _read_idx(os.path.join(FASHION_DIR, "t10k-labels-idx1-ubyte.gz"))
    return X_train, y_train, X_test, y_test


def fashion_pair(a, b):
    """Binary task class a (label 0) vs class b (label 1) on the standard split, float32 features."""
    X_train, y_train, X_test, y_test = fashion_mnist()
    tr = (y_train == a) | (y_train == b)
    te = (y_test == a) | (y_test == b)
    return (X_train[tr].astype(np.float32), (y_train[tr] == b).astype(int),
            X_test[te].astype(np.float32), (y_test[te] == b).astype(int))


def hastie(n_train=100_000, n_test=20_000, seed=0):
    """make_hastie_10_2: 10 Gaussian features, y = 1 iff sum x^2 > 9.34."""
    from sklearn.datasets import make_hastie_10_2

    X, y = make_hastie_10_2(n_samples=n_train + n_test, random_state=seed)
    y = (y > 0).astype(int)
    return X[:n_train], y[:n_train], X[n_train:], y[n_train:]
