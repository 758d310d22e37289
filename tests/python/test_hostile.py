"""Hostile input never crashes, hangs or exhausts memory: bounded threads, trees, features and classes,
finite scores, metadata checked against the payload at load, and saves that leave nothing behind."""

import json
import os
import resource
import signal
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sklearn.exceptions import ConvergenceWarning

import rebelboost
from rebelboost import AdaBoostClassifier, ModelFileError, REBELClassifier, VEBBoostClassifier, _core

from model_bytes import chain, parse, without_covers

ESTIMATORS = [AdaBoostClassifier, VEBBoostClassifier, REBELClassifier]


def run_limited(code, memory=2 << 30, timeout=120):
    """Runs Python `code` in a subprocess under an address-space cap; returns (returncode, stdout, stderr)."""

    def limit():
        resource.setrlimit(resource.RLIMIT_AS, (memory, memory))

    proc = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], preexec_fn=limit, capture_output=True,
                          text=True, timeout=timeout)
    return proc.returncode, proc.stdout, proc.stderr


@pytest.fixture(scope="module")
def noisy():
    rng = np.random.RandomState(5)
    X = rng.normal(size=(400, 5))
    y = (X[:, 0] + X[:, 1] * X[:, 2] + 0.8 * rng.normal(size=400) > 0).astype(int)
    y3 = np.argmax(X[:, :3] + 0.8 * rng.normal(size=(400, 3)), axis=1)
    return X, y, y3


def test_absurd_n_jobs_neither_crash_nor_change_the_model():
    # n_jobs=10**6 ended in a SIGSEGV inside libgomp, n_jobs=1000 in "Thread creation failed" under a cap.
    code, out, err = run_limited("""
        import numpy as np
        from rebelboost import AdaBoostClassifier, REBELClassifier
        rng = np.random.RandomState(0)
        X = rng.normal(size=(2000, 6)); y = (X[:, 0] + rng.normal(size=2000) > 0).astype(int)
        ref = AdaBoostClassifier(n_estimators=5, n_jobs=1).fit(X, y)
        for n_jobs in (10**6, 1000):
            clf = AdaBoostClassifier(n_estimators=5, n_jobs=n_jobs).fit(X, y)
            assert clf._model.to_bytes() == ref._model.to_bytes()
            assert (clf.decision_function(X) == ref.decision_function(X)).all()
        REBELClassifier(n_estimators=2, n_jobs=10**6).fit(X, np.argmax(X[:, :3], axis=1))
        print("ok")
    """)
    assert code == 0 and out.strip() == "ok", err[-2000:]


def test_a_tampered_n_jobs_in_a_file_cannot_kill_the_loader(tmp_path, noisy):
    # A 3 KB file with n_jobs=10**6 in its parameters killed any process predicting 257 rows or more.
    X, y, _ = noisy
    AdaBoostClassifier(n_estimators=5).fit(X, y).save(tmp_path / "m.rbm")
    parts = parse((tmp_path / "m.rbm").read_bytes())
    meta = json.loads(parts.metadata)
    meta["params"]["n_jobs"] = 10**6
    parts.metadata = json.dumps(meta).encode()
    (tmp_path / "tampered.rbm").write_bytes(parts.file())
    code, out, err = run_limited(f"""
        import numpy as np, rebelboost
        clf = rebelboost.load({str(tmp_path / "tampered.rbm")!r})
        X = np.random.RandomState(0).normal(size=(5000, 5))
        assert np.isfinite(clf.predict_proba(X)).all()
        print("ok")
    """)
    assert code == 0 and out.strip() == "ok", err[-2000:]


@pytest.mark.slow
def test_lopsided_deep_trees_predict_without_flattening_them(tmp_path, noisy):
    # 40 000 depth-12 chains of 25 nodes predicting 171 rows were flattened into complete trees (2.4 GB);
    # here 4 000 of them: 420 MB flattened, a few MB walked node by node.
    X, y, _ = noisy
    AdaBoostClassifier(n_estimators=1).fit(X, y).save(tmp_path / "m.rbm")
    parts = parse((tmp_path / "m.rbm").read_bytes())
    parts.trees = [chain(12, 5, 0.001 * (t % 7 - 3)) for t in range(4000)]
    (tmp_path / "chains.rbm").write_bytes(parts.file())
    code, out, err = run_limited(f"""
        import resource
        import numpy as np, rebelboost
        clf = rebelboost.load({str(tmp_path / "chains.rbm")!r})
        X = np.random.RandomState(1).normal(size=(171, 5))
        one_by_one = np.array([clf.decision_function(X[i:i + 1])[0] for i in range(len(X))])  # the node walk
        before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        batch = clf.decision_function(X)
        print((resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) // 1024, int((batch == one_by_one).all()))
    """)
    assert code == 0, err[-2000:]
    grown_mib, equal = map(int, out.split())
    assert equal == 1 and grown_mib < 64


def test_file_counts_beyond_the_limits_are_clear_errors(tmp_path, noisy):
    X, y, _ = noisy
    AdaBoostClassifier(n_estimators=2).fit(X, y).save(tmp_path / "m.rbm")
    parts = parse((tmp_path / "m.rbm").read_bytes())
    parts.n_features = 2**32 - 1  # feature_importances_ would have asked for 32 GiB
    with pytest.raises(ModelFileError, match="4294967295 features, more than the limit kMaxFeatures = 16777216"):
        _core.Model.from_bytes(parts.file())


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore:The number of unique classes is greater than 50%")
def test_a_million_classes_is_a_clear_error_not_a_memory_error():
    # np.arange(10**6) as labels died in numpy's MemoryError ("Unable to allocate 7.28 TiB").
    X = np.zeros((10**6, 1), dtype=np.float32)
    for cls in (REBELClassifier, AdaBoostClassifier):
        with pytest.raises(ValueError, match="1000000 distinct classes, more than the limit of 4096 classes"):
            cls().fit(X, np.arange(10**6))


def test_scores_that_could_overflow_are_rejected_at_load(tmp_path, noisy):
    # Finite steps of 1e308 loaded and gave inf scores and NaN probabilities.
    X, y, _ = noisy
    AdaBoostClassifier(n_estimators=3).fit(X, y).save(tmp_path / "m.rbm")
    parts = parse((tmp_path / "m.rbm").read_bytes())
    for tree in parts.trees:
        tree.step[:] = 1e308
    with pytest.raises(ModelFileError, match="beyond the limit kMaxAbsScore = 1e300"):
        _core.Model.from_bytes(parts.file())


@pytest.mark.parametrize("cls", ESTIMATORS)
@pytest.mark.parametrize("learning_rate", [1e308, 1e300, 1000.0, 3.0])
def test_a_fit_that_diverges_at_once_is_an_error_later_a_warning_and_a_usable_model(cls, learning_rate, noisy,
                                                                                      tmp_path):
    # learning_rate=1e308 trained a model of inf scores that could not be saved (stop reason "no_edge"),
    # 1000 reported "perfect_fit" with a NaN loss, and at 3 AdaBoost's loss climbed silently. Then a fit
    # diverging at its first learner kept 0 learners with only a ConvergenceWarning: a constant model.
    X, y, y3 = noisy
    labels = y3 if cls is REBELClassifier else y
    with pytest.raises(ValueError, match="the fit kept no learner .*lower learning_rate"):
        cls(n_estimators=20, learning_rate=learning_rate).fit(X, labels)
    clf = cls(n_estimators=5, learning_rate=0.5, warm_start=True).fit(X, labels)
    clf.set_params(n_estimators=20, learning_rate=learning_rate)
    with pytest.warns(ConvergenceWarning, match="lower learning_rate"):
        clf.fit(X, labels)
    assert clf.fit_info_["stop_reason"] == "diverged" and clf.n_estimators_ == 5
    assert np.isfinite(clf.predict_proba(X)).all()
    clf.save(tmp_path / "d.rbm")
    np.testing.assert_array_equal(rebelboost.load(tmp_path / "d.rbm").decision_function(X), clf.decision_function(X))


@pytest.mark.parametrize("cls", ESTIMATORS)
def test_sample_weights_of_5e_324_are_treated_like_any_other_uniform_weights(cls, noisy):
    # REBEL rejected them ("no usable training weight") while AdaBoost and VEB accepted them.
    X, y, y3 = noisy
    labels = y3 if cls is REBELClassifier else y
    plain = cls(n_estimators=10, max_depth=2).fit(X, labels)
    tiny = cls(n_estimators=10, max_depth=2).fit(X, labels, sample_weight=np.full(len(X), 5e-324))
    assert without_covers(tiny._model.to_bytes()) == without_covers(plain._model.to_bytes())
    # The covers are the sample weights that reach each node: 5e-324 per row, exactly.
    for t_tiny, t_plain in zip(tiny._model.trees(), plain._model.trees()):
        np.testing.assert_array_equal(t_tiny["cover"], t_plain["cover"] * 5e-324)


def _relabel(path, **changes):
    parts = parse(path.read_bytes())
    meta = json.loads(parts.metadata)
    for key, value in changes.items():
        if key == "params":
            meta["params"].update(value)
        else:
            meta[key] = value
    parts.metadata = json.dumps(meta).encode()
    path.write_bytes(parts.file())


def test_estimator_kind_must_match_the_loss(tmp_path, noisy):
    # A REBEL file relabelled as AdaBoostClassifier gave predict_proba of shape (n, 6) for 3 classes.
    X, y, y3 = noisy
    REBELClassifier(n_estimators=3).fit(X, y3).save(tmp_path / "r.rbm")
    _relabel(tmp_path / "r.rbm", estimator="AdaBoostClassifier")
    with pytest.raises(ModelFileError, match="names estimator AdaBoostClassifier but holds a REBEL model"):
        rebelboost.load(tmp_path / "r.rbm")
    AdaBoostClassifier(n_estimators=3).fit(X, y).save(tmp_path / "a.rbm")
    _relabel(tmp_path / "a.rbm", estimator="VEBBoostClassifier")
    with pytest.raises(ModelFileError, match="names estimator VEBBoostClassifier but holds a AdaBoost model"):
        rebelboost.load(tmp_path / "a.rbm")


@pytest.mark.parametrize("params", [{"max_depth": 100}, {"n_estimators": -1}, {"learning_rate": "fast"},
                                    {"quick": "sometimes"}, {"n_jobs": 0}, {"n_bins": 10**9}])
def test_parameters_are_validated_at_load_not_at_first_use(params, tmp_path, noisy):
    X, y, _ = noisy
    AdaBoostClassifier(n_estimators=3).fit(X, y).save(tmp_path / "m.rbm")
    _relabel(tmp_path / "m.rbm", params=params)
    with pytest.raises(ModelFileError, match="invalid parameters"):
        rebelboost.load(tmp_path / "m.rbm")


def test_staged_prediction_holds_a_bounded_number_of_tree_outputs(monkeypatch, noisy):
    X, y, y3 = noisy
    for clf in (AdaBoostClassifier(n_estimators=25).fit(X, y), REBELClassifier(n_estimators=25).fit(X, y3)):
        whole = list(clf.staged_decision_function(X))
        monkeypatch.setattr(rebelboost._base, "_STAGED_OUTPUT_BYTES", 3 * len(X))  # 3 trees at a time
        chunked = list(clf.staged_decision_function(X))
        monkeypatch.undo()
        assert len(chunked) == len(whole) == clf.n_estimators_
        for a, b in zip(chunked, whole):
            np.testing.assert_array_equal(a, b)


@pytest.mark.slow
def test_saves_killed_at_any_instant_leave_nothing_behind(tmp_path, noisy):
    # 12 of 50 saves killed with SIGKILL left model.rbm.tmp-* files (219 MB). A writer saves a ~5 MB model
    # in a loop and is killed at random instants: the file always loads, and once the next save to that
    # path has run, the folder holds the model file only.
    X, y, _ = noisy
    AdaBoostClassifier(n_estimators=20, max_depth=3).fit(X, y).save(tmp_path / "m.rbm")
    parts = parse((tmp_path / "m.rbm").read_bytes())
    parts.trees = parts.trees * 1000
    (tmp_path / "source.rbm").write_bytes(parts.file())
    target = tmp_path / "out" / "model.rbm"
    target.parent.mkdir()
    writer = textwrap.dedent(f"""
        import importlib.util
        spec = importlib.util.spec_from_file_location("rebelboost._core", {_core.__file__!r})
        core = importlib.util.module_from_spec(spec)  # the core alone: no scikit-learn to import
        spec.loader.exec_module(core)
        model = core.Model.load({str(tmp_path / "source.rbm")!r})
        model.save({str(target)!r})
        print("ready", flush=True)
        while True:
            model.save({str(target)!r})
    """)
    rng = np.random.RandomState(0)
    leftovers_seen = 0
    for _ in range(12):
        proc = subprocess.Popen([sys.executable, "-c", writer], stdout=subprocess.PIPE, text=True)
        assert proc.stdout.readline().strip() == "ready"
        time.sleep(rng.uniform(0.0, 0.1))
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        proc.stdout.close()
        assert _core.Model.load(str(target)).n_trees == 20000
        leftovers_seen += len(os.listdir(target.parent)) - 1
    _core.Model.load(str(tmp_path / "m.rbm")).save(str(target))
    assert os.listdir(target.parent) == ["model.rbm"], leftovers_seen


def test_similarity_files_with_degenerate_numbers_predict_finite_scores(tmp_path):
    # Found by bench/hostile_files.py: two anchors 2e-160 apart (q^2 underflows) and a query at their
    # midpoint gave 0 / 0 = NaN scores; tiny scales and huge anchors push distances to infinity.
    X = np.random.RandomState(0).normal(size=(200, 3))
    y = np.argmax(X + np.random.RandomState(1).normal(size=X.shape), axis=1)
    REBELClassifier(n_estimators=6, weak_learner="similarity").fit(X, y).save(tmp_path / "s.rbm")
    for change in ("close anchors", "tiny scale", "huge anchors"):
        parts = parse((tmp_path / "s.rbm").read_bytes())
        s = parts.similarities
        s.feature_mean[:] = 0.0
        if change == "close anchors":
            s.feature_scale[:] = 1.0
            for record in s.learners[s.learners["kind"] == 2]:
                s.anchors[record["anchor_i"]] = [1e-160, 0.0, 0.0]
                s.anchors[record["anchor_j"]] = [-1e-160, 0.0, 0.0]
        elif change == "tiny scale":
            s.feature_scale[:] = 5e-324
        else:
            s.anchors[:] = 1e150 * np.arange(1, len(s.anchors) + 1)[:, None]  # squared distances near 1e300
        (tmp_path / "h.rbm").write_bytes(parts.file())
        clf = rebelboost.load(tmp_path / "h.rbm")
        Xq = np.vstack([np.zeros((1, 3)), X[:20]])
        assert np.isfinite(clf.decision_function(Xq)).all(), change
        assert np.isfinite(clf.predict_proba(Xq)).all(), change


# ---- round 2 (issue 23) ----------------------------------------------------------------------------------
def test_a_path_with_a_nul_byte_is_refused_not_cut(tmp_path, noisy):
    # save("dir/a\0b.rbm") wrote dir/a, and load("m.rbm\0junk") loaded m.rbm: the OS cut the name at the NUL.
    X, y, _ = noisy
    clf = AdaBoostClassifier(n_estimators=3).fit(X, y)
    clf.save(tmp_path / "m.rbm")
    (tmp_path / "d").mkdir()
    for save in (clf.save, lambda p: clf._model.save(p)):
        with pytest.raises(ValueError, match="NUL byte at position"):
            save(str(tmp_path / "d" / "a\0b.rbm"))
    assert os.listdir(tmp_path / "d") == []
    for load in (rebelboost.load, _core.Model.load):  # the Python check and the core's own
        with pytest.raises(ValueError, match="NUL byte at position"):
            load(str(tmp_path / "m.rbm") + "\0junk")
    with pytest.raises(ValueError, match="NUL byte"):
        rebelboost.load(os.fsencode(tmp_path / "m.rbm") + b"\0junk")
    with pytest.raises(TypeError, match="model file path must be a str or os.PathLike"):
        rebelboost.load(3)


@pytest.mark.slow
def test_a_fifo_or_directory_is_refused_without_blocking(tmp_path, noisy):
    # rebelboost.load on a FIFO opened it first and waited forever for a writer. Run in a subprocess so a
    # regression fails on the timeout instead of hanging the suite.
    X, y, _ = noisy
    AdaBoostClassifier(n_estimators=3).fit(X, y).save(tmp_path / "m.rbm")
    os.mkfifo(tmp_path / "fifo.rbm")
    code, out, err = run_limited(f"""
        import rebelboost
        from rebelboost import _core
        for load in (rebelboost.load, _core.Model.load):
            for path in ({str(tmp_path / "fifo.rbm")!r}, {str(tmp_path)!r}):
                try:
                    load(path)
                except OSError as exc:
                    print(exc)
        m = rebelboost.load({str(tmp_path / "m.rbm")!r})
        for path in ({str(tmp_path / "fifo.rbm")!r}, {str(tmp_path)!r}):  # a writer refuses them too
            try:
                m.save(path)
            except OSError as exc:
                print(exc)
    """, timeout=60)
    assert code == 0, err[-2000:]
    lines = out.splitlines()
    assert len(lines) == 6, out
    assert sum("cannot read model file" in l and "not a regular file (a FIFO)" in l for l in lines) == 2, out
    assert sum("not a regular file (a directory)" in l for l in lines) == 3, out
    assert "cannot write model file" in lines[4] and "(a FIFO)" in lines[4], out
    assert stat_is_fifo(tmp_path / "fifo.rbm")


def stat_is_fifo(path):
    import stat

    return stat.S_ISFIFO(os.lstat(path).st_mode)


def _proba_of(est, scores):
    """est.predict_proba for rows whose decision_function is `scores`."""
    est.decision_function = lambda X, n_iter=None: scores
    return est.predict_proba(None)


_SCORE = st.one_of(st.floats(-2200, 2200), st.sampled_from([0.0, 5e-324, 1e-17, 18.0, 20.0, 21.0, 400.0, 1e300, -1e300]))


@pytest.mark.slow
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(2, 6).flatmap(lambda k: st.lists(st.lists(_SCORE, min_size=k, max_size=k), min_size=1,
                                                          max_size=5)), st.sampled_from([1e-12, 1.0, 0.0]))
def test_probabilities_agree_with_predict_for_any_scores(rows, nudge):
    # expit(2H) is 1.0 above H ~ 18: scores [20, 21, -5, -5] gave probabilities [0.49998, 0.49998, ...], so
    # argmax(predict_proba) picked class 0 while predict picked class 1 (binary: H = 1e-17 gave [0.5, 0.5]).
    H = np.asarray(rows, dtype=np.float64)
    H[:, -1] += nudge  # near-ties
    for est, scores in ((REBELClassifier(), H), (REBELClassifier(), H[:, 1] - H[:, 0]),
                        (AdaBoostClassifier(), H[:, 1] - H[:, 0])):
        scores = scores if scores.ndim == 1 or scores.shape[1] > 2 else scores[:, 1] - scores[:, 0]
        proba = _proba_of(est, scores)
        assert np.all(np.isfinite(proba)) and np.all((proba >= 0) & (proba <= 1))
        np.testing.assert_allclose(proba.sum(axis=1), 1.0, rtol=0, atol=1e-14)
        two = np.column_stack([np.zeros_like(scores), scores]) if scores.ndim == 1 else scores
        unique_top = (two == two.max(axis=1, keepdims=True)).sum(axis=1) == 1
        assert np.array_equal(np.argmax(proba, axis=1)[unique_top], est._scores_to_index(scores)[unique_top])
        order = two[:, :, None] > two[:, None, :]  # H_i > H_j implies p_i >= p_j
        assert np.all((proba[:, :, None] >= proba[:, None, :])[order])


def test_probabilities_of_scores_20_and_21_pick_the_predicted_class():
    proba = _proba_of(REBELClassifier(), np.array([[20.0, 21.0, -5.0, -5.0]]))
    assert np.argmax(proba) == 1 and proba[0, 1] > proba[0, 0] > proba[0, 2]


def test_nonsense_parameters_are_clear_errors(noisy):
    # calibrate_cascade on one row, similarity_cache_mb=1e308 (silently held to half of memory) and more
    # classes than similarities can afford (4 096 classes: over 60 s for two learners) were accepted.
    X, y, y3 = noisy
    clf = AdaBoostClassifier(n_estimators=5).fit(X, y)
    with pytest.raises(ValueError, match="at least 2 rows of validation data"):
        clf.calibrate_cascade(X[:1], y[:1], max_accuracy_loss=0.1)
    with pytest.raises(ValueError, match="too small for this target.*at least 39 rows, got 2"):
        clf.calibrate_cascade(X[:2], y[:2], max_accuracy_loss=0.1)
    with pytest.raises(ValueError, match="similarity_cache_mb.*1048576"):
        REBELClassifier(weak_learner="similarity", similarity_cache_mb=1e308).fit(X, y3)
    labels = np.arange(3300) % 1100
    with pytest.raises(ValueError, match="1100 classes; weak_learner='similarity' supports at most 1024"):
        REBELClassifier(weak_learner="similarity").fit(np.random.RandomState(0).normal(size=(3300, 2)), labels)


def test_datetime_columns_and_unknown_class_weight_labels_are_named(noisy):
    # A datetime column gave numpy's DTypePromotionError; class_weight={5: 2.0} said "The classes, [0, 1],
    # are not in class_weight".
    pd = pytest.importorskip("pandas")
    X, y, _ = noisy
    frame = pd.DataFrame(X[:, :2], columns=["a", "b"]).assign(when=pd.date_range("2020", periods=len(X)))
    with pytest.raises(ValueError, match="column 'when' holds datetimes .* not numeric"):
        AdaBoostClassifier(n_estimators=2).fit(frame, y)
    clf = AdaBoostClassifier(n_estimators=2).fit(frame.assign(when=1.0), y)
    with pytest.raises(ValueError, match="column 'when' holds datetimes"):
        clf.predict(frame)
    with pytest.raises(ValueError, match="class_weight names label 5, which is not a class of y"):
        AdaBoostClassifier(class_weight={5: 2.0}).fit(X, y)


def test_a_similarity_model_without_anchors_exports_and_describes(tmp_path, noisy):
    # Found by bench/hostile_files.py (its worker now exports every model): a valid similarity file of
    # constant learners and no anchors loaded and predicted, but learners_ and to_json raised IndexError.
    X, _, y3 = noisy
    REBELClassifier(n_estimators=4, weak_learner="similarity").fit(X, y3).save(tmp_path / "s.rbm")
    parts = parse((tmp_path / "s.rbm").read_bytes())
    s = parts.similarities
    s.anchor_rows, s.anchors = s.anchor_rows[:0], s.anchors[:0]
    s.learners["kind"], s.learners["anchor_i"], s.learners["anchor_j"], s.learners["tau"] = 0, 0, 0, 0.0
    (tmp_path / "c.rbm").write_bytes(parts.file())
    clf = rebelboost.load(tmp_path / "c.rbm")
    assert np.isfinite(clf.predict_proba(X)).all()
    assert (clf.learners_["anchor_rows"] == -1).all() and list(clf.learners_["kind"]) == ["constant"] * 4
    doc = json.loads(rebelboost.to_json(clf))
    assert [learner["anchor_rows"] for learner in doc["similarities"]] == [[-1, -1]] * 4
    assert doc["anchors"] == {"rows": [], "standardised": []}
