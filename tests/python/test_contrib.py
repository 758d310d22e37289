"""Per-feature contributions (decision_function(X, pred_contrib=True), path-dependent TreeSHAP): the sum
identity, exact zeros, an independent brute-force Shapley computation from the covers, thread-count
identity, round trips, and the clear errors (old files without covers, similarity models)."""

import pickle
from itertools import combinations
from math import factorial
from pathlib import Path

import numpy as np
import pytest

import rebelboost
from model_bytes import parse
from rebelboost import AdaBoostClassifier, REBELClassifier, VEBBoostClassifier

MODELS = Path(__file__).resolve().parents[1] / "models"


def _data(n=400, d=6, n_classes=2, seed=0, nan=0.1):
    rng = np.random.RandomState(seed)
    X = rng.normal(size=(n, d))
    signal = X[:, 0] + 0.7 * X[:, 1] * X[:, 2] - 0.5 * X[:, 3] + 0.3 * rng.normal(size=n)
    y = np.digitize(signal, np.quantile(signal, np.linspace(0, 1, n_classes + 1)[1:-1]))
    X[rng.rand(n, d) < nan] = np.nan
    return X, y


def _fit(cls, depth, n_classes=2, n_estimators=12, d=6, **kwargs):
    X, y = _data(d=d, n_classes=n_classes, seed=depth)
    return cls(n_estimators=n_estimators, max_depth=depth, **kwargs).fit(X, y), X


def _scale(clf):
    """|bias| + sum_t |a_t| per class: the largest magnitude any score of the model can reach."""
    return np.abs(clf._model.bias) + np.abs(clf._model.steps()).sum(axis=0)


def _raw_contributions(clf, X, **kwargs):
    """Per-class (n, K, d + 1) contributions, whatever the estimator's presentation."""
    return clf._model.contributions(np.asarray(X, dtype=np.float64), 1, kwargs.get("n_trees", -1))


CASES = [(AdaBoostClassifier, 2), (VEBBoostClassifier, 2), (REBELClassifier, 2), (REBELClassifier, 3),
         (REBELClassifier, 26)]


@pytest.mark.parametrize("cls, n_classes", CASES)
@pytest.mark.parametrize("depth", range(1, 9))
def test_contributions_sum_to_the_scores(cls, n_classes, depth):
    clf, X = _fit(cls, depth, n_classes)
    contrib = clf.decision_function(X, pred_contrib=True)
    scores = clf.decision_function(X)
    d = X.shape[1]
    assert contrib.shape == (scores.shape[0],) + scores.shape[1:] + (d + 1,)
    assert np.isfinite(contrib).all()
    raw = clf._model.contributions(X)
    raw_scores = clf._model.decision_function(X)
    raw_scores = raw_scores[:, None] if raw_scores.ndim == 1 else raw_scores
    # Relative to the largest score the model can reach (a score near 0 is a sum of larger terms).
    error = np.abs(raw.sum(axis=2) - raw_scores) / _scale(clf)
    assert error.max() <= 1e-9, error.max()
    np.testing.assert_allclose(contrib.sum(axis=-1), scores, rtol=0, atol=1e-9 * _scale(clf).sum())
    # Rows with NaN are routed as the trees route them: the identity holds on them too.
    assert np.isnan(X).any(axis=1).sum() > 0


@pytest.mark.parametrize("cls, n_classes", CASES[:4])
def test_n_iter_and_the_expected_value(cls, n_classes):
    clf, X = _fit(cls, 3, n_classes)
    for n_iter in (0, 1, 5):
        contrib = clf.decision_function(X, n_iter=n_iter, pred_contrib=True)
        np.testing.assert_allclose(contrib.sum(axis=-1), clf.decision_function(X, n_iter=n_iter), atol=1e-12)
    # The expected value is the same for every row, and with no tree it is the bias.
    raw = clf._model.contributions(X, n_trees=0)
    np.testing.assert_array_equal(raw[:, :, -1], np.broadcast_to(clf._model.bias, raw[:, :, -1].shape))
    assert not raw[:, :, :-1].any()
    full = clf._model.contributions(X)
    assert (full[:, :, -1] == full[0, :, -1]).all()


def test_features_no_tree_splits_on_get_exactly_zero():
    X, y = _data(d=5, n_classes=3)
    X = np.column_stack([X, np.full(len(X), 3.0), X[:, 0], np.zeros(len(X))])  # constants and a copy
    for clf in (AdaBoostClassifier(n_estimators=15, max_depth=3).fit(X, y > 0),
                REBELClassifier(n_estimators=15, max_depth=4).fit(X, y)):
        unused = clf.feature_importances("split", normalize=False) == 0
        assert unused[[5, 7]].all() and unused.sum() >= 2
        contrib = clf._model.contributions(X)
        assert (contrib[:, :, :-1][:, :, unused] == 0.0).all()
        assert (np.abs(contrib[:, :, :-1][:, :, ~unused]).sum(axis=(0, 1)) > 0).all()


# ---- an independent brute-force Shapley computation --------------------------------------------------

def _conditional_expectation(tree, x, known, node=0):
    """E[f(X) | X_S = x_S] with the path-dependent rule: a split on a known feature follows x, one on an
    unknown feature averages its children weighted by their covers (1/2 each under a zero cover)."""
    feature = tree["feature"][node]
    if feature < 0:
        return float(tree["value"][node])
    left, right = tree["left"][node], tree["right"][node]
    if feature in known:
        v = x[feature]
        go_left = bool(tree["nan_left"][node]) if np.isnan(v) else v <= tree["threshold"][node]
        return _conditional_expectation(tree, x, known, left if go_left else right)
    cover = tree["cover"]
    p_left, p_right = (cover[left] / cover[node], cover[right] / cover[node]) if cover[node] > 0 else (0.5, 0.5)
    return (p_left * _conditional_expectation(tree, x, known, left)
            + p_right * _conditional_expectation(tree, x, known, right))


def _brute_force_shapley(tree, x):
    """phi_j = sum over coalitions S without j of |S|! (M - |S| - 1)! / M! (v(S + j) - v(S)), every subset."""
    M = len(x)
    value = {}
    for size in range(M + 1):
        for S in combinations(range(M), size):
            value[frozenset(S)] = _conditional_expectation(tree, x, frozenset(S))
    phi = np.zeros(M + 1)
    for j in range(M):
        others = [i for i in range(M) if i != j]
        for size in range(M):
            weight = factorial(size) * factorial(M - size - 1) / factorial(M)
            for S in combinations(others, size):
                S = frozenset(S)
                phi[j] += weight * (value[S | {j}] - value[S])
    phi[M] = value[frozenset()]
    return phi


@pytest.mark.parametrize("cls, n_classes, depth, d", [(AdaBoostClassifier, 2, 4, 8), (VEBBoostClassifier, 2, 3, 6),
                                                      (REBELClassifier, 4, 5, 7)])
def test_brute_force_shapley_values_agree(cls, n_classes, depth, d):
    clf, X = _fit(cls, depth, n_classes, n_estimators=6, d=d)
    model = clf._model
    rows = X[:6]
    assert np.isnan(rows).any()
    expected = np.zeros((len(rows), model.n_outputs, d + 1))
    expected[:, :, -1] = model.bias
    for tree in model.trees():
        for r, x in enumerate(rows):
            expected[r] += np.outer(tree["step"], _brute_force_shapley(tree, x))
    got = model.contributions(rows)
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-12 * _scale(clf).max())


# ---- determinism, round trips, errors ----------------------------------------------------------------

@pytest.mark.parametrize("cls, n_classes", [(AdaBoostClassifier, 2), (REBELClassifier, 5)])
def test_thread_count_does_not_change_a_bit(cls, n_classes):
    X, y = _data(n=3000, d=8, n_classes=n_classes)
    clf = cls(n_estimators=20, max_depth=5).fit(X, y)
    one = clf._model.contributions(X, 1)
    for threads in (2, 3):
        assert one.tobytes() == clf._model.contributions(X, threads).tobytes()
    assert one.tobytes() == clf._model.contributions(np.asfortranarray(X.astype(np.float64)), 2).tobytes()


def test_covers_are_the_sample_weights_reaching_each_node():
    X, y = _data(n=500)
    w = np.random.RandomState(3).randint(0, 4, size=len(X)).astype(float)
    for weights in (None, w):
        clf = AdaBoostClassifier(n_estimators=5, max_depth=3).fit(X, y, sample_weight=weights)
        for tree in clf._model.trees():
            leaves = tree["feature"] < 0
            # route every row to its leaf with the stored thresholds, independently of the core
            reached = np.zeros(len(tree["feature"]))
            for x, wx in zip(X, np.ones(len(X)) if weights is None else weights):
                node = 0
                while True:
                    reached[node] += wx
                    f = tree["feature"][node]
                    if f < 0:
                        break
                    go_left = tree["nan_left"][node] if np.isnan(x[f]) else x[f] <= tree["threshold"][node]
                    node = tree["left"][node] if go_left else tree["right"][node]
            np.testing.assert_array_equal(tree["cover"], reached)
            assert tree["cover"][leaves].sum() == tree["cover"][0]


def test_covers_survive_save_load_pickle_and_warm_start(tmp_path):
    X, y = _data(n=300, n_classes=3)
    clf = REBELClassifier(n_estimators=8, max_depth=3).fit(X, y)
    contrib = clf.decision_function(X, pred_contrib=True)
    clf.save(tmp_path / "m.rbm")
    for back in (rebelboost.load(tmp_path / "m.rbm"), pickle.loads(pickle.dumps(clf))):
        assert back.decision_function(X, pred_contrib=True).tobytes() == contrib.tobytes()
    warm = REBELClassifier(n_estimators=4, max_depth=3, warm_start=True).fit(X, y)
    warm.set_params(n_estimators=8).fit(X, y)
    assert warm.decision_function(X, pred_contrib=True).tobytes() == contrib.tobytes()


@pytest.mark.parametrize("name", ["adaboost_v1", "rebel_v1", "adaboost_cascade_v3"])
def test_old_files_have_no_covers_and_say_so(name):
    clf = rebelboost.load(MODELS / f"{name}.rbm")
    X = np.load(MODELS / f"{name}_expected.npz")["X"]
    assert not clf._model.has_covers
    with pytest.raises(ValueError, match="no node covers .* older than format version 5"):
        clf.decision_function(X, pred_contrib=True)
    clf.decision_function(X)  # everything else still works


def test_warm_start_on_an_old_file_records_its_covers(tmp_path):
    X, y = _data(n=300, n_classes=3)
    clf = REBELClassifier(n_estimators=6, max_depth=3).fit(X, y)
    # The same model written as format version 3: no covers.
    clf.save(tmp_path / "v4.rbm")  # with the estimator's metadata
    parts = parse((tmp_path / "v4.rbm").read_bytes())
    parts.version = 3
    for tree in parts.trees:
        tree.cover = None
    (tmp_path / "v3.rbm").write_bytes(parts.file())
    old = rebelboost.load(tmp_path / "v3.rbm")
    assert not old._model.has_covers
    with pytest.raises(ValueError, match="no node covers"):
        old.decision_function(X, pred_contrib=True)
    old.set_params(warm_start=True, n_estimators=8).fit(X, y)
    assert old._model.has_covers
    again = REBELClassifier(n_estimators=8, max_depth=3).fit(X, y)
    assert old._model.to_bytes() == again._model.to_bytes()


def test_similarity_models_refuse_clearly():
    X, y = _data(n=80, nan=0.0, n_classes=3)
    clf = REBELClassifier(n_estimators=5, weak_learner="similarity").fit(X, y)
    with pytest.raises(ValueError, match="pred_contrib is defined for tree models"):
        clf.decision_function(X, pred_contrib=True)
    with pytest.raises(ValueError, match="per-feature contributions are defined for tree models"):
        clf._model.contributions(X)


def test_bad_inputs_are_clear_errors():
    clf, X = _fit(AdaBoostClassifier, 2)
    with pytest.raises(ValueError, match="features"):
        clf.decision_function(X[:, :3], pred_contrib=True)
    X_inf = X.copy()
    X_inf[0, 0] = np.inf
    with pytest.raises(ValueError, match="infinity"):
        clf.decision_function(X_inf, pred_contrib=True)


def test_cli_predict_contrib(tmp_path):
    import pandas as pd

    from rebelboost.cli import main

    X, y = _data(n=200, n_classes=3)
    frame = pd.DataFrame(X, columns=list("abcdef")).assign(label=y)
    frame.to_csv(tmp_path / "train.csv", index=False, float_format="%.17g")
    model = tmp_path / "m.rbm"
    assert main(["train", str(tmp_path / "train.csv"), "--target", "label", "--model", str(model),
                 "--n-estimators", "10", "--max-depth", "3"]) == 0
    out = tmp_path / "pred.csv"
    assert main(["predict", str(tmp_path / "train.csv"), "--model", str(model), "--target", "label", "--output",
                 str(out), "--contrib"]) == 0
    written = pd.read_csv(out)
    clf = rebelboost.load(model)
    expected = clf.decision_function(frame[list("abcdef")], pred_contrib=True)
    assert list(written.columns[:3]) == ["label", "contrib_0_a", "contrib_0_b"]
    assert written.columns[-1] == "contrib_2_expected" and written.shape[1] == 1 + 3 * 7
    np.testing.assert_array_equal(written.iloc[:, 1:].to_numpy(), expected.reshape(len(X), -1))


# ---- shap's TreeExplainer on the exported trees --------------------------------------------------------

@pytest.mark.parametrize("cls, n_classes, depth", [(AdaBoostClassifier, 2, 4), (VEBBoostClassifier, 2, 2),
                                                   (REBELClassifier, 2, 3), (REBELClassifier, 5, 6)])
def test_shap_tree_explainer_agrees(cls, n_classes, depth):
    shap = pytest.importorskip("shap")
    clf, X = _fit(cls, depth, n_classes, n_estimators=15)
    ours = clf._model.contributions(X)
    explainer = shap.TreeExplainer(rebelboost.to_shap(clf))
    values = np.asarray(explainer.shap_values(X))
    values = values.reshape(len(X), X.shape[1], -1)  # (n, d) for one output, (n, d, K) for several
    tolerance = 1e-6 * _scale(clf).max()
    np.testing.assert_allclose(values, np.transpose(ours[:, :, :-1], (0, 2, 1)), rtol=0, atol=tolerance)
    np.testing.assert_allclose(np.ravel(explainer.expected_value), ours[0, :, -1], rtol=0, atol=tolerance)
    assert np.isnan(X).any()  # rows with missing values, routed by children_default


def test_to_shap_refuses_what_it_cannot_export(tmp_path):
    X, y = _data(n=80, nan=0.0, n_classes=3)
    with pytest.raises(ValueError, match="exports tree models"):
        rebelboost.to_shap(REBELClassifier(n_estimators=3, weak_learner="similarity").fit(X, y))
    old = rebelboost.load(MODELS / "adaboost_v1.rbm")
    with pytest.raises(ValueError, match="no node covers"):
        rebelboost.to_shap(old)
