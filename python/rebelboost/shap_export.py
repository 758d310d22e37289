"""The model in shap's custom tree format, so ``shap.TreeExplainer`` explains rebelboost trees.

``shap.TreeExplainer(rebelboost.to_shap(clf))`` gives the values of
``clf.decision_function(X, pred_contrib=True)`` (docs/guide/explanations.md): shap's path-dependent
algorithm reads the same node covers, and each tree is exported as the K-output tree ``f_t(x) a_t``.
shap is an optional dependency (``pip install rebelboost[shap]``); this module does not import it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
from sklearn.utils.validation import check_is_fitted

if TYPE_CHECKING:
    from rebelboost._base import BaseBoostingClassifier

__all__ = ["to_shap"]


def _node_values(tree):
    """Each node's cover-weighted mean of the +-1 leaves below it (shap reads the root's as the tree's
    expected value); children have larger indices than their parent, so one backward pass suffices."""
    feature, left, right, cover = tree["feature"], tree["left"], tree["right"], tree["cover"]
    values = tree["value"].astype(np.float64)
    for i in range(len(feature) - 1, -1, -1):
        if feature[i] >= 0:
            values[i] = (cover[left[i]] * values[left[i]] + cover[right[i]] * values[right[i]]) / cover[i]
    return values


def _shap_tree(tree):
    if (tree["cover"][tree["feature"] >= 0] == 0).any():
        raise ValueError("a split node of this model has a zero cover (no training weight reached it); shap's "
                         "TreeExplainer divides by covers, so use decision_function(X, pred_contrib=True)")
    split = tree["feature"] >= 0
    left = np.where(split, tree["left"], -1).astype(np.int32)
    right = np.where(split, tree["right"], -1).astype(np.int32)
    return {
        "children_left": left,
        "children_right": right,
        # NaN goes where the tree sends it; shap's "x <= threshold" is our routing of every other value.
        "children_default": np.where(tree["nan_left"], left, right).astype(np.int32),
        "features": np.where(split, tree["feature"], -1).astype(np.int32),
        "thresholds": np.where(split, tree["threshold"], 0.0).astype(np.float64),
        "values": np.outer(_node_values(tree), tree["step"]),
        "node_sample_weight": tree["cover"].astype(np.float64),
    }


def to_shap(estimator: BaseBoostingClassifier) -> dict[str, Any]:
    """A fitted tree model as the dict ``shap.TreeExplainer`` accepts (shap's custom tree format).

    Returns ``{"trees": [...], "base_offset": bias, "tree_output": "raw_value", "objective": ...,
    "input_dtype": float64, "internal_dtype": float64}``, each tree a dict of ``children_left``,
    ``children_right``, ``children_default`` (where NaN goes), ``features``, ``thresholds`` (raw feature
    values: ``x <= threshold`` goes left, as the trees route), ``values`` (n_nodes, K): the tree's output
    ``f_t a_t`` at leaves and its cover-weighted mean at split nodes, and ``node_sample_weight`` (the
    covers). shap explains the raw scores per output: K = 1 for the binary losses, K = n_classes for
    REBEL (with 2 classes, the difference of its two outputs is ``decision_function``). Tree models with
    covers only (format version 5 on), else ValueError.
    """
    check_is_fitted(estimator)
    model = estimator._model
    if model.learner != "tree":
        raise ValueError("to_shap exports tree models; a similarity learner splits no feature")
    if not model.has_covers:
        raise ValueError("this model has no node covers (it was read from a model file older than format version 5); "
                         "shap's TreeExplainer needs them: train it again, or continue it with warm start")
    trees = [_shap_tree(tree) for tree in model.trees()]
    return {"trees": trees, "base_offset": model.bias.copy(), "tree_output": "raw_value", "objective": "raw_value",
            "input_dtype": np.float64, "internal_dtype": np.float64}
