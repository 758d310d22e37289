"""rebelboost.dask on a LocalCluster: the model a distributed fit gives is the local fit's, byte for byte, for
every loss, depth, NaN, weights, subsampling, worker count and chunking (uneven and empty blocks); faults
end a fit with a clear error instead of a hang."""

import os
import pickle
import signal
import threading
import time

import numpy as np
import pytest

dask = pytest.importorskip("dask")
distributed = pytest.importorskip("distributed")
da = pytest.importorskip("dask.array")
dd = pytest.importorskip("dask.dataframe")

import rebelboost  # noqa: E402
from rebelboost.dask import _live_workers as live_workers  # noqa: E402
from rebelboost.dask import (  # noqa: E402
    DaskAdaBoostClassifier,
    DaskFitError,
    DaskREBELClassifier,
    DaskVEBBoostClassifier,
)

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::ResourceWarning",
                                        "ignore::pytest.PytestUnraisableExceptionWarning")

LOCAL = {DaskAdaBoostClassifier: rebelboost.AdaBoostClassifier, DaskREBELClassifier: rebelboost.REBELClassifier,
         DaskVEBBoostClassifier: rebelboost.VEBBoostClassifier}


@pytest.fixture(scope="module")
def client():
    cluster = distributed.LocalCluster(n_workers=3, threads_per_worker=1, processes=True, dashboard_address=":0",
                                       worker_class=distributed.Nanny)
    with distributed.Client(cluster) as c:
        yield c
    cluster.close()


def data(n=1200, d=8, classes=2, nan=True, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    score = X[:, 0] + 0.5 * X[:, 1] ** 2 - X[:, 2] * X[:, 3] + 0.3 * rng.normal(size=n)
    y = np.digitize(score, np.quantile(score, np.linspace(0, 1, classes + 1)[1:-1])).astype(np.int64)
    if nan:
        X[rng.random(size=X.shape) < 0.05] = np.nan
    return X, y


def on_workers(client, array, chunks, n_workers):
    """A dask array with the given row chunks whose blocks sit on the first n_workers workers only."""
    workers = sorted(live_workers(client))[:n_workers]
    x = da.from_array(array, chunks=(chunks,) + tuple((s,) for s in array.shape[1:]))
    return client.persist(x, workers=workers)


def fit_both(client, cls, X, y, chunks, n_workers, w=None, **params):
    Xd = on_workers(client, X, chunks, n_workers)
    yd = on_workers(client, y, chunks, n_workers)
    wd = None if w is None else on_workers(client, w, chunks, n_workers)
    est = cls(client=client, **params).fit(Xd, yd, sample_weight=wd)
    ref = LOCAL[cls](**params).fit(X, y, sample_weight=w)
    return est, ref, Xd


def assert_same_model(est, ref, X, tmp_path):
    local = est.to_local()
    assert type(local) is type(ref)
    assert local._model.to_bytes() == ref._model.to_bytes()
    est.save(tmp_path / "dask.rbm")
    ref.save(tmp_path / "local.rbm")
    assert (tmp_path / "dask.rbm").read_bytes() == (tmp_path / "local.rbm").read_bytes()
    np.testing.assert_array_equal(local.decision_function(X), ref.decision_function(X))


CHUNKINGS = {"even": (400, 400, 400), "uneven": (37, 700, 0, 463), "empty_first": (0, 1200),
             "many": (100,) * 12}


@pytest.mark.parametrize("n_workers", [1, 2, 3])
@pytest.mark.parametrize("chunking", sorted(CHUNKINGS))
def test_adaboost_identity_over_workers_and_chunkings(client, tmp_path, n_workers, chunking):
    X, y = data()
    est, ref, _ = fit_both(client, DaskAdaBoostClassifier, X, y, CHUNKINGS[chunking], n_workers,
                           n_estimators=15, max_depth=3, random_state=1)
    assert_same_model(est, ref, X, tmp_path)
    info = est.fit_info_["dask"]
    assert 1 <= info["workers"] <= n_workers  # a worker holding only empty blocks takes part with 0 rows
    assert sum(info["rows_per_worker"]) == len(y)


@pytest.mark.parametrize("depth", [1, 2, 4, 6])
def test_depths(client, tmp_path, depth):
    X, y = data(seed=depth)
    est, ref, _ = fit_both(client, DaskAdaBoostClassifier, X, y, CHUNKINGS["uneven"], 3, n_estimators=8,
                           max_depth=depth)
    assert_same_model(est, ref, X, tmp_path)


@pytest.mark.parametrize("classes", [2, 10])
def test_rebel_identity(client, tmp_path, classes):
    X, y = data(n=1500, classes=classes, seed=classes)
    est, ref, Xd = fit_both(client, DaskREBELClassifier, X, y, (500, 0, 333, 667), 3, n_estimators=10, max_depth=3)
    assert_same_model(est, ref, X, tmp_path)
    np.testing.assert_array_equal(est.predict(Xd).compute(), ref.predict(X))
    np.testing.assert_array_equal(est.predict_proba(Xd).compute(), ref.predict_proba(X))
    np.testing.assert_array_equal(est.decision_function(Xd).compute(), ref.decision_function(X))


@pytest.mark.parametrize("loss", ["logistic", "squared"])
def test_rebel_losses_identity(client, tmp_path, loss):
    # The Newton root's histograms and curvatures, and the Newton steps' exact sums, reduced over the workers.
    X, y = data(n=1500, classes=4, seed=11)
    est, ref, Xd = fit_both(client, DaskREBELClassifier, X, y, (500, 0, 333, 667), 3, n_estimators=6, max_depth=3,
                            loss=loss)
    assert_same_model(est, ref, X, tmp_path)
    assert est.loss_ == loss
    np.testing.assert_array_equal(est.predict_proba(Xd).compute(), ref.predict_proba(X))


def test_veb_with_weights(client, tmp_path):
    X, y = data(seed=5)
    w = np.random.default_rng(5).exponential(size=len(y))
    w[::7] = 0.0
    est, ref, _ = fit_both(client, DaskVEBBoostClassifier, X, y, CHUNKINGS["uneven"], 2, w=w, n_estimators=10,
                           max_depth=2)
    assert_same_model(est, ref, X, tmp_path)


@pytest.mark.parametrize("cls", [DaskAdaBoostClassifier, DaskREBELClassifier])
def test_weights_subsample_feature_fraction(client, tmp_path, cls):
    X, y = data(classes=2 if cls is DaskAdaBoostClassifier else 3, seed=3)
    w = np.random.default_rng(3).uniform(0.1, 3.0, size=len(y))
    est, ref, _ = fit_both(client, cls, X, y, CHUNKINGS["many"], 3, w=w, n_estimators=12, max_depth=3,
                           subsample=0.6, feature_fraction=0.5, random_state=7, class_weight="balanced")
    assert_same_model(est, ref, X, tmp_path)


@pytest.mark.parametrize("quick", [True, "auto"])
def test_pruning_across_workers_keeps_the_local_model(client, tmp_path, quick):
    # quick=True: every layer takes the distributed pruned pass (three reductions); "auto" on layers large
    # enough to choose, with clean labels so that the mass concentrates and the pruned pass is probed.
    n = 60_000 if quick == "auto" else 3000
    X, _ = data(n=n, d=18, nan=quick is True, seed=5)
    y = (X[:, 0] + 0.5 * np.nan_to_num(X[:, 1]) > 0.2).astype(np.int64)
    est, ref, _ = fit_both(client, DaskAdaBoostClassifier, X, y, (n // 3, 0, n - n // 3), 2, n_estimators=25,
                           max_depth=3, quick=quick)
    assert_same_model(est, ref, X, tmp_path)
    history = est.fit_info_["quick_nodes"]
    assert sum(history) > 0, "the pruned pass never ran"
    assert sum(est.fit_info_["features_pruned"]) > 0


def test_gini_criterion_and_float32(client, tmp_path):
    X, y = data(seed=8)
    X = X.astype(np.float32)
    est, ref, _ = fit_both(client, DaskAdaBoostClassifier, X, y, CHUNKINGS["uneven"], 3, n_estimators=10, max_depth=2,
                           criterion="gini")
    assert_same_model(est, ref, X, tmp_path)


def test_bin_sample_is_the_local_one(client, tmp_path):
    # More rows than the bin sample (200 000 by default would need a big test): a seeded sample of a
    # subsample of the rows is the same rows by global index on every worker.
    X, y = data(n=3000, seed=9)
    X[:, 4] = np.round(X[:, 4] * 1000)  # many distinct values: the edges depend on which rows are sampled
    est, ref, _ = fit_both(client, DaskAdaBoostClassifier, X, y, (1000, 1000, 1000), 3, n_estimators=5, max_depth=2,
                           n_bins=16, random_state=4)
    assert_same_model(est, ref, X, tmp_path)


def test_eval_set_and_early_stopping(client, tmp_path):
    X, y = data(n=1600, classes=3, seed=11)
    Xv, yv = data(n=400, classes=3, seed=12)
    params = dict(n_estimators=60, max_depth=2, learning_rate=0.5, early_stopping=True, n_iter_no_change=3,
                  scoring="error")
    est = DaskREBELClassifier(client=client, **params).fit(
        on_workers(client, X, (800, 800), 2), on_workers(client, y, (800, 800), 2),
        eval_set=[(da.from_array(Xv, chunks=(150, 8)), da.from_array(yv, chunks=150))])
    ref = rebelboost.REBELClassifier(**params).fit(X, y, eval_set=[(Xv, yv)])
    assert est.best_iteration_ == ref.best_iteration_
    np.testing.assert_array_equal(est.evals_result_["valid_0"]["error"], ref.evals_result_["valid_0"]["error"])
    assert_same_model(est, ref, X, tmp_path)


def test_warm_start_continues_exactly(client, tmp_path):
    X, y = data(seed=13)
    Xd, yd = on_workers(client, X, (600, 600), 2), on_workers(client, y, (600, 600), 2)
    est = DaskAdaBoostClassifier(client=client, n_estimators=5, max_depth=2, warm_start=True).fit(Xd, yd)
    est.set_params(n_estimators=12).fit(Xd, yd)
    ref = rebelboost.AdaBoostClassifier(n_estimators=5, max_depth=2, warm_start=True).fit(X, y)
    ref.set_params(n_estimators=12).fit(X, y)
    assert_same_model(est, ref, X, tmp_path)
    at_once = rebelboost.AdaBoostClassifier(n_estimators=12, max_depth=2).fit(X, y)
    np.testing.assert_array_equal(est.to_local()._model.steps(), at_once._model.steps())
    for a, b in zip(est.to_local()._model.trees(), at_once._model.trees()):
        for key in a:
            np.testing.assert_array_equal(a[key], b[key])


def test_dataframe_input_keeps_feature_names(client, tmp_path):
    pd = pytest.importorskip("pandas")
    X, y = data(seed=14)
    frame = pd.DataFrame(X, columns=[f"f{i}" for i in range(X.shape[1])])
    ddf = dd.from_pandas(frame, npartitions=3)
    est = DaskAdaBoostClassifier(client=client, n_estimators=6).fit(ddf, dd.from_pandas(pd.Series(y), npartitions=3))
    ref = rebelboost.AdaBoostClassifier(n_estimators=6).fit(frame, y)
    assert list(est.feature_names_in_) == list(ref.feature_names_in_)
    assert_same_model(est, ref, frame, tmp_path)


def test_labels_and_weights_may_be_plain_arrays(client, tmp_path):
    X, y = data(seed=18)
    w = np.linspace(0.5, 2.0, len(y))
    Xd = on_workers(client, X, (500, 700), 2)
    est = DaskAdaBoostClassifier(client=client, n_estimators=5).fit(Xd, list(y), sample_weight=w)
    ref = rebelboost.AdaBoostClassifier(n_estimators=5).fit(X, y, sample_weight=w)
    assert_same_model(est, ref, X, tmp_path)
    with pytest.raises(ValueError, match="one entry per row"):
        DaskAdaBoostClassifier(client=client).fit(Xd, y[:10])


def test_pickle_and_load(client, tmp_path):
    X, y = data(seed=15)
    est, ref, Xd = fit_both(client, DaskAdaBoostClassifier, X, y, (600, 600), 2, n_estimators=6)
    again = pickle.loads(pickle.dumps(est))
    np.testing.assert_array_equal(again.predict(Xd).compute(), ref.predict(X))
    est.save(tmp_path / "m.rbm")
    loaded = rebelboost.load(tmp_path / "m.rbm")
    assert type(loaded) is rebelboost.AdaBoostClassifier
    np.testing.assert_array_equal(loaded.predict(X), ref.predict(X))


def test_fits_at_once_never_wait_for_each_other(client, monkeypatch):
    """Four fits on the same three one-thread workers, three times over. Each rank waits for all its fit's
    ranks, so without the workers' locks two fits can each hold a thread the other's rank is queued behind
    (seen in CI: a 600 s stall). The backstop is cut to 20 s so that such a stall fails the test quickly."""
    monkeypatch.setattr(DaskAdaBoostClassifier, "_timeout", lambda self: 20.0)
    X, y = data(seed=16)
    Xd, yd = on_workers(client, X, (300, 500, 400), 3), on_workers(client, y, (300, 500, 400), 3)
    depths = [1, 2, 3, 4]
    for _ in range(3):
        models = {}

        def fit(depth):
            try:
                models[depth] = DaskAdaBoostClassifier(client=client, n_estimators=10, max_depth=depth).fit(Xd, yd)
            except Exception as e:  # noqa: BLE001 - the error is the outcome
                models[depth] = e

        threads = [threading.Thread(target=fit, args=(d,)) for d in depths]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        for depth in depths:
            assert not isinstance(models[depth], Exception), models[depth]
            ref = rebelboost.AdaBoostClassifier(n_estimators=10, max_depth=depth).fit(X, y)
            assert models[depth].to_local()._model.to_bytes() == ref._model.to_bytes()


def test_the_workers_locks_are_made_once_per_client(client, monkeypatch):
    """Each distributed.Lock keeps a lease-refresh timer on the client's loop while it lives: fits reuse one
    Lock per worker instead of adding one per fit (200 fits had left 400 timers behind)."""
    from rebelboost import _collective

    made = []

    class CountingLock(_collective.Lock):
        def __init__(self, *args, **kwargs):
            made.append(kwargs.get("name", args[0] if args else None))
            super().__init__(*args, **kwargs)

    monkeypatch.setattr(_collective, "Lock", CountingLock)
    monkeypatch.setattr(_collective, "_WORKER_LOCKS", type(_collective._WORKER_LOCKS)())
    workers = sorted(live_workers(client))
    for _ in range(20):
        with _collective.exclusive_workers(client, workers):
            pass
    assert sorted(made) == sorted(f"rebelboost-worker-{w}" for w in workers)


def _break_training(dask_worker=None):
    """On one worker: the core's train raises at once, as a rank that ran out of memory would."""
    import rebelboost.dask as module

    class Broken:
        def __init__(self, core):
            self.core = core

        def __getattr__(self, name):
            return getattr(self.core, name)

        def train(self, *args, **kwargs):
            raise MemoryError("simulated: the rank ran out of memory")

    module._core = Broken(module._core)


def _mend_training(dask_worker=None):
    import rebelboost.dask as module

    module._core = getattr(module._core, "core", module._core)


def test_a_failed_rank_frees_the_other_ranks_at_once(client):
    """A rank that fails by itself (not the cluster): the client aborts the rest, whose threads are free for
    the next task within seconds, not after the 600 s backstop."""
    X, y = data(seed=19)
    Xd, yd = on_workers(client, X, (600, 600), 2), on_workers(client, y, (600, 600), 2)
    distributed.wait([Xd, yd])
    holders = sorted({a for held in client.who_has(distributed.futures_of(Xd)).values() for a in held})
    assert len(holders) == 2  # two ranks
    survivor, victim = holders
    client.run(_break_training, workers=[victim])
    try:
        with pytest.raises(MemoryError, match="simulated"):
            DaskAdaBoostClassifier(client=client, n_estimators=10).fit(Xd, yd)
        assert client.submit(lambda: 1, workers=[survivor], pure=False).result(timeout=60) == 1
    finally:
        client.run(_mend_training, workers=[victim])
    est = DaskAdaBoostClassifier(client=client, n_estimators=4).fit(Xd, yd)
    assert est.to_local()._model.to_bytes() == rebelboost.AdaBoostClassifier(n_estimators=4).fit(X, y)._model.to_bytes()


def test_parameters_are_checked_by_the_local_rules(client):
    X, y = data(n=200)
    Xd, yd = da.from_array(X, chunks=(100, 8)), da.from_array(y, chunks=100)
    with pytest.raises(ValueError, match="max_depth"):
        DaskAdaBoostClassifier(client=client, max_depth=12).fit(Xd, yd)
    with pytest.raises(ValueError, match="not distributed"):
        DaskREBELClassifier(client=client, weak_learner="similarity").fit(Xd, yd)
    with pytest.raises(ValueError, match="eval_set"):
        DaskAdaBoostClassifier(client=client, early_stopping=True).fit(Xd, yd)
    with pytest.raises(ValueError, match="only 1 class"):
        DaskAdaBoostClassifier(client=client).fit(Xd, da.zeros(200, chunks=100, dtype=int))
    with pytest.raises(ValueError, match="Only binary"):
        DaskAdaBoostClassifier(client=client).fit(Xd, da.from_array(np.arange(200) % 3, chunks=100))
    assert DaskREBELClassifier(client=client, max_depth=3).get_params()["max_depth"] == 3
    with pytest.raises(ValueError, match="kept no learner"):  # the local rule for a fit that diverged at once
        DaskAdaBoostClassifier(client=client, learning_rate=3.0).fit(Xd, yd)
    with pytest.raises(ValueError, match="kept no learner"):
        rebelboost.AdaBoostClassifier(learning_rate=3.0).fit(X, y)
    bad = X.copy()
    bad[150, 2] = np.inf  # one rank's data error is raised as itself; the other rank only sees the abort
    with pytest.raises(ValueError, match=r"infinite value \(row 150, column 2\)"):  # the global row
        DaskAdaBoostClassifier(client=client).fit(on_workers(client, bad, (100, 100), 2), on_workers(client, y, (100, 100), 2))


@pytest.mark.slow
@pytest.mark.parametrize("victim", [0, 1], ids=["rank 0's worker", "rank 1's worker"])
def test_a_worker_lost_mid_fit_is_a_clear_error_within_seconds(tmp_path, victim):
    X, y = data(n=40000, d=20, seed=17)
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0")
    with distributed.Client(cluster) as c:
        Xd, yd = on_workers(c, X, (20000, 20000), 2), on_workers(c, y, (20000, 20000), 2)
        victim = sorted(live_workers(c))[victim]
        outcome = {}

        def fit():
            try:
                DaskAdaBoostClassifier(client=c, n_estimators=100000, max_depth=6).fit(Xd, yd)
            except Exception as e:  # noqa: BLE001 - the error is the outcome
                outcome["error"] = e
            outcome["end"] = time.monotonic()

        thread = threading.Thread(target=fit)
        thread.start()
        time.sleep(3.0)
        killed = time.monotonic()
        pid = c.run(os.getpid, workers=[victim])[victim]
        os.kill(pid, signal.SIGKILL)
        thread.join(60)
        assert not thread.is_alive(), "fit still running 60 s after a worker was killed"
        assert isinstance(outcome.get("error"), DaskFitError), outcome
        assert "left the cluster" in str(outcome["error"]) or "failed on the cluster" in str(outcome["error"])
        assert outcome["end"] - killed < 30
    cluster.close()


@pytest.mark.slow
def test_the_readme_example_runs_as_written(tmp_path):
    import subprocess
    import sys

    readme = open(os.path.join(os.path.dirname(__file__), "..", "..", "README.md")).read()
    section = readme[readme.index("## Distributed training (Dask)"):]
    code = section[section.index("```python") + len("```python"):]
    code = code[:code.index("```")]
    script = tmp_path / "example.py"
    script.write_text(code)
    done = subprocess.run([sys.executable, str(script)], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert (tmp_path / "model.rbm").exists()


def test_the_bin_sample_is_bounded():
    from rebelboost import _core

    np.testing.assert_array_equal(_core.bin_sample_rows(5, 3), [0, 1, 3])  # evenly spaced, as a local fit's
    with pytest.raises(ValueError, match="2\\^32"):
        _core.bin_sample_rows(2**40, 2**40)


def test_the_cores_distributed_arguments_are_checked():
    """What a rank hands the core: bin edges, global row indices and the reducer's replies are checked."""
    from rebelboost import _core

    X, y = data(n=50, nan=False)
    y = y.astype(np.int32)
    edges = _core.bin_edges(X, 256)
    rows = np.arange(50, dtype=np.uint64)

    def fit(**kw):
        args = dict(reducer=lambda v, op: v, bin_edges=edges, global_rows=rows)
        args.update(kw)
        return _core.train(X, y, None, 2, "adaboost", 2, 2, 256, 1.0, 1, **args)

    assert fit()[0].n_learners == 2  # one participant: its own totals
    with pytest.raises(ValueError, match="bin edges for 3 features"):
        fit(bin_edges=edges[:3])
    with pytest.raises(ValueError, match="not finite and increasing"):
        fit(bin_edges=[e[::-1].copy() for e in edges])
    with pytest.raises(ValueError, match="global_rows"):
        fit(global_rows=rows[:10])
    with pytest.raises(ValueError, match="wrong length"):
        fit(reducer=lambda v, op: v[:1])
