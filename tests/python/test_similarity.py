"""REBEL with Localized Similarities (weak_learner="similarity"): the thesis's guarantees as properties,
the estimator API (inspection, staged output, files, pickles, errors) and agreement with its own parts."""

import json
import math
import pickle

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import rebelboost
from rebelboost import REBELClassifier


def similarity(**kw):
    return REBELClassifier(weak_learner="similarity", **kw)


def first_zero_error(clf, X, y):
    """1-based index of the first stage with zero training error (None if never)."""
    return next((t + 1 for t, p in enumerate(clf.staged_predict(X)) if np.all(p == y)), None)


@settings(max_examples=8, deadline=None)
@given(n=st.integers(4, 200), K=st.integers(2, 5), d=st.integers(1, 4), seed=st.integers(0, 2**31 - 1))
def test_random_labels_keep_the_thesis_guarantee_every_iteration(n, K, d, seed):
    """Distinct random points, random labels (thesis §5.4): every iteration multiplies the loss by at most
    1 - 2 / (K N^2), and the training error is 0 once (K / 2) L_t / L_0 < 1 / N. Together they give the bound
    T = ceil(ln(2 / KN) / ln(1 - 2 / (K N^2))); T itself (up to 10^6 learners here) is reached only for tiny
    N, so each iteration's share of it is checked instead, and the first zero-error stage where T is small."""
    rng = np.random.RandomState(seed)
    X = rng.normal(size=(n, d))
    y = rng.randint(0, K, size=n)
    y[:2] = [0, 1]  # at least two classes
    K_seen = len(np.unique(y))
    bound = math.ceil(math.log(2 / (K_seen * n)) / math.log(1 - 2 / (K_seen * n * n)))
    clf = similarity(n_estimators=min(bound, 300)).fit(X, y)
    loss = np.r_[1.0, clf.fit_info_["train_loss"]]  # L_t / L_0
    assert np.all(loss[1:] / loss[:-1] <= 1 - 2 / (K_seen * n * n))
    errors = np.array([np.mean(p != y) for p in clf.staged_predict(X)])
    assert np.all(errors[K_seen / 2 * loss[1:] < 1 / n] == 0)
    if bound <= 300:
        reached = first_zero_error(clf, X, y)
        assert reached is not None and reached <= bound


def test_xor_reaches_zero_training_error_where_trees_stall():
    X = np.array([[0.0, 0.0], [1.0, 1.0], [0.0, 1.0], [1.0, 0.0]])
    y = np.array([0, 0, 1, 1])
    assert REBELClassifier(max_depth=1).fit(X, y).fit_info_["stop_reason"] == "no_edge"
    clf = similarity(n_estimators=20).fit(X, y)
    np.testing.assert_array_equal(clf.predict(X), y)


@pytest.fixture(scope="module")
def fitted():
    rng = np.random.RandomState(3)
    X = rng.normal(size=(240, 3))
    y = np.array(["a", "b", "c"])[(X[:, 0] > 0).astype(int) + (X[:, 1] > 0.5).astype(int)]
    return similarity(n_estimators=60).fit(X, y), X, y


def test_staged_and_explain_add_up_to_the_decision_function(fitted):
    clf, X, _ = fitted
    final = None
    for final in clf.staged_decision_function(X):
        pass
    np.testing.assert_array_equal(final, clf.decision_function(X))
    parts = clf.explain(X[:7])
    scores = parts["bias"] + parts["contribution"].sum(axis=1)
    np.testing.assert_allclose(scores, clf.decision_function(X[:7]), rtol=1e-12, atol=1e-12)
    assert np.all(np.abs(parts["output"]) <= 1)
    assert parts["output"].shape == (7, clf.n_estimators_)


def test_learners_name_training_rows_and_their_points(fitted):
    clf, X, _ = fitted
    learners = clf.learners_
    T = clf.n_estimators_
    assert learners["anchor_rows"].shape == (T, 2) and learners["step"].shape == (T, 3)
    assert set(learners["kind"]) <= {"constant", "one_point", "two_point"}
    assert "two_point" in set(learners["kind"])
    used = learners["anchor_rows"] >= 0
    np.testing.assert_allclose(learners["anchors"][used], X[learners["anchor_rows"][used]], rtol=1e-12, atol=1e-12)
    one = learners["kind"] == "one_point"
    assert np.all(learners["tau"][one] > 0) and np.all(np.isnan(learners["tau"][~one]))
    assert np.all(learners["anchor_rows"][learners["kind"] == "two_point"] >= 0)
    with pytest.raises(AttributeError, match="similarity"):
        REBELClassifier(n_estimators=3).fit(X, fitted[2]).learners_
    assert not hasattr(clf, "feature_importances_")


def test_one_point_learner_is_positive_at_its_anchor_only(fitted):
    clf, X, _ = fitted
    learners = clf.learners_
    out = clf.explain(X)["output"]
    for t in np.flatnonzero(learners["kind"] == "one_point"):
        row = learners["anchor_rows"][t, 0]
        assert out[row, t] == pytest.approx(1.0)
        others = np.delete(out[:, t], row)
        assert np.all(others < 0)  # tau is below the squared distance to the nearest other point


def test_file_pickle_and_json_round_trips(fitted, tmp_path):
    clf, X, _ = fitted
    clf.save(tmp_path / "m.rbm")
    back = rebelboost.load(tmp_path / "m.rbm")
    assert back.weak_learner == "similarity"
    np.testing.assert_array_equal(back.decision_function(X), clf.decision_function(X))
    again = pickle.loads(pickle.dumps(clf))
    np.testing.assert_array_equal(again.predict(X), clf.predict(X))
    doc = json.loads(rebelboost.to_json(clf))
    assert doc["learner"] == "similarity" and len(doc["similarities"]) == clf.n_estimators_


def test_same_model_for_every_thread_count(fitted):
    _, X, y = fitted
    models = [similarity(n_estimators=15, n_jobs=j).fit(X, y)._model.to_bytes() for j in (1, 2, 3)]
    assert models[0] == models[1] == models[2]


def test_distance_cache_budget_never_changes_the_model(fitted):
    """No cache, a 3-column cache (evictions and columns that find no room, every iteration) and the
    default (every column kept), each with 1 and 2 threads: the same model bit for bit."""
    _, X, y = fitted
    three_columns = 3 * len(X) * 8 / 2**20
    models = {(mb, j): similarity(n_estimators=40, n_jobs=j, similarity_cache_mb=mb).fit(X, y)
              for mb in (0, three_columns, 1024) for j in (1, 2)}
    reference = models[0, 1]
    for clf in models.values():
        assert clf._model.to_bytes() == reference._model.to_bytes()
        np.testing.assert_array_equal(clf.decision_function(X), reference.decision_function(X))
    assert max(reference.fit_info_["candidates"]) > 3  # the small cache had to evict


@pytest.mark.parametrize("mb", [-1, -1e-9, np.nan, "big"])
def test_distance_cache_budget_is_validated(fitted, mb):
    _, X, y = fitted
    with pytest.raises((ValueError, TypeError), match="similarity_cache_mb"):
        similarity(n_estimators=2, similarity_cache_mb=mb).fit(X, y)


def test_candidate_cap_bounds_every_iteration_and_above_the_visits_changes_nothing(fitted):
    """similarity_max_candidates: no iteration visits more two-point candidates than the cap; a cap at the
    most any iteration visits gives the uncapped model (0) bit for bit; a cap that binds gives another model
    whose training loss still falls every iteration (the one-point learner is always a candidate)."""
    _, X, y = fitted
    free = similarity(n_estimators=40, similarity_max_candidates=0).fit(X, y)
    most = int(max(free.fit_info_["candidates"]))
    assert most > 4
    at_most = similarity(n_estimators=40, similarity_max_candidates=most).fit(X, y)
    assert at_most._model.to_bytes() == free._model.to_bytes()
    capped = similarity(n_estimators=40, similarity_max_candidates=4).fit(X, y)
    assert max(capped.fit_info_["candidates"]) <= 4
    assert capped._model.to_bytes() != free._model.to_bytes()
    assert np.all(np.diff(np.r_[1.0, capped.fit_info_["train_loss"]]) < 0)
    hybrid = REBELClassifier(weak_learner="hybrid", n_estimators=30, similarity_max_candidates=3).fit(X, y)
    assert max(hybrid.fit_info_["candidates"]) <= 3


@pytest.mark.parametrize("cap", [-1, 2.5, 2**31, "all"])
def test_candidate_cap_is_validated(fitted, cap):
    _, X, y = fitted
    with pytest.raises((ValueError, TypeError), match="similarity_max_candidates"):
        similarity(n_estimators=2, similarity_max_candidates=cap).fit(X, y)


def test_nan_is_a_clear_error_at_fit_and_predict(fitted):
    clf, X, y = fitted
    Xn = X.copy()
    Xn[5, 2] = np.nan
    with pytest.raises(ValueError, match=r"NaN at row 5, feature 2.*impute"):
        similarity(n_estimators=3).fit(Xn, y)
    with pytest.raises(ValueError, match=r"NaN at row 5, feature 2"):
        clf.predict(Xn)
    assert not clf.__sklearn_tags__().input_tags.allow_nan
    assert REBELClassifier().__sklearn_tags__().input_tags.allow_nan


def test_cost_matrix_and_two_classes():
    rng = np.random.RandomState(0)
    X = rng.normal(size=(150, 2))
    y = (X[:, 0] + X[:, 1] ** 2 > 0.5).astype(int)
    clf = similarity(n_estimators=40, cost_matrix=[[0, 1], [5, 0]]).fit(X, y)
    assert np.all(np.diff(clf.fit_info_["train_loss"]) < 0)
    assert clf.decision_function(X).shape == (150,)
    uniform = similarity(n_estimators=40).fit(X, y)
    # Missing class 1 costs 5 times more: fewer of its rows are predicted as class 0.
    assert np.sum((clf.predict(X) == 0) & (y == 1)) <= np.sum((uniform.predict(X) == 0) & (y == 1))


def test_cost_matrix_with_three_classes():
    rng = np.random.RandomState(1)
    y = np.repeat([0, 1, 2], 80)
    X = rng.normal(size=(240, 3)) + np.eye(3)[y] * 1.2  # overlapping classes: errors remain after 40 learners
    costs = [[0, 1, 1], [1, 0, 1], [8, 8, 0]]  # missing class 2 costs 8 times more
    clf = similarity(n_estimators=40, cost_matrix=costs).fit(X, y)
    uniform = similarity(n_estimators=40).fit(X, y)
    assert np.all(np.diff(clf.fit_info_["train_loss"]) < 0)
    missed = lambda model: np.sum((model.predict(X) != 2) & (y == 2))
    assert missed(clf) < missed(uniform)
    risk = lambda model: np.mean(np.asarray(costs)[y, model.predict(X)])
    assert risk(clf) <= risk(uniform)


def test_model_file_whose_metadata_disagrees_with_its_learners_is_rejected(fitted, tmp_path):
    clf, _, _ = fitted
    clf.save(tmp_path / "s.rbm")
    model = rebelboost._core.Model.load(str(tmp_path / "s.rbm"))
    meta = json.loads(model.metadata)
    meta["params"]["weak_learner"] = "tree"
    model.metadata = json.dumps(meta).encode()
    model.save(str(tmp_path / "bad.rbm"))
    with pytest.raises(rebelboost.ModelFileError, match="weak_learner"):
        rebelboost.load(tmp_path / "bad.rbm")


def test_warm_start_equals_training_at_once_and_truncate_keeps_the_prefix(fitted):
    _, X, y = fitted
    once = similarity(n_estimators=30).fit(X, y)
    grown = similarity(n_estimators=12).fit(X, y)
    grown.set_params(n_estimators=30, warm_start=True).fit(X, y)
    assert grown._model.to_bytes() == once._model.to_bytes()
    assert grown.fit_info_["n_replayed"] == 12
    np.testing.assert_array_equal(once.predict(X, n_iter=12), similarity(n_estimators=12).fit(X, y).predict(X))
    short = pickle.loads(pickle.dumps(once)).truncate(12)
    assert short.n_estimators_ == 12
    assert short.learners_["anchor_rows"].max() < X.shape[0]
    np.testing.assert_array_equal(short.decision_function(X), once.decision_function(X, n_iter=12))


def test_eval_set_and_early_stopping(fitted):
    clf, X, y = fitted
    watched = similarity(n_estimators=60).fit(X[:160], y[:160], eval_set=[(X[160:], y[160:])])
    loss = watched.evals_result_["valid_0"]["log_loss"]  # scoring="auto": similarities watch the log loss
    assert len(loss) == 60 and np.all(np.isfinite(loss))
    stopped = similarity(n_estimators=300, early_stopping=True, n_iter_no_change=5).fit(X, y)
    assert stopped.best_iteration_ is not None and stopped.n_estimators_ == stopped.best_iteration_
    Xn = X[160:].copy()
    Xn[3, 1] = np.nan
    with pytest.raises(ValueError, match="eval set 0 contains NaN at row 3, feature 1"):
        similarity(n_estimators=5).fit(X[:160], y[:160], eval_set=[(Xn, y[160:])])


def test_global_scaling_keeps_relative_feature_scales(fitted):
    _, X, y = fitted
    Xs = X * np.array([1.0, 1000.0, 0.001])  # features in different units
    per_feature = similarity(n_estimators=10, similarity_scaling="feature").fit(Xs, y)
    common = similarity(n_estimators=10, similarity_scaling="global").fit(Xs, y)
    np.testing.assert_allclose(per_feature._model.similarities()["feature_scale"], Xs.std(axis=0), rtol=1e-12)
    scale = common._model.similarities()["feature_scale"]
    np.testing.assert_allclose(scale, np.sqrt(np.mean(Xs.std(axis=0) ** 2)), rtol=1e-12)
    # Per-feature scaling makes the model blind to units; a common scale does not.
    np.testing.assert_array_equal(per_feature.predict(Xs),
                                  similarity(n_estimators=10, similarity_scaling="feature").fit(X, y).predict(X))
    used = common.learners_["anchor_rows"] >= 0
    np.testing.assert_allclose(common.learners_["anchors"][used], Xs[common.learners_["anchor_rows"][used]], rtol=1e-9)


def test_predict_paths_agree(fitted):
    """Batch, one row at a time, n_iter and exact early exit agree."""
    clf, X, _ = fitted
    full = clf.predict(X)
    labels, used = clf.predict(X, early_exit=True, return_n_learners=True)
    np.testing.assert_array_equal(labels, full)
    assert np.all(used <= clf.n_estimators_)
    for i in range(0, len(X), 37):  # one row at a time stops where the batch does
        one, n_one = clf.predict(X[i:i + 1], early_exit=True, return_n_learners=True)
        assert one[0] == full[i] and n_one[0] == used[i]
    rows = np.array([clf.decision_function(X[i:i + 1])[0] for i in range(0, len(X), 37)])
    np.testing.assert_array_equal(rows, clf.decision_function(X)[::37])
    np.testing.assert_array_equal(clf.predict(X, n_iter=7), np.asarray(list(clf.staged_predict(X))[6]))
