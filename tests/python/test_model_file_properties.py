"""Property test of the loader: a model file of any kind with a metadata field, a tree array entry, a
similarity field (standardisation, anchor, kind, anchor index, tau), a soft cascade section, a step, the
bias or a header count rewritten - and its checksum recomputed - either loads into an estimator whose
every method gives finite, well-shaped output, or fails with ModelFileError. Never another exception."""

import json
import os
import tempfile
import warnings
from functools import lru_cache

import numpy as np
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

import rebelboost
from rebelboost import AdaBoostClassifier, ModelFileError, REBELClassifier, VEBBoostClassifier

from model_bytes import NODE, SIMILARITY, parse

FOLDER = tempfile.mkdtemp(prefix="rb-properties-")


@lru_cache(maxsize=None)
def fitted_files():
    """(kind, file bytes, X) for a model of every kind, trained once."""
    rng = np.random.RandomState(7)
    X = rng.normal(size=(120, 3))
    X[rng.rand(*X.shape) < 0.1] = np.nan
    binary = np.where(np.nan_to_num(X[:, 0]) + 0.5 * rng.normal(size=120) > 0, "yes", "no")
    multi = np.argmax(np.nan_to_num(X) + 0.5 * rng.normal(size=X.shape), axis=1)
    models = [("adaboost", AdaBoostClassifier(n_estimators=4, max_depth=2), binary),
              ("veb", VEBBoostClassifier(n_estimators=4, max_depth=2), binary),
              ("rebel", REBELClassifier(n_estimators=4, max_depth=2, cost_matrix={(0, 2): 3.0}), multi),
              ("rebel-2", REBELClassifier(n_estimators=4, max_depth=1), binary),
              ("similarity", REBELClassifier(n_estimators=5, weak_learner="similarity"), multi)]
    out = []
    for kind, estimator, y in models:
        X_kind = np.nan_to_num(X) if kind == "similarity" else X  # similarities refuse NaN
        path = os.path.join(FOLDER, f"{kind}.rbm")
        estimator.fit(X_kind, y).save(path)
        with open(path, "rb") as handle:
            out.append((kind, handle.read(), X_kind))
    return out


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**70), 2**70) | st.floats() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4),
    max_leaves=8,
)
numbers = st.floats() | st.sampled_from([0.0, -0.0, 1e300, -1e300, 1e308, 5e-324]) | st.integers(-(2**31), 2**31).map(float)


@st.composite
def mutations(draw):
    """A function that rewrites one part of a parsed file, and a description of it."""
    what = draw(st.sampled_from(["metadata", "params", "node", "similarity", "step", "bias", "header", "cascade"]))
    if what == "metadata":
        key, value = draw(st.sampled_from(["estimator", "classes", "classes_dtype", "n_features_in", "params",
                                           "cost_matrix", "feature_names_in", "metadata_version", "other"])), draw(json_values)
        return what, key, value
    if what == "params":
        key = draw(st.sampled_from(["n_estimators", "max_depth", "n_bins", "learning_rate", "n_jobs", "quick",
                                    "cost_matrix", "lam", "criterion", "random_state", "subsample", "verbose",
                                    "weak_learner", "similarity_scaling"]))
        return what, key, draw(json_values)
    if what == "node":
        field = draw(st.sampled_from(NODE.names))
        value = draw(numbers) if NODE[field].kind == "f" else draw(st.integers(-(2**31), 2**32 - 1))
        return what, (draw(st.integers(0, 3)), draw(st.integers(0, 6)), field), value
    if what == "similarity":
        field = draw(st.sampled_from(list(SIMILARITY.names) + ["feature_mean", "feature_scale", "anchors"]))
        integer = field in SIMILARITY.names and SIMILARITY[field].kind == "u"
        value = draw(st.integers(0, 2**32 - 1) | st.integers(0, 8)) if integer else draw(numbers)
        return what, (draw(st.integers(0, 20)), draw(st.integers(0, 5)), field), value
    if what == "cascade":
        return what, (draw(st.integers(0, 3)), draw(st.integers(0, 2**32 - 1) | st.integers(0, 4))), draw(numbers)
    if what in ("step", "bias"):
        return what, (draw(st.integers(0, 3)), draw(st.integers(0, 2))), draw(numbers)
    return what, draw(st.sampled_from(["loss", "n_features", "n_outputs", "learner"])), draw(st.integers(0, 2**32 - 1))


def apply(parts, mutation):
    what, where, value = mutation
    if what in ("metadata", "params"):
        meta = json.loads(parts.metadata)
        if what == "params":
            if not isinstance(meta.get("params"), dict):
                meta["params"] = {}
            meta["params"][where] = value
        else:
            meta[where] = value
        parts.metadata = json.dumps(meta).encode()
    elif what == "similarity" and parts.similarities is None:
        return
    elif what == "similarity":
        s, (index, column, field) = parts.similarities, where
        if field in SIMILARITY.names:
            if len(s.learners):
                s.learners[index % len(s.learners)][field] = value
        elif field == "anchors":
            if s.anchors.size:
                s.anchors[index % len(s.anchors), column % s.anchors.shape[1]] = value
        else:
            getattr(s, field)[column % len(getattr(s, field))] = value
    elif what == "node" and not parts.trees:
        return
    elif what == "node":
        tree, node, field = where
        nodes = parts.trees[tree % len(parts.trees)].nodes
        info = np.iinfo(NODE[field]) if NODE[field].kind in "iu" else None
        nodes[node % len(nodes)][field] = value if info is None else np.clip(value, info.min, info.max)
    elif what == "cascade":  # a checkpoint interval and one threshold (adding checkpoints as needed)
        n_checkpoints, every = where
        classes = 2 if len(parts.bias) == 1 else max(len(parts.bias), 1)  # the real K, not a rewritten count
        thresholds = np.resize(np.abs(parts.cascade_thresholds) + 1.0, (n_checkpoints + 1) * classes)
        thresholds[n_checkpoints] = value
        parts.cascade_every, parts.cascade_thresholds = every, thresholds
    elif what == "step":
        steps = parts.steps()
        if steps:
            step = steps[where[0] % len(steps)]
            step[where[1] % len(step)] = value
    elif what == "bias":
        parts.bias[where[1] % len(parts.bias)] = value
    else:
        setattr(parts, where, value)


def check_usable(clf, X):
    n = len(X)
    K = len(clf.classes_)
    proba = clf.predict_proba(X)
    assert proba.shape == (n, K) and np.isfinite(proba).all()
    np.testing.assert_allclose(proba.sum(axis=1), 1.0, rtol=1e-9)
    scores = clf.decision_function(X)
    assert np.isfinite(scores).all() and scores.shape == ((n,) if K == 2 else (n, K))
    assert set(clf.predict(X).tolist()) <= set(clf.classes_.tolist())
    for options in ({"early_exit": True}, {"cascade": True} if clf.cascade_ is not None else {}):
        assert set(clf.predict(X, **options).tolist()) <= set(clf.classes_.tolist())
    staged = list(clf.staged_decision_function(X))
    assert len(staged) == clf.n_estimators_ and all(np.isfinite(s).all() for s in staged)
    if hasattr(clf, "feature_importances_"):  # tree models only
        importances = clf.feature_importances_
        assert importances.shape == (X.shape[1],) and np.isfinite(importances).all()
    rebelboost.to_json(clf)
    clf.save(os.path.join(FOLDER, "again.rbm"))
    np.testing.assert_array_equal(rebelboost.load(os.path.join(FOLDER, "again.rbm")).decision_function(X), scores)


@pytest.mark.slow
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(index=st.integers(0, 4), changes=st.lists(mutations(), min_size=1, max_size=3))
def test_rewritten_files_load_and_work_or_fail_with_model_file_error(index, changes):
    kind, data, X = fitted_files()[index]
    parts = parse(data)
    for mutation in changes:
        apply(parts, mutation)
    path = os.path.join(FOLDER, "mutated.rbm")
    with open(path, "wb") as handle:
        handle.write(parts.file())
    try:
        clf = rebelboost.load(path)
    except ModelFileError as exc:
        event(f"rejected: {str(exc).split(':')[0]}")
        return
    event("loaded")
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="n_jobs=")  # a huge n_jobs is clamped with a warning
        check_usable(clf, X)
