"""Accepted inputs: dtypes, memory orders, pandas, NaN, any labels; and the identities between them."""

import numpy as np
import pytest

from rebelboost import AdaBoostClassifier


def model_bytes(clf):
    return clf._model.to_bytes()


@pytest.mark.parametrize("max_depth", [1, 3])
def test_float32_float64_int_and_orders_agree(max_depth):
    rng = np.random.RandomState(3)
    X = rng.randint(0, 50, size=(200, 5))  # integers: exact in float32 and float64
    y = (X[:, 0] + X[:, 1] > 50).astype(int)
    ref = AdaBoostClassifier(n_estimators=30, max_depth=max_depth).fit(X.astype(np.float64), y)
    for variant in (X.astype(np.float32), X, np.asfortranarray(X.astype(np.float64)), X.astype(np.float64)[:, ::1]):
        clf = AdaBoostClassifier(n_estimators=30, max_depth=max_depth).fit(variant, y)
        assert model_bytes(clf) == model_bytes(ref)
        np.testing.assert_array_equal(clf.decision_function(variant), ref.decision_function(X.astype(np.float64)))


def test_strided_views_predict_like_copies(binary_data):
    X, y = binary_data
    clf = AdaBoostClassifier(n_estimators=20).fit(X, y)
    wide = np.zeros((X.shape[0] * 2, X.shape[1] * 3))
    wide[::2, ::3] = X
    view = wide[::2, ::3]
    np.testing.assert_array_equal(clf.decision_function(view), clf.decision_function(np.ascontiguousarray(view)))


def test_pandas_feature_names():
    pd = pytest.importorskip("pandas")
    rng = np.random.RandomState(0)
    df = pd.DataFrame(rng.normal(size=(100, 3)), columns=["a", "b", "c"])
    y = (df["b"] > 0).map({True: "yes", False: "no"})
    clf = AdaBoostClassifier(n_estimators=10).fit(df, y)
    assert list(clf.feature_names_in_) == ["a", "b", "c"]
    assert set(clf.predict(df)) <= {"yes", "no"}
    assert clf.feature_importances_.argmax() == 1
    with pytest.raises(ValueError, match="feature names"):
        clf.predict(df[["c", "b", "a"]])


def test_string_labels_and_classes_order():
    rng = np.random.RandomState(0)
    X = rng.normal(size=(80, 2))
    y = np.where(X[:, 0] > 0, "zebra", "ant")
    clf = AdaBoostClassifier(n_estimators=10).fit(X, y)
    assert list(clf.classes_) == ["ant", "zebra"]
    assert clf.score(X, y) > 0.95
    proba = clf.predict_proba(X)
    np.testing.assert_array_equal(clf.classes_[proba.argmax(axis=1)], clf.predict(X))


def test_nan_goes_to_the_learned_side():
    rng = np.random.RandomState(0)
    X = rng.normal(size=(400, 1))
    y = (X[:, 0] > 0).astype(int)
    X[y == 1][:0] = 0
    missing = rng.rand(400) < 0.2
    y[missing] = 1  # missing values mean class 1
    X[missing, 0] = np.nan
    clf = AdaBoostClassifier(n_estimators=5).fit(X, y)
    assert clf.score(X, y) == 1.0
    assert (clf.predict(np.array([[np.nan]])) == 1).all()


def test_all_nan_and_constant_columns():
    rng = np.random.RandomState(0)
    X = np.column_stack([np.full(60, np.nan), np.full(60, 3.0), rng.normal(size=60)])
    y = (X[:, 2] > 0).astype(int)
    clf = AdaBoostClassifier(n_estimators=5).fit(X, y)
    assert clf.feature_importances_[:2].sum() == 0
    assert clf.score(X, y) == 1.0


def test_proba_is_logistic_of_twice_the_score(binary_data):
    X, y = binary_data
    clf = AdaBoostClassifier(n_estimators=30).fit(X, y)
    H = clf.decision_function(X)
    np.testing.assert_allclose(clf.predict_proba(X)[:, 1], 1 / (1 + np.exp(-2 * H)), rtol=1e-12)
    np.testing.assert_allclose(clf.predict_proba(X).sum(axis=1), 1.0)


def test_staged_outputs_end_at_final(binary_data):
    X, y = binary_data
    clf = AdaBoostClassifier(n_estimators=25, max_depth=2).fit(X, y)
    stages = list(clf.staged_decision_function(X))
    assert len(stages) == clf.n_estimators_
    np.testing.assert_allclose(stages[-1], clf.decision_function(X), rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(list(clf.staged_predict(X))[-1], clf.predict(X))
    # the stage t scores equal the model truncated to t trees
    np.testing.assert_allclose(stages[4], clf._model.decision_function(X, 1, 5), rtol=1e-12, atol=1e-12)
    errors = [np.mean(p != y) for p in clf.staged_predict(X)]
    assert errors[-1] <= errors[0]


def test_training_loss_never_increases(binary_data_nan):
    X, y = binary_data_nan
    for depth in (1, 2, 4):
        clf = AdaBoostClassifier(n_estimators=40, max_depth=depth).fit(X, y)
        loss = clf.fit_info_["train_loss"]
        assert np.all(np.diff(loss) <= 1e-12)
        assert loss[0] <= 1.0


def test_deeper_tree_never_has_higher_loss(binary_data_nan):
    X, y = binary_data_nan
    losses = [AdaBoostClassifier(n_estimators=1, max_depth=d).fit(X, y).fit_info_["train_loss"][0] for d in range(1, 6)]
    assert all(b <= a + 1e-12 for a, b in zip(losses, losses[1:]))


def test_learning_rate_scales_steps(binary_data):
    X, y = binary_data
    full = AdaBoostClassifier(n_estimators=1).fit(X, y)
    half = AdaBoostClassifier(n_estimators=1, learning_rate=0.5).fit(X, y)
    assert half.estimator_weights_[0] == pytest.approx(0.5 * full.estimator_weights_[0], rel=1e-12)


def test_perfect_fit_stops_early():
    X = np.arange(20, dtype=float).reshape(-1, 1)
    y = (X[:, 0] >= 10).astype(int)
    clf = AdaBoostClassifier(n_estimators=50).fit(X, y)
    assert clf.n_estimators_ == 1
    assert clf.fit_info_["stop_reason"] == "perfect_fit"
    # smoothing keeps the step finite: 1/2 ln((1 + 1/N) / (1/N))
    assert clf.estimator_weights_[0] == pytest.approx(0.5 * np.log((1 + 1 / 20) / (1 / 20)))
