"""The rebelboost command line: demo, train -> predict -> evaluate round trip, columns matched by name, atomic output,
quiet closed pipes, documented exit codes. Each case the issue found has a test that fails on the old reader."""

import os
import subprocess
import sys
import textwrap

import numpy as np
import pandas as pd
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
    frame = pd.DataFrame(X, columns=["a", "b", "c"]).assign(label=y)
    frame.loc[len(frame)] = [np.nan, np.nan, 0.5, "up"]
    frame.to_csv(path, index=False, float_format="%.17g")
    return path, frame


def test_train_predict_evaluate(labelled_csv, tmp_path, capsys):
    path, frame = labelled_csv
    model = tmp_path / "m.rbm"
    assert main(["train", str(path), "--target", "label", "--model", str(model), "--n-estimators", "30"]) == 0
    assert "model written" in capsys.readouterr().out
    clf = rebelboost.load(model)
    assert list(clf.feature_names_in_) == ["a", "b", "c"]
    out = tmp_path / "pred.csv"
    assert main(["predict", str(path), "--model", str(model), "--target", "label", "--output", str(out),
                 "--proba"]) == 0
    written = pd.read_csv(out)
    assert list(written.columns) == ["label", "p_down", "p_up"] and len(written) == len(frame)
    assert written["label"].tolist() == clf.predict(frame[["a", "b", "c"]]).tolist()
    np.testing.assert_array_equal(written[["p_down", "p_up"]].to_numpy(), clf.predict_proba(frame[["a", "b", "c"]]))
    assert main(["evaluate", str(path), "--model", str(model), "--target", "label"]) == 0
    assert f"accuracy {clf.score(frame[['a', 'b', 'c']], frame['label']):.6f}" in capsys.readouterr().out
    assert main(["export", "--model", str(model)]) == 0
    assert '"trees"' in capsys.readouterr().out


def test_columns_are_matched_by_name(labelled_csv, tmp_path, capsys):
    # A file whose columns come in another order evaluated to accuracy 0.63 instead of 1.00 without error.
    path, frame = labelled_csv
    model = tmp_path / "m.rbm"
    assert main(["train", str(path), "--target", "label", "--model", str(model), "--n-estimators", "40",
                 "--max-depth", "3"]) == 0
    capsys.readouterr()
    assert main(["evaluate", str(path), "--model", str(model), "--target", "label"]) == 0
    same = capsys.readouterr().out.split()[1]
    assert float(same) == 1.0
    shuffled = tmp_path / "shuffled.csv"
    frame[["c", "label", "a", "b"]].to_csv(shuffled, index=False, float_format="%.17g")
    assert main(["evaluate", str(shuffled), "--model", str(model), "--target", "label"]) == 0
    assert capsys.readouterr().out.split()[1] == same
    frame[["c", "a", "label"]].to_csv(shuffled, index=False)
    assert main(["evaluate", str(shuffled), "--model", str(model), "--target", "label"]) == 3
    assert "missing columns the model was trained on: 'b'" in capsys.readouterr().err
    frame.assign(d=1.0).to_csv(shuffled, index=False)
    assert main(["predict", str(shuffled), "--model", str(model), "--target", "label"]) == 3
    assert "columns the model does not know: 'd'" in capsys.readouterr().err
    assert main(["predict", str(path), "--model", str(model)]) == 3  # the label column is extra unless named
    assert "columns the model does not know: 'label'" in capsys.readouterr().err


def test_numeric_header_is_a_header(tmp_path, capsys):
    # pandas' default header 0,1,... was read as a data row and became a class.
    rng = np.random.RandomState(2)
    X = rng.normal(size=(120, 4))
    y = (X[:, 1] > 0).astype(int)
    path = tmp_path / "numeric.csv"
    pd.DataFrame(np.column_stack([X, y])).to_csv(path, index=False)  # header: 0,1,2,3,4
    model = tmp_path / "m.rbm"
    assert main(["train", str(path), "--target", "4", "--model", str(model), "--n-estimators", "10"]) == 0
    clf = rebelboost.load(model)
    assert clf.classes_.tolist() == [0.0, 1.0] and list(clf.feature_names_in_) == ["0", "1", "2", "3"]
    expected = rebelboost.AdaBoostClassifier(n_estimators=10).fit(X, y)
    np.testing.assert_array_equal(clf.decision_function(pd.DataFrame(X, columns=["0", "1", "2", "3"])),
                                  expected.decision_function(X))
    # A file without a header is declared: its columns are named by position.
    bare = tmp_path / "bare.csv"
    np.savetxt(bare, np.column_stack([X, y]), delimiter=",", fmt="%.17g")
    assert main(["train", str(bare), "--no-header", "--target", "-1", "--model", str(model), "--n-estimators", "10"]) == 0
    np.testing.assert_array_equal(rebelboost.load(model).decision_function(pd.DataFrame(X, columns=list("0123"))),
                                  expected.decision_function(X))


def test_target_index_is_checked(tmp_path, capsys):
    # --target 100 on a 65-column file wrapped around to column 35.
    path = tmp_path / "wide.csv"
    pd.DataFrame(np.random.RandomState(0).normal(size=(20, 65)), columns=[f"f{i}" for i in range(65)]).to_csv(
        path, index=False)
    assert main(["train", str(path), "--target", "100", "--model", str(tmp_path / "m.rbm")]) == 3
    assert "--target 100 is out of range for 65 columns (use -65 to 64, or a column name)" in capsys.readouterr().err
    assert main(["train", str(path), "--target", "nope", "--model", str(tmp_path / "m.rbm")]) == 3
    assert "no column named 'nope'" in capsys.readouterr().err


def test_failed_predict_leaves_no_partial_output(labelled_csv, tmp_path, capsys):
    # A failed `predict --output` left a file holding only its header.
    path, frame = labelled_csv
    model = tmp_path / "m.rbm"
    assert main(["train", str(path), "--target", "label", "--model", str(model), "--n-estimators", "5"]) == 0
    other = tmp_path / "other.csv"
    frame[["a", "b"]].to_csv(other, index=False)
    out = tmp_path / "pred.csv"
    assert main(["predict", str(other), "--model", str(model), "--output", str(out)]) == 3
    assert not out.exists() and not list(tmp_path.glob(".rebelboost-*"))
    out.write_text("kept\n")  # an existing file is replaced only by a complete one
    assert main(["predict", str(other), "--model", str(model), "--output", str(out)]) == 3
    assert out.read_text() == "kept\n"


def test_closed_pipe_ends_quietly(labelled_csv, tmp_path):
    # `rebelboost predict ... | head` printed "[Errno 32] Broken pipe".
    path, frame = labelled_csv
    big = tmp_path / "big.csv"
    pd.concat([frame] * 200).to_csv(big, index=False)  # 30 000 rows: more than a pipe buffer
    model = tmp_path / "m.rbm"
    assert main(["train", str(path), "--target", "label", "--model", str(model), "--n-estimators", "5"]) == 0
    child = subprocess.Popen([sys.executable, "-m", "rebelboost", "predict", str(big), "--model", str(model),
                              "--target", "label", "--proba"], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert child.stdout.readline().startswith(b"label")
    child.stdout.close()  # what `head -1` does
    stderr = child.stderr.read()
    child.stderr.close()
    assert child.wait(timeout=60) == 141 and stderr == b""


def test_parquet_and_npz_read_like_csv(labelled_csv, tmp_path, capsys):
    path, frame = labelled_csv
    frame.to_parquet(tmp_path / "train.parquet")
    np.savez(tmp_path / "train.npz", **{c: frame[c].to_numpy(dtype=float if c != "label" else str) for c in frame})
    scores = []
    for data in (path, tmp_path / "train.parquet", tmp_path / "train.npz"):
        model = tmp_path / "m.rbm"
        assert main(["train", str(data), "--target", "label", "--model", str(model), "--n-estimators", "15"]) == 0
        scores.append(rebelboost.load(model).decision_function(frame[["a", "b", "c"]]))
    np.testing.assert_array_equal(scores[0], scores[1])
    np.testing.assert_array_equal(scores[0], scores[2])


def test_version_and_exit_codes(labelled_csv, tmp_path, capsys):
    from importlib.metadata import version

    result = run("--version")
    assert result.returncode == 0 and result.stdout.strip() == f"rebelboost {version('rebelboost')}"
    assert version("rebelboost") == rebelboost.__version__  # one version, from CMakeLists.txt
    path, _ = labelled_csv
    model = str(tmp_path / "m.rbm")
    with pytest.raises(SystemExit) as usage:  # argparse: a required option is missing
        main(["train", str(path), "--model", model])
    assert usage.value.code == 2
    assert main(["train", str(path), "--target", "label", "--model", model, "--n-estimators", str(10**10)]) == 2
    assert "The 'n_estimators' parameter of AdaBoostClassifier must be an int in the range" in capsys.readouterr().err
    assert main(["train", str(tmp_path / "missing.csv"), "--target", "label", "--model", model]) == 4
    assert "missing.csv" in capsys.readouterr().err
    dup = tmp_path / "dup.csv"
    dup.write_text("a,a,label\n1,2,x\n3,4,y\n")
    assert main(["train", str(dup), "--target", "label", "--model", model]) == 3
    assert "repeated column names ['a']" in capsys.readouterr().err
    text = tmp_path / "text.csv"
    text.write_text("a,b,label\n1,2,x\n3,oops,y\n")
    assert main(["train", str(text), "--target", "label", "--model", model]) == 3
    assert "column 'b' is not numeric (e.g. 'oops' in data row 2)" in capsys.readouterr().err


def test_errors_exit_with_code_3(labelled_csv, tmp_path, capsys):
    path, _ = labelled_csv
    bad = tmp_path / "bad.csv"
    bad.write_text("a,b,c\n1,2,3\n4,5\n")
    assert main(["train", str(bad), "--target", "c", "--model", str(tmp_path / "m.rbm")]) == 3
    assert "Expected 3 columns, got 2" in capsys.readouterr().err
    corrupt = tmp_path / "corrupt.rbm"
    corrupt.write_bytes(b"RBLBOOST\x01\x00\x00\x00")
    assert main(["predict", str(path), "--model", str(corrupt)]) == 3
    assert "truncated model file" in capsys.readouterr().err
    three = tmp_path / "three.csv"
    three.write_text("x,label\n" + "".join(f"{i},{i % 3}\n" for i in range(30)))
    assert main(["train", str(three), "--target", "label", "--loss", "adaboost", "--model", str(tmp_path / "m.rbm")]) == 3
    assert "REBELClassifier" in capsys.readouterr().err
    header_only = tmp_path / "header.csv"
    header_only.write_text("a,b,label\n")
    assert main(["train", str(header_only), "--target", "label", "--model", str(tmp_path / "m.rbm")]) == 3
    assert "a header but no data" in capsys.readouterr().err
    # An unwritable model path is reported before any training.
    assert main(["train", str(path), "--target", "label", "--model", str(tmp_path / "no" / "m.rbm")]) == 4
    captured = capsys.readouterr()
    assert "does not exist" in captured.err and "trained" not in captured.out
    costs = tmp_path / "costs.csv"
    costs.write_text("0,1\n1,x\n")
    assert main(["train", str(path), "--target", "label", "--cost-matrix", str(costs), "--model", str(tmp_path / "c.rbm")]) == 3
    assert "numbers only" in capsys.readouterr().err
    costs.write_text("0,1\n1,1\n")
    assert main(["train", str(path), "--target", "label", "--cost-matrix", str(costs), "--model", str(tmp_path / "c.rbm")]) == 3
    assert "zero diagonal" in capsys.readouterr().err


def test_train_multiclass_and_costs(tmp_path, capsys):
    # More than 2 classes picks REBEL; a cost matrix file reaches the model; VEB on request.
    rng = np.random.RandomState(1)
    X = rng.normal(size=(300, 2))
    y = np.argmax(X @ rng.normal(size=(2, 3)) + rng.normal(size=(300, 3)), axis=1)
    data = tmp_path / "three.csv"
    pd.DataFrame({"x0": X[:, 0], "x1": X[:, 1], "y": y}).to_csv(data, index=False, float_format="%.17g")
    model = tmp_path / "r.rbm"
    assert main(["train", str(data), "--target", "y", "--model", str(model), "--n-estimators", "20", "--max-depth", "2"]) == 0
    assert "REBELClassifier" in capsys.readouterr().out
    clf = rebelboost.load(model)
    expected = rebelboost.REBELClassifier(n_estimators=20, max_depth=2).fit(X, y)
    np.testing.assert_array_equal(clf.decision_function(pd.DataFrame(X, columns=["x0", "x1"])), expected.decision_function(X))
    C = np.array([[0, 1, 1], [10, 0, 10], [1, 1, 0.0]])
    costs = tmp_path / "costs.csv"
    np.savetxt(costs, C, delimiter=",")
    assert main(["train", str(data), "--target", "y", "--model", str(model), "--n-estimators", "20", "--cost-matrix", str(costs)]) == 0
    np.testing.assert_array_equal(rebelboost.load(model).cost_matrix_, C)
    binary = tmp_path / "two.csv"
    pd.DataFrame({"x0": X[:, 0], "x1": X[:, 1], "y": y == 1}).to_csv(binary, index=False)
    assert main(["train", str(binary), "--target", "y", "--loss", "veb", "--lam", "0.3", "--model", str(model), "--n-estimators", "10"]) == 0
    loaded = rebelboost.load(model)
    assert type(loaded).__name__ == "VEBBoostClassifier" and loaded.lam == 0.3
    # Localized Similarities (2 classes: still REBEL), equal to the estimator fitted directly.
    assert main(["train", str(binary), "--target", "y", "--weak-learner", "similarity", "--model", str(model),
                 "--n-estimators", "15"]) == 0
    assert "15 similarities" in capsys.readouterr().out
    loaded = rebelboost.load(model)
    direct = rebelboost.REBELClassifier(weak_learner="similarity", n_estimators=15).fit(X, y == 1)
    np.testing.assert_array_equal(loaded.decision_function(pd.DataFrame(X, columns=["x0", "x1"])), direct.decision_function(X))
    assert main(["train", str(binary), "--target", "y", "--loss", "adaboost", "--weak-learner", "similarity",
                 "--model", str(model)]) == 2  # an option AdaBoost does not have: a usage error
    # The cache budget reaches the estimator and changes nothing in the model; a negative one is refused.
    assert main(["train", str(binary), "--target", "y", "--weak-learner", "similarity", "--model", str(model),
                 "--n-estimators", "15", "--similarity-cache-mb", "0"]) == 0
    loaded = rebelboost.load(model)
    assert loaded.similarity_cache_mb == 0.0
    np.testing.assert_array_equal(loaded.decision_function(pd.DataFrame(X, columns=["x0", "x1"])), direct.decision_function(X))
    assert main(["train", str(binary), "--target", "y", "--weak-learner", "similarity", "--model", str(model),
                 "--similarity-cache-mb", "-1"]) == 2  # a parameter error: usage
    assert "similarity_cache_mb" in capsys.readouterr().err


def test_cmake_dir_exists():
    result = run("cmake-dir")
    assert result.returncode == 0
    import os

    assert os.path.isfile(os.path.join(result.stdout.strip(), "rebelboost-config.cmake"))


@pytest.mark.slow
def test_fifo_and_nul_paths_are_clear_errors(labelled_csv, tmp_path):
    # --model or a data file naming a FIFO blocked forever (opened before any check); a NUL byte in a path
    # cut the name there. A subprocess with a timeout, so a regression fails instead of hanging the suite.
    path, _ = labelled_csv
    model = tmp_path / "m.rbm"
    assert main(["train", str(path), "--target", "label", "--model", str(model), "--n-estimators", "5"]) == 0
    fifo = tmp_path / "fifo.csv"
    os.mkfifo(fifo)
    for args in (["predict", str(path), "--model", str(fifo)], ["export", "--model", str(fifo)],
                 ["predict", str(fifo), "--model", str(model)],
                 ["train", str(fifo), "--target", "label", "--model", str(tmp_path / "n.rbm")],
                 ["train", str(path), "--target", "label", "--model", str(model), "--cost-matrix", str(fifo)]):
        result = run(*args)
        assert result.returncode == 4, (args, result.stderr)
        assert "not a regular file (a FIFO)" in result.stderr and str(fifo) in result.stderr
    code = textwrap.dedent(f"""
        from rebelboost.cli import main
        for args in (["predict", {str(path)!r}, "--model", {str(model)!r} + "\\0x"],
                     ["predict", {str(path)!r} + "\\0x", "--model", {str(model)!r}],
                     ["predict", {str(path)!r}, "--model", {str(model)!r}, "--target", "label",
                      "--output", {str(tmp_path / "out.csv")!r} + "\\0x"],
                     ["train", {str(path)!r}, "--target", "label", "--model", {str(tmp_path / "n.rbm")!r} + "\\0x"]):
            print(main(args))
    """)
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert result.stdout.split() == ["3"] * 4, result.stderr
    assert result.stderr.count("NUL byte at position") == 4, result.stderr
    assert sorted(os.listdir(tmp_path)) == ["fifo.csv", "m.rbm", "train.csv"]


def test_the_repeated_column_check_is_linear():
    # names.count(n) for every column was quadratic: a 100 000-column CSV spent minutes in the check.
    # Counted in comparisons, not seconds: every __eq__ and __hash__ call of n distinct names.
    from rebelboost._tables import repeated_names

    calls = [0]

    class Name(str):
        def __eq__(self, other):
            calls[0] += 1
            return str.__eq__(self, other)

        def __hash__(self):
            calls[0] += 1
            return str.__hash__(self)

    n = 4000
    names = [Name(f"c{i}") for i in range(n)] + [Name("c7"), Name("c7"), Name("c9")]
    assert repeated_names(names) == ["c7", "c9"]
    assert calls[0] < 10 * n


@pytest.mark.parametrize("header", [True, False])
def test_wide_csv_fast_path_reads_what_pyarrow_infers(tmp_path, header):
    # Wide files are read with the types their first row suggests (pyarrow's per-column inference made a
    # 100 000-column file take seconds); whatever later rows hold, the frame equals the inferred one.
    import pyarrow.csv as pacsv

    from rebelboost._tables import read_table

    rng = np.random.RandomState(3)
    n = 1200
    first = [str(v) for v in rng.randint(-5, 5, n)]
    first[:6] = ["1", "2.5", "007", "1e3", "x", ""]
    for later in (["2"] * n, list(first), ["2.5"] * n, ["NA"] * n, ["oops"] * n, ["99999999999999999999"] * n, ["1.5e300"] * n):
        rows = [first] * 17 + [later, first]  # the types are guessed from the first 16 rows
        text = ("" if not header else ",".join(f"c{i}" for i in range(n)) + "\n") + "".join(",".join(r) + "\n" for r in rows)
        path = tmp_path / "wide.csv"
        path.write_text(text)
        inferred = pacsv.read_csv(path, read_options=pacsv.ReadOptions(autogenerate_column_names=not header)).to_pandas()
        frame = read_table(path, header=header)
        if not header:
            inferred.columns = [str(i) for i in range(n)]
        pd.testing.assert_frame_equal(frame, inferred)


@pytest.mark.slow
def test_binary_latin1_and_garbage_files_are_short_clear_errors(labelled_csv, tmp_path):
    # A binary file's parse error quoted its raw bytes, a Latin-1 header gave a bare UTF-8 decode error
    # without the file's name, and a garbage --cost-matrix message ended with a line holding only ")".
    path, _ = labelled_csv
    model = str(tmp_path / "m.rbm")
    garbage = tmp_path / "garbage.csv"
    garbage.write_bytes(bytes(np.random.RandomState(0).randint(0, 256, 3000, dtype=np.uint8)))
    latin = tmp_path / "latin.csv"
    latin.write_bytes("caf\xe9,label\n1,0\n2,1\n".encode("latin-1"))
    costs = tmp_path / "costs.csv"
    costs.write_text("0,1\n1,0,5\n")
    for args, message in [(["train", str(garbage), "--target", "label", "--model", model], "binary data"),
                          (["train", str(latin), "--target", "label", "--model", model],
                           "not UTF-8 text: byte 0xe9 at offset 3 (line 1)"),
                          (["train", str(path), "--target", "label", "--model", model, "--cost-matrix", str(garbage)],
                           "binary data"),
                          (["train", str(path), "--target", "label", "--model", model, "--cost-matrix", str(costs)],
                           "not a readable cost matrix CSV")]:
        result = run(*args)
        assert result.returncode == 3, result.stderr
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].isprintable() and len(lines[0]) < 400, result.stderr
        assert message in lines[0] and os.path.basename(args[1] if "--cost-matrix" not in args else args[-1]) in lines[0]


def test_memory_error_has_its_own_exit_code_and_export_writes_a_file(labelled_csv, tmp_path, capsys, monkeypatch):
    # A MemoryError printed "not enough memory ()" and exited with 3, the code for bad data.
    import json

    import rebelboost.cli as cli

    path, _ = labelled_csv
    model = str(tmp_path / "m.rbm")
    assert main(["train", str(path), "--target", "label", "--model", model, "--n-estimators", "5"]) == 0
    assert main(["export", "--model", model, "--output", str(tmp_path / "m.json")]) == 0
    capsys.readouterr()
    assert json.loads((tmp_path / "m.json").read_text()) == json.loads(rebelboost.to_json(rebelboost.load(model)))

    def no_memory(*args, **kwargs):
        raise MemoryError()

    monkeypatch.setattr(rebelboost, "to_json", no_memory)
    assert main(["export", "--model", model]) == cli.EXIT_MEMORY == 5
    err = capsys.readouterr().err
    assert "not enough memory for this export;" in err and "()" not in err
    assert "5 not enough memory" in cli.EXIT_CODES_HELP


@pytest.mark.parametrize("loss", ["logistic", "squared"])
def test_train_with_rebels_other_losses(labelled_csv, tmp_path, loss, capsys):
    path, frame = labelled_csv
    model = tmp_path / f"{loss}.rbm"
    assert main(["train", str(path), "--target", "label", "--loss", loss, "--n-estimators", "10", "--max-depth", "2",
                 "--model", str(model)]) == 0
    clf = rebelboost.load(model)
    assert type(clf).__name__ == "REBELClassifier" and clf.loss_ == loss and clf._model.rebel_loss == loss
    complete = tmp_path / "complete.csv"
    frame.dropna().to_csv(complete, index=False)
    capsys.readouterr()
    assert main(["train", str(complete), "--target", "label", "--loss", loss, "--weak-learner", "similarity",
                 "--model", str(tmp_path / "s.rbm")]) == 3
    assert "similarities need REBEL's exponential loss" in capsys.readouterr().err
