"""A native app built with find_package(rebelboost) against the installed wheel predicts what Python does.

Builds examples/cpp (predict_csv) against the CMake package shipped inside the installed rebelboost
package, runs it on models of every loss and of both learner families (rows with NaNs for trees), and compares its output (class
index and raw scores printed with %.17g) with Python's, byte for byte.
"""

import os
import subprocess

import numpy as np
import pytest

import rebelboost
from rebelboost import AdaBoostClassifier, REBELClassifier, VEBBoostClassifier

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
SCRIPT = os.path.join(REPO, "tests", "cmake", "run_consumer_test.sh")


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
    y = np.digitize(np.nan_to_num(X[:, 0] + X[:, 1]), [-0.5, 0.5]) if multiclass else (np.nan_to_num(X[:, 0]) > 0)
    clf = make().fit(X, np.asarray(y).astype(int))
    model, data, expected = tmp_path / "m.rbm", tmp_path / "x.csv", tmp_path / "expected.csv"
    clf.save(model)
    X_test = rng.normal(size=(100, 5))
    if not complete_rows:
        X_test[::9, 3] = np.nan
    with open(data, "w") as handle:
        for row in X_test:
            handle.write(",".join("nan" if np.isnan(v) else repr(float(v)) for v in row) + "\n")
    expected.write_text(expected_lines(clf, X_test))
    env = dict(os.environ, REBELBOOST_CMAKE_PREFIX=os.path.dirname(rebelboost.__file__))
    result = subprocess.run(["bash", SCRIPT, str(model), str(data), str(expected)], capture_output=True, text=True,
                            env=env, timeout=600)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "PASS" in result.stdout
