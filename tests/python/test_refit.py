"""REBELClassifier(refit=...): after early stopping on its own carve, the fit trains again on every row.

Checked: the kept model is, bit for bit, the fit of ceil(T / (1 - validation_fraction)) learners on every row
with the carve's resolved depth and scaling (T its best stage); "auto" (hybrids, and similarities whose carve
holds SIMILARITY_ERROR_ROWS rows); the cases that never
refit (eval_set, no early stopping, warm start); the cap; and an interrupted refit keeps the carve's model.
"""
import math

import numpy as np
import pytest
from sklearn.datasets import make_classification

import rebelboost
import rebelboost._base
from rebelboost import REBELClassifier

FAST = {"n_estimators": 300, "early_stopping": True, "n_iter_no_change": 25, "random_state": 3, "n_jobs": 1}


def data(n, seed=0):
    X, y = make_classification(n_samples=n, n_features=6, n_informative=4, n_classes=3, random_state=seed)
    return X, y


@pytest.mark.parametrize("learner, rows, expected", [("hybrid", 300, True), ("similarity", 300, False),
                                                     ("similarity", 800, True), ("tree", 800, False)])
def test_auto_refits_hybrids_and_similarities_with_large_carves(learner, rows, expected):
    X, y = data(rows)  # a quarter: 75 or 200 rows for similarities, whose threshold is SIMILARITY_ERROR_ROWS (200)
    clf = REBELClassifier(weak_learner=learner, **FAST).fit(X, y)
    if learner == "similarity":
        assert clf._validation_rows == rows // 4
        assert list(clf.evals_result_["validation"]) == ["error" if expected else "log_loss"]
    assert (clf.fit_info_["refit"] is not None) == expected
    if not expected:
        assert clf.n_estimators_ == clf.best_iteration_


@pytest.mark.parametrize("learner", ["hybrid", "similarity"])
def test_refit_is_the_fit_on_every_row_at_the_scaled_stage(learner):
    X, y = data(600)  # 360 (hybrid) or 450 rows after the carve, 600 in all: HYBRID_DEEP_ROWS (512) lies between
    clf = REBELClassifier(weak_learner=learner, refit=True, **FAST).fit(X, y)
    assert learner != "hybrid" or clf.hybrid_depth_ == 1  # the carve's depth, which picked T, is refitted
    refit = clf.fit_info_["refit"]
    T = clf.best_iteration_
    assert refit is not None and refit["kept"] and T is not None
    n = math.ceil(T / (1 - clf._stopping()["validation_fraction"]))
    assert refit["n_estimators"] == n == clf.n_estimators_ == refit["n_iterations"]
    assert len(clf.evals_result_["validation"]["log_loss" if learner == "similarity" else "error"]) >= T
    fixed = {"similarity_scaling": clf.similarity_scaling_}
    if learner == "hybrid":
        fixed["max_depth"] = clf.hybrid_depth_
    params = {**FAST, "n_estimators": n, "early_stopping": False}
    direct = REBELClassifier(weak_learner=learner, **params, **fixed).fit(X, y)
    assert direct.fit_info_["refit"] is None
    assert clf._model.to_bytes() == direct._model.to_bytes()
    np.testing.assert_array_equal(refit["learner"], direct.fit_info_["learner"])


def test_trees_refit_only_when_asked():
    X, y = data(300)
    auto = REBELClassifier(**FAST).fit(X, y)
    assert auto.fit_info_["refit"] is None and auto.n_estimators_ == auto.best_iteration_
    asked = REBELClassifier(refit=True, **FAST).fit(X, y)
    assert asked.fit_info_["refit"]["n_estimators"] == asked.n_estimators_ == math.ceil(asked.best_iteration_ / 0.9)


@pytest.mark.parametrize("case", ["refit False", "eval_set", "no early stopping", "warm start"])
def test_no_refit(case):
    X, y = data(300)
    params = {**FAST, "weak_learner": "hybrid"}
    if case == "refit False":
        clf = REBELClassifier(refit=False, **params).fit(X, y)
    elif case == "eval_set":
        clf = REBELClassifier(refit=True, **params).fit(X[:200], y[:200], eval_set=[(X[200:], y[200:])])
    elif case == "no early stopping":
        clf = REBELClassifier(refit=True, **{**params, "early_stopping": False, "n_estimators": 30}).fit(X, y)
    else:
        clf = REBELClassifier(**{**params, "early_stopping": False, "n_estimators": 20}).fit(X, y)
        clf.set_params(warm_start=True, n_estimators=40, early_stopping=True, refit=True)
        clf.fit(X, y, eval_set=[(X[:50], y[:50])])
    assert clf.fit_info_["refit"] is None


def test_the_refit_is_capped_by_n_estimators():
    X, y = data(300)
    clf = REBELClassifier(weak_learner="hybrid", refit=True,
                          **{**FAST, "n_estimators": 12, "n_iter_no_change": 100}).fit(X, y)
    assert clf.fit_info_["stop_reason"] == "n_estimators"
    assert clf.fit_info_["refit"]["n_estimators"] == clf.n_estimators_ == min(12, math.ceil(clf.best_iteration_ / 0.9))


def test_an_interrupted_refit_keeps_the_carve_model(monkeypatch):
    X, y = data(300)
    train = rebelboost._base._core.train
    calls = []

    def interrupted_second_call(*args, **kwargs):
        out = train(*args, **kwargs)
        calls.append(kwargs["n_estimators"])
        if len(calls) == 2:  # the refit: the core reports Ctrl-C as its error, with the trees finished
            return (out[0], out[1][:3], "interrupted", "", KeyboardInterrupt(), out[5])
        return out

    monkeypatch.setattr(rebelboost._base._core, "train", interrupted_second_call)
    clf = REBELClassifier(weak_learner="hybrid", **FAST)
    with pytest.raises(KeyboardInterrupt):
        clf.fit(X, y)
    assert len(calls) == 2
    assert clf.fit_info_["refit"]["stop_reason"] == "interrupted" and not clf.fit_info_["refit"]["kept"]
    assert clf.n_estimators_ == clf.best_iteration_  # the carve's model, whole
    assert clf.predict(X).shape == (300,)


def test_the_parameter_survives_the_model_file(tmp_path):
    X, y = data(300)
    clf = REBELClassifier(weak_learner="hybrid", refit=False, **FAST).fit(X, y)
    path = tmp_path / "m.rbm"
    clf.save(path)
    loaded = rebelboost.load(path)
    assert loaded.refit is False
    np.testing.assert_array_equal(loaded.predict(X), clf.predict(X))


def test_verbose_names_the_refit(caplog):
    X, y = data(300)
    with caplog.at_level("INFO", logger="rebelboost"):
        clf = REBELClassifier(weak_learner="hybrid", verbose=2, **FAST).fit(X, y)
    lines = [r.getMessage() for r in caplog.records]
    n = clf.fit_info_["refit"]["n_estimators"]
    assert any(line.startswith("[REBELClassifier] stopped (callback)") for line in lines)
    assert f"[REBELClassifier refit] stopped (n_estimators) with {n} trees" in lines
    assert sum(line.startswith("[REBELClassifier refit] iteration ") for line in lines) == 1 + n // 10


def test_the_command_line_takes_it(tmp_path):
    from rebelboost.cli import main

    X, y = data(300)
    path = tmp_path / "d.csv"
    np.savetxt(path, np.column_stack([X, y]), delimiter=",", header=",".join([f"x{i}" for i in range(6)] + ["y"]),
               comments="")
    kept = {}
    for refit in ("true", "false"):
        model = tmp_path / f"{refit}.rbm"
        assert main(["train", str(path), "--target", "y", "--model", str(model), "--weak-learner", "hybrid",
                     "--refit", refit, "--random-state", "3"]) == 0
        clf = rebelboost.load(model)
        kept[refit] = (clf.refit, clf.n_estimators_)
    assert kept["true"][0] is True and kept["false"][0] is False
    assert kept["true"][1] > kept["false"][1]  # ceil(T / 0.6) against T


def test_weights_reach_the_refit():
    X, y = data(400)
    w = np.random.RandomState(0).uniform(0.2, 3.0, size=len(y))
    params = {**FAST, "weak_learner": "hybrid", "class_weight": "balanced"}
    clf = REBELClassifier(**params).fit(X, y, sample_weight=w)
    n = clf.fit_info_["refit"]["n_estimators"]
    direct = REBELClassifier(**{**params, "n_estimators": n, "early_stopping": False, "max_depth": clf.hybrid_depth_,
                                "similarity_scaling": clf.similarity_scaling_}).fit(X, y, sample_weight=w)
    assert clf._model.to_bytes() == direct._model.to_bytes()
    unweighted = REBELClassifier(**{**params, "n_estimators": n, "early_stopping": False, "class_weight": None,
                                    "max_depth": clf.hybrid_depth_,
                                    "similarity_scaling": clf.similarity_scaling_}).fit(X, y)
    assert clf._model.to_bytes() != unweighted._model.to_bytes()


@pytest.mark.parametrize("bad", ["x", 1, None, 0.5])
def test_a_bad_refit_is_a_clear_error(bad):
    from sklearn.utils._param_validation import InvalidParameterError

    X, y = data(60)
    with pytest.raises(InvalidParameterError, match="'refit' parameter"):
        REBELClassifier(refit=bad, weak_learner="hybrid").fit(X, y)
