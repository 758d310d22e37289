"""Watching, stopping and resuming training: eval sets, early stopping, callbacks, warm start, n_iter and
truncation, Ctrl-C, progress output, class weights."""

import logging
import os
import signal
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest
from sklearn.datasets import load_digits, make_classification
from sklearn.metrics import log_loss
from sklearn.model_selection import train_test_split

from rebelboost import AdaBoostClassifier, REBELClassifier, VEBBoostClassifier

ESTIMATORS = {"adaboost": AdaBoostClassifier, "veb": VEBBoostClassifier, "rebel": REBELClassifier}


def noisy(n=600, n_classes=2, seed=0):
    X, y = make_classification(n_samples=n, n_features=8, n_informative=5, n_classes=n_classes, flip_y=0.15,
                               random_state=seed)
    X[np.random.RandomState(seed).rand(*X.shape) < 0.05] = np.nan
    return X, y


@pytest.fixture(scope="module")
def digits():
    X, y = load_digits(return_X_y=True)
    X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.3, random_state=0, stratify=y)
    X_fit, X_val, y_fit, y_val = train_test_split(X_train, y_train, test_size=0.25, random_state=0, stratify=y_train)
    return X_fit, y_fit, X_val, y_val


def test_early_stopping_on_digits_stops_at_the_validation_optimum(digits):
    X_fit, y_fit, X_val, y_val = digits
    clf = REBELClassifier(n_estimators=2000, max_depth=3, early_stopping=True, scoring="log_loss", n_iter_no_change=15)
    clf.fit(X_fit, y_fit, eval_set=[(X_val, y_val)])
    record = clf.evals_result_["valid_0"]["log_loss"]
    assert clf.fit_info_["n_iterations"] == len(record) < 2000  # stopped early
    assert clf.fit_info_["stop_reason"] == "callback"
    assert clf.best_iteration_ == np.argmin(record) + 1
    assert len(record) - clf.best_iteration_ == 15  # patience ran out (tol is tiny)
    assert clf.n_estimators_ == clf.best_iteration_  # the model is truncated to the optimum
    # The recorded metric is the log-loss of the first k trees, computed independently here.
    for k in (1, clf.best_iteration_ // 2, clf.best_iteration_):
        assert record[k - 1] == pytest.approx(log_loss(y_val, clf.predict_proba(X_val, n_iter=k)), rel=1e-12)


@pytest.mark.parametrize("scoring", ["loss", "error", "expected_cost"])
def test_recorded_metrics_match_an_independent_computation(scoring):
    X, y = noisy()
    X_val, y_val = noisy(seed=1)
    w_val = np.random.RandomState(2).uniform(0.5, 2.0, len(y_val))
    clf = AdaBoostClassifier(n_estimators=30, max_depth=2, scoring=scoring).fit(X, y, eval_set=[(X_val, y_val, w_val)])
    record = clf.evals_result_["valid_0"][scoring]
    # Counts of mistakes keep the latest of equal best values (rebelboost._monitor.LATE_TIES), the loss the first.
    best = len(record) - np.argmin(record[::-1]) if scoring != "loss" else np.argmin(record) + 1
    assert clf.n_estimators_ == len(record) == 30 and clf.best_iteration_ == best
    for k in (1, 10, 30):
        H = clf.decision_function(X_val, n_iter=k)
        if scoring == "loss":  # AdaBoost's loss: weighted mean of exp(-y H), 1 at H = 0
            expected = np.average(np.exp(-np.where(y_val == 1, 1.0, -1.0) * H), weights=w_val)
        else:
            expected = np.average(clf.predict(X_val, n_iter=k) != y_val, weights=w_val)
        assert record[k - 1] == pytest.approx(expected, rel=1e-9)


@pytest.mark.parametrize("scoring", ["error", "expected_cost"])
def test_a_tie_keeps_the_latest_model_but_does_not_restart_the_patience(scoring):
    """Separable rows watched on themselves: the error falls to 0 and stays there. The fit stops
    n_iter_no_change trees after it first reached 0 (a tie is no improvement), and keeps the latest of the
    equal best stages; under the rule before 2026-11-29 ties restarted the patience and the fit ran to its cap."""
    X, y = make_classification(400, 6, n_informative=4, class_sep=1.5, flip_y=0.0, random_state=3)
    clf = AdaBoostClassifier(n_estimators=300, max_depth=2, early_stopping=True, n_iter_no_change=7,
                             scoring=scoring).fit(X, y, eval_set=[(X, y)])
    record = np.asarray(clf.evals_result_["valid_0"][scoring])
    first_best = int(np.argmin(record))
    assert record[first_best] == 0.0 and 10 < first_best + 1 < 300 - 7  # 23 here
    assert len(record) == first_best + 1 + 7  # stopped by the patience, counted from the first 0
    assert np.all(record[first_best:] == 0.0)
    assert clf.best_iteration_ == clf.n_estimators_ == len(record)  # the latest of the equal best stages


def test_rebel_expected_cost_uses_the_cost_matrix():
    X, y = noisy(n_classes=3)
    C = np.array([[0, 1, 4], [2, 0, 1], [1, 8, 0]], dtype=float)
    clf = REBELClassifier(n_estimators=12, cost_matrix=C, scoring="expected_cost").fit(X, y, eval_set=[(X, y)])
    expected = [C[y, clf.predict(X, n_iter=k)].mean() for k in range(1, 13)]
    np.testing.assert_allclose(clf.evals_result_["valid_0"]["expected_cost"], expected, rtol=1e-12)


def test_early_stopping_without_eval_set_carves_a_validation_split():
    X, y = noisy(n=1000)
    clf = AdaBoostClassifier(n_estimators=500, max_depth=3, early_stopping=True, random_state=0).fit(X, y)
    record = clf.evals_result_["validation"]["loss"]
    assert clf.n_estimators_ == clf.best_iteration_ == np.argmin(record) + 1 and len(record) < 500
    again = AdaBoostClassifier(n_estimators=500, max_depth=3, early_stopping=True, random_state=0).fit(X, y)
    assert again._model.to_bytes() == clf._model.to_bytes()  # the split is seeded


def test_a_callback_stops_training_at_its_iteration():
    X, y = noisy()
    seen = []

    def stop_at_7(record):
        seen.append(record["iteration"])
        return record["iteration"] == 7

    clf = VEBBoostClassifier(n_estimators=50, callbacks=[stop_at_7]).fit(X, y)
    assert seen == list(range(1, 8))
    assert clf.n_estimators_ == 7 and clf.fit_info_["stop_reason"] == "callback"
    full = VEBBoostClassifier(n_estimators=7).fit(X, y)
    assert clf._model.to_bytes() == full._model.to_bytes()
    with pytest.raises(ValueError, match="callbacks must hold callables"):
        VEBBoostClassifier(callbacks=["print"]).fit(X, y)


WARM_CASES = [
    ("adaboost", {}), ("veb", {}), ("rebel", {}),
    ("adaboost", {"criterion": "gini"}),
    ("adaboost", {"subsample": 0.7, "feature_fraction": 0.6, "random_state": 3}),
    ("rebel", {"weight_trim": 0.9, "subsample": 0.8, "random_state": 1}),
]


@pytest.mark.parametrize("quick", [True, False])
@pytest.mark.parametrize("loss, extra", WARM_CASES)
def test_warm_start_equals_training_at_once(loss, extra, quick):
    X, y = noisy(n_classes=3 if loss == "rebel" else 2)
    params = dict(max_depth=2, quick=quick, n_jobs=2, **extra)
    at_once = ESTIMATORS[loss](n_estimators=40, **params).fit(X, y)
    warm = ESTIMATORS[loss](n_estimators=15, warm_start=True, **params).fit(X, y)
    warm.set_params(n_estimators=28).fit(X, y)
    warm.set_params(n_estimators=40).fit(X, y)
    assert at_once.n_estimators_ == warm.n_estimators_ == 40
    assert warm._model.to_bytes() == at_once._model.to_bytes()
    assert warm.fit_info_["n_replayed"] == 28
    np.testing.assert_array_equal(warm.fit_info_["train_loss"], at_once.fit_info_["train_loss"])
    # Truncating, then warm-starting again, grows the same trees again.
    warm.truncate(9).fit(X, y)
    assert warm._model.to_bytes() == at_once._model.to_bytes()


def test_warm_start_checks_what_it_continues():
    X, y = noisy()
    clf = AdaBoostClassifier(n_estimators=20, warm_start=True).fit(X, y)
    with pytest.raises(ValueError, match="n_estimators=10 is less than the 20 trees already fitted"):
        clf.set_params(n_estimators=10).fit(X, y)
    with pytest.raises(ValueError, match="X has 7 features, but AdaBoostClassifier is expecting 8"):
        clf.set_params(n_estimators=30).fit(X[:, :7], y)
    with pytest.raises(ValueError, match="warm start: the model to continue starts from another bias"):
        clf.fit(X, y, sample_weight=np.where(y == 1, 3.0, 1.0))
    with pytest.raises(ValueError, match="warm_start=True: y has the classes"):
        clf.fit(X, y + 5)
    # warm_start=False refits from scratch.
    assert clf.set_params(warm_start=False, n_estimators=5).fit(X, y).n_estimators_ == 5


def test_n_iter_and_truncate_agree_with_staged_prediction():
    X, y = noisy(n_classes=3)
    clf = REBELClassifier(n_estimators=25).fit(X, y)
    staged = list(clf.staged_decision_function(X))
    for k in (1, 12, 25):
        np.testing.assert_array_equal(clf.decision_function(X, n_iter=k), staged[k - 1])
    np.testing.assert_array_equal(clf.decision_function(X, n_iter=0), np.broadcast_to(clf._model.bias, staged[0].shape))
    for bad in (26, -1, 2.0):
        with pytest.raises(ValueError, match=r"n_iter must be None or an int in the range \[0, 25\]"):
            clf.predict(X, n_iter=bad)
    expected = clf.predict_proba(X, n_iter=12)
    clf.truncate(12)
    assert clf.n_estimators_ == 12
    np.testing.assert_array_equal(clf.predict_proba(X), expected)


@pytest.mark.parametrize("loss", ["adaboost", "veb", "rebel"])
def test_class_weight_balanced_equals_the_sample_weight_fit(loss):
    X, y = noisy(n_classes=3 if loss == "rebel" else 2)
    keep = (y != 1) | (np.arange(len(y)) % 3 == 0)  # unbalance the classes
    X, y = X[keep], y[keep]
    counts = np.bincount(y)
    balanced = len(y) / (len(counts) * counts)  # scikit-learn's definition, written out
    sw = np.random.RandomState(0).uniform(0.5, 2.0, len(y))
    a = ESTIMATORS[loss](n_estimators=20, max_depth=2, class_weight="balanced").fit(X, y, sample_weight=sw)
    b = ESTIMATORS[loss](n_estimators=20, max_depth=2).fit(X, y, sample_weight=sw * balanced[y])
    assert a._model.to_bytes() == b._model.to_bytes()
    weights = {0: 2.0, 1: 0.5} if loss != "rebel" else {0: 2.0, 1: 0.5, 2: 1.0}
    c = ESTIMATORS[loss](n_estimators=20, max_depth=2, class_weight=weights).fit(X, y)
    d = ESTIMATORS[loss](n_estimators=20, max_depth=2).fit(X, y, sample_weight=np.array(list(weights.values()))[y])
    assert c._model.to_bytes() == d._model.to_bytes()


def test_class_weight_errors():
    X, y = noisy()
    with pytest.raises(ValueError, match="finite weight >= 0"):
        AdaBoostClassifier(class_weight={0: -1.0, 1: 1.0}).fit(X, y)
    with pytest.raises(ValueError, match=r"class_weight names label 7, which is not a class of y \(the classes are \[0, 1\]\)"):
        AdaBoostClassifier(class_weight={0: 2.0, 7: 1.0}).fit(X, y)
    with pytest.raises(ValueError, match="The 'class_weight' parameter of AdaBoostClassifier"):
        AdaBoostClassifier(class_weight="even").fit(X, y)


def test_eval_set_errors():
    X, y = noisy()
    with pytest.raises(ValueError, match=r"eval_set\[0\]: labels \[9\] were not in the training labels \[0, 1\]"):
        AdaBoostClassifier(n_estimators=3).fit(X, y, eval_set=[(X, np.full(len(y), 9))])
    with pytest.raises(ValueError, match=r"eval_set\[1\] must be a tuple"):
        AdaBoostClassifier(n_estimators=3).fit(X, y, eval_set=[(X, y), X])
    with pytest.raises(ValueError, match="X has 3 features, but AdaBoostClassifier is expecting 8"):
        AdaBoostClassifier(n_estimators=3).fit(X, y, eval_set=[(X[:, :3], y)])


def test_verbose_levels(capsys, caplog):
    X, y = noisy()
    AdaBoostClassifier(n_estimators=20, max_depth=2).fit(X, y, eval_set=[(X, y)])
    out = capsys.readouterr()
    assert out.out == "" and out.err == ""  # verbose=0: silent
    AdaBoostClassifier(n_estimators=20, max_depth=2, verbose=1).fit(X, y, eval_set=[(X, y)])
    err = capsys.readouterr().err
    assert "AdaBoostClassifier" in err and "20/20" in err and "train loss" in err and "valid_0 loss" in err
    with caplog.at_level(logging.INFO, logger="rebelboost"):
        AdaBoostClassifier(n_estimators=20, max_depth=2, verbose=2).fit(X, y, eval_set=[(X, y)])
    lines = [r.getMessage() for r in caplog.records if r.name == "rebelboost"]
    assert lines[0].startswith("[AdaBoostClassifier] iteration 1: train loss")
    assert any("iteration 20:" in line and "valid_0 loss" in line for line in lines)
    assert "stopped (n_estimators) with 20 trees; best iteration" in lines[-1]


_CTRL_C_CHILD = textwrap.dedent("""
    import signal, sys, time
    import numpy as np
    # A child started from a background job inherits SIGINT ignored, and Python then installs no
    # KeyboardInterrupt handler: ask for the interactive default explicitly.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    from rebelboost import REBELClassifier
    rng = np.random.RandomState(0)
    X = rng.normal(size=(30000, 40))
    y = (X[:, 0] + rng.normal(size=30000) > 0).astype(int) + (X[:, 1] > 1)
    clf = REBELClassifier(n_estimators=1000000, max_depth=4, verbose=0)
    print("fitting", flush=True)
    try:
        clf.fit(X, y)
    except KeyboardInterrupt:
        print(f"interrupted {time.monotonic()!r} {clf.n_estimators_} {clf.fit_info_['stop_reason']}", flush=True)
        print(clf.predict(X[:3]).tolist(), flush=True)
""")


def test_ctrl_c_ends_fit_within_half_a_second():
    child = subprocess.Popen([sys.executable, "-c", _CTRL_C_CHILD], stdout=subprocess.PIPE, text=True,
                             env={**os.environ, "OMP_NUM_THREADS": "2"})
    try:
        assert child.stdout.readline().strip() == "fitting"
        time.sleep(1.5)  # inside fit, well into training
        sent = time.monotonic()
        child.send_signal(signal.SIGINT)
        out, _ = child.communicate(timeout=30)
    finally:
        child.kill()
    words = out.split()
    assert words[0] == "interrupted", out
    latency = float(words[1]) - sent
    assert latency < 0.5, f"fit took {latency:.3f} s to stop"
    assert int(words[2]) > 0 and words[3] == "interrupted"  # finished trees kept; the estimator predicts


def test_new_parameters_survive_a_model_file(tmp_path):
    import rebelboost

    X, y = noisy()
    clf = AdaBoostClassifier(n_estimators=5, class_weight={0: 2.0, 1: 0.5}, callbacks=[lambda record: None],
                             early_stopping=True, scoring="log_loss").fit(X, y)
    clf.save(tmp_path / "m.rbm")
    loaded = rebelboost.load(tmp_path / "m.rbm")
    params = loaded.get_params()
    assert params["class_weight"] == {0: 2.0, 1: 0.5} and params["callbacks"] is None
    assert params["early_stopping"] is True and params["scoring"] == "log_loss"
    np.testing.assert_array_equal(loaded.predict_proba(X), clf.predict_proba(X))
    np.testing.assert_array_equal(loaded.fit(X, y).decision_function(X), clf.decision_function(X))  # refits alike
