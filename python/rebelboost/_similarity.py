"""Inspection of fitted models: which training points each Localized Similarity compares a query to
(anchors, tau), and what every learner contributed to a prediction (the thesis's "white-box" argument)."""

from __future__ import annotations

import numpy as np

__all__ = ["describe", "explain", "anchor_rows"]

_KINDS = np.array(["constant", "one_point", "two_point"])


def describe(model):
    """Per-learner arrays of a similarity model (see REBELClassifier.learners_)."""
    s = model.similarities()
    anchor = s["anchor"]  # (T, 2) indices into the anchor table, -1 unused
    used = anchor >= 0
    rows = anchor_rows(s)
    original = s["anchors"] * s["feature_scale"] + s["feature_mean"]  # back to the user's units
    points = np.where(used[..., None], original[np.maximum(anchor, 0)], np.nan) if len(original) else np.full(
        anchor.shape + (model.n_features,), np.nan)
    return {"kind": _KINDS[s["kind"]], "anchor_rows": rows, "anchors": points, "tau": s["tau"], "step": model.steps()}


def anchor_rows(s):
    """(T, 2) training rows of each learner's anchors, -1 where unused, from ``model.similarities()`` (a model of
    constant learners may hold no anchors at all)."""
    anchor = s["anchor"]
    rows = np.full(anchor.shape, -1, dtype=np.int64)
    rows[anchor >= 0] = s["anchor_rows"][anchor[anchor >= 0]]
    return rows


def explain(model, X, n_threads):
    """Outputs f_t(x) and contributions f_t(x) a_t of every learner for the rows of X."""
    output = model.learner_outputs(X, n_threads).astype(np.float64)
    steps = model.steps()
    result = {"bias": model.bias, "output": output, "contribution": output[:, :, None] * steps[None, :, :]}
    if model.learner == "similarity":
        learners = describe(model)
        result.update(anchor_rows=learners["anchor_rows"], anchors=learners["anchors"], tau=learners["tau"])
    elif model.learner == "hybrid":
        result["kind"] = model.learner_kinds()
    return result
