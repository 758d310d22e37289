"""A native app built with find_package(rebelboost) against the installed wheel predicts what Python does.

Builds examples/cpp (predict_csv) against the CMake package shipped inside the installed rebelboost
package, runs it on models of every loss and of both learner families (rows with NaNs for trees), and
compares its output (class index and raw scores printed with %.17g) with Python's, byte for byte; then runs
the same binary with --early-exit and --cascade (a cascade calibrated in Python, stored in the model file)
and compares class and learners evaluated per row with Python's predict(early_exit=True / cascade=True).
"""

import os
import shutil
import subprocess

import numpy as np
import pytest

import rebelboost
from rebelboost import AdaBoostClassifier, BoostingRegressor, REBELClassifier, VEBBoostClassifier

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
SCRIPT = os.path.join(REPO, "tests", "cmake", "run_consumer_test.sh")

# A native app needs a C++ compiler and cmake. CI runs the suite against the installed wheel with neither on
# PATH (the wheel installs and trains without them), then runs this file with them and
# REBELBOOST_REQUIRE_CONSUMER=1, which turns the skip into a failure.
_TOOLS = {"a C++ compiler": [os.environ.get("CXX", "")] + ["c++", "g++", "clang++"], "cmake": ["cmake"]}
_MISSING = [what for what, names in _TOOLS.items() if not any(name and shutil.which(name) for name in names)]
if _MISSING and os.environ.get("REBELBOOST_REQUIRE_CONSUMER") != "1":
    pytest.skip(f"building a native consumer needs {' and '.join(_MISSING)} on PATH", allow_module_level=True)

pytestmark = pytest.mark.slow  # each test builds a CMake project against the installed package


def stopping_lines(clf, X, **mode):
    labels, learners = clf.predict(X, return_n_learners=True, **mode)
    return "".join(f"{i},{n}\n" for i, n in zip(np.searchsorted(clf.classes_, labels), learners))


def expected_lines(clf, X):
    scores = clf._model.decision_function(X, 1)
    scores = scores.reshape(len(X), -1)
    index = np.searchsorted(clf.classes_, clf.predict(X))
    return "".join(f"{i}" + "".join(f",{v:.17g}" for v in row) + "\n" for i, row in zip(index, scores))


@pytest.mark.parametrize(
    "make",
    [
        lambda: AdaBoostClassifier(n_estimators=30, max_depth=2),
        lambda: VEBBoostClassifier(n_estimators=20, max_depth=3),
        lambda: REBELClassifier(n_estimators=25, max_depth=3),
        lambda: REBELClassifier(n_estimators=40, weak_learner="similarity"),
    ],
)
def test_native_predictions_equal_python(make, tmp_path):
    rng = np.random.RandomState(0)
    X = rng.normal(size=(400, 5))
    complete_rows = getattr(make(), "weak_learner", "tree") == "similarity"  # similarities reject NaN
    if not complete_rows:
        X[rng.rand(*X.shape) < 0.05] = np.nan
    multiclass = isinstance(make(), REBELClassifier)
    signal = np.nan_to_num(X[:, 0] + X[:, 1]) + rng.normal(scale=0.5, size=400)  # noisy: no perfect fit
    y = np.digitize(signal, [-0.5, 0.5]) if multiclass else signal > 0
    clf = make().fit(X[:300], np.asarray(y[:300]).astype(int))
    clf.calibrate_cascade(X[300:], np.asarray(y[300:]).astype(int), max_accuracy_loss=0.1, every=2)
    model, data, expected = tmp_path / "m.rbm", tmp_path / "x.csv", tmp_path / "expected.csv"
    clf.save(model)
    X_test = rng.normal(size=(100, 5))
    if not complete_rows:
        X_test[::9, 3] = np.nan
    with open(data, "w") as handle:
        for row in X_test:
            handle.write(",".join("nan" if np.isnan(v) else repr(float(v)) for v in row) + "\n")
    expected.write_text(expected_lines(clf, X_test))
    env = dict(os.environ, REBELBOOST_CMAKE_PREFIX=os.path.dirname(rebelboost.__file__), KEEP_TMP="1")
    result = subprocess.run(["bash", SCRIPT, str(model), str(data), str(expected)], capture_output=True, text=True,
                            env=env, timeout=600)
    kept = [line.split(" ", 1)[1] for line in result.stdout.splitlines() if line.startswith("kept ")]
    try:
        assert result.returncode == 0, result.stdout + result.stderr
        assert "PASS" in result.stdout
        binary = os.path.join(kept[0], "consumer", "predict_csv")
        for flag, mode in (("--early-exit", {"early_exit": True}), ("--cascade", {"cascade": True})):
            out = subprocess.run([binary, str(model), str(data), flag], capture_output=True, text=True, timeout=60)
            assert out.returncode == 0, out.stderr
            assert out.stdout == stopping_lines(clf, X_test, **mode), flag
        # The cascade really stops rows early here, so the comparison covers its checkpoints.
        assert (clf.predict(X_test, cascade=True, return_n_learners=True)[1] < clf.n_estimators_).any()
    finally:
        if kept:
            subprocess.run(["rm", "-rf", kept[0]], check=False)


def test_native_regressor_predictions_equal_python(tmp_path):
    # A regression model (real leaves): the app prints each row's prediction, bit for bit Python's.
    rng = np.random.RandomState(1)
    X = rng.normal(size=(400, 4))
    X[rng.rand(*X.shape) < 0.05] = np.nan
    y = np.nan_to_num(X[:, 0]) * 3 + np.sin(np.nan_to_num(X[:, 1])) + rng.normal(scale=0.3, size=400)
    reg = BoostingRegressor(n_estimators=40, max_depth=4, min_samples_leaf=5).fit(X, y)
    model, data, expected = tmp_path / "m.rbm", tmp_path / "x.csv", tmp_path / "expected.csv"
    reg.save(model)
    X_test = rng.normal(size=(100, 4))
    X_test[::7, 2] = np.nan
    with open(data, "w") as handle:
        for row in X_test:
            handle.write(",".join("nan" if np.isnan(v) else repr(float(v)) for v in row) + "\n")
    expected.write_text("".join(f"{v:.17g}\n" for v in reg.predict(X_test)))
    env = dict(os.environ, REBELBOOST_CMAKE_PREFIX=os.path.dirname(rebelboost.__file__))
    result = subprocess.run(["bash", SCRIPT, str(model), str(data), str(expected)], capture_output=True, text=True,
                            env=env, timeout=600)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "PASS" in result.stdout
