"""QuickBoost: quick=True, "auto" and False train the same model bit for bit, on adversarial data too."""

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from rebelboost import AdaBoostClassifier, REBELClassifier, VEBBoostClassifier


def adversarial(seed, n, d, kind):
    rng = np.random.RandomState(seed)
    X = rng.normal(size=(n, d))
    if kind == "ties":
        X = X.round(0)  # few distinct values, many equal losses
    elif kind == "duplicates":
        X[:, 1::2] = X[:, ::2][:, : X[:, 1::2].shape[1]]  # duplicate features: exact ties between features
    elif kind == "constant":
        X[:, ::3] = 1.0
    X[rng.rand(n, d) < 0.1] = np.nan
    y = (np.nan_to_num(X[:, 0]) + 0.5 * rng.normal(size=n) > 0).astype(int)
    return X, y


ESTIMATORS = {
    "adaboost": lambda **kw: AdaBoostClassifier(**kw),
    "veb": lambda **kw: VEBBoostClassifier(**kw),
    "rebel": lambda **kw: REBELClassifier(**kw),
}


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.integers(0, 10_000),
    kind=st.sampled_from(["plain", "ties", "duplicates", "constant"]),
    loss=st.sampled_from(sorted(ESTIMATORS)),
    depth=st.integers(1, 4),
    threads=st.sampled_from([1, 2]),
    weights=st.sampled_from(["none", "skewed"]),
)
def test_quick_modes_give_the_same_model(seed, kind, loss, depth, threads, weights):
    X, y = adversarial(seed, 300, 7, kind)
    if loss == "rebel":
        y = y + (np.nan_to_num(X[:, 2]) > 0.5)  # 3 classes
    sw = None
    if weights == "skewed":
        sw = np.random.RandomState(seed).pareto(1.0, size=len(y)) + 1e-3  # heavy weight skew
    models = []
    for quick in (False, True, "auto"):
        clf = ESTIMATORS[loss](n_estimators=12, max_depth=depth, n_jobs=threads, quick=quick)
        models.append(clf.fit(X, y, sample_weight=sw))
    assert models[0]._model.to_bytes() == models[1]._model.to_bytes() == models[2]._model.to_bytes()
    full, quick = models[0].fit_info_, models[1].fit_info_
    if loss == "rebel":  # a root where pruning does not bite is finished by a full scan of the survivors
        assert np.all(quick["bin_accumulations"] <= 2 * full["bin_accumulations"])
    else:
        assert np.all(quick["bin_accumulations"] <= full["bin_accumulations"])
    assert np.all(quick["full_nodes"][quick["quick_nodes"] > 0] >= 0)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.integers(0, 10_000),
    kind=st.sampled_from(["plain", "ties", "duplicates", "constant"]),
    loss=st.sampled_from(["adaboost", "veb"]),
    criterion=st.sampled_from(["gini", "entropy"]),
    depth=st.integers(1, 6),
    threads=st.sampled_from([1, 2]),
    weights=st.sampled_from(["none", "skewed"]),
)
def test_quick_modes_give_the_same_model_with_impurity_criteria(seed, kind, loss, criterion, depth, threads, weights):
    X, y = adversarial(seed, 400, 7, kind)
    sw = None
    if weights == "skewed":
        sw = np.random.RandomState(seed).pareto(1.0, size=len(y)) + 1e-3
    models = []
    for quick in (False, True, "auto"):
        clf = ESTIMATORS[loss](n_estimators=15, max_depth=depth, n_jobs=threads, quick=quick, criterion=criterion)
        models.append(clf.fit(X, y, sample_weight=sw))
    assert models[0]._model.to_bytes() == models[1]._model.to_bytes() == models[2]._model.to_bytes()
    full, quick = models[0].fit_info_, models[1].fit_info_
    assert np.all(quick["bin_accumulations"] <= full["bin_accumulations"])
    assert np.all(quick["quick_nodes"] > 0)  # quick=True searched with the pruned pass


@pytest.mark.parametrize("criterion", ["gini", "entropy"])
def test_impurity_pruning_saves_work_on_an_easy_task(criterion):
    rng = np.random.RandomState(1)
    X = rng.normal(size=(3000, 40))
    y = (X[:, 0] + 0.1 * rng.normal(size=3000) > 0).astype(int)
    full = AdaBoostClassifier(n_estimators=40, max_depth=1, quick=False, criterion=criterion).fit(X, y)
    quick = AdaBoostClassifier(n_estimators=40, max_depth=1, quick=True, criterion=criterion).fit(X, y)
    assert full._model.to_bytes() == quick._model.to_bytes()
    late = slice(20, None)
    # The impurities' bounds bite later than the weighted error's (their gains are a smaller share of the
    # node's error), so fewer adds are saved than with criterion="loss"; most features are still pruned.
    assert quick.fit_info_["bin_accumulations"][late].sum() < full.fit_info_["bin_accumulations"][late].sum()
    assert quick.fit_info_["features_pruned"][late].mean() > 10


def test_pruning_saves_work_when_weight_concentrates():
    rng = np.random.RandomState(0)
    X = rng.normal(size=(3000, 60))
    y = (X[:, 0] + 0.1 * rng.normal(size=3000) > 0).astype(int)  # easy: weight collapses on few samples
    full = AdaBoostClassifier(n_estimators=60, quick=False).fit(X, y)
    quick = AdaBoostClassifier(n_estimators=60, quick=True).fit(X, y)
    assert full._model.to_bytes() == quick._model.to_bytes()
    late = slice(30, None)
    assert quick.fit_info_["bin_accumulations"][late].sum() * 1.5 < full.fit_info_["bin_accumulations"][late].sum()
    assert quick.fit_info_["features_pruned"][late].min() > 0
    assert 0 < quick.fit_info_["mass90_fraction"][-1] < quick.fit_info_["mass90_fraction"][0] <= 1


def test_bad_quick_value():
    X, y = adversarial(0, 50, 3, "plain")
    with pytest.raises(ValueError, match="The 'quick' parameter of AdaBoostClassifier must be an instance of 'bool'"):
        AdaBoostClassifier(quick="sometimes").fit(X, y)


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.integers(0, 10_000),
    loss=st.sampled_from(sorted(ESTIMATORS)),
    heuristic=st.sampled_from([{"weight_trim": 0.9}, {"subsample": 0.5}, {"feature_fraction": 0.4},
                               {"weight_trim": 0.95, "subsample": 0.7, "feature_fraction": 0.6}]),
    depth=st.integers(1, 3),
    threads=st.sampled_from([1, 2]),
)
def test_heuristics_compose_with_every_quick_mode(seed, loss, heuristic, depth, threads):
    X, y = adversarial(seed, 250, 6, "plain")
    if loss == "rebel":
        y = y + (np.nan_to_num(X[:, 2]) > 0.5)
    models = [
        ESTIMATORS[loss](n_estimators=10, max_depth=depth, n_jobs=threads, quick=q, random_state=3, **heuristic).fit(X, y)
        for q in (False, True, "auto")
    ]
    assert models[0]._model.to_bytes() == models[1]._model.to_bytes() == models[2]._model.to_bytes()
    # the training loss still falls every iteration: the step uses every sample
    loss_curve = models[0].fit_info_["train_loss"]
    assert np.all(np.diff(loss_curve) <= 1e-12 * loss_curve[:-1])


def test_heuristics_change_the_model_and_follow_the_seed():
    X, y = adversarial(1, 400, 8, "plain")
    base = AdaBoostClassifier(n_estimators=15, max_depth=2).fit(X, y)._model.to_bytes()
    for kw in ({"weight_trim": 0.8}, {"subsample": 0.5}, {"feature_fraction": 0.3}):
        a = AdaBoostClassifier(n_estimators=15, max_depth=2, random_state=1, **kw).fit(X, y)._model.to_bytes()
        b = AdaBoostClassifier(n_estimators=15, max_depth=2, random_state=1, **kw).fit(X, y)._model.to_bytes()
        assert a == b and a != base
    c = AdaBoostClassifier(n_estimators=15, max_depth=2, random_state=2, subsample=0.5).fit(X, y)._model.to_bytes()
    d = AdaBoostClassifier(n_estimators=15, max_depth=2, random_state=1, subsample=0.5).fit(X, y)._model.to_bytes()
    assert c != d
    lazy = AdaBoostClassifier(n_estimators=15, feature_fraction=0.25, quick=False).fit(X, y)
    assert lazy.fit_info_["bin_accumulations"][0] == 400 * 2  # 2 of 8 features searched


@pytest.mark.parametrize("name", ["weight_trim", "subsample", "feature_fraction"])
@pytest.mark.parametrize("value", [0.0, 1.5, -0.2, "x"])
def test_bad_heuristic_values(name, value):
    X, y = adversarial(0, 50, 3, "plain")
    with pytest.raises(ValueError, match=rf"The .{name}. parameter of AdaBoostClassifier must be a float in the range \(0.0, 1.0\]"):
        AdaBoostClassifier(**{name: value}).fit(X, y)


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
# A layer-1 split that leaves one row on a side: the full scan summed that leaf twice (its histogram, then
# its rows); only the step, taken from the leaves' sums, showed it.
@example(seed=0, kind="ties", loss="adaboost", depth=3, threads=1)
@given(
    seed=st.integers(0, 10_000),
    kind=st.sampled_from(["plain", "ties", "duplicates", "constant"]),
    loss=st.sampled_from(sorted(ESTIMATORS)),
    depth=st.integers(1, 3),
    threads=st.sampled_from([1, 2]),
)
def test_cached_heavy_rows_give_the_same_model(seed, kind, loss, depth, threads):
    # Long enough for the weight to concentrate, so the pruned pass reads its first subset from the cached
    # heavy rows (rebuilt now and then, reused in between), in the root and in deeper nodes.
    X, y = adversarial(seed, 1500, 12, kind)
    y = (np.nan_to_num(X[:, 0]) + 0.1 * np.random.RandomState(seed).normal(size=len(y)) > 0).astype(int)
    if loss == "rebel":
        y = y + (np.nan_to_num(X[:, 2]) > 1.0)  # 3 classes
    models = [ESTIMATORS[loss](n_estimators=120, max_depth=depth, n_jobs=threads, quick=q).fit(X, y)
              for q in (False, True, "auto")]
    assert models[0]._model.to_bytes() == models[1]._model.to_bytes() == models[2]._model.to_bytes()
    rebuilds = models[1].fit_info_["heavy_rebuilds"]
    # The cache is built only when 95 % of the mass sits in at most a quarter of the rows: clearly so once 90 %
    # sits in a tenth (at 0.2, e.g. hypothesis's seed=231 REBEL depth 2, it may never be).
    if models[1].n_estimators_ >= 60 and models[1].fit_info_["mass90_fraction"][-1] < 0.1:
        assert 0 < rebuilds.sum() < models[1].n_estimators_ * depth  # built, and reused between rebuilds


@pytest.mark.parametrize("loss", sorted(ESTIMATORS))
def test_auto_switches_to_pruning_and_keeps_the_model(loss):
    # Large enough (20 000 x 60) for auto to consider pruning, easy enough for the weight to concentrate:
    # auto takes the pruned pass on some nodes and the full scan on others, and the model is the same.
    rng = np.random.RandomState(7)
    X = rng.normal(size=(20000, 60))
    X[rng.rand(*X.shape) < 0.05] = np.nan
    y = (np.nan_to_num(X[:, 0]) + 0.05 * rng.normal(size=len(X)) > 0).astype(int)
    if loss == "rebel":
        y = y + (np.nan_to_num(X[:, 1]) > 1.2)
    models = {q: ESTIMATORS[loss](n_estimators=80, max_depth=2, quick=q, n_jobs=2).fit(X, y) for q in (False, True, "auto")}
    assert models[False]._model.to_bytes() == models[True]._model.to_bytes() == models["auto"]._model.to_bytes()
    info = models["auto"].fit_info_
    assert info["quick_nodes"].sum() > 0 and info["full_nodes"].sum() > 0
