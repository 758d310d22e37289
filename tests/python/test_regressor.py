"""BoostingRegressor: an independent slow gradient-boosting reference, identities between modes (threads,
warm start, staged and batch prediction, file, pickle and JSON round trips), early stopping, hostile input."""

import pickle

import numpy as np
import pytest

import rebelboost
from rebelboost import BoostingRegressor


def _data(n=600, d=4, seed=0, nan=False):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = np.sin(2 * X[:, 0]) + 0.5 * X[:, 1] ** 2 + 0.3 * rng.normal(size=n)
    if nan:
        X[rng.random(n) < 0.1, 1] = np.nan
    return X, y


def _reference_tree(X, r, w, depth, min_leaf):
    """A slow regression tree: at each node, every threshold between distinct values of every feature
    (NaN rows sent to either side), the split of least weighted squared error, each side >= min_leaf weight;
    returns a function x -> leaf mean residual."""
    def mean(rows):
        return float(np.sum(w[rows] * r[rows]) / np.sum(w[rows])) if np.sum(w[rows]) > 0 else 0.0

    def build(rows, level):
        value = mean(rows)
        if level == depth or len(rows) < 2:
            return ("leaf", value)
        base = np.sum(w[rows] * r[rows]) ** 2 / np.sum(w[rows])
        best = None
        for j in range(X.shape[1]):
            col = X[rows, j]
            missing = np.isnan(col)
            values = np.unique(col[~missing])
            for cut in values:
                for nan_left in ((False, True) if missing.any() else (False,)):
                    left = np.where(missing, nan_left, col <= cut)
                    if left.all() or not left.any():
                        continue
                    wl, wr = np.sum(w[rows][left]), np.sum(w[rows][~left])
                    if wl < min_leaf or wr < min_leaf:
                        continue
                    gain = (np.sum(w[rows][left] * r[rows][left]) ** 2 / wl
                            + np.sum(w[rows][~left] * r[rows][~left]) ** 2 / wr - base)
                    if gain > 1e-9 * base + 1e-12 and (best is None or gain > best[0] + 1e-12):
                        best = (gain, j, cut, nan_left, rows[left], rows[~left])
        if best is None:
            return ("leaf", value)
        _, j, cut, nan_left, lrows, rrows = best
        return ("split", j, cut, nan_left, build(lrows, level + 1), build(rrows, level + 1))

    tree = build(np.arange(len(r)), 0)

    def predict(x):
        node = tree
        while node[0] == "split":
            _, j, cut, nan_left, left, right = node
            node = left if (nan_left if np.isnan(x[j]) else x[j] <= cut) else right
        return node[1]

    return predict


def _reference_boost(X, y, w, n_trees, depth, lr, min_leaf):
    """Gradient boosting for the squared error, from scratch: bias = weighted mean, each tree on residuals."""
    H = np.full(len(y), np.sum(w * y) / np.sum(w))
    trees = []
    for _ in range(n_trees):
        tree = _reference_tree(X, y - H, w, depth, min_leaf)
        H = H + lr * np.array([tree(x) for x in X])
        trees.append(tree)
    bias = np.sum(w * y) / np.sum(w)
    return lambda Z: bias + lr * np.array([[t(z) for t in trees] for z in Z]).sum(axis=1)


@pytest.mark.parametrize("depth,weighted,nan", [(1, False, False), (2, True, False), (3, False, True)])
def test_matches_a_slow_reference_implementation(depth, weighted, nan):
    # 150 rows: fewer distinct values than bins, so binning loses nothing and the trees are the reference's.
    X, y = _data(150, 3, seed=depth, nan=nan)
    w = np.random.default_rng(9).integers(1, 4, size=len(y)).astype(float) if weighted else np.ones(len(y))
    reg = BoostingRegressor(n_estimators=5, max_depth=depth, learning_rate=0.3, min_samples_leaf=5, n_jobs=1)
    reg.fit(X, y, sample_weight=w if weighted else None)
    min_leaf = 5 * w.mean()
    reference = _reference_boost(X, y, w, 5, depth, 0.3, min_leaf)
    # On the training rows (new rows between two training values may fall either side: the reference cuts
    # at training values, the model at its bin edges).
    np.testing.assert_allclose(reg.predict(X), reference(X), rtol=1e-9, atol=1e-9)


def test_training_loss_falls_every_tree_and_leaves_respect_min_samples_leaf():
    X, y = _data(2000, 5, seed=1)
    reg = BoostingRegressor(n_estimators=40, max_depth=4, min_samples_leaf=30, n_jobs=2).fit(X, y)
    loss = reg.fit_info_["train_loss"]
    assert np.all(np.diff(loss) <= 1e-12 * loss[:-1])
    assert loss[-1] < 0.5 * np.var(y)
    for tree in reg._model.trees(0, reg.n_estimators_):
        leaves = tree["feature"] < 0
        assert np.all(tree["cover"][leaves] >= 30)
        np.testing.assert_array_equal(tree["leaf_value"][~leaves], 0.0)


def test_same_model_for_every_thread_count_and_with_warm_start():
    X, y = _data(3000, 6, seed=2, nan=True)
    params = dict(n_estimators=30, max_depth=5, subsample=0.7, feature_fraction=0.6, random_state=4)
    one = BoostingRegressor(n_jobs=1, **params).fit(X, y)
    two = BoostingRegressor(n_jobs=2, **params).fit(X, y)
    assert one._model.to_bytes() == two._model.to_bytes()
    warm = BoostingRegressor(n_jobs=2, warm_start=True, **{**params, "n_estimators": 12}).fit(X, y)
    warm.set_params(n_estimators=30).fit(X, y)
    assert warm._model.to_bytes() == one._model.to_bytes()


@pytest.mark.parametrize("depth", [1, 3, 6])
def test_quickboost_modes_give_the_same_model_bytes(depth):
    # A few noise features among the relevant ones, NaN and weights: the pruned pass (quick=True) prunes,
    # and every mode gives the full scan's model byte for byte.
    X, y = _data(4000, 10, seed=depth, nan=True)
    w = np.random.default_rng(depth).integers(0, 4, size=len(y)).astype(float)
    fits = {quick: BoostingRegressor(n_estimators=15, max_depth=depth, learning_rate=0.5, min_samples_leaf=3,
                                     quick=quick, n_jobs=2).fit(X, y, sample_weight=w)
            for quick in (False, True, "auto")}
    assert fits[False]._model.to_bytes() == fits[True]._model.to_bytes() == fits["auto"]._model.to_bytes()
    assert fits[False].fit_info_["quick_nodes"].sum() == 0
    assert fits[True].fit_info_["full_nodes"].sum() == 0
    assert fits[True].fit_info_["features_pruned"].sum() > fits[True].fit_info_["quick_nodes"].sum()
    with pytest.raises(ValueError, match="quick"):
        BoostingRegressor(quick="always").fit(X, y)


def test_staged_batch_row_and_contributions_agree():
    X, y = _data(1500, 5, seed=3, nan=True)
    reg = BoostingRegressor(n_estimators=25, max_depth=4).fit(X, y)
    batch = reg.predict(X)
    stages = list(reg.staged_predict(X))
    assert len(stages) == reg.n_estimators_
    np.testing.assert_array_equal(stages[-1], batch)
    np.testing.assert_array_equal(stages[9], reg.predict(X, n_iter=10))
    rows = np.array([reg.predict(X[i:i + 1])[0] for i in range(20)])
    np.testing.assert_array_equal(rows, batch[:20])
    contrib = reg.predict(X[:100], pred_contrib=True)
    assert contrib.shape == (100, X.shape[1] + 1)
    np.testing.assert_allclose(contrib.sum(axis=1), batch[:100], rtol=1e-12, atol=1e-10)


def test_file_pickle_and_json_round_trips(tmp_path):
    X, y = _data(800, 4, seed=4, nan=True)
    reg = BoostingRegressor(n_estimators=15).fit(X, y)
    expected = reg.predict(X)
    reg.save(tmp_path / "m.rbm")
    loaded = rebelboost.load(tmp_path / "m.rbm")
    assert isinstance(loaded, BoostingRegressor) and loaded.get_params() == reg.get_params()
    np.testing.assert_array_equal(loaded.predict(X), expected)
    np.testing.assert_array_equal(pickle.loads(pickle.dumps(reg)).predict(X), expected)
    np.testing.assert_array_equal(rebelboost.from_json(rebelboost.to_json(reg)).predict(X), expected)


def test_early_stopping_keeps_the_best_validation_iteration():
    X, y = _data(3000, 4, seed=5)
    X_val, y_val = _data(1000, 4, seed=6)
    reg = BoostingRegressor(n_estimators=2000, learning_rate=0.3, max_depth=6, min_samples_leaf=1,
                            early_stopping=True, n_iter_no_change=15).fit(X, y, eval_set=[(X_val, y_val)])
    curve = reg.evals_result_["valid_0"]["rmse"]
    assert len(curve) < 2000  # it stopped
    assert reg.best_iteration_ == int(np.argmin(curve)) + 1 == reg.n_estimators_
    np.testing.assert_allclose(np.sqrt(np.mean((reg.predict(X_val) - y_val) ** 2)), curve.min(), rtol=1e-12)
    carved = BoostingRegressor(n_estimators=300, early_stopping=True, random_state=0).fit(X, y)
    assert "validation" in carved.evals_result_


@pytest.mark.parametrize("y_bad,match", [(np.inf, "infinity|not finite"), (np.nan, "NaN|not finite"), (1e200, "1e150")])
def test_hostile_targets_are_clear_errors(y_bad, match):
    X, y = _data(100, 3)
    y = y.copy()
    y[7] = y_bad
    with pytest.raises(ValueError, match=match):
        BoostingRegressor(n_estimators=3).fit(X, y)
    with pytest.raises(ValueError, match=match):
        BoostingRegressor(n_estimators=3).fit(X[:50], y[50:] * 0, eval_set=[(X, y)])


def test_hostile_parameters_and_shapes_are_clear_errors():
    X, y = _data(100, 3)
    for bad in (dict(n_estimators=0), dict(min_samples_leaf=0), dict(learning_rate=0.0), dict(max_depth=9),
                dict(scoring="error")):
        with pytest.raises(ValueError):
            BoostingRegressor(**bad).fit(X, y)
    reg = BoostingRegressor(n_estimators=3).fit(X, y)
    with pytest.raises(ValueError, match="features"):
        reg.predict(X[:, :2])
    with pytest.raises(ValueError, match="infinity"):
        reg.predict(np.full((2, 3), np.inf))


def test_cli_trains_evaluates_and_predicts_a_regressor(tmp_path, capsys):
    import pandas as pd

    from rebelboost.cli import main

    X, y = _data(400, 3, seed=7)
    frame = pd.DataFrame(X, columns=["a", "b", "c"]).assign(y=y)
    frame.to_csv(tmp_path / "d.csv", index=False)
    model = str(tmp_path / "m.rbm")
    assert main(["train", str(tmp_path / "d.csv"), "--target", "y", "--model", model, "--loss", "squared_error"]) == 0
    pruned = str(tmp_path / "q.rbm")  # --quick true: the same trees (the file also records the parameter)
    assert main(["train", str(tmp_path / "d.csv"), "--target", "y", "--model", pruned, "--loss", "squared_error",
                 "--quick", "true"]) == 0
    assert rebelboost.load(pruned).quick is True
    np.testing.assert_array_equal(rebelboost.load(pruned).predict(frame[["a", "b", "c"]]),
                                  rebelboost.load(model).predict(frame[["a", "b", "c"]]))
    assert main(["train", str(tmp_path / "d.csv"), "--target", "y", "--model", pruned, "--loss", "squared_error",
                 "--quick", "sometimes"]) != 0
    assert main(["evaluate", str(tmp_path / "d.csv"), "--target", "y", "--model", model]) == 0
    assert "rmse" in capsys.readouterr().out
    out = tmp_path / "p.csv"
    assert main(["predict", str(tmp_path / "d.csv"), "--target", "y", "--model", model, "--output", str(out)]) == 0
    np.testing.assert_allclose(pd.read_csv(out)["prediction"], rebelboost.load(model).predict(frame[["a", "b", "c"]]),
                               rtol=1e-15)
    frame.assign(y=["x"] + list(y[1:])).to_csv(tmp_path / "bad.csv", index=False)
    assert main(["train", str(tmp_path / "bad.csv"), "--target", "y", "--model", model, "--loss", "squared_error"]) != 0
