"""fit_info_["stage_seconds"]: where a fit spent its wall time, measured without changing the model."""

import time

import numpy as np
import pytest

from rebelboost import AdaBoostClassifier, REBELClassifier

STAGES = ["other", "setup", "binning", "sampling", "split_values", "histograms", "quick_search", "multiclass_root",
          "selection", "leaf_values", "partition", "step", "update", "evaluation"]


def timed_fit(make, X, y, **fit_args):
    clf = make()
    start = time.perf_counter()
    clf.fit(X, y, **fit_args)
    return clf, time.perf_counter() - start


def check_stages(clf, wall, ran, idle):
    stages = clf.fit_info_["stage_seconds"]
    assert list(stages) == STAGES
    assert all(np.isfinite(v) and v >= 0.0 for v in stages.values()), stages
    assert sum(stages.values()) <= wall, (stages, wall)  # the stages partition the core's fit, inside fit()
    for name in ran:  # a stage that ran was charged some time; one that cannot run for this fit, none
        assert stages[name] > 0.0, (name, stages)
    for name in idle:
        assert stages[name] == 0.0, (name, stages)
    cpu = clf.fit_info_["stage_cpu_seconds"]
    assert list(cpu["thread"]) == list(cpu["process"]) == STAGES
    for name in STAGES:  # the training thread's CPU fits in the stage's wall time and in the process's CPU
        assert 0.0 <= cpu["thread"][name] <= stages[name] + 1e-3, (name, cpu, stages)
        assert cpu["process"][name] >= cpu["thread"][name] - 1e-3, (name, cpu)
    assert sum(cpu["thread"].values()) > 0.0


@pytest.fixture
def data(binary_data_nan):
    X, y = binary_data_nan
    return np.tile(X, (20, 1)), np.tile(y, 20)


@pytest.mark.parametrize("quick", [False, True, "auto"])
def test_tree_stages_and_an_unchanged_model(data, quick):
    X, y = data
    models = []
    for n_jobs in (1, 2):
        clf, wall = timed_fit(lambda: AdaBoostClassifier(n_estimators=12, max_depth=3, quick=quick, n_jobs=n_jobs),
                              X, y, eval_set=[(X[:500], y[:500])])
        check_stages(clf, wall, ran=["setup", "binning", "split_values", "leaf_values", "partition", "step", "update",
                                     "evaluation", "histograms" if quick is False else "quick_search"],
                     idle=["sampling", "multiclass_root", "selection"] + (["quick_search"] if quick is False else []))
        models.append(clf._model.to_bytes())
    full = AdaBoostClassifier(n_estimators=12, max_depth=3, quick=False, n_jobs=1).fit(X, y)._model.to_bytes()
    assert models[0] == models[1] == full  # whatever was measured, the model is the one of 1 thread, full scan


def test_subsampling_is_its_own_stage(data):
    X, y = data
    clf, wall = timed_fit(lambda: AdaBoostClassifier(n_estimators=5, max_depth=2, subsample=0.5, feature_fraction=0.5),
                          X, y)
    check_stages(clf, wall, ran=["sampling", "histograms"], idle=["selection", "multiclass_root"])


def test_rebel_tree_stages(data):
    X, _ = data
    y = np.arange(len(X)) % 3
    clf, wall = timed_fit(lambda: REBELClassifier(n_estimators=6, max_depth=2), X, y)
    check_stages(clf, wall, ran=["multiclass_root", "split_values", "step", "update"], idle=["selection", "sampling"])


def test_similarity_stages(binary_data):
    X, y = binary_data
    models = []
    for n_jobs in (1, 2):
        clf, wall = timed_fit(lambda: REBELClassifier(n_estimators=5, weak_learner="similarity", n_jobs=n_jobs), X, y)
        check_stages(clf, wall, ran=["binning", "split_values", "selection", "step", "update"],
                     idle=["histograms", "quick_search", "multiclass_root", "leaf_values", "partition", "sampling"])
        models.append(clf._model.to_bytes())
    assert models[0] == models[1]


def test_hybrid_stages_in_turn_and_at_once(binary_data):
    """One thread: both families' stages. Two (the tests' REBELBOOST_WORK_PER_THREAD makes every iteration worth
    it): the candidates are fitted at the same time and only the tree's stages are charged, with the wait for
    the similarity as "selection"; the model is the same."""
    X, y = binary_data
    models = []
    for n_jobs in (1, 2):
        clf, wall = timed_fit(lambda: REBELClassifier(n_estimators=5, weak_learner="hybrid", n_jobs=n_jobs), X, y)
        check_stages(clf, wall, ran=["multiclass_root", "selection", "step", "update"], idle=["sampling"])
        # The similarity's signed weights are its "split_values"; the stumps (300 rows) have none of their own.
        assert (clf.fit_info_["stage_seconds"]["split_values"] > 0.0) == (n_jobs == 1)
        models.append(clf._model.to_bytes())
    assert models[0] == models[1]


def test_warm_start_measures_the_whole_second_fit(data):
    X, y = data
    clf = AdaBoostClassifier(n_estimators=4, max_depth=2, warm_start=True).fit(X, y)
    clf.set_params(n_estimators=8)
    start = time.perf_counter()
    clf.fit(X, y)
    check_stages(clf, time.perf_counter() - start, ran=["update", "histograms"], idle=["selection"])
