"""weak_learner="hybrid": each iteration keeps the better of a tree and a similarity (docs/guide/similarity.md).

Properties checked against independent computations: the scores are the bias plus every learner's own output
times its step (trees walked here from their nodes, similarities computed here from their anchors), the
kept learner is the one whose step lowers the training loss more, and the model survives every round trip.
"""
import json
import pickle

import numpy as np
import pytest

import rebelboost
from rebelboost import REBELClassifier


def hybrid(**kw):
    return REBELClassifier(weak_learner="hybrid", max_depth=1, n_jobs=1, **kw)


@pytest.fixture(scope="module")
def fitted():
    rng = np.random.RandomState(5)
    X = rng.normal(size=(240, 3))
    ring = (X[:, 0] ** 2 + X[:, 1] ** 2 < 1.0).astype(int)  # similarities' shape
    y = np.array(["a", "b", "c"])[ring + (X[:, 2] > 0.3).astype(int)]  # plus a threshold: trees' shape
    return hybrid(n_estimators=120).fit(X, y), X, y


def tree_output(tree, x):
    i = 0
    while tree["feature"][i] >= 0:
        v = x[tree["feature"][i]]
        left = tree["nan_left"][i] if np.isnan(v) else v <= tree["threshold"][i]
        i = tree["left"][i] if left else tree["right"][i]
    return tree["value"][i]


def similarity_output(s, t, x):
    z = (x - s["feature_mean"]) / s["feature_scale"]
    kind, (i, j) = s["kind"][t], s["anchor"][t]
    if kind == 0:
        return 1.0
    di = np.sum((z - s["anchors"][i]) ** 2)
    if kind == 1:
        return (s["tau"][t] - di) / (s["tau"][t] + di)
    d, m = (s["anchors"][i] - s["anchors"][j]) / 2, (s["anchors"][i] + s["anchors"][j]) / 2
    q = d @ d
    c = 16 / (3 * (4 / 3) ** 0.25)
    return c * q * (d @ (z - m)) / (4 * q ** 2 + np.sum((z - m) ** 2) ** 2)


def test_both_kinds_are_kept_and_fit_info_says_which(fitted):
    clf, _, _ = fitted
    kinds = clf._model.learner_kinds()
    assert clf._model.learner == "hybrid"
    assert set(kinds.tolist()) == {0, 1}
    np.testing.assert_array_equal(clf.fit_info_["learner"], kinds)
    assert clf._model.n_trees == np.sum(kinds == 0)


def test_scores_are_the_learners_in_order(fitted):
    clf, X, _ = fitted
    model, kinds, steps = clf._model, clf._model.learner_kinds(), clf._model.steps()
    trees, s = model.trees(), model.similarities()
    index = np.zeros_like(kinds, dtype=np.int64)
    for kind in (0, 1):
        index[kinds == kind] = np.arange(np.sum(kinds == kind))
    expected = np.tile(model.bias, (len(X), 1))
    for r, x in enumerate(X):
        for t, kind in enumerate(kinds):
            f = tree_output(trees[index[t]], x) if kind == 0 else similarity_output(s, index[t], x)
            expected[r] += f * steps[t]
    np.testing.assert_allclose(model.decision_function(X), expected, rtol=1e-10, atol=1e-10)


def test_each_kept_learner_lowers_the_training_loss_at_least_as_much_as_either_family_alone(fitted):
    """The first iteration of the hybrid equals the first of the family that won it."""
    clf, X, y = fitted
    first = clf.fit_info_["train_loss"][0]
    tree = REBELClassifier(weak_learner="tree", max_depth=1, n_estimators=1).fit(X, y).fit_info_["train_loss"][0]
    sim = REBELClassifier(weak_learner="similarity", n_estimators=1).fit(X, y).fit_info_["train_loss"][0]
    assert first == pytest.approx(min(tree, sim), rel=1e-12)
    assert np.all(np.diff(clf.fit_info_["train_loss"]) <= 1e-12)


def test_predict_paths_agree(fitted):
    clf, X, _ = fitted
    full = clf.predict(X)
    labels, used = clf.predict(X, early_exit=True, return_n_learners=True)
    np.testing.assert_array_equal(labels, full)
    assert np.all(used <= clf.n_estimators_)
    rows = np.array([clf.decision_function(X[i:i + 1])[0] for i in range(0, len(X), 37)])
    np.testing.assert_array_equal(rows, clf.decision_function(X)[::37])
    np.testing.assert_array_equal(clf.predict(X, n_iter=7), np.asarray(list(clf.staged_predict(X))[6]))
    explained = clf.explain(X[:5])
    np.testing.assert_allclose(explained["bias"] + explained["contribution"].sum(axis=1),
                               clf._model.decision_function(X[:5]), rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(explained["kind"], clf._model.learner_kinds())
    with pytest.raises(ValueError, match="tree models"):
        clf.decision_function(X, pred_contrib=True)


def test_cascade_calibrates_and_keeps_labels_within_its_target(fitted):
    clf, X, y = fitted
    c = pickle.loads(pickle.dumps(clf))
    c.calibrate_cascade(X, y, max_disagreement=0.05, every=4)
    assert np.mean(c.predict(X, cascade=True) != clf.predict(X)) <= 0.2


def test_file_pickle_and_json_round_trips(fitted, tmp_path):
    clf, X, _ = fitted
    path = tmp_path / "hybrid.rbm"
    clf.save(path)
    loaded = rebelboost.load(path)
    assert loaded.weak_learner == "hybrid"
    np.testing.assert_array_equal(loaded.decision_function(X), clf.decision_function(X))
    np.testing.assert_array_equal(pickle.loads(pickle.dumps(clf)).predict(X), clf.predict(X))
    doc = json.loads(rebelboost.to_json(clf))
    assert doc["learner"] == "hybrid" and doc["learner_kinds"] == clf._model.learner_kinds().tolist()
    assert len(doc["trees"]) + len(doc["similarities"]) == clf.n_estimators_


def test_same_model_for_every_thread_count_and_warm_start(fitted):
    _, X, y = fitted
    once = hybrid(n_estimators=120).fit(X, y)
    assert hybrid(n_estimators=120).set_params(n_jobs=2).fit(X, y)._model.to_bytes() == once._model.to_bytes()
    grown = hybrid(n_estimators=50).fit(X, y)
    grown.set_params(n_estimators=120, warm_start=True).fit(X, y)
    assert grown._model.to_bytes() == once._model.to_bytes()
    assert grown.fit_info_["n_replayed"] == 50
    np.testing.assert_array_equal(grown.fit_info_["learner"], once.fit_info_["learner"])


def test_missing_values_are_a_clear_error(fitted):
    _, X, y = fitted
    Xn = X.copy()
    Xn[4, 2] = np.nan
    with pytest.raises(ValueError, match="NaN at row 4, feature 2"):
        hybrid(n_estimators=3).fit(Xn, y)


# tree_penalty (docs/guide/similarity.md "Hybrid"): the tree is kept when its cut in the training loss is at
# least (1 + tree_penalty) times the similarity's.

def test_a_growing_tree_penalty_hands_the_first_iteration_to_the_similarity_once(fitted):
    # The rule tree <= similarity - penalty (L - similarity) with L > similarity: once the similarity wins an
    # iteration's ranking, every larger penalty keeps it.
    _, X, y = fitted
    penalties = [0.0, 0.05, 0.2, 0.5, 1.0, 2.0, 5.0, 100.0]
    for Xs, first in ((X, 0), (X[:, :2], 1)):  # at penalty 0 the first learner is a tree, then a similarity
        kinds = [hybrid(n_estimators=1, tree_penalty=p).fit(Xs, y).fit_info_["learner"][0] for p in penalties]
        assert kinds[0] == first and kinds[-1] == 1
        assert np.all(np.diff(kinds) >= 0), kinds


def test_tree_penalty_zero_is_the_default_model(fitted):
    _, X, y = fitted
    base = hybrid(n_estimators=60).fit(X, y)
    assert hybrid(n_estimators=60, tree_penalty=0.0).fit(X, y)._model.to_bytes() == base._model.to_bytes()
    penalised = hybrid(n_estimators=60, tree_penalty=3.0).fit(X, y)
    assert np.mean(penalised.fit_info_["learner"]) > np.mean(base.fit_info_["learner"])


def test_a_huge_tree_penalty_gives_the_similarity_model(fitted):
    _, X, y = fitted
    clf = hybrid(n_estimators=80, tree_penalty=1e300).fit(X, y)
    sim = REBELClassifier(weak_learner="similarity", n_estimators=80, n_jobs=1).fit(X, y)
    assert not np.any(clf.fit_info_["learner"] == 0)
    for key, value in sim._model.similarities().items():
        np.testing.assert_array_equal(clf._model.similarities()[key], value, err_msg=key)
    np.testing.assert_array_equal(clf._model.steps(), sim._model.steps())
    np.testing.assert_array_equal(clf.decision_function(X), sim.decision_function(X))


def test_a_penalised_hybrid_is_the_same_for_every_thread_count_and_warm_start(fitted):
    _, X, y = fitted
    once = hybrid(n_estimators=90, tree_penalty=0.7).fit(X, y)
    assert 0 < np.mean(once.fit_info_["learner"]) < 1
    twice = hybrid(n_estimators=90, tree_penalty=0.7).set_params(n_jobs=2).fit(X, y)
    assert twice._model.to_bytes() == once._model.to_bytes()
    grown = hybrid(n_estimators=40, tree_penalty=0.7).fit(X, y)
    grown.set_params(n_estimators=90, warm_start=True).fit(X, y)
    assert grown._model.to_bytes() == once._model.to_bytes()


@pytest.mark.parametrize("value", [-1e-9, float("inf"), float("nan"), "1"])
def test_tree_penalty_out_of_bounds_is_refused(fitted, value):
    _, X, y = fitted
    with pytest.raises(ValueError, match="tree_penalty"):
        hybrid(n_estimators=2, tree_penalty=value).fit(X, y)


@pytest.mark.parametrize("learner", ["tree", "similarity"])
def test_tree_penalty_needs_a_hybrid(fitted, learner):
    _, X, y = fitted
    with pytest.raises(ValueError, match="tree_penalty ranks the candidates of hybrids"):
        REBELClassifier(weak_learner=learner, tree_penalty=0.5, n_estimators=2).fit(X, y)
