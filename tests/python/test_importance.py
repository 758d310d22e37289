"""feature_importances(importance_type=...): split counts and total gains against the nodes that to_json writes
(read independently of the method), exact zeros for features no tree splits, normalisation, errors."""

import json

import numpy as np
import pytest

from rebelboost import AdaBoostClassifier, REBELClassifier, to_json


def _stumps():
    """Stumps on 3 features of which the last is constant (no tree can split it)."""
    rng = np.random.RandomState(0)
    X = rng.normal(size=(300, 3))
    X[:, 2] = 1.0
    y = (X[:, 0] + 0.7 * X[:, 1] + 0.3 * rng.normal(size=300) > 0).astype(int)
    return AdaBoostClassifier(n_estimators=12, max_depth=1).fit(X, y), X, y


def _nodes_from_json(clf):
    """(feature, gain, tree |step|_1) of every split node, from the JSON export alone."""
    trees = json.loads(to_json(clf))["trees"]
    rows = [(f, g, float(np.abs(tree["step"]).sum()))
            for tree in trees for f, g in zip(tree["feature"], tree["gain"]) if f >= 0]
    return rows


def test_stumps_split_counts_and_gains_match_the_json_nodes():
    clf, X, _ = _stumps()
    nodes = _nodes_from_json(clf)
    assert len(nodes) == clf.n_estimators_ == 12  # one split node per stump
    counts = np.zeros(3)
    gains = np.zeros(3)
    for feature, gain, _ in nodes:
        counts[feature] += 1
        gains[feature] += gain
    assert counts[0] > 0 and counts[1] > 0  # both informative features are used
    split = clf.feature_importances("split", normalize=False)
    np.testing.assert_array_equal(split, counts)
    np.testing.assert_allclose(clf.feature_importances("gain", normalize=False), gains, rtol=1e-12)
    np.testing.assert_allclose(clf.feature_importances("split"), counts / counts.sum(), rtol=1e-12)
    np.testing.assert_allclose(clf.feature_importances(), gains / gains.sum(), rtol=1e-12)  # default: gain


def test_a_feature_never_split_gets_exactly_zero():
    clf, _, _ = _stumps()
    for kind in ("split", "gain", "weighted_gain"):
        for normalize in (True, False):
            assert clf.feature_importances(kind, normalize=normalize)[2] == 0.0, (kind, normalize)


@pytest.mark.parametrize("kind", ["split", "gain", "weighted_gain"])
def test_normalised_importances_sum_to_one_and_are_the_raw_ones_scaled(kind):
    rng = np.random.RandomState(1)
    X = rng.normal(size=(400, 5))
    y = np.digitize(X[:, 0] + X[:, 3], [-0.5, 0.5])
    clf = REBELClassifier(n_estimators=15, max_depth=3).fit(X, y)
    raw = clf.feature_importances(kind, normalize=False)
    normalised = clf.feature_importances(kind)
    assert raw.shape == normalised.shape == (5,) and raw.dtype == np.float64
    assert normalised.sum() == pytest.approx(1.0, rel=1e-12)
    np.testing.assert_allclose(normalised, raw / raw.sum(), rtol=1e-12)


def test_depth_three_gains_and_weighted_gains_from_json():
    rng = np.random.RandomState(2)
    X = rng.normal(size=(300, 4))
    y = (X[:, 0] * X[:, 1] > 0).astype(int)
    clf = AdaBoostClassifier(n_estimators=8, max_depth=3).fit(X, y)
    nodes = _nodes_from_json(clf)
    assert len(nodes) > clf.n_estimators_  # deeper trees: several split nodes per tree
    weighted = np.zeros(4)
    counts = np.zeros(4)
    for feature, gain, step in nodes:
        weighted[feature] += gain * step
        counts[feature] += 1
    np.testing.assert_array_equal(clf.feature_importances("split", normalize=False), counts)
    np.testing.assert_allclose(clf.feature_importances("weighted_gain", normalize=False), weighted, rtol=1e-12)


def test_feature_importances_attribute_is_the_normalised_weighted_gain():
    clf, _, _ = _stumps()
    np.testing.assert_array_equal(clf.feature_importances_, clf.feature_importances("weighted_gain"))
    nodes = _nodes_from_json(clf)
    weighted = np.zeros(3)
    for feature, gain, step in nodes:
        weighted[feature] += gain * step
    np.testing.assert_allclose(clf.feature_importances_, weighted / weighted.sum(), rtol=1e-12)


def test_bad_importance_type_and_similarity_models_raise():
    clf, X, y = _stumps()
    with pytest.raises(ValueError, match="importance_type must be one of"):
        clf.feature_importances("cover")
    similarity = REBELClassifier(weak_learner="similarity", n_estimators=5).fit(X[:60, :2], y[:60])
    with pytest.raises(ValueError, match="whole distance"):
        similarity.feature_importances()
    with pytest.raises(ValueError, match="importance_type"):  # the type is checked before the model
        similarity.feature_importances("total")
