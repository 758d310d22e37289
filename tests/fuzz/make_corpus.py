"""Writes the fuzzer's seed corpus: small real model files of every model kind, one folder per kind.

    python tests/fuzz/make_corpus.py [tests/fuzz/corpus]

Each kind gets a few files (stumps and deeper trees, NaN in the training data so NaN directions vary,
a cost matrix for REBEL; Localized Similarities with per-feature and global scaling; one calibrated soft
cascade per kind), trained on a small synthetic problem; every tree kind also gets a file with a depth-12
chain appended (a lopsided tree, which prediction walks node by node instead of flattening). Every file is
a few kilobytes, so the fuzzer runs fast. Rerun it when the file format changes or a model kind is added, and commit the result.
"""

from __future__ import annotations

import os
import sys

import numpy as np

from rebelboost import AdaBoostClassifier, BoostingRegressor, REBELClassifier, VEBBoostClassifier

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
from model_bytes import chain, parse  # noqa: E402

# kind -> [(estimator, labels: "binary" or "multi"), ...]; similarity models train on X without NaN.
KINDS = {
    "adaboost": [(AdaBoostClassifier(n_estimators=3, max_depth=1), "binary"),
                 (AdaBoostClassifier(n_estimators=2, max_depth=3, criterion="gini"), "binary")],
    "veb": [(VEBBoostClassifier(n_estimators=3, max_depth=2), "binary")],
    "rebel": [(REBELClassifier(n_estimators=2, max_depth=2), "multi"),
              (REBELClassifier(n_estimators=2, max_depth=1, cost_matrix=[[0, 1, 4], [1, 0, 1], [2, 1, 0]]), "multi"),
              (REBELClassifier(n_estimators=3, max_depth=2), "binary")],
    "similarity": [(REBELClassifier(n_estimators=4, weak_learner="similarity"), "multi"),
                   (REBELClassifier(n_estimators=3, weak_learner="similarity", similarity_scaling="global"), "binary")],
    "hybrid": [(REBELClassifier(n_estimators=6, weak_learner="hybrid"), "multi"),
               (REBELClassifier(n_estimators=5, max_depth=1, weak_learner="hybrid"), "binary")],
    "regression": [(BoostingRegressor(n_estimators=3, max_depth=2, min_samples_leaf=5), "real"),
                   (BoostingRegressor(n_estimators=2, max_depth=4, min_samples_leaf=1), "real")],
}


def data():
    rng = np.random.RandomState(0)
    X = rng.normal(size=(300, 3))
    X[rng.rand(*X.shape) < 0.1] = np.nan
    binary = (np.nan_to_num(X[:, 0]) + np.nan_to_num(X[:, 1]) + 0.5 * rng.normal(size=300) > 0).astype(int)
    multi = np.argmax(np.nan_to_num(X) + 0.5 * rng.normal(size=X.shape), axis=1)
    real = np.nan_to_num(X[:, 0]) * 2.0 + rng.normal(size=300)
    return X, {"binary": binary, "multi": multi, "real": real}


def with_deep_chain(source, target):
    """The model file `source` with a depth-12 chain (25 nodes) appended as its last tree."""
    with open(source, "rb") as handle:
        parts = parse(handle.read())
    tree = chain(12, parts.n_features, 0.1, covers=parts.trees[0].cover is not None)
    tree.step = np.full(len(parts.trees[0].step), 0.1)
    if parts.trees[0].leaf_value is not None:  # a regression model: real leaves
        leaves = tree.nodes["feature"] < 0
        tree.nodes["value"][leaves] = 1
        tree.leaf_value = np.where(leaves, 0.25, 0.0)
    parts.trees.append(tree)
    with open(target, "wb") as handle:
        handle.write(parts.file())


def main(out):
    X, labels = data()
    for kind, estimators in KINDS.items():
        os.makedirs(os.path.join(out, kind), exist_ok=True)
        for i, (estimator, y) in enumerate(estimators):
            X_kind = np.nan_to_num(X) if kind in ("similarity", "hybrid") else X
            estimator.fit(X_kind, labels[y]).save(os.path.join(out, kind, f"seed{i}.rbm"))
            if i == 0 and kind != "regression":  # and the same model with a soft cascade section
                estimator.calibrate_cascade(X_kind, labels[y], max_disagreement=0.1)
                estimator.save(os.path.join(out, kind, "cascade.rbm"))
        if kind not in ("similarity", "hybrid"):
            with_deep_chain(os.path.join(out, kind, "seed0.rbm"), os.path.join(out, kind, "deep.rbm"))


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "corpus"))
