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
    assert main(["train", str(three), "--model", str(tmp_path / "m.rbm")]) == 2
    assert "REBELClassifier" in capsys.readouterr().err


def test_cmake_dir_exists():
    result = run("cmake-dir")
    assert result.returncode == 0
    import os

    assert os.path.isfile(os.path.join(result.stdout.strip(), "rebelboost-config.cmake"))
