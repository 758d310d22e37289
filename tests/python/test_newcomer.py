"""Frictions a newcomer met following the README (issue 20, point 7): each error says what is wrong and
names what the user gave."""

import os

import numpy as np
import pandas as pd
import pytest
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split

from rebelboost import AdaBoostClassifier, REBELClassifier
from rebelboost._validation import usable_cores
from rebelboost.cli import main

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


@pytest.fixture(scope="module")
def digits_split():
    X, y = load_digits(return_X_y=True)
    X_train, X_val, y_train, y_val = train_test_split(X, y, test_size=0.25, random_state=0, stratify=y)
    return X_train, X_val, y_train, y_val


def test_warm_start_after_early_stopping_with_the_same_eval_set_resumes(digits_split):
    X_train, X_val, y_train, y_val = digits_split
    clf = REBELClassifier(n_estimators=40, early_stopping=True, n_iter_no_change=5, scoring="log_loss")
    clf.fit(X_train, y_train, eval_set=[(X_val, y_val)])
    clf.truncate(5)
    clf.set_params(warm_start=True, n_estimators=10, early_stopping=False).fit(X_train, y_train)
    assert clf.n_estimators_ == 10
    clf.truncate(5)
    clf.set_params(early_stopping=True).fit(X_train, y_train, eval_set=[(X_val, y_val)])
    assert 5 <= clf.n_estimators_ <= 10


def test_warm_start_that_carves_its_own_validation_split_says_so(digits_split):
    # It said "the model to continue starts from another bias, so it was trained on other labels or sample
    # weights": the labels were the same; the second fit had carved its own validation split from them.
    X_train, X_val, y_train, y_val = digits_split
    clf = REBELClassifier(n_estimators=20, early_stopping=True, n_iter_no_change=5)
    clf.fit(X_train, y_train, eval_set=[(X_val, y_val)])
    with pytest.raises(ValueError, match="early_stopping=True and no eval_set, this fit trains on X minus a "
                                         "validation split.*pass the eval_set the first fit used"):
        clf.set_params(warm_start=True, n_estimators=30).fit(X_train, y_train)


def test_a_negative_n_jobs_that_leaves_no_core_is_an_error():
    X = np.random.RandomState(0).normal(size=(60, 3))
    y = (X[:, 0] > 0).astype(int)
    with pytest.raises(ValueError, match=r"n_jobs=-1000000 asks for every usable core but 999999"):
        AdaBoostClassifier(n_estimators=2, n_jobs=-(10**6)).fit(X, y)
    with pytest.raises(ValueError, match=f"n_jobs=-{usable_cores() + 1} "):
        AdaBoostClassifier(n_estimators=2, n_jobs=-(usable_cores() + 1)).fit(X, y)
    AdaBoostClassifier(n_estimators=2, n_jobs=-usable_cores()).fit(X, y)  # all but cores - 1: one thread


@pytest.mark.parametrize("dtype", [object, "string", "category"])
def test_a_string_column_is_named(dtype):
    X = pd.DataFrame({"age": [30.0, 41.0, 25.0, 60.0] * 5, "city": ["Oslo", "Rome", "Oslo", "Lima"] * 5})
    X["city"] = X["city"].astype(dtype)
    y = [0, 1, 0, 1] * 5
    with pytest.raises(ValueError, match=r"X column 'city' is not numeric \('Oslo' in row 0, str\); encode it"):
        AdaBoostClassifier(n_estimators=2).fit(X, y)
    clf = AdaBoostClassifier(n_estimators=2).fit(X[["age"]].assign(city=1.0), y)
    with pytest.raises(ValueError, match="X column 'city' is not numeric"):
        clf.predict(X)


def test_numeric_strings_and_missing_values_still_convert():
    X = pd.DataFrame({"a": ["1.5", "2", None, "4"] * 5, "b": [1.0, 2.0, 3.0, 4.0] * 5})
    y = [0, 1, 0, 1] * 5
    assert AdaBoostClassifier(n_estimators=2).fit(X, y).n_features_in_ == 2


@pytest.mark.parametrize("command", ["predict", "export"])
def test_cli_output_errors_name_the_users_path_not_a_temporary_file(tmp_path, capsys, command):
    data = tmp_path / "d.csv"
    rng = np.random.RandomState(0)
    frame = pd.DataFrame(rng.normal(size=(50, 2)), columns=["a", "b"]).assign(label=[0, 1] * 25)
    frame.to_csv(data, index=False)
    model = tmp_path / "m.rbm"
    assert main(["train", str(data), "--target", "label", "--model", str(model), "--n-estimators", "2"]) == 0
    out = tmp_path / "missing-folder" / "out.txt"
    args = ["predict", str(data), "--target", "label"] if command == "predict" else ["export"]
    capsys.readouterr()
    assert main([*args, "--model", str(model), "--output", str(out)]) == 4
    err = capsys.readouterr().err
    assert f"cannot write '{out}': No such file or directory" in err, err
    assert ".tmp" not in err and ".rebelboost-" not in err


def test_the_readme_says_which_scikit_learn_temperature_scaling_needs():
    # CalibratedClassifierCV(method="temperature") came with scikit-learn 1.8; pyproject allows older ones.
    import re

    with open(os.path.join(REPO, "pyproject.toml"), encoding="utf-8") as handle:
        pin = re.search(r'"scikit-learn>=([0-9.]+)"', handle.read()).group(1)
    with open(os.path.join(REPO, "README.md"), encoding="utf-8") as handle:
        readme = handle.read()
    if tuple(int(p) for p in pin.split(".")) < (1, 8) and 'method="temperature"' in readme:
        assert "scikit-learn >= 1.8" in readme


def test_reordered_dataframe_columns_say_how_to_get_the_command_lines_answer(tmp_path, capsys):
    # Python refused a DataFrame whose columns came in another order ("must be in the same order") without
    # saying what to do, while `rebelboost predict` matched the same columns by name.
    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.normal(size=(80, 3)), columns=["a", "b", "c"])
    y = (X["a"] + X["c"] > 0).astype(int)
    clf = AdaBoostClassifier(n_estimators=10).fit(X, y)
    reordered = X[["c", "a", "b"]]
    with pytest.raises(ValueError, match=r"same order as they were in fit\.\nColumn 0 is 'c', fit saw 'a' there; "
                                         r"select the columns in the fitted order with X\[model\.feature_names_in_\]"):
        clf.predict(reordered)
    model, data = tmp_path / "m.rbm", tmp_path / "reordered.csv"
    clf.save(model)
    reordered.to_csv(data, index=False)
    assert main(["predict", str(data), "--model", str(model)]) == 0
    cli_labels = pd.read_csv(__import__("io").StringIO(capsys.readouterr().out))["label"].to_numpy()
    np.testing.assert_array_equal(cli_labels, clf.predict(reordered[clf.feature_names_in_]))


def test_cli_n_jobs_that_leaves_no_core_is_a_usage_error(tmp_path, capsys):
    # The command line said exit code 3 ("bad data") for a bad --n-jobs; it is a parameter value (2).
    data = tmp_path / "d.csv"
    pd.DataFrame({"a": np.arange(20.0), "y": np.arange(20) % 2}).to_csv(data, index=False)
    code = main(["train", str(data), "--target", "y", "--model", str(tmp_path / "m.rbm"), "--n-jobs", "-1000000"])
    assert code == 2 and "n_jobs=-1000000 asks for every usable core" in capsys.readouterr().err
