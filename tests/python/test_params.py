"""The estimators, the command line and the core agree on every training parameter's default and bound
(one table: rebelboost._params; docs/design/parameters.md). Changing one side alone fails here."""

from __future__ import annotations

import inspect
import json
import math

import numpy as np
import pytest
from sklearn.datasets import make_classification
from sklearn.utils._param_validation import Interval, StrOptions

import rebelboost
from rebelboost import _core
from rebelboost._params import (CORE_BOUNDS, CORE_DEFAULTS, ESTIMATORS, HYBRID_DEEP_ROWS, HYBRID_MAX_DEPTH,
                                HYBRID_PATIENCE, HYBRID_SCORING, HYBRID_VALIDATION_FRACTION, PARAMS,
                                SIMILARITY_ERROR_ROWS, SIMILARITY_MAX_ESTIMATORS, SIMILARITY_PATIENCE,
                                SIMILARITY_SCORING, SIMILARITY_VALIDATION_FRACTION, default_of, hybrid_depth,
                                similarity_counts_errors, value_of)
from rebelboost.cli import _TRAIN_ESTIMATORS, build_parser, main

KEYS = sorted(ESTIMATORS)


def _signature_defaults(cls):
    return {name: p.default for name, p in inspect.signature(cls.__init__).parameters.items() if name != "self"}


@pytest.mark.parametrize("key", KEYS)
def test_each_estimators_signature_is_its_table_entry(key):
    cls = getattr(rebelboost, ESTIMATORS[key].class_name)
    assert cls._loss == key
    signature = _signature_defaults(cls)
    assert set(signature) == set(ESTIMATORS[key].params)
    for name, value in signature.items():
        # repr: 1024 and 1024.0, or 0 and False, are different defaults for get_params and the docs.
        assert repr(value) == repr(default_of(key, name)), name


@pytest.mark.parametrize("key", KEYS)
def test_each_core_default_is_the_estimators_unless_the_table_overrides_it(key):
    cls = getattr(rebelboost, ESTIMATORS[key].class_name)
    instance = cls()
    arguments = instance._core_params()
    overridden = ESTIMATORS[key].defaults
    checked = 0
    for name in ESTIMATORS[key].params:
        core = PARAMS[name].core
        if core is None:
            continue
        checked += 1
        if name in ESTIMATORS[key].auto:  # resolved by the table's rule: test_rebels_auto_follows_the_weak_learner
            assert arguments[core] == value_of(key, instance, name), name
        elif name in overridden:
            assert arguments[core] != CORE_DEFAULTS[core], f"{name}: an override equal to the core's default"
        else:
            assert arguments[core] == CORE_DEFAULTS[core], name
    assert checked >= 7  # the regressor has 7 parameters the core reads, the classifiers more


_STOPPING = ("n_estimators", "early_stopping", "n_iter_no_change", "validation_fraction", "scoring")


@pytest.mark.parametrize("key", KEYS)
def test_auto_is_a_value_exactly_where_the_table_has_its_rule(key):
    cls = getattr(rebelboost, ESTIMATORS[key].class_name)
    for name in ESTIMATORS[key].params:
        takes_auto = any(isinstance(c, StrOptions) and "auto" in c.options for c in cls._parameter_constraints[name])
        assert takes_auto == (name in ESTIMATORS[key].auto or name == "quick"), name  # quick's "auto" is a mode


@pytest.mark.parametrize("learner", ["tree", "similarity", "hybrid"])
def test_rebels_auto_follows_the_weak_learner(learner):
    default = rebelboost.REBELClassifier(weak_learner=learner)
    resolved = {name: value_of("rebel", default, name) for name in _STOPPING}
    if learner == "tree":  # trees keep what every other estimator has, and depth 2
        assert resolved == {name: default_of("adaboost", name) for name in _STOPPING}
        assert default._core_params()["max_depth"] == 2
    else:
        assert resolved == {"n_estimators": SIMILARITY_MAX_ESTIMATORS, "early_stopping": True,
                            "n_iter_no_change": HYBRID_PATIENCE if learner == "hybrid" else SIMILARITY_PATIENCE,
                            "validation_fraction": HYBRID_VALIDATION_FRACTION if learner == "hybrid"
                            else SIMILARITY_VALIDATION_FRACTION,
                            "scoring": HYBRID_SCORING if learner == "hybrid" else SIMILARITY_SCORING}
        assert default._core_params()["max_depth"] == (1 if learner == "hybrid" else 2)  # hybrids: stumps before a fit
    # A number of learners the user chose is trained in full; explicit values are kept as they are.
    given = rebelboost.REBELClassifier(weak_learner=learner, n_estimators=7, n_iter_no_change=3,
                                       validation_fraction=0.4, scoring="log_loss", max_depth=3)
    assert [value_of("rebel", given, name) for name in _STOPPING] == [7, False, 3, 0.4, "log_loss"]
    assert given._core_params()["max_depth"] == 3
    assert value_of("rebel", rebelboost.REBELClassifier(weak_learner=learner, early_stopping=True),
                    "early_stopping") is True


def test_similarities_count_errors_from_the_threshold():
    assert SIMILARITY_ERROR_ROWS == 200 and (SIMILARITY_PATIENCE, HYBRID_PATIENCE) == (1000, 500)
    assert [similarity_counts_errors(n) for n in (None, 0, 96, 199, 200, 225, 10**9)] == [False] * 4 + [True] * 3


@pytest.mark.parametrize("learner", ["tree", "similarity", "hybrid"])
def test_scoring_and_refit_follow_the_watched_rows_for_similarities_only(learner):
    clf = rebelboost.REBELClassifier(weak_learner=learner)
    seen = {}
    for rows in (None, 199, 200):
        clf._validation_rows = rows  # what fit sets before its monitor
        seen[rows] = (value_of("rebel", clf, "scoring"), value_of("rebel", clf, "refit"))
    if learner == "similarity":
        assert seen == {None: ("log_loss", False), 199: ("log_loss", False), 200: ("error", True)}
    else:
        assert len(set(seen.values())) == 1  # trees and hybrids: one rule whatever the rows
        assert seen[None] == (("error", True) if learner == "hybrid" else (default_of("adaboost", "scoring"), False))
    clf.set_params(scoring="log_loss", refit=False)  # explicit values are kept
    assert (value_of("rebel", clf, "scoring"), value_of("rebel", clf, "refit")) == ("log_loss", False)


def test_a_similarity_fit_scores_by_its_eval_sets_rows():
    X, y = make_classification(n_samples=500, n_features=4, n_informative=3, n_redundant=0, n_classes=3,
                               random_state=0)
    for rows, scoring in ((199, "log_loss"), (200, "error")):
        clf = rebelboost.REBELClassifier(weak_learner="similarity", n_estimators=5, random_state=0)
        clf.fit(X[:100], y[:100], eval_set=[(X[100:100 + rows], y[100:100 + rows])])
        assert list(clf.evals_result_["valid_0"]) == [scoring]


def test_hybrid_depth_is_stumps_below_the_threshold():
    assert HYBRID_MAX_DEPTH == 3 and HYBRID_DEEP_ROWS == 512
    assert [hybrid_depth(n) for n in (1, 384, 511, 512, 674, 10**9)] == [1, 1, 1, 3, 3, 3]


def test_a_hybrid_fit_takes_its_depth_from_the_rows_it_trains_on(tmp_path):
    rng = np.random.default_rng(4)
    X = rng.normal(size=(700, 4))
    y = (X[:, 0] * X[:, 1] > 0).astype(int)
    def fit(n_estimators=3, **kw):
        return rebelboost.REBELClassifier(weak_learner="hybrid", n_estimators=n_estimators, n_jobs=1, random_state=0, **kw)

    assert fit().fit(X, y).hybrid_depth_ == 3  # 700 rows, no early stopping: all of them
    # With the default early stopping, 40 % is carved first: 360 of 600 rows give stumps.
    carved = rebelboost.REBELClassifier(weak_learner="hybrid", n_jobs=1, random_state=0, n_iter_no_change=2)
    assert carved.fit(X[:600], y[:600]).hybrid_depth_ == 1 and fit().fit(X[:600], y[:600]).hybrid_depth_ == 3
    # The trees have that depth: the same model as the explicit depth, byte for byte.
    assert fit().fit(X, y)._model.to_bytes() == fit(max_depth=3).fit(X, y)._model.to_bytes()
    assert fit(max_depth=1).fit(X, y).hybrid_depth_ == 1
    assert fit().fit(X[:300], y[:300]).hybrid_depth_ == 1
    # A warm start continues at that depth: 3 learners and 2 more are the 5 of one fit.
    warm = fit(warm_start=True).fit(X, y)
    warm.set_params(n_estimators=5).fit(X, y)
    assert warm._model.to_bytes() == fit(5).fit(X, y)._model.to_bytes()
    # The model file keeps it; files before the rule held stumps (or the explicit depth); a bad entry is refused.
    clf = fit().fit(X, y)
    clf.save(tmp_path / "m.rbm")
    assert rebelboost.load(tmp_path / "m.rbm").hybrid_depth_ == 3
    model = rebelboost._core.Model.load(str(tmp_path / "m.rbm"))
    meta = json.loads(model.metadata)
    del meta["hybrid_depth"]
    model.metadata = json.dumps(meta).encode()
    model.save(str(tmp_path / "old.rbm"))
    assert rebelboost.load(tmp_path / "old.rbm").hybrid_depth_ == 1
    for bad in (None, 0, 9, True, "3", 2.0):
        meta["hybrid_depth"] = bad
        model.metadata = json.dumps(meta).encode()
        model.save(str(tmp_path / "bad.rbm"))
        with pytest.raises(rebelboost.ModelFileError, match="hybrid_depth"):
            rebelboost.load(tmp_path / "bad.rbm")
    meta["hybrid_depth"], meta["params"]["max_depth"] = 3, 2  # an explicit depth is the depth
    model.metadata = json.dumps(meta).encode()
    model.save(str(tmp_path / "bad.rbm"))
    with pytest.raises(rebelboost.ModelFileError, match="hybrid_depth"):
        rebelboost.load(tmp_path / "bad.rbm")
    trees = rebelboost.REBELClassifier(n_estimators=2, n_jobs=1).fit(X, y)
    trees.save(tmp_path / "t.rbm")
    assert rebelboost.load(tmp_path / "t.rbm").hybrid_depth_ is None
    # Other learners have none.
    assert rebelboost.REBELClassifier(n_estimators=2, n_jobs=1).fit(X, y).hybrid_depth_ is None


def test_a_default_similarity_fit_stops_early_on_a_carved_quarter():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(120, 3))
    y = (X[:, 0] + 0.8 * rng.normal(size=120) > 0).astype(int)  # noisy: the validation loss turns up
    clf = rebelboost.REBELClassifier(weak_learner="similarity", random_state=0).fit(X, y)
    assert clf.fit_info_["stop_reason"] == "callback"  # the monitor's patience, before the 10 000 cap
    iterations = clf.fit_info_["n_iterations"]
    assert iterations == clf.best_iteration_ + SIMILARITY_PATIENCE and clf.n_estimators_ == clf.best_iteration_
    assert len(clf.fit_info_["train_loss"]) == iterations
    # Trained on 3/4 of the rows: the same learners as an explicit fit on the same carved split.
    explicit = rebelboost.REBELClassifier(weak_learner="similarity", random_state=0, n_estimators=iterations,
                                          early_stopping=True, validation_fraction=0.25,
                                          n_iter_no_change=iterations).fit(X, y)
    np.testing.assert_array_equal(explicit.fit_info_["train_loss"], clf.fit_info_["train_loss"])


def _edges(constraint):
    """(low, high, closed) of an Interval, None as +-inf."""
    low = -math.inf if constraint.left is None else constraint.left
    high = math.inf if constraint.right is None else constraint.right
    return low, high, constraint.closed


@pytest.mark.parametrize("key", KEYS)
def test_each_numeric_constraint_is_the_cores_bound(key):
    cls = getattr(rebelboost, ESTIMATORS[key].class_name)
    closed = {(False, False): "both", (True, False): "right", (False, True): "left", (True, True): "neither"}
    for name in ESTIMATORS[key].params:
        core = PARAMS[name].core
        if core not in CORE_BOUNDS or PARAMS[name].to_core is not None:
            continue  # codes for named choices: test_coded_choices_fill_the_cores_bound
        constraint, *auto = cls._parameter_constraints[name]
        assert [a.options for a in auto] == ([{"auto"}] if name in ESTIMATORS[key].auto else []), name
        low, high, low_open, high_open, integral = CORE_BOUNDS[core]
        assert isinstance(constraint, Interval), name
        assert _edges(constraint) == (low, high, closed[(low_open, high_open)]), name
        assert constraint.type is (int if integral else float) or integral == (constraint.type.__name__ == "Integral")


@pytest.mark.parametrize("core", sorted(CORE_BOUNDS))
def test_the_core_refuses_exactly_what_its_bound_refuses(core):
    # Values just inside and just outside each bound, through train() itself: its check is the bound's.
    low, high, low_open, high_open, integral = CORE_BOUNDS[core]
    step = 1 if integral else 1e-9
    inside = [low + step if low_open else low, (high - step if high_open else high) if math.isfinite(high) else 1e3]
    outside = [low if low_open else low - step] + ([high if high_open else high + step] if math.isfinite(high) else [])
    X = np.random.default_rng(0).normal(size=(20, 2))
    y = (X[:, 0] > 0).astype(np.int32)
    loss = {"veb_lambda": "veb", "tree_penalty": "rebel"}.get(core, "adaboost")
    base = dict(n_estimators=1, n_threads=1, **({"learner": "hybrid"} if core == "tree_penalty" else {}))

    def train(**kwargs):  # the regressor's parameter through its own entry point
        if core == "min_samples_leaf":
            return _core.train_regressor(X, X[:, 0].copy(), None, **kwargs)
        return _core.train(X, y, None, 2, loss, **kwargs)

    for value in inside:
        kwargs = {**base, core: int(value) if integral else value}
        if core == "n_estimators":
            kwargs[core] = min(kwargs[core], 2)  # the upper bound itself would grow up to 10^6 trees
        train(**kwargs)
    for value in outside:
        with pytest.raises(ValueError, match=f"{core} must be"):
            train(**{**base, core: int(value) if integral else value})


@pytest.mark.parametrize("name, values", [("quick", [False, True, "auto"]), ("criterion", ["loss", "gini", "entropy"])])
def test_coded_choices_fill_the_cores_bound(name, values):
    param = PARAMS[name]
    low, high, _, _, integral = CORE_BOUNDS[param.core]
    assert integral and sorted(param.to_core(v) for v in values) == list(range(int(low), int(high) + 1))
    assert [param.from_core(param.to_core(v)) for v in values] == values


def test_every_string_choice_is_one_the_core_takes():
    # The binding maps these strings itself; an option only Python knows would fail at fit time.
    assert set(PARAMS["loss"].choices) == {"exponential", "logistic", "squared"}
    for name in ("weak_learner", "similarity_scaling", "loss"):
        assert CORE_DEFAULTS[PARAMS[name].core] in PARAMS[name].choices
        assert ESTIMATORS["rebel"].class_name == "REBELClassifier"
        constraint, *auto = rebelboost.REBELClassifier._parameter_constraints[name]
        assert isinstance(constraint, StrOptions) and constraint.options == set(PARAMS[name].choices)
        # "auto" is resolved in Python before the core sees it (similarity_scaling: from the training rows).
        assert [a.options for a in auto] == ([{"auto"}] if name in ESTIMATORS["rebel"].auto else [])


def _train_option(name):
    parser = build_parser()
    commands = next(a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction")
    return next(a for a in commands.choices["train"]._actions if a.dest == name)


def test_cli_trains_the_estimators_of_the_table():
    assert all(ESTIMATORS[key].class_name == name for key, name in _TRAIN_ESTIMATORS.items())


def test_cli_train_help_shows_each_estimators_default():
    options = [name for name, p in PARAMS.items() if p.cli]
    assert {"n_estimators", "max_depth", "learning_rate", "n_jobs", "lam", "weak_learner"} <= set(options)
    for name in options:
        action = _train_option(name)
        assert action.default is None, name  # not given: the estimator's own default applies
        for key, entry in ESTIMATORS.items():
            if key in _TRAIN_ESTIMATORS and name in entry.params:
                assert f"{default_of(key, name)!r} (" in action.help and entry.class_name in action.help, name
    help_text = _train_option("max_depth").help
    assert "1 (AdaBoostClassifier, VEBBoostClassifier)" in help_text and "'auto' (REBELClassifier)" in help_text


@pytest.mark.parametrize("loss, classes", [("adaboost", 2), ("veb", 2), ("rebel", 3), ("auto", 3)])
def test_cli_train_fits_the_estimators_defaults(tmp_path, loss, classes):
    # `rebelboost train` grew REBEL trees of depth 1 while REBELClassifier defaults to 2.
    rng = np.random.default_rng(1)
    X = rng.normal(size=(90, 3))
    y = np.arange(90) % classes
    data = tmp_path / "d.csv"
    np.savetxt(data, np.column_stack([X, y]), delimiter=",", header="a,b,c,y", comments="")
    model = tmp_path / "m.rbm"
    assert main(["train", str(data), "--target", "y", "--model", str(model), "--loss", loss, "--n-estimators", "3"]) == 0
    loaded = rebelboost.load(model)
    key = "rebel" if loss == "auto" else loss
    expected = getattr(rebelboost, ESTIMATORS[key].class_name)(n_estimators=3).get_params()
    assert loaded.get_params() == {**expected, "n_estimators": 3}


def test_cli_refuses_an_option_the_estimator_does_not_have(tmp_path, capsys):
    data = tmp_path / "d.csv"
    np.savetxt(data, np.column_stack([np.arange(20.0), np.arange(20) % 2]), delimiter=",", header="a,y", comments="")
    code = main(["train", str(data), "--target", "y", "--model", str(tmp_path / "m.rbm"), "--loss", "adaboost",
                 "--lam", "0.3"])
    assert code == 2 and "--lam does not apply to AdaBoostClassifier" in capsys.readouterr().err
