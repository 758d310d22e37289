"""REBEL: cost-sensitive multi-class boosting of shallow trees or Localized Similarities (Appel, thesis Ch. 4-5)."""

from __future__ import annotations

import numbers
from collections.abc import Mapping
from typing import Any, Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.special import expit, logsumexp, softmax

from sklearn.utils.validation import check_is_fitted

from rebelboost import _core, _scaling, _similarity
from rebelboost._base import BaseBoostingClassifier
from rebelboost._params import constraints_for, hybrid_depth, refit_size, value_of
from rebelboost._typing import Callback
from rebelboost._validation import check_predict_data

__all__ = ["REBELClassifier"]

# Similarities binarize the classes through a K x K eigenproblem every iteration: time grows faster than
# K^3 (2 learners on 2 048 rows: 0.37 s at 512 classes, 1.7 s at 1 024; 4 096 classes took over 60 s).
MAX_SIMILARITY_CLASSES = 1024


class REBELClassifier(BaseBoostingClassifier):
    """Cost-sensitive multi-class boosting with vector-valued steps (REBEL).

    The model is ``H(x) = a_0 + sum_t f_t(x) a_t`` with weak learners ``f_t`` and step vectors ``a_t`` in
    R^K; the prediction is ``argmax_k H_k(x)``, REBEL's estimate of the minimum-risk class. The weak
    learners are binary trees (leaves +-1, ``weak_learner="tree"``), Localized Similarities (thesis
    Ch. 5, ``weak_learner="similarity"``), which compare x to one or two training points, or both
    (``weak_learner="hybrid"``: each iteration keeps the better of a tree and a similarity).

    Trees: each tree's first split is searched jointly with its step vector (loss ``2 sum_k sqrt(s+_k s-_k)``);
    deeper layers are grown one at a time with the step held fixed; the step is then re-optimised in
    closed form, ``a = 1/2 (ln(s- + eps) - ln(s+ + eps))`` with ``eps = 1 / (K N)`` of the total weight
    (Schapire-Singer smoothing; it keeps a tree that isolates a class from swamping the scores).

    ``loss`` picks the convex surrogate g of REBEL's coupled sum (thesis §4.3): ``"exponential"``
    (``e^x``, the thesis's REBEL, above), ``"logistic"`` (``log2(1 + e^x)``; with 2 classes LogitBoost's
    loss) or ``"squared"`` (``(1 + x)^2``; with 2 classes L2Boost's). The last two have their own subcosts
    (Eq. 4.3), their root split maximises the Newton gain of the joint step (a full scan: QuickBoost prunes
    only the layers below it), and their steps are found per class by safeguarded Newton. The logistic loss
    weighs mislabelled rows far less than the exponential one. See the REBEL guide page, "The loss family".

    How close ``argmax H`` comes to the minimum expected cost: the loss is minimised pointwise by
    ``H_k = 1/2 ln(p_k c-_kk / sum_j p_j c+_jk)`` (``p`` the posterior, ``c+`` proportional to the squared
    costs). Its argmax is the minimum-expected-cost class for uniform costs, for 2 classes, and whenever
    a row's off-diagonal costs are equal (a mistake on class ``i`` costs ``C[i]`` whatever is predicted),
    but not for general matrices with 3 or more classes. For those, "fit with uniform costs, then take
    ``argmin(predict_proba(X) @ cost_matrix)``" had the lower test risk on the thesis's own benchmark
    (``bench/results/rebel_cost_sensitive.md``).

    Localized Similarities, on features standardised with the training mean and scale: each iteration
    binarizes the classes (top eigenvector of U^T U through the K x K matrix U U^T), isolates the training
    point whose isolation lowers the loss most (one-point learner ``(tau - D_i) / (tau + D_i)``, ``D_i``
    the squared distance to it, ``tau`` half the squared distance to its nearest other point), then tries
    two-point learners between it and the nearest points of the other binarized class (their
    perpendicular bisector, scaled to [-1, 1]) and keeps the best. Their outputs are real, so the step
    is the exact per-class minimiser of REBEL's loss (safeguarded Newton): the training loss falls every
    iteration, and on distinct points the training error reaches 0 (thesis §5.4). NaN in X is an error
    (impute first); tree-only parameters (max_depth, n_bins, quick, weight_trim, subsample,
    feature_fraction) are ignored. :attr:`learners_` and :meth:`explain` say which training points each
    learner compares a query to and what it contributed.

    Parameters
    ----------
    n_estimators : int or "auto", default="auto"
        "auto": 200 for trees; for similarities and hybrids ``SIMILARITY_MAX_ESTIMATORS`` (10 000), a cap
        that early stopping normally ends well before.
    early_stopping, n_iter_no_change, validation_fraction, scoring : default="auto"
        As in :class:`rebelboost.AdaBoostClassifier`. "auto": for trees ``False``, 10, 0.1 and "loss"; for
        similarities and hybrids with ``n_estimators="auto"``, early stopping on the first ``eval_set``, else
        on a split carved from X (``SIMILARITY_VALIDATION_FRACTION``, 25 %, for similarities;
        ``HYBRID_VALIDATION_FRACTION``, 40 %, for hybrids, whose refit returns those rows), with a patience of
        ``SIMILARITY_PATIENCE`` (1 000) learners for similarities and ``HYBRID_PATIENCE`` (500) for hybrids,
        as their validation curves fall slowly; with a number of learners given, no early stopping.
        Similarities watch the validation log loss (``SIMILARITY_SCORING``) where the watched set holds
        fewer than ``SIMILARITY_ERROR_ROWS`` (200) rows, else the validation error; hybrids the validation
        error (``HYBRID_SCORING``). With the error, the latest of equal errors is kept and the patience
        counts from the last lower error. Why: docs/guide/similarity.md
        "Defaults"; the rules are the parameter table's (``rebelboost._params``). Pass
        ``early_stopping=False`` to train on every row.
    refit : bool or "auto", default="auto"
        After early stopping on a split carved from X (no ``eval_set``), train again on every row of X with
        ``ceil(T / (1 - validation_fraction))`` learners, T the stage the carve picked (``best_iteration_``),
        and keep that model: the carved rows are no longer lost to it. ``fit_info_["refit"]`` records the
        refit (None without); ``fit_info_``'s other entries, ``evals_result_`` and ``best_iteration_`` stay
        the carve fit's. "auto": for hybrids, and for similarities whose carve holds
        ``SIMILARITY_ERROR_ROWS`` (200) rows or more (``similarity_counts_errors``); not for trees (chosen on
        validation data, docs/guide/similarity.md "Defaults"). No effect with an
        ``eval_set``, without early stopping or on a warm start. The refit costs about as much as the
        carve's fit; ``verbose`` shows it as "REBELClassifier refit", ``callbacks`` watch the carve's fit
        only (it chose the stage).
    max_depth : int or "auto", default="auto"
        Depth of every tree (1 to 8). "auto": 2; for hybrids, from the rows the fit trains on (after any
        validation carve): ``HYBRID_MAX_DEPTH`` (3) from ``HYBRID_DEEP_ROWS`` (512) rows, stumps below (on
        a few hundred rows deeper trees separated the training rows within a few learners);
        :attr:`hybrid_depth_` says which a fit used (docs/guide/similarity.md "Defaults").
    weak_learner : {"tree", "similarity", "hybrid"}, default="tree"
        Similarities (and hybrids) allow at most 1 024 classes (``MAX_SIMILARITY_CLASSES``; trees 4 096):
        their class binarization solves a K x K eigenproblem every iteration. "hybrid": each iteration fits
        the best tree and the best similarity on the same weights and keeps the one whose own step
        reaches the lower REBEL training loss (docs/guide/similarity.md); ``fit_info_["learner"]`` says which
        won when (0 tree, 1 similarity). No missing values, like similarities.
    similarity_scaling : {"auto", "feature", "global"}, default="auto"
        Similarities and hybrids: each feature centred on its mean and divided by its own standard deviation
        ("feature", for features in different units), or all divided by one scale, the root mean square of
        their standard deviations ("global", for features in one unit such as pixels, where dividing a
        rarely-lit pixel by its tiny deviation would let it dominate every distance). "auto": "global" when
        the leave-one-out k-nearest-neighbour votes (k = 1 to 9) of the training rows (at most 2 000 of
        them, a seeded sample) are wrong less often under it by at least 2 standard errors, else "feature";
        :attr:`similarity_scaling_` says which a fit used (docs/guide/similarity.md "Defaults").
    similarity_cache_mb : float, default=1024
        Similarities only: memory (MiB) for the columns of squared distances between training points that
        the selection keeps from one iteration to the next (N doubles each; at most N of them, so the
        default holds every column up to N = 11 585 rows). A kept column saves O(N d) per candidate; when
        the budget is full the least recently used column gives way. Only time depends on it, never the
        model. 0 keeps none; at most 2**20 (1 TiB: more is an error, not silently held); a budget above
        half of the machine's physical memory is held to that half.
    tree_penalty : float, default=0.0
        Hybrids only (other learners need 0): the tree candidate of an iteration is kept only when it cuts
        the REBEL training loss at least ``1 + tree_penalty`` times as much as the similarity candidate.
        Trees cut the training loss faster than similarities but may generalise worse; a penalty picked on
        validation data steers the hybrid toward the family that generalises (docs/guide/similarity.md
        "Hybrid"). 0 ranks the two losses alone; a large value keeps similarities only. Finite, >= 0.
    similarity_max_candidates : int, default=256
        Similarities and hybrids: two-point candidates an iteration visits at most, nearest to the anchor
        first (steps 4-6 of the thesis's §5.4); 0 visits them until the removal step has covered the other
        class, the thesis's procedure. Fewer than 256 are visited on small sets (at most 144 per learner on
        wine, breast cancer, Sonar, Ionosphere and Pima: the cap changes nothing there); on 5 000 x 30 about
        1 700 are, and 256 made a learner 4x cheaper at the same test error per learner
        (docs/guide/similarity.md "Candidates"). The one-point learner, which carries the training-loss
        guarantee, is always a candidate. An integer in [0, 2**30].
    cost_matrix : array of shape (n_classes, n_classes), dict or None, default=None
        ``cost_matrix[i, j]`` is the cost of predicting ``classes_[j]`` when the truth is ``classes_[i]``
        (rows and columns in the order of ``classes_``, i.e. sorted labels). Zero diagonal, non-negative,
        finite, no all-zero row. A dict ``{(true_label, predicted_label): cost}`` sets those entries and
        leaves every other off-diagonal entry at 1. None means uniform costs (plain multi-class).
    loss : {"exponential", "logistic", "squared"}, default="exponential"
        REBEL's surrogate g (above). ``predict_proba`` inverts the loss's own pointwise minimiser:
        ``expit(2 H_k)``, ``expit(H_k)`` or ``(1 + H_k) / 2`` (the last projected onto the simplex), then
        normalised. Similarities need ``"exponential"``.
    n_bins, learning_rate, n_jobs, random_state, verbose, quick
        As in :class:`rebelboost.AdaBoostClassifier` (also weight_trim, subsample, feature_fraction) (pruning applies to the layers below the root).

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    cost_matrix_ : ndarray of shape (n_classes, n_classes)
        The validated cost matrix used for training.
    loss_ : str
        The surrogate the model was trained with (``loss`` at fit time; what ``predict_proba`` inverts).
    hybrid_depth_ : int or None
        The depth of a hybrid fit's trees: ``max_depth``, or with "auto" the depth the rows it trained on
        gave; None for other learners.
    n_estimators_, estimator_weights_, feature_importances_, fit_info_ : int, ndarray, ndarray, dict
        As in :class:`rebelboost.AdaBoostClassifier`, with ``estimator_weights_`` of shape
        ``(n_estimators_, n_classes)`` (``train_loss`` is Eq. 4.5 normalised to 1 at H = 0).
    """

    _loss = "rebel"
    cost_matrix_: NDArray[np.float64]  # fitted attributes
    loss_: str
    _parameter_constraints: dict = constraints_for(_loss)
    # Research switches of the similarity family (not parameters: "exact" is the one with the guarantee;
    # bench/peers/similarity_*.py measures the alternatives). See TrainParams::similarity in the core.
    _similarity_options = {"step_rule": "exact", "tau_ratio": 0.5}

    def __init__(
        self,
        n_estimators: int | Literal["auto"] = "auto",
        max_depth: int | Literal["auto"] = "auto",
        cost_matrix: ArrayLike | Mapping[tuple[Any, Any], float] | None = None,
        n_bins: int = 256,
        learning_rate: float = 1.0,
        n_jobs: int | None = None,
        random_state: int | np.random.RandomState | None = None,
        verbose: int = 0,
        quick: bool | Literal["auto"] = "auto",
        weight_trim: float = 1.0,
        subsample: float = 1.0,
        feature_fraction: float = 1.0,
        early_stopping: bool | Literal["auto"] = "auto",
        validation_fraction: float | Literal["auto"] = "auto",
        n_iter_no_change: int | Literal["auto"] = "auto",
        tol: float = 1e-7,
        scoring: str = "auto",
        warm_start: bool = False,
        callbacks: list[Callback] | None = None,
        class_weight: Mapping[Any, float] | Literal["balanced"] | None = None,
        weak_learner: str = "tree",
        similarity_scaling: str = "auto",
        similarity_cache_mb: float = 1024.0,
        loss: str = "exponential",
        tree_penalty: float = 0.0,
        similarity_max_candidates: int = 256,
        refit: bool | Literal["auto"] = "auto",
    ) -> None:
        self.n_estimators = n_estimators
        self.max_depth = max_depth
        self.cost_matrix = cost_matrix
        self.n_bins = n_bins
        self.learning_rate = learning_rate
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.verbose = verbose
        self.quick = quick
        self.weight_trim = weight_trim
        self.subsample = subsample
        self.feature_fraction = feature_fraction
        self.early_stopping = early_stopping
        self.validation_fraction = validation_fraction
        self.n_iter_no_change = n_iter_no_change
        self.tol = tol
        self.scoring = scoring
        self.warm_start = warm_start
        self.callbacks = callbacks
        self.class_weight = class_weight
        self.weak_learner = weak_learner
        self.similarity_scaling = similarity_scaling
        self.similarity_cache_mb = similarity_cache_mb
        self.loss = loss
        self.tree_penalty = tree_penalty
        self.similarity_max_candidates = similarity_max_candidates
        self.refit = refit

    def _check_classes(self, classes, y_encoded, sample_weight, y):
        if len(classes) < 2:
            raise ValueError(f"y has only 1 class ({classes[0]!r}); REBELClassifier needs at least 2 classes to train.")
        if sample_weight is not None:
            present = np.bincount(y_encoded, weights=sample_weight, minlength=len(classes)) > 0
            if present.sum() < 2:
                raise ValueError("sample_weight leaves only 1 class with positive weight; REBELClassifier needs 2.")
        if self.weak_learner != "tree" and len(classes) > MAX_SIMILARITY_CLASSES:
            raise ValueError(f"y has {len(classes)} classes; weak_learner={self.weak_learner!r} supports at most "
                             f"{MAX_SIMILARITY_CLASSES} (each iteration solves a K x K eigenproblem, time grows faster "
                             "than K^3); use weak_learner='tree' (up to 4 096 classes)")
        self.cost_matrix_ = _check_cost_matrix(self.cost_matrix, classes)
        self.loss_ = self.loss  # read by predict_proba, also while this fit's eval sets are scored

    def _resolve_from_data(self, X, y_encoded, seed, warm):
        self._resolve_scaling(X, y_encoded, seed, warm)
        if self.weak_learner != "hybrid":
            self.hybrid_depth_ = None
        elif self.max_depth != "auto":
            self.hybrid_depth_ = int(self.max_depth)
        elif not (warm and getattr(self, "hybrid_depth_", None)):  # a warm start keeps the first fit's depth
            self.hybrid_depth_ = hybrid_depth(X.shape[0])

    def _refit_size(self, carved, warm, stop_reason, stopping):
        # Only a fresh fit that stopped early on its own carve: an eval_set or early_stopping=False trained on
        # every row already; a warm start continues the trees it holds.
        if not carved or warm or stop_reason not in ("callback", "n_estimators") or not self.best_iteration_:
            return 0
        if not value_of(self._loss, self, "refit"):
            return 0
        return refit_size(self.best_iteration_, stopping["validation_fraction"], stopping["n_estimators"])

    def _resolve_scaling(self, X, y_encoded, seed, warm):
        if self.weak_learner == "tree":
            self.similarity_scaling_ = None
        elif warm and getattr(self, "similarity_scaling_", None):
            pass  # a warm start continues on the first fit's standardization
        elif self.similarity_scaling == "auto":
            self.similarity_scaling_ = _scaling.choose_scaling(X, y_encoded, seed)
        else:
            self.similarity_scaling_ = self.similarity_scaling

    def _core_extra(self):
        return {"cost_matrix": self.cost_matrix_, **self._similarity_options}

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = self.weak_learner == "tree"  # similarities compare whole rows
        return tags

    # ---- inspection ------------------------------------------------------------------------------
    @property
    def learners_(self) -> dict[str, NDArray[Any]]:
        """The fitted similarities (``weak_learner="similarity"`` only), one entry per learner ``t``.

        A dict of arrays: ``kind`` ("constant", "one_point" or "two_point"); ``anchor_rows`` (T, 2), the
        rows of the X given to ``fit`` that learner t compares a query to (-1 where unused; a one-point
        learner uses column 0); ``anchors`` (T, 2, n_features), those points in the original feature
        units (NaN where unused); ``tau`` (T,), the one-point threshold on the standardised squared
        distance (NaN otherwise); ``step`` (T, n_classes), the vector a_t the learner's output multiplies.
        """
        check_is_fitted(self)
        if self._model.learner != "similarity":
            raise AttributeError("learners_ describes similarity models; this model has trees (see to_json)")
        return _similarity.describe(self._model)

    def explain(self, X: ArrayLike) -> dict[str, NDArray[Any]]:
        """What every weak learner contributed to the scores of each row of X.

        Returns a dict: ``bias`` (n_classes,), ``output`` (n_samples, T) with f_t(x) (+-1 for trees, in
        [-1, 1] for similarities), ``contribution`` (n_samples, T, n_classes) = f_t(x) a_t; the raw scores
        are ``bias + contribution.sum(axis=1)`` (before the 2-class convention of decision_function).
        For similarity models also ``anchor_rows``, ``anchors`` and ``tau`` as in :attr:`learners_`: which
        training points each learner compared x to, and how far it reaches. For hybrid models also ``kind``
        (T,), each learner's family (0 tree, 1 similarity). Memory: n_samples x T x
        n_classes floats.
        """
        check_is_fitted(self)
        X = check_predict_data(self, X)
        return _similarity.explain(self._model, X, self._threads())

    def _fitted_metadata(self):
        # A tree model has no scaling (None), also when a distributed fit made it (rebelboost.dask: trees only).
        return {"cost_matrix": self.cost_matrix_.tolist(), "similarity_scaling": getattr(self, "similarity_scaling_", None),
                "hybrid_depth": getattr(self, "hybrid_depth_", None)}

    def _restore_fitted_metadata(self, meta):
        # Files written before the costs were stored rebuild them from the parameters.
        stored = meta["cost_matrix"] if "cost_matrix" in meta else self.cost_matrix
        self.cost_matrix_ = _check_cost_matrix(stored, self.classes_)
        self.loss_ = self.loss  # files before the parameter existed: "exponential" (checked against the model)
        # Files before "auto" existed: the parameter was the scaling itself, and files before the parameter
        # existed (which load with the default, "auto") scaled per feature.
        scaling = meta["similarity_scaling"] if "similarity_scaling" in meta else (
            None if self.weak_learner == "tree" else
            "feature" if self.similarity_scaling == "auto" else self.similarity_scaling)
        if scaling not in (None, "feature", "global") or (scaling is None) != (self.weak_learner == "tree"):
            raise ValueError(f"the metadata's similarity_scaling {scaling!r} does not fit weak_learner={self.weak_learner!r}")
        self.similarity_scaling_ = scaling
        self.hybrid_depth_ = self._stored_hybrid_depth(meta)

    def _stored_hybrid_depth(self, meta):
        """hybrid_depth_ from a loaded file's metadata; files before the depth rule held stumps for "auto"."""
        hybrid = self.weak_learner == "hybrid"
        depth = meta["hybrid_depth"] if "hybrid_depth" in meta else (
            None if not hybrid else 1 if self.max_depth == "auto" else self.max_depth)
        is_depth = isinstance(depth, int) and not isinstance(depth, bool) and 1 <= depth <= 8
        if not (is_depth and self.max_depth in ("auto", depth) if hybrid else depth is None):
            raise ValueError(f"the metadata's hybrid_depth {depth!r} does not fit weak_learner={self.weak_learner!r} "
                             f"and max_depth={self.max_depth!r}")
        return depth

    def decision_function(self, X: ArrayLike, n_iter: int | None = None, *,
                          pred_contrib: bool = False) -> NDArray[np.float64]:
        """Scores H(x), shape (n_samples, n_classes); predict is their argmax (the estimated minimum-risk class).

        With 2 classes, scikit-learn's binary convention applies: the 1-D array ``H_1(x) - H_0(x)``
        (positive means ``classes_[1]``). ``n_iter``: use only the first n_iter trees (None: all).
        ``pred_contrib=True``: each feature's exact contribution (TreeSHAP), shape
        ``(n_samples, n_classes, n_features + 1)``, the expected value last; with 2 classes
        ``(n_samples, n_features + 1)``, the contributions to ``H_1 - H_0``. Tree models only.
        """
        return super().decision_function(X, n_iter=n_iter, pred_contrib=pred_contrib)

    def _present_scores(self, scores):
        if scores.ndim == 2 and scores.shape[1] == 2:
            return scores[:, 1] - scores[:, 0]
        return scores

    def _present_contributions(self, contributions):
        if contributions.shape[1] == 2:
            return contributions[:, 1, :] - contributions[:, 0, :]
        return contributions

    def predict_proba(self, X: ArrayLike, n_iter: int | None = None) -> NDArray[np.float64]:
        """Class probabilities from REBEL's own link, columns in the order of ``classes_``.

        With uniform costs, REBEL's exponential loss is minimised pointwise by ``H_k = 1/2 ln(p_k / (1 -
        p_k))`` (p_k = P(class k | x)), so ``expit(2 H_k)`` estimates ``p_k``; the K estimates are normalised
        to sum to 1. With 2 classes this is AdaBoost's logistic link. The logistic loss's minimiser is
        ``H_k = ln(p_k / (1 - p_k))`` (estimate ``expit(H_k)``, normalised the same way), the squared loss's
        ``H_k = 2 p_k - 1`` (estimate ``(1 + H_k) / 2``, projected onto the probability simplex, which keeps
        the order of the scores); derivations on the REBEL guide page, "The loss family". Computed in log
        space (``log expit(2 H) = -log1p(exp(-2 H))``, normalised with a log-sum-exp), so for every score a model can hold
        (``|H_k| <= 1e300``, the file limit; the scores of ordinary fits stay below a few thousand) each row
        is finite, in [0, 1], sums to 1 (to rounding) and is ordered like ``H`` (``H_i > H_j`` implies
        ``p_i >= p_j``); its argmax is ``predict``'s class whenever the largest score is unique: where two
        probabilities are closer than float64 resolves (``expit(2 H)`` is 1.0 above H ~ 18, so scores 20
        and 21 both give 0.5 of two classes), predict's class keeps the maximum and the others tied with it
        are lowered by one unit in the last place. With non-uniform costs the scores estimate the
        minimum-risk class, not a posterior: read the result as a ranking, not as calibrated.
        """
        return super().predict_proba(X, n_iter=n_iter)

    def _scores_to_proba(self, scores):
        scores = np.asarray(scores, dtype=np.float64)
        loss = getattr(self, "loss_", "exponential")
        if loss == "squared":
            # 2 classes: d = 2 H_1, H_0 = -H_1, so (1 + H) / 2 = ((2 - d) / 4, (2 + d) / 4), summing to 1.
            full = np.column_stack([-scores / 2, scores / 2]) if scores.ndim == 1 else scores
            return _simplex_projection((1.0 + full) / 2.0)
        scale = _LINK_SCALE[loss]
        if scores.ndim == 1:  # 2 classes: d = H_1 - H_0 = 2 H_1, so expit(scale H_1) = expit(scale d / 2)
            half = scale * scores / 2.0
            return np.column_stack([expit(-half), expit(half)])
        # log expit(scale H), then normalised in log space (no underflow for very negative scores).
        return softmax(-np.logaddexp(0.0, -scale * scores), axis=1)

    def _true_class_log_proba(self, scores, y):
        # _scores_to_proba's link in log form, for the true class only: log expit(z_y) - log sum_k expit(z_k)
        # with z = scale H (a tenth of the log-sum-exp's work at K = 10: the monitor's log loss runs every
        # iteration). Rows whose sum underflows (every z_k below about -700) take the log-sum-exp form.
        scores = np.asarray(scores, dtype=np.float64)
        loss = getattr(self, "loss_", "exponential")
        if loss == "squared":
            return super()._true_class_log_proba(scores, y)
        scale = _LINK_SCALE[loss]
        y = np.asarray(y)
        if scores.ndim == 1:  # 2 classes: P(class 1) = expit(scale d / 2), P(class 0) = expit(-scale d / 2)
            half = scale * scores / 2.0
            return -np.logaddexp(0.0, np.where(y == 1, -half, half))
        rows = np.arange(len(y))
        with np.errstate(over="ignore", divide="ignore"):
            t = np.multiply(scores, -scale)  # expit(z) = 1 / (1 + e^-z), in place (numpy's exp is SIMD)
            np.exp(t, out=t)
            t += 1.0
            np.reciprocal(t, out=t)
            total = t.sum(axis=1)
            log_p = -np.logaddexp(0.0, -scale * scores[rows, y]) - np.log(total)
        low = np.flatnonzero(~(total > 1e-300))
        if low.size:
            log_expit = -np.logaddexp(0.0, -scale * scores[low])
            log_p[low] = log_expit[np.arange(low.size), y[low]] - logsumexp(log_expit, axis=1)
        return log_p


# The pointwise minimiser of the exponential and logistic losses: H_k = logit(p_k) / scale.
_LINK_SCALE = {"exponential": 2.0, "logistic": 1.0}


def _simplex_projection(v):
    """Each row of v projected (Euclidean) onto the probability simplex: max(v - tau, 0) with the tau that makes
    the row sum to 1. Order-preserving. Entries are first clipped to +-1e6 (the projection of a row with an
    entry beyond that puts all but ~1e-6 on it anyway), so the sums stay finite for any score a model holds."""
    v = np.clip(np.asarray(v, dtype=np.float64), -1e6, 1e6)
    ordered = -np.sort(-v, axis=1)
    cumulative = np.cumsum(ordered, axis=1) - 1.0
    ranks = np.arange(1, v.shape[1] + 1)
    support = ordered - cumulative / ranks > 0  # True on a prefix
    count = support.sum(axis=1)
    tau = cumulative[np.arange(v.shape[0]), count - 1] / count
    return np.maximum(v - tau[:, None], 0.0)


def _check_cost_matrix(cost, classes):
    """The (K, K) float64 cost matrix in the order of ``classes``: a dict or an array converted here, its
    shape and entries checked by the core (the check train() runs)."""
    K = len(classes)
    if cost is None:
        return np.ones((K, K)) - np.eye(K)
    if isinstance(cost, dict):
        matrix = np.ones((K, K)) - np.eye(K)
        index = {c.item() if isinstance(c, np.generic) else c: i for i, c in enumerate(classes.tolist())}
        for key, value in cost.items():
            if not isinstance(key, tuple) or len(key) != 2:
                raise ValueError(f"cost_matrix dict keys must be (true_label, predicted_label) pairs, got {key!r}")
            for label in key:
                if label not in index:
                    raise ValueError(f"cost_matrix names label {label!r}, which is not among classes_ {classes.tolist()}")
            if not isinstance(value, numbers.Real):
                raise ValueError(f"cost_matrix[{key!r}] must be a number, got {value!r}")
            matrix[index[key[0]], index[key[1]]] = float(value)
        cost = matrix
    try:
        cost = np.asarray(cost, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError("cost_matrix must be a (n_classes, n_classes) array of numbers or a dict") from None
    _core.check_cost_matrix(cost, K)  # shape and entries: the core's one check (docs/design/parameters.md)
    return cost
