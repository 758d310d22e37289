"""The rebelboost command line: demo, train -> predict -> evaluate round trip, errors with exit code 2."""

import csv
import subprocess
import sys

import numpy as np
import pytest

import rebelboost
from rebelboost.cli import main


def run(*args):
    return subprocess.run([sys.executable, "-m", "rebelboost", *args], capture_output=True, text=True, timeout=300)


def test_demo_prints_accuracy_and_time():
    result = run("demo", "--n-estimators", "50")
    assert result.returncode == 0, result.stderr
    assert "test accuracy 0.9" in result.stdout and " ms" in result.stdout
    result = run("demo", "--dataset", "digits", "--n-estimators", "100", "--max-depth", "2")
    assert result.returncode == 0, result.stderr
    assert "10 classes" in result.stdout and "rebelboost REBEL" in result.stdout and "test accuracy 0.9" in result.stdout


@pytest.fixture
def labelled_csv(tmp_path):
    rng = np.random.RandomState(0)
    X = rng.normal(size=(150, 3))
    y = np.where(X[:, 0] - X[:, 2] > 0, "up", "down")
    path = tmp_path / "train.csv"
    with open(path, "w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["a", "b", "c", "label"])
        for row, label in zip(X, y):
            writer.writerow([*(repr(float(v)) for v in row), label])
        writer.writerow(["nan", "", "0.5", "up"])
    return path, X, y


def test_train_predict_evaluate(labelled_csv, tmp_path, capsys):
    path, X, y = labelled_csv
    model = tmp_path / "m.rbm"
    assert main(["train", str(path), "--target", "label", "--model", str(model), "--n-estimators", "30"]) == 0
    assert "model written" in capsys.readouterr().out
    clf = rebelboost.load(model)
    out = tmp_path / "pred.csv"
    assert main(["predict", str(path), "--model", str(model), "--target", "label", "--output", str(out)]) == 0
    with open(out) as handle:
        rows = list(csv.reader(handle))
    assert rows[0] == ["label"] and len(rows) == len(X) + 2
    assert [r[0] for r in rows[1:-1]] == clf.predict(X).tolist()
    assert main(["evaluate", str(path), "--model", str(model), "--target", "label"]) == 0
    assert "accuracy" in capsys.readouterr().out
    assert main(["export", "--model", str(model)]) == 0
    assert '"trees"' in capsys.readouterr().out


def test_errors_exit_with_code_2(labelled_csv, tmp_path, capsys):
    path, _, _ = labelled_csv
    bad = tmp_path / "bad.csv"
    bad.write_text("1,2,3\n4,5\n")
    assert main(["train", str(bad), "--model", str(tmp_path / "m.rbm")]) == 2
    assert "row 2 has 2 fields, expected 3" in capsys.readouterr().err
    corrupt = tmp_path / "corrupt.rbm"
    corrupt.write_bytes(b"RBLBOOST\x01\x00\x00\x00")
    assert main(["predict", str(path), "--model", str(corrupt)]) == 2
    assert "truncated model file" in capsys.readouterr().err
    three = tmp_path / "three.csv"
    three.write_text("".join(f"{i},{i % 3}\n" for i in range(30)))
    assert main(["train", str(three), "--loss", "adaboost", "--model", str(tmp_path / "m.rbm")]) == 2
    assert "REBELClassifier" in capsys.readouterr().err
    header_only = tmp_path / "header.csv"
    header_only.write_text("a,b,label\n")
    assert main(["train", str(header_only), "--model", str(tmp_path / "m.rbm")]) == 2
    assert "a header but no data rows" in capsys.readouterr().err
    # An unwritable model path is reported before any training.
    assert main(["train", str(path), "--target", "label", "--model", str(tmp_path / "no" / "m.rbm")]) == 2
    captured = capsys.readouterr()
    assert "does not exist" in captured.err and "trained" not in captured.out
    costs = tmp_path / "costs.csv"
    costs.write_text("0,1\n1,x\n")
    assert main(["train", str(path), "--target", "label", "--cost-matrix", str(costs), "--model", str(tmp_path / "c.rbm")]) == 2
    assert "numbers only" in capsys.readouterr().err
    costs.write_text("0,1\n1,1\n")
    assert main(["train", str(path), "--target", "label", "--cost-matrix", str(costs), "--model", str(tmp_path / "c.rbm")]) == 2
    assert "zero diagonal" in capsys.readouterr().err


def test_train_multiclass_and_costs(tmp_path, capsys):
    # More than 2 classes picks REBEL; a cost matrix file reaches the model; VEB on request.
    rng = np.random.RandomState(1)
    X = rng.normal(size=(300, 2))
    y = np.argmax(X @ rng.normal(size=(2, 3)) + rng.normal(size=(300, 3)), axis=1)
    data = tmp_path / "three.csv"
    np.savetxt(data, np.column_stack([X, y]), delimiter=",", fmt="%.17g")
    model = tmp_path / "r.rbm"
    assert main(["train", str(data), "--model", str(model), "--n-estimators", "20", "--max-depth", "2"]) == 0
    assert "REBELClassifier" in capsys.readouterr().out
    clf = rebelboost.load(model)
    expected = rebelboost.REBELClassifier(n_estimators=20, max_depth=2).fit(X, y.astype(int))
    np.testing.assert_array_equal(clf.decision_function(X), expected.decision_function(X))
    C = np.array([[0, 1, 1], [10, 0, 10], [1, 1, 0.0]])
    costs = tmp_path / "costs.csv"
    np.savetxt(costs, C, delimiter=",")
    assert main(["train", str(data), "--model", str(model), "--n-estimators", "20", "--cost-matrix", str(costs)]) == 0
    np.testing.assert_array_equal(rebelboost.load(model).cost_matrix_, C)
    binary = tmp_path / "two.csv"
    np.savetxt(binary, np.column_stack([X, y == 1]), delimiter=",", fmt="%.17g")
    assert main(["train", str(binary), "--loss", "veb", "--lam", "0.3", "--model", str(model), "--n-estimators", "10"]) == 0
    loaded = rebelboost.load(model)
    assert type(loaded).__name__ == "VEBBoostClassifier" and loaded.lam == 0.3


def test_cmake_dir_exists():
    result = run("cmake-dir")
    assert result.returncode == 0
    import os

    assert os.path.isfile(os.path.join(result.stdout.strip(), "rebelboost-config.cmake"))
