"""Discrete AdaBoost (Freund & Schapire; thesis §2.2) on histogram-grown shallow trees."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

import numpy as np

from rebelboost._base import BinaryBoostingClassifier
from rebelboost._params import constraints_for
from rebelboost._typing import Callback

__all__ = ["AdaBoostClassifier"]


class AdaBoostClassifier(BinaryBoostingClassifier):
    """Binary discrete AdaBoost with depth-``max_depth`` trees grown on quantized features.

    Each iteration grows a tree with +-1 leaves greedily one layer at a time (the best stump, then every
    leaf split independently with the step held fixed), takes the closed-form step
    ``a = 1/2 ln((1 - err + eps) / (err + eps))`` (``eps = 1 / n_samples`` of the total weight), and
    reweights the samples. Training starts from the bias ``a_0 = 1/2 ln(P / N)`` (half the log prior
    odds) and stops early when a tree has no edge or fits the training data perfectly.

    Parameters
    ----------
    n_estimators : int, default=200
        Maximum number of trees (at most 1 000 000).
    max_depth : int, default=1
        Depth of every tree, 1 (stumps) to 8.
    n_bins : int, default=256
        Bins per feature including one bin for missing values (NaN): up to ``n_bins - 1`` bins of about equal
        count (a heavily repeated value gets its own bin).
    learning_rate : float, default=1.0
        Shrinkage multiplying every step. A step that would raise the training loss or let the scores pass
        1e300 ends the fit (AdaBoost: any learning_rate above 2 does it at the first learner): with a
        ConvergenceWarning, keeping the learners before it, or with a ValueError when it is the very first
        learner, since a fit that keeps nothing would predict one class for every row (an error, because
        a warning is easily filtered away, by a parameter search for one).
    n_jobs : int or None, default=None
        OpenMP threads, scikit-learn's convention: None or -1 use every usable core, -k all but k - 1
        (an error when k exceeds the usable cores: nothing would be left); 0 is an error; more than 4 threads per usable core is clamped to that with a warning. The fitted
        model does not depend on it.
    random_state : int, RandomState or None, default=None
        Chooses the rows used to find bin edges when there are more than 200 000 samples (otherwise
        every row is used and the model does not depend on it).
    verbose : int, default=0
        0: silent. 1: a tqdm progress bar (stderr) showing the training loss and the validation metric.
        2: a line every 10 iterations through ``logging.getLogger("rebelboost")`` at INFO (to stderr when
        logging is not configured); 3 or more: every iteration.
    quick : True, False or "auto", default="auto"
        QuickBoost (thesis Ch. 3): skip the histogram work of features whose error on the heaviest samples
        already proves they cannot win. The model is the same bit for bit in every mode; "auto" picks the
        pruned pass or the full scan per node from measured costs.
    weight_trim : float in (0, 1], default=1.0
        Weight trimming (Friedman et al.): each tree is searched on the heaviest samples holding this
        fraction of the weight only (1.0: off). The step still uses every sample.
    subsample : float in (0, 1], default=1.0
        StochasticBoost: each sample takes part in a tree's search with this probability (seeded by
        ``random_state``; None means seed 0, so fits are reproducible).
    feature_fraction : float in (0, 1], default=1.0
        LazyBoost: each tree is searched over this fraction of the features (seeded likewise).
    criterion : "loss", "gini" or "entropy", default="loss"
        How a tree split is chosen: "loss" minimises AdaBoost's own loss (the weighted error, thesis Eq.
        2.13); "gini" minimises the weighted Gini impurity and "entropy" the weighted entropy (information
        gain) like scikit-learn's trees (inside its AdaBoostClassifier). Leaves and steps are AdaBoost's
        either way. QuickBoost pruning applies to each, with the same trees as the full scan (each
        criterion's bound: :doc:`/quickboost`).
    early_stopping : bool, default=False
        Stop once ``scoring`` on the validation data has not improved by more than ``tol`` for
        ``n_iter_no_change`` trees, and keep the first ``best_iteration_`` trees (the validation optimum).
        The validation data is fit's first ``eval_set``, else a stratified ``validation_fraction`` of the
        training rows (seeded by ``random_state``), as scikit-learn's HistGradientBoostingClassifier does.
    validation_fraction : float in (0, 1), default=0.1
    n_iter_no_change : int, default=10
    tol : float >= 0, default=1e-7
    scoring : "loss", "error", "log_loss" or "expected_cost", default="loss"
        The validation metric recorded in ``evals_result_`` and watched by early stopping (lower is
        better): the boosting loss normalised like ``fit_info_["train_loss"]``, the weighted error rate,
        the log-loss of ``predict_proba``, or the mean cost of ``predict`` under ``cost_matrix_`` (REBEL;
        uniform costs otherwise, i.e. the error).
    warm_start : bool, default=False
        Refitting with a larger ``n_estimators`` keeps the fitted trees and adds the missing ones: the
        same model, bit for bit, as fitting the larger ``n_estimators`` at once on the same data.
    callbacks : list of callables, default=None
        Each is called after every tree with a dict (``iteration``: trees so far, ``train_loss``,
        ``weighted_error``, ``eval``: ``{set name: {metric: value}}``); returning True stops training
        (the tree is kept). Not saved in model files.
    class_weight : dict, "balanced" or None, default=None
        Weights per class as scikit-learn defines them (``compute_sample_weight(class_weight, y)``),
        multiplied with ``sample_weight``; "balanced" is ``n_samples / (n_classes * bincount(y))``. They
        weight eval sets too.

    Attributes
    ----------
    classes_ : ndarray of shape (2,)
        The labels; ``classes_[1]`` is the positive class (score > 0).
    n_features_in_, feature_names_in_ : int, ndarray
        As in scikit-learn.
    n_estimators_ : int
        Trees actually fitted.
    estimator_weights_ : ndarray of shape ``(n_estimators_,)``
        Steps a_t.
    feature_importances_ : ndarray of shape ``(n_features_in_,)``
        Split gains times their tree's ``|step|_1``, normalised to sum 1. ``feature_importances("split")`` and
        ``feature_importances("gain")`` give split counts and total gains (docs/guide/plots.md).
    fit_info_ : dict
        Per iteration: training loss, weighted error, histogram adds (``bin_accumulations``), nodes searched
        with and without pruning, features pruned, rebuilds of the pruned pass's cached heavy rows
        (``heavy_rebuilds``), and the estimated fraction of samples holding 90 % of the weight at the root
        (``mass90_fraction``); plus why training stopped (``stop_reason``: "n_estimators", "no_edge",
        "perfect_fit", "callback" (a callback or early stopping), "interrupted" (Ctrl-C) or "error" (a
        callback raised)) and ``n_replayed``, the trees a warm start kept (their work counters are 0).
        ``stage_seconds``: wall seconds of the whole fit per stage, ``{"other", "setup", "binning",
        "sampling", "split_values", "histograms", "quick_search", "multiclass_root", "selection",
        "leaf_values", "partition", "step", "update", "evaluation": seconds}``; the stages partition the
        fit, so they sum to its wall time (docs/how_it_works.md "Where a fit spends its time"). ``stage_cpu_seconds``:
        ``{"thread": {stage: s}, "process": {stage: s}}``, the CPU seconds of the training thread and of the
        whole process in each stage. ``refit``: None, or for a :class:`rebelboost.REBELClassifier` that
        trained again on every row after early stopping on its carve (its ``refit``), that fit's
        ``n_estimators``, ``n_iterations``, ``stop_reason``, ``kept``, ``seconds`` and ``learner``.
    evals_result_ : dict
        ``{set name: {scoring: array}}``, entry ``k - 1`` is the metric of the first ``k`` trees.
    best_iteration_ : int or None
        Number of trees with the lowest metric on the first eval set (``argmin + 1``; for "error" and
        "expected_cost" the last of equal minima); None without one.
    """

    _loss = "adaboost"
    _parameter_constraints: dict = constraints_for(_loss)

    def __init__(
        self,
        n_estimators: int = 200,
        max_depth: int = 1,
        n_bins: int = 256,
        learning_rate: float = 1.0,
        n_jobs: int | None = None,
        random_state: int | np.random.RandomState | None = None,
        verbose: int = 0,
        quick: bool | Literal["auto"] = "auto",
        weight_trim: float = 1.0,
        subsample: float = 1.0,
        feature_fraction: float = 1.0,
        criterion: str = "loss",
        early_stopping: bool = False,
        validation_fraction: float = 0.1,
        n_iter_no_change: int = 10,
        tol: float = 1e-7,
        scoring: str = "loss",
        warm_start: bool = False,
        callbacks: list[Callback] | None = None,
        class_weight: Mapping[Any, float] | Literal["balanced"] | None = None,
    ) -> None:
        self.n_estimators = n_estimators
        self.max_depth = max_depth
        self.n_bins = n_bins
        self.learning_rate = learning_rate
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.verbose = verbose
        self.quick = quick
        self.weight_trim = weight_trim
        self.subsample = subsample
        self.feature_fraction = feature_fraction
        self.criterion = criterion
        self.early_stopping = early_stopping
        self.validation_fraction = validation_fraction
        self.n_iter_no_change = n_iter_no_change
        self.tol = tol
        self.scoring = scoring
        self.warm_start = warm_start
        self.callbacks = callbacks
        self.class_weight = class_weight
