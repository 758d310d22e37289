"""Plots of fitted rebelboost models (matplotlib: ``pip install "rebelboost[plot]"``).

Every function draws on ``ax`` (a new figure's Axes when None) and returns the Axes. matplotlib is imported
when a function is called, so ``import rebelboost`` never needs it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike
from sklearn.utils.validation import check_is_fitted

if TYPE_CHECKING:
    from matplotlib.axes import Axes

    from rebelboost._base import BaseBoostingClassifier

__all__ = ["plot_metric", "plot_importance", "plot_contributions", "plot_margins", "plot_decision_regions",
           "plot_cascade"]


def _axes(ax):
    """ax, or the Axes of a new figure; a clear ImportError without matplotlib."""
    try:
        import matplotlib.pyplot as plt
    except ImportError as exc:
        raise ImportError("rebelboost.plot needs matplotlib: pip install \"rebelboost[plot]\" (or pip install "
                          f"matplotlib) ({exc})") from None
    if ax is None:
        _, ax = plt.subplots()
    return ax


def _feature_names(estimator):
    names = getattr(estimator, "feature_names_in_", None)
    if names is not None:
        return [str(name) for name in names]
    return [f"feature {j}" for j in range(estimator.n_features_in_)]


def _check_rows(predicted, y):
    if len(y) != len(predicted):
        raise ValueError(f"y must hold one label per row of X ({len(predicted)} rows), got {len(y)}")


def plot_metric(estimator: BaseBoostingClassifier, metric: str | None = None, ax: Axes | None = None) -> Axes:
    """Validation curves from ``evals_result_`` (one line per eval set), with the training loss
    (``fit_info_["train_loss"]``) when the metric is ``"loss"``; a dotted vertical line marks
    ``best_iteration_`` when there is one.

    metric : str, optional
        The metric to draw (``scoring`` is the one fit recorded); None: the recorded one, or ``"loss"`` when
        fit had no eval set (then only the training loss is drawn).
    """
    check_is_fitted(estimator)
    if not hasattr(estimator, "evals_result_"):
        raise ValueError("plot_metric needs evals_result_ and fit_info_, which fit records (a model loaded from a "
                         "file does not have them)")
    recorded = {name for curves in estimator.evals_result_.values() for name in curves}
    if metric is None:
        metric = next(iter(sorted(recorded)), "loss")
    if metric not in recorded and metric != "loss":
        raise ValueError(f"metric {metric!r} was not recorded by fit (recorded: {sorted(recorded) or 'none'}; set "
                         f"scoring and pass an eval_set to fit to record another)")
    ax = _axes(ax)
    if metric == "loss":
        train = np.asarray(estimator.fit_info_["train_loss"])
        ax.plot(np.arange(1, len(train) + 1), train, label="training")
    for name, curves in estimator.evals_result_.items():
        if metric in curves:
            values = np.asarray(curves[metric])
            ax.plot(np.arange(1, len(values) + 1), values, label=name)
    best = getattr(estimator, "best_iteration_", None)
    if best is not None:
        ax.axvline(best, color="gray", linestyle=":", label=f"best iteration ({best})")
    ax.set_xlabel("learners")
    ax.set_ylabel(metric)
    ax.legend()
    return ax


def plot_importance(estimator: BaseBoostingClassifier, importance_type: str = "gain",
                    max_num_features: int | None = None, ax: Axes | None = None) -> Axes:
    """Horizontal bars of ``estimator.feature_importances(importance_type)`` (normalised to sum 1), largest
    at the top; ``max_num_features`` keeps that many of the largest (None: all). Tree models only."""
    importance = estimator.feature_importances(importance_type)
    if max_num_features is not None and (not isinstance(max_num_features, (int, np.integer))
                                         or isinstance(max_num_features, bool) or max_num_features < 1):
        raise ValueError(f"max_num_features must be None or a positive int, got {max_num_features!r}")
    names = _feature_names(estimator)
    order = np.argsort(-importance, kind="stable")[:max_num_features]
    ax = _axes(ax)
    ax.barh(np.arange(len(order))[::-1], importance[order], tick_label=[names[j] for j in order])
    ax.set_xlabel(f"importance ({importance_type}, normalised)")
    return ax


def _swarm_offsets(values, width=0.4, n_bins=40):
    """Vertical offsets that spread points of similar value apart (a beeswarm): the points of each of
    n_bins value bins alternate above and below the line, further out the more the bin holds."""
    offsets = np.zeros(len(values))
    if len(values) == 0:
        return offsets
    low, high = float(values.min()), float(values.max())
    bins = np.zeros(len(values), dtype=np.int64) if high == low else \
        np.minimum(((values - low) / (high - low) * n_bins).astype(np.int64), n_bins - 1)
    order = np.lexsort((np.arange(len(values)), bins))
    rank = np.empty(len(values), dtype=np.int64)
    counts = np.bincount(bins, minlength=n_bins)
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
    rank[order] = np.arange(len(values)) - starts[bins[order]]
    step = width / max(1, counts.max() // 2 + 1)
    return np.where(rank % 2 == 0, 1.0, -1.0) * ((rank + 1) // 2) * step


def _feature_colours(column):
    """Each row's feature value as its rank in [0, 1] among the column's finite values (NaN: NaN)."""
    colours = np.full(len(column), np.nan)
    finite = np.isfinite(column)
    if finite.sum() > 1:
        ranks = np.argsort(np.argsort(column[finite], kind="stable"), kind="stable")
        colours[finite] = ranks / (finite.sum() - 1)
    elif finite.any():
        colours[finite] = 0.5
    return colours


def plot_contributions(estimator: BaseBoostingClassifier, X: ArrayLike, target: object = None,
                       max_num_features: int | None = None, ax: Axes | None = None) -> Axes:
    """A beeswarm summary of ``decision_function(X, pred_contrib=True)``: one row of points per feature,
    each point one row of X at its contribution (x axis), coloured by the feature's value (its rank among
    X's values: blue low, red high; grey NaN); features ordered by their mean absolute contribution, largest at
    the top. Tree models with node covers only (see ``decision_function``).

    target : class label, optional
        For REBEL with more than 2 classes, the class whose score is explained (required there); binary
        models explain their one score.
    max_num_features : int, optional
        Keep that many features with the largest mean absolute contribution (None: all).
    """
    check_is_fitted(estimator)
    contrib = estimator.decision_function(X, pred_contrib=True)
    if contrib.ndim == 3:
        classes = list(estimator.classes_)
        if target is None or target not in classes:
            raise ValueError(f"plot_contributions of a {len(classes)}-class model needs target=<one of classes_>, "
                             f"got {target!r}")
        contrib = contrib[:, classes.index(target), :]
    contrib = contrib[:, :-1]
    if max_num_features is not None and (not isinstance(max_num_features, (int, np.integer))
                                         or isinstance(max_num_features, bool) or max_num_features < 1):
        raise ValueError(f"max_num_features must be a positive integer or None, got {max_num_features!r}")
    values = np.asarray(X.to_numpy() if hasattr(X, "to_numpy") else X, dtype=np.float64)
    strength = np.abs(contrib).mean(axis=0)
    order = np.argsort(-strength, kind="stable")[:max_num_features]
    names = _feature_names(estimator)
    ax = _axes(ax)
    from matplotlib import colormaps

    cmap = colormaps["coolwarm"].with_extremes(bad="0.6")  # NaN feature values in grey
    for row, j in enumerate(order[::-1]):  # the strongest drawn last, at the top
        colours = _feature_colours(values[:, j])
        ax.scatter(contrib[:, j], row + _swarm_offsets(contrib[:, j]), c=colours, cmap=cmap, vmin=0.0,
                   vmax=1.0, s=8, plotnonfinite=True, label=names[j])
    ax.axvline(0.0, color="gray", linewidth=0.8)
    ax.set_yticks(np.arange(len(order)))
    ax.set_yticklabels([names[j] for j in order[::-1]])
    ax.set_xlabel("contribution to the score (TreeSHAP)")
    return ax


def _margin_normalisers(estimator, binary):
    """Per iteration t = 1..T, the largest |margin| the first t learners and the bias can give (for scores as
    decision_function presents them): binary |b| + sum |a_t| (REBEL's two classes: of the difference),
    more classes sum of (max_k a_tk - min_k a_tk) plus the bias's range."""
    steps = estimator._model.steps()
    bias = np.asarray(estimator._model.bias)
    if binary:
        if steps.shape[1] == 2:
            steps, bias = steps[:, 1:] - steps[:, :1], bias[1:] - bias[:1]
        spread, base = np.abs(steps[:, 0]), abs(float(bias[0]))
    else:
        spread, base = steps.max(axis=1) - steps.min(axis=1), float(bias.max() - bias.min())
    return base + np.cumsum(spread)


def plot_margins(estimator: BaseBoostingClassifier, X: ArrayLike, y: ArrayLike,
                 iterations: Sequence[int] | None = None, ax: Axes | None = None) -> Axes:
    """Cumulative distributions of the normalised margins of (X, y) after chosen numbers of learners (the
    margin plots of Schapire et al. 1998).

    Binary models: the margin of a row is y H(x) with y = +1 for ``classes_[1]`` and -1 otherwise; more
    classes: the true class's score minus the best other class's. Each is divided by the largest value the
    bias and the learners so far could give it (binary: ``|a_0| + sum_t |a_t|``; more classes: the range of the
    bias plus the sum of the ranges of the step vectors), so margins lie in [-1, 1]; a row is misclassified where
    its margin is below 0.

    iterations : sequence of int, optional
        Numbers of learners (1 to ``n_estimators_``); None: about a tenth, half and all of them.
    """
    check_is_fitted(estimator)
    n = estimator.n_estimators_
    if iterations is None:
        iterations = sorted({max(1, n // 10), max(1, n // 2), n})
    iterations = [int(t) for t in iterations]
    if not iterations or any(not 1 <= t <= n for t in iterations):
        raise ValueError(f"iterations must be numbers of learners in [1, {n}], got {iterations}")
    y = np.asarray(y)
    index = np.searchsorted(estimator.classes_, y)
    known = index < len(estimator.classes_)
    known[known] = estimator.classes_[index[known]] == y[known]
    if y.ndim != 1 or not known.all():
        raise ValueError("y must be 1-D and hold only labels of classes_")
    wanted = set(iterations)
    margins = {}
    normalisers = None
    for t, scores in enumerate(estimator.staged_decision_function(X), start=1):
        if t > max(wanted):
            break
        if t not in wanted:
            continue
        _check_rows(scores, y)
        binary = scores.ndim == 1
        if normalisers is None:
            normalisers = _margin_normalisers(estimator, binary)
        if binary:
            raw = np.where(index == 1, scores, -scores)
        else:
            rows = np.arange(len(index))
            true = scores[rows, index]
            others = scores.copy()
            others[rows, index] = -np.inf
            raw = true - others.max(axis=1)
        margins[t] = raw / normalisers[t - 1] if normalisers[t - 1] > 0 else raw
    ax = _axes(ax)
    fraction = np.arange(1, len(y) + 1) / len(y)
    for t in iterations:
        ax.step(np.sort(margins[t]), fraction, where="post", label=f"{t} learners")
    ax.axvline(0.0, color="gray", linestyle=":", linewidth=1)
    ax.set_xlim(-1.0, 1.0)
    ax.set_ylim(0.0, 1.0)
    ax.set_xlabel("normalised margin")
    ax.set_ylabel("cumulative fraction of rows")
    ax.legend()
    return ax


def plot_decision_regions(estimator: BaseBoostingClassifier, X: ArrayLike, y: ArrayLike, ax: Axes | None = None,
                          resolution: int = 200) -> Axes:
    """The predicted class over a ``resolution`` x ``resolution`` grid spanning X (5 % padding) as an image
    whose values are indices into ``classes_``, with the rows of (X, y) on top. X must have exactly 2
    features. Tree and similarity models alike."""
    check_is_fitted(estimator)
    frame_columns = getattr(X, "columns", None)
    X = np.asarray(X, dtype=np.float64)
    if X.ndim != 2 or X.shape[1] != 2:
        raise ValueError(f"plot_decision_regions draws 2-D data: X must have exactly 2 features, got shape "
                         f"{X.shape}; fit on two features (or two components) to see the regions")
    if not isinstance(resolution, (int, np.integer)) or isinstance(resolution, bool) or resolution < 2:
        raise ValueError(f"resolution must be an int >= 2, got {resolution!r}")
    low, high = np.nanmin(X, axis=0), np.nanmax(X, axis=0)
    pad = 0.05 * np.where(high > low, high - low, 1.0)
    low, high = low - pad, high + pad
    gx, gy = np.meshgrid(np.linspace(low[0], high[0], resolution), np.linspace(low[1], high[1], resolution))
    grid = np.column_stack([gx.ravel(), gy.ravel()])
    if frame_columns is not None or hasattr(estimator, "feature_names_in_"):
        import pandas as pd

        grid = pd.DataFrame(grid, columns=getattr(estimator, "feature_names_in_", frame_columns))
    classes = estimator.classes_
    region = np.searchsorted(classes, estimator.predict(grid)).reshape(resolution, resolution)
    ax = _axes(ax)
    from matplotlib.colors import BoundaryNorm, ListedColormap
    from matplotlib.patches import Patch

    colours = [f"C{k % 10}" for k in range(len(classes))]
    cmap = ListedColormap(colours)
    norm = BoundaryNorm(np.arange(len(classes) + 1) - 0.5, len(classes))
    ax.imshow(region, origin="lower", extent=(low[0], high[0], low[1], high[1]), aspect="auto", cmap=cmap,
              norm=norm, alpha=0.35, interpolation="nearest")
    y = np.asarray(y)
    _check_rows(X, y)
    y_index = np.searchsorted(classes, y)
    ax.scatter(X[:, 0], X[:, 1], c=y_index, cmap=cmap, norm=norm, s=12, edgecolors="k", linewidths=0.3)
    names = _feature_names(estimator)
    ax.set_xlabel(names[0])
    ax.set_ylabel(names[1])
    ax.legend(handles=[Patch(color=colours[k], label=str(c)) for k, c in enumerate(classes)], loc="best",
              fontsize="small")
    return ax


def plot_cascade(estimator: BaseBoostingClassifier, X: ArrayLike, y: ArrayLike, ax: Axes | None = None) -> Axes:
    """Accuracy on (X, y) against learners evaluated per row: the first t learners for every t (a line), the
    calibrated soft cascade (``predict(X, cascade=True)``, its mean learners per row), the exact early exit
    and all learners (markers). Needs ``calibrate_cascade`` first; use rows other than the calibration's."""
    check_is_fitted(estimator)
    if estimator.cascade_ is None:
        raise ValueError("plot_cascade needs a calibrated cascade: call calibrate_cascade(X_val, y_val, ...) first")
    y = np.asarray(y)
    n = estimator.n_estimators_
    full = estimator.predict(X)
    _check_rows(full, y)
    staged = np.array([np.mean(labels == y) for labels in estimator.staged_predict(X)])
    ax = _axes(ax)
    ax.plot(np.arange(1, n + 1), staged, color="C0", label="first t learners")
    points = [("cascade", dict(cascade=True), "C3", "o"), ("exact early exit", dict(early_exit=True), "C2", "s")]
    for label, options, colour, marker in points:
        labels, learners = estimator.predict(X, return_n_learners=True, **options)
        ax.plot([learners.mean()], [np.mean(labels == y)], linestyle="none", marker=marker, color=colour,
                label=f"{label}: {learners.mean():.1f} learners per row")
    ax.plot([n], [np.mean(full == y)], linestyle="none", marker="^", color="k",
            label=f"all {n} learners")
    ax.set_xlabel("learners evaluated per row (mean)")
    ax.set_ylabel("accuracy")
    ax.legend(loc="lower right")
    return ax
