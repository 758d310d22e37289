"""Discrete AdaBoost (Freund & Schapire; thesis §2.2) on histogram-grown shallow trees."""

from __future__ import annotations

from rebelboost._base import BinaryBoostingClassifier

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
        Maximum number of trees.
    max_depth : int, default=1
        Depth of every tree, 1 (stumps) to 8.
    n_bins : int, default=256
        Bins per feature including one bin for missing values (NaN): up to ``n_bins - 1`` bins of about equal
        count (a heavily repeated value gets its own bin).
    learning_rate : float, default=1.0
        Shrinkage multiplying every step.
    n_jobs : int or None, default=None
        OpenMP threads; None or -1 use every available core. The fitted model does not depend on it.
    random_state : int, RandomState or None, default=None
        Chooses the rows used to find bin edges when there are more than 200 000 samples (otherwise
        every row is used and the model does not depend on it).
    verbose : int, default=0
        Print the training loss every 10 iterations (every ``verbose`` iterations if > 1).
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
    criterion : "loss" or "gini", default="loss"
        How a tree split is chosen: "loss" minimises AdaBoost's own loss (the weighted error, thesis Eq.
        2.13); "gini" minimises the weighted Gini impurity like scikit-learn's trees (inside its
        AdaBoostClassifier). Leaves and steps are AdaBoost's either way. QuickBoost pruning applies to
        "loss" only (with "gini" every node is scanned in full).

    Attributes
    ----------
    classes_ : ndarray of shape (2,)
        The labels; ``classes_[1]`` is the positive class (score > 0).
    n_features_in_, feature_names_in_ : as in scikit-learn.
    n_estimators_ : int
        Trees actually fitted.
    estimator_weights_ : ndarray of shape (n_estimators_,)
        Steps a_t.
    feature_importances_ : ndarray of shape (n_features_in_,)
    fit_info_ : dict
        Per iteration: training loss, weighted error, histogram adds (``bin_accumulations``), nodes searched
        with and without pruning, features pruned, rebuilds of the pruned pass's cached heavy rows
        (``heavy_rebuilds``), and the estimated fraction of samples holding 90 % of the weight at the root
        (``mass90_fraction``); plus why training stopped (``stop_reason``).
    """

    _loss = "adaboost"

    def __init__(
        self,
        n_estimators=200,
        max_depth=1,
        n_bins=256,
        learning_rate=1.0,
        n_jobs=None,
        random_state=None,
        verbose=0,
        quick="auto",
        weight_trim=1.0,
        subsample=1.0,
        feature_fraction=1.0,
        criterion="loss",
    ):
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
