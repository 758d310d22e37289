"""rebelboost.plot renders headless (Agg) and draws what the models say: curves equal evals_result_, bars equal
the importances, margin CDFs are monotone in [0, 1] and recomputed independently, the region image holds
the predicted class indices, the cascade's marker sits at its measured learners and accuracy."""

import sys

import numpy as np
import pytest

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from rebelboost import AdaBoostClassifier, REBELClassifier, plot  # noqa: E402


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def _binary(n=300, seed=0):
    rng = np.random.RandomState(seed)
    X = rng.normal(size=(n, 4))
    y = np.where(X[:, 0] + 0.6 * X[:, 1] + 0.4 * rng.normal(size=n) > 0, "yes", "no")
    return X, y


def _three_classes(n=300, seed=0):
    rng = np.random.RandomState(seed)
    X = rng.normal(size=(n, 2))
    y = np.digitize(X[:, 0] + 0.5 * X[:, 1], [-0.6, 0.6])
    return X, y


def test_every_plot_returns_the_axes_it_drew_on():
    X, y = _binary()
    clf = AdaBoostClassifier(n_estimators=20).fit(X[:200], y[:200], eval_set=[(X[200:], y[200:])])
    for draw in (lambda ax: plot.plot_metric(clf, ax=ax), lambda ax: plot.plot_importance(clf, ax=ax),
                 lambda ax: plot.plot_margins(clf, X, y, ax=ax),
                 lambda ax: plot.plot_decision_regions(clf.fit(X[:, :2], y), X[:, :2], y, ax=ax, resolution=20)):
        _, ax = plt.subplots()
        assert draw(ax) is ax
    assert isinstance(plot.plot_importance(clf), matplotlib.axes.Axes)  # ax=None: a new figure


def test_plot_metric_lines_are_the_recorded_curves():
    X, y = _binary(400)
    clf = AdaBoostClassifier(n_estimators=30, early_stopping=True, n_iter_no_change=5, scoring="error")
    clf.fit(X[:250], y[:250], eval_set=[(X[250:320], y[250:320]), (X[320:], y[320:])])
    ax = plot.plot_metric(clf)
    lines = {line.get_label(): line for line in ax.get_lines()}
    assert set(lines) == {"valid_0", "valid_1", f"best iteration ({clf.best_iteration_})"}  # no training error
    for name in ("valid_0", "valid_1"):
        curve = clf.evals_result_[name]["error"]
        np.testing.assert_array_equal(lines[name].get_ydata(), curve)
        np.testing.assert_array_equal(lines[name].get_xdata(), np.arange(1, len(curve) + 1))
    assert ax.get_ylabel() == "error"
    with pytest.raises(ValueError, match="was not recorded"):
        plot.plot_metric(clf, metric="log_loss")


def test_plot_metric_draws_the_training_loss_with_the_loss():
    X, y = _binary()
    clf = AdaBoostClassifier(n_estimators=15).fit(X[:200], y[:200], eval_set=[(X[200:], y[200:])])
    labels = [line.get_label() for line in plot.plot_metric(clf).get_lines()]
    assert labels == ["training", "valid_0", f"best iteration ({clf.best_iteration_})"]  # eval set: a best one
    no_eval = AdaBoostClassifier(n_estimators=15).fit(X, y)
    (line,) = plot.plot_metric(no_eval).get_lines()
    np.testing.assert_array_equal(line.get_ydata(), no_eval.fit_info_["train_loss"])
    assert np.all(np.diff(line.get_ydata()) <= 1e-12)  # AdaBoost's exact steps never raise the training loss


def test_plot_importance_bars_are_the_importances():
    X, y = _binary()
    clf = AdaBoostClassifier(n_estimators=25, max_depth=2).fit(X, y)
    for kind in ("gain", "split"):
        ax = plot.plot_importance(clf, importance_type=kind)
        expected = clf.feature_importances(kind)
        order = np.argsort(-expected, kind="stable")
        widths = [patch.get_width() for patch in ax.patches]
        positions = [patch.get_y() + patch.get_height() / 2 for patch in ax.patches]
        np.testing.assert_allclose(widths, expected[order])
        assert positions == sorted(positions, reverse=True)  # the largest at the top
        labels = [t.get_text() for t in ax.get_yticklabels()]
        assert sorted(labels) == sorted(f"feature {j}" for j in range(4))
        plt.close("all")
    ax = plot.plot_importance(clf, max_num_features=2)
    assert len(ax.patches) == 2
    np.testing.assert_allclose(sorted(p.get_width() for p in ax.patches), np.sort(clf.feature_importances())[-2:])
    with pytest.raises(ValueError, match="max_num_features"):
        plot.plot_importance(clf, max_num_features=0)


def test_plot_importance_uses_the_feature_names():
    pd = pytest.importorskip("pandas")
    X, y = _binary()
    frame = pd.DataFrame(X, columns=["age", "height", "weight", "noise"])
    clf = AdaBoostClassifier(n_estimators=10).fit(frame, y)
    labels = {t.get_text() for t in plot.plot_importance(clf).get_yticklabels()}
    assert labels == {"age", "height", "weight", "noise"}


def _independent_margins(clf, X, y, t):
    """Normalised margins after t learners from decision_function(n_iter=t) and the steps."""
    scores = clf.decision_function(X, n_iter=t)
    steps = np.atleast_2d(clf.estimator_weights_.T).T[:t]
    bias = clf._model.bias
    index = np.searchsorted(clf.classes_, y)
    if scores.ndim == 1:
        sign = np.where(index == 1, 1.0, -1.0)
        return sign * scores / (abs(bias[0]) + np.abs(steps[:, 0]).sum())
    best_other = np.array([np.max(np.delete(row, k)) for row, k in zip(scores, index)])
    bound = (bias.max() - bias.min()) + (steps.max(axis=1) - steps.min(axis=1)).sum()
    return (scores[np.arange(len(y)), index] - best_other) / bound


@pytest.mark.parametrize("multi", [False, True])
def test_plot_margins_are_monotone_cdfs_of_the_normalised_margins(multi):
    X, y = _three_classes() if multi else _binary()
    clf = (REBELClassifier if multi else AdaBoostClassifier)(n_estimators=30, max_depth=2).fit(X, y)
    ax = plot.plot_margins(clf, X, y, iterations=(1, 10, 30))
    lines = [line for line in ax.get_lines() if line.get_label().endswith("learners")]
    assert [line.get_label() for line in lines] == ["1 learners", "10 learners", "30 learners"]
    for line, t in zip(lines, (1, 10, 30)):
        x, f = np.asarray(line.get_xdata()), np.asarray(line.get_ydata())
        assert np.all(np.diff(x) >= 0) and np.all(np.diff(f) > 0)
        assert f[0] > 0 and f[-1] == 1.0 and np.all((f >= 0) & (f <= 1))
        assert np.all((x >= -1 - 1e-12) & (x <= 1 + 1e-12))
        np.testing.assert_allclose(x, np.sort(_independent_margins(clf, X, y, t)), rtol=1e-9, atol=1e-12)
        # the fraction of rows with a negative margin is the training error (no exact ties here)
        error = np.mean(clf.predict(X, n_iter=t) != y)
        assert np.mean(x < 0) == pytest.approx(error)
    with pytest.raises(ValueError, match="iterations"):
        plot.plot_margins(clf, X, y, iterations=(0,))


def test_plot_margins_for_rebel_binary_uses_the_score_difference():
    X, y = _binary()
    clf = REBELClassifier(n_estimators=12).fit(X, y)
    ax = plot.plot_margins(clf, X, y, iterations=(12,))
    x = np.asarray(ax.get_lines()[0].get_xdata())
    steps = clf._model.steps()
    bound = abs(clf._model.bias[1] - clf._model.bias[0]) + np.abs(steps[:, 1] - steps[:, 0]).sum()
    expected = np.where(y == "yes", 1.0, -1.0) * clf.decision_function(X) / bound
    np.testing.assert_allclose(x, np.sort(expected), rtol=1e-9, atol=1e-12)
    assert np.all(np.abs(x) <= 1 + 1e-12)


@pytest.mark.parametrize("learner", ["tree", "similarity"])
def test_plot_decision_regions_image_is_the_predicted_class(learner):
    X, y = _three_classes(150)
    labels = np.array(["a", "b", "c"])[y]
    clf = REBELClassifier(n_estimators=20, max_depth=2, weak_learner=learner).fit(X, labels)
    ax = plot.plot_decision_regions(clf, X, labels, resolution=30)
    (image,) = ax.images
    region = np.asarray(image.get_array())
    assert region.shape == (30, 30)
    assert set(np.unique(region)) <= {0, 1, 2} and len(np.unique(region)) >= 2
    left, right, bottom, top = image.get_extent()
    gx, gy = np.meshgrid(np.linspace(left, right, 30), np.linspace(bottom, top, 30))
    predicted = clf.predict(np.column_stack([gx.ravel(), gy.ravel()])).reshape(30, 30)
    np.testing.assert_array_equal(np.array(["a", "b", "c"])[region], predicted)
    assert left < X[:, 0].min() and right > X[:, 0].max() and bottom < X[:, 1].min() and top > X[:, 1].max()
    (points,) = ax.collections
    np.testing.assert_array_equal(points.get_offsets(), X)
    np.testing.assert_array_equal(points.get_array(), y)
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["a", "b", "c"]


def test_plot_decision_regions_needs_two_features():
    X, y = _binary()
    clf = AdaBoostClassifier(n_estimators=5).fit(X, y)
    with pytest.raises(ValueError, match="exactly 2 features"):
        plot.plot_decision_regions(clf, X, y)


def test_plot_cascade_marks_the_cascade_at_its_learners_and_accuracy():
    rng = np.random.RandomState(3)
    X = rng.normal(size=(1600, 6))
    y = (X[:, 0] + X[:, 1] - X[:, 2] + 0.5 * rng.normal(size=1600) > 0).astype(int)
    clf = AdaBoostClassifier(n_estimators=60, max_depth=2).fit(X[:600], y[:600])
    with pytest.raises(ValueError, match="calibrate_cascade"):
        plot.plot_cascade(clf, X[1200:], y[1200:])
    clf.calibrate_cascade(X[600:1200], y[600:1200], max_accuracy_loss=0.02, every=4)
    X_test, y_test = X[1200:], y[1200:]
    ax = plot.plot_cascade(clf, X_test, y_test)
    lines = {line.get_label().split(":")[0]: line for line in ax.get_lines()}
    assert set(lines) == {"first t learners", "cascade", "exact early exit", "all 60 learners"}
    staged = lines["first t learners"]
    np.testing.assert_array_equal(staged.get_xdata(), np.arange(1, 61))
    np.testing.assert_allclose(staged.get_ydata()[[0, 29, 59]],
                               [np.mean(clf.predict(X_test, n_iter=t) == y_test) for t in (1, 30, 60)])
    labels, learners = clf.predict(X_test, cascade=True, return_n_learners=True)
    assert lines["cascade"].get_xdata()[0] == pytest.approx(learners.mean())
    assert lines["cascade"].get_ydata()[0] == pytest.approx(np.mean(labels == y_test))
    assert learners.mean() < 60
    full = np.mean(clf.predict(X_test) == y_test)
    assert lines["exact early exit"].get_ydata()[0] == pytest.approx(full)  # exact: the same labels
    assert lines["all 60 learners"].get_ydata()[0] == pytest.approx(full) == staged.get_ydata()[-1]


def test_a_clear_import_error_without_matplotlib(monkeypatch):
    X, y = _binary()
    clf = AdaBoostClassifier(n_estimators=5).fit(X, y)
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    monkeypatch.setitem(sys.modules, "matplotlib.pyplot", None)
    with pytest.raises(ImportError, match=r"rebelboost\[plot\]"):
        plot.plot_importance(clf)


@pytest.mark.slow
def test_import_rebelboost_does_not_import_matplotlib():
    import subprocess

    code = "import sys, rebelboost; rebelboost.plot.plot_metric; assert 'matplotlib' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True)


def test_clear_errors_for_mismatched_rows_loaded_models_and_similarities(tmp_path):
    import rebelboost

    X, y = _three_classes()
    clf = REBELClassifier(n_estimators=8).fit(X, y, eval_set=[(X[:50], y[:50])])
    for draw in (lambda: plot.plot_margins(clf, X, y[:-1]), lambda: plot.plot_decision_regions(clf, X, y[:-1])):
        with pytest.raises(ValueError, match="one label per row"):
            draw()
    clf.save(tmp_path / "m.rbm")
    with pytest.raises(ValueError, match="evals_result_"):
        plot.plot_metric(rebelboost.load(tmp_path / "m.rbm"))
    similarity = REBELClassifier(weak_learner="similarity", n_estimators=5).fit(X[:60], y[:60])
    with pytest.raises(ValueError, match="whole distance"):
        plot.plot_importance(similarity)


def test_plot_contributions_draws_every_rows_contribution_coloured_by_value():
    import pandas as pd

    X, y = _binary(300)
    X[::17, 2] = np.nan
    frame = pd.DataFrame(X, columns=["a", "b", "c", "d"])
    clf = AdaBoostClassifier(n_estimators=30, max_depth=2).fit(frame, y)
    contrib = clf.decision_function(frame, pred_contrib=True)[:, :-1]
    ax = plot.plot_contributions(clf, frame)
    collections = ax.collections
    strength = np.abs(contrib).mean(axis=0)
    expected_order = list(np.argsort(-strength, kind="stable"))[::-1]  # bottom to top
    assert [t.get_text() for t in ax.get_yticklabels()] == [["a", "b", "c", "d"][j] for j in expected_order]
    assert [c.get_label() for c in collections] == [["a", "b", "c", "d"][j] for j in expected_order]
    for row, (points, j) in enumerate(zip(collections, expected_order)):
        offsets = points.get_offsets()
        np.testing.assert_array_equal(offsets[:, 0], contrib[:, j])  # x: the contributions themselves
        assert np.all(np.abs(offsets[:, 1] - row) <= 0.4 + 1e-12)  # y: within the feature's band
        colours = points.get_array()
        finite = np.isfinite(X[:, j])
        # colours follow the feature's value: its rank, 0 at the smallest, 1 at the largest; NaN where it is missing
        assert np.isnan(np.asarray(colours, dtype=float)[~finite]).all()
        assert colours[finite][np.argmin(X[finite, j])] == 0.0 and colours[finite][np.argmax(X[finite, j])] == 1.0
    assert ax.get_xlabel().startswith("contribution")
    assert len(plot.plot_contributions(clf, frame, max_num_features=2).collections) == 2


def test_plot_contributions_multiclass_needs_a_target():
    X, y = _three_classes()
    clf = REBELClassifier(n_estimators=10, max_depth=2).fit(X, y)
    with pytest.raises(ValueError, match="needs target="):
        plot.plot_contributions(clf, X)
    ax = plot.plot_contributions(clf, X, target=2)
    contrib = clf.decision_function(X, pred_contrib=True)[:, 2, :-1]
    top = int(np.argmax(np.abs(contrib).mean(axis=0)))
    np.testing.assert_array_equal(ax.collections[-1].get_offsets()[:, 0], contrib[:, top])
    with pytest.raises(ValueError, match="max_num_features"):
        plot.plot_contributions(clf, X, target=0, max_num_features=0)
