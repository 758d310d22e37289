"""The one table of the estimators' training parameters (docs/design/parameters.md).

Each parameter is one ``Param``; each estimator is one ``Estimator`` entry naming its parameters. From them
come the estimators' ``_parameter_constraints``, the keyword arguments of the core's ``train`` call, the
command line's ``train`` options and the docs' Parameters page. What the core also reads keeps its default
and its bounds in the core alone (``TrainParams`` and ``kParamBounds`` in C++, read here through
``_core.train_param_defaults()`` and ``_core.PARAM_BOUNDS``); what only Python reads has them here.
The estimators' ``__init__`` signatures repeat the defaults (scikit-learn reads parameters from the
signature); tests/python/test_params.py checks every one of them against this table.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from numbers import Integral, Real
from typing import Any, Callable

from sklearn.utils._param_validation import Interval, StrOptions

from rebelboost import _core
from rebelboost._monitor import METRICS, REGRESSION_METRICS

__all__ = ["Param", "Estimator", "PARAMS", "ESTIMATORS", "CRITERIA", "MAX_ESTIMATORS", "constraints_for",
           "core_arguments", "default_of", "value_of", "SIMILARITY_MAX_ESTIMATORS", "SIMILARITY_PATIENCE",
           "SIMILARITY_VALIDATION_FRACTION", "SIMILARITY_SCORING", "HYBRID_MAX_DEPTH", "HYBRID_DEEP_ROWS",
           "HYBRID_SCORING", "HYBRID_VALIDATION_FRACTION", "hybrid_depth", "REFIT_AUTO", "refit_size",
           "HYBRID_PATIENCE", "SIMILARITY_ERROR_ROWS", "similarity_counts_errors"]

CORE_DEFAULTS = _core.train_param_defaults()
CORE_BOUNDS = _core.PARAM_BOUNDS  # {core name: (low, high, low_open, high_open, integral)}
MAX_ESTIMATORS = int(CORE_BOUNDS["n_estimators"][1])  # trees per model: the core's kMaxTrees

# The split criteria of the scalar tree layers and the core's codes for them (TrainParams::criterion).
CRITERIA = {"loss": 0, "gini": 1, "entropy": 2}
_QUICK = {False: 0, True: 1, "auto": 2}  # TrainParams::quick


def _quick_to_core(value):
    return _QUICK["auto"] if isinstance(value, str) else _QUICK[bool(value)]


@dataclass(frozen=True)
class Param:
    """One training parameter.

    core: the keyword of ``_core.train`` that receives it (None: Python reads it alone). Its default and its
    bounds are then the core's: ``from_core`` turns the core's default into the estimator's value (None:
    the same value), ``to_core`` the estimator's value into the core's argument (None: ``float`` or
    ``int`` by the bound, else the value as it is). Without ``core``, ``default`` and ``constraints`` are
    given here. ``choices``: the string values (a ``StrOptions`` constraint and the CLI's choices).
    ``cli``: the command line's ``train`` has an option for it, with this help.
    """

    name: str
    core: str | None = None
    default: Any = None
    constraints: tuple = ()
    choices: tuple = ()
    from_core: Callable | None = None
    to_core: Callable | None = None
    cli: str | None = None


def _bound_constraint(core):
    """scikit-learn's Interval for the core's bound of ``core`` (infinity: no bound, open)."""
    low, high, low_open, high_open, integral = CORE_BOUNDS[core]
    closed = {(False, False): "both", (True, False): "right", (False, True): "left", (True, True): "neither"}
    kind = Integral if integral else Real
    convert = int if integral else float
    return Interval(kind, convert(low), None if integral and math.isinf(high) else convert(high),
                    closed=closed[(low_open, high_open)])


_QUICK_HELP = "QuickBoost pruning: true, false or auto; the model is the same bit for bit in every mode"

PARAMS = {p.name: p for p in [
    Param("n_estimators", core="n_estimators", cli="maximum number of weak learners"),
    Param("max_depth", core="max_depth", cli="depth of every tree"),
    Param("n_bins", core="n_bins", cli="bins per feature, one of them for missing values"),
    Param("learning_rate", core="learning_rate", cli="shrinkage multiplying every step"),
    Param("n_jobs", default=None, constraints=(Interval(Integral, None, -1, closed="right"),
                                               Interval(Integral, 1, None, closed="left"), None),
          cli="threads: None or -1 all usable cores, -k all but k - 1 (the model does not depend on it)"),
    Param("random_state", default=None, constraints=("random_state",),
          cli="seed of bin-edge rows, subsample, feature_fraction and the early-stopping split"),
    Param("verbose", default=0, constraints=("verbose",)),
    Param("quick", core="quick", constraints=("boolean", StrOptions({"auto"})),
          from_core={v: k for k, v in _QUICK.items()}.get, to_core=_quick_to_core, cli=_QUICK_HELP),
    Param("weight_trim", core="weight_trim", cli="search each tree on the heaviest rows holding this fraction "
                                                   "of the weight (1: off)"),
    Param("subsample", core="subsample", cli="StochasticBoost: fraction of rows each tree searches"),
    Param("feature_fraction", core="feature_fraction", cli="LazyBoost: fraction of features each tree searches"),
    Param("criterion", core="criterion", choices=tuple(CRITERIA),
          from_core={v: k for k, v in CRITERIA.items()}.get, to_core=CRITERIA.get,
          cli="split criterion of the tree layers"),
    Param("early_stopping", default=False, constraints=("boolean",)),
    Param("validation_fraction", default=0.1, constraints=(Interval(Real, 0.0, 1.0, closed="neither"),)),
    Param("n_iter_no_change", default=10, constraints=(Interval(Integral, 1, MAX_ESTIMATORS, closed="both"),)),
    Param("tol", default=1e-7, constraints=(Interval(Real, 0.0, None, closed="left"),)),
    Param("scoring", default="loss", choices=METRICS),
    Param("warm_start", default=False, constraints=("boolean",)),
    Param("callbacks", default=None, constraints=(list, None)),
    Param("class_weight", default=None, constraints=(dict, StrOptions({"balanced"}), None)),
    Param("lam", core="veb_lambda", cli="VEB-Boost's weight of the sample-variance penalty"),
    Param("cost_matrix", default=None, constraints=("array-like", dict, None)),
    Param("weak_learner", core="learner", choices=("tree", "similarity", "hybrid"),
          cli="REBEL's weak learners: trees, Localized Similarities or both (hybrid: the better candidate of each "
              "iteration; similarities and hybrids allow no missing values)"),
    Param("similarity_scaling", core="scaling", choices=("feature", "global"),
          cli="similarities: scale each feature by its deviation, or all by one scale (auto: all by one when the "
              "training rows' leave-one-out nearest-neighbour votes are clearly better so)"),
    Param("similarity_cache_mb", core="distance_cache_mb",
          cli="similarities: MiB kept for distance columns between training points (0: none); speed only, "
              "never the model"),
    Param("loss", core="rebel_loss", choices=("exponential", "logistic", "squared")),
    Param("tree_penalty", core="tree_penalty",
          cli="hybrids: a tree is kept only when it cuts the training loss (1 + tree_penalty) times as much as "
              "the similarity (0: the lower loss wins; large: similarities only)"),
    Param("similarity_max_candidates", core="max_candidates",
          cli="similarities and hybrids: two-point candidates visited per iteration, nearest to the anchor first "
              "(0: all, the thesis's procedure)"),
    Param("refit", default=False, constraints=("boolean",),
          cli="REBEL after early stopping on a split carved from the training rows: train again on every row with "
              "the stage scaled to them (true, false or auto: hybrids, and similarities with a carve of "
              "hundreds of rows; docs/guide/similarity.md)"),
    Param("min_samples_leaf", core="min_samples_leaf",
          cli="regressor: least sample weight of a leaf, in mean sample weights (rows without weights)"),
]}


@dataclass(frozen=True)
class Estimator:
    """One estimator: its class name, its parameters (names in PARAMS), where its defaults differ from the
    table's (``defaults``) and where its string choices do (``choices``, e.g. a regressor's ``scoring``).
    ``auto``: the parameters that also take "auto", each with the rule that turns "auto" into a value
    from the instance's other parameters (the one place of that rule; ``value_of`` applies it)."""

    class_name: str
    params: tuple
    defaults: dict = field(default_factory=dict)
    choices: dict = field(default_factory=dict)
    auto: dict = field(default_factory=dict)


# What "auto" means for REBEL (docs/guide/similarity.md "Defaults"): trees keep the values every other
# estimator has (200 trees, no early stopping, depth 2); similarities and hybrids, whose validation curves
# fall for thousands of learners, get a high cap and early stopping with a long patience on a carved part of
# the rows (a quarter; 40 % for hybrids, below). A number of learners the user chose is trained in full:
# the early stopping comes with the cap.
# Hybrids stop on the validation error: with depth-2 trees they took a tree nearly every iteration,
# separated the training rows within a few learners and their validation loss then grew without bound (exp
# of the margins of the few rows they got wrong), so the loss kept 1 to 9 learners. Their depth depends on
# the rows they train on (hybrid_depth): stumps on a few hundred rows, where deeper trees separate the
# training rows within a few learners; depth 3 from HYBRID_DEEP_ROWS rows, where depth 3 had the lower
# validation error (bench/results/hybrid_default_depth.md).
# Similarities stop on the validation log loss where it holds under SIMILARITY_ERROR_ROWS rows, which
# followed their validated error more closely than the boosting loss did there (bench/results/
# hybrid_stopping.md), and on the error from that size on, where they also refit (similarity_counts_errors).
# The similarities' scaling ("auto"): "global" when the training rows' leave-one-out k-nearest-neighbour
# votes are wrong less often under it beyond noise, else "feature" (rebelboost._scaling).
SIMILARITY_MAX_ESTIMATORS = 10_000
# Patience: similarities 1 000 learners, hybrids 500. On the two sets with large carves a similarity's
# validation error is flat for more than 500 learners at a time while it still falls (Fashion-MNIST 10k: the
# error with 500 stopped at 1 584 to 3 479 learners, with 1 000 at 3 561 to 6 086, validation error 16.58 ->
# 15.87 % with the refit); on the five small sets the log loss kept the same test errors with either
# (bench/results/similarity_default_rule.md, default_stop_rules.md). Hybrids keep 500: measured with it,
# and their default fit on 5 000 x 30 has the 30 s of issue 22.
SIMILARITY_PATIENCE = 1000
HYBRID_PATIENCE = 500
SIMILARITY_VALIDATION_FRACTION = 0.25
SIMILARITY_SCORING = "log_loss"
SIMILARITY_ERROR_ROWS = 200
HYBRID_MAX_DEPTH = 3
HYBRID_DEEP_ROWS = 512
HYBRID_SCORING = "error"
# Hybrids carve 40 % (similarities a quarter): with the refit giving the carved rows back, a larger carve
# costs the kept model little and gives the stopping rule a steadier validation curve. On the validation
# quarters of issue 22's sets (bench/results/hybrid_default_fraction.md, 5 splits), against a quarter: digits
# 2.41 -> 1.91 % and Fashion-MNIST 10k 13.68 -> 13.29 % (better on 4 of 5 splits; about 60 validation rows
# fewer errors on the two), and on the five sets of 89 to 384 training rows -0.00 to +1.16 points (at most 3
# validation rows in all over the 5 splits). The fits train about twice the learners; with the two candidates
# fitted at once where that pays, the default on 5 000 x 30 stays under 30 s (21.8 to 25.2 s,
# bench/results/hybrid_speed_default.md).
HYBRID_VALIDATION_FRACTION = 0.4
# refit="auto": hybrids train again on every row after stopping on their carve; similarities where the
# carve holds SIMILARITY_ERROR_ROWS rows or more (similarity_counts_errors), trees never. On the validation
# quarters of issue 22's sets (bench/results/default_refit.md), the refit at T / (1 - fraction) learners erred
# less than the carve's model for hybrids on 6 of 7 sets; for similarities it erred less on the two with 673
# and 3 750 rows after the carve (digits, Fashion-MNIST 10k) and more on three of the five with 67 to 288
# rows. Its cost: the hybrid default on 5 000 x 30 takes 20 to 25 s with it; the similarity default there,
# which stops on the error of a 1 250-row carve and refits, about 41 s instead of 17 to 25 s before
# 2026-11-30, over issue 22's 30 s (bench/results/hybrid_speed_default.md): without the refit and the error
# it missed its own validated long run by 2 points on digits and Fashion-MNIST 10k
# (bench/results/similarity_default_rule.md).
REFIT_AUTO = {"tree": False, "hybrid": True}  # similarities: similarity_counts_errors


def similarity_counts_errors(n_validation_rows):
    """Whether a similarity fit watching n_validation_rows rows stops on the validation error and refits
    ("auto" scoring and refit) rather than on the log loss without a refit: from SIMILARITY_ERROR_ROWS (200)
    rows, where one row is at most half a point of error. On issue 22's sets (validation quarters, 5 splits,
    bench/results/similarity_default_rule.md; patience 1 000 both ways) the error with the refit erred
    clearly less on the two whose carves hold 225 and 1 250 rows (digits 3.52 -> 1.65 %, Fashion-MNIST 10k
    17.06 -> 15.87 %), and on the five whose carves hold 23 to 96 rows it gained nothing beyond noise (less
    on two, more on three: net 1.4 validation rows per split more in all), where a row is 1 to 4 points and
    the log loss the finer signal; so they keep the log loss. Any threshold from 97 to 225 rows splits the
    seven sets the same way. No validation set (before a fit): False."""
    return n_validation_rows is not None and n_validation_rows >= SIMILARITY_ERROR_ROWS


def hybrid_depth(n_rows):
    """A hybrid's "auto" depth for n_rows training rows: HYBRID_MAX_DEPTH from HYBRID_DEEP_ROWS rows, else
    stumps. On the validation quarters of issue 22's sets, the default fits with depth 3 erred clearly less
    on the two with 673 and 3 750 rows after the carve (digits by 1.3 points, Fashion-MNIST 10k by 2.3); on
    the five with 67 to 288, stumps erred least on three and deeper trees by under one validation row per
    split on two. Any threshold between 384 and 539 rows (Pima with an eval_set, digits after the hybrid's
    40 % carve; 673 after the quarter these figures were measured with) gives the same depths on all seven
    sets, with or without an eval_set; 512 is a round one."""
    return HYBRID_MAX_DEPTH if n_rows >= HYBRID_DEEP_ROWS else 1


def refit_size(best_iteration, validation_fraction, cap):
    """Learners of the refit: the carve's stage scaled to the rows a learner then sees, T / (1 - fraction)
    (rounded up), at most the cap. The scaled stage erred less than T itself on 6 of 7 sets for hybrids and
    on both larger sets for similarities (bench/results/default_refit.md)."""
    return min(int(cap), math.ceil(best_iteration / (1.0 - validation_fraction)))


def _by_learner(tree, similarity, hybrid=None):
    """Rule: the value for ``weak_learner`` "tree", "similarity" and "hybrid" (None: the similarity's)."""
    values = {"tree": tree, "similarity": similarity, "hybrid": similarity if hybrid is None else hybrid}
    return lambda instance: values[instance.weak_learner]


def _by_validation_rows(tree, small, large, hybrid):
    """Rule: ``tree`` and ``hybrid`` for those learners; for similarities ``large`` where their fit watches
    SIMILARITY_ERROR_ROWS validation rows or more (``_validation_rows``, which fit sets before its monitor;
    similarity_counts_errors), else ``small`` (also before a fit)."""
    def rule(instance):
        if instance.weak_learner == "similarity":
            return large if similarity_counts_errors(getattr(instance, "_validation_rows", None)) else small
        return tree if instance.weak_learner == "tree" else hybrid
    return rule


def _rebel_depth(instance):
    """Rule: 2 for trees; for hybrids the depth fit found from the rows it trains on (hybrid_depth, stored in
    hybrid_depth_), stumps before a fit."""
    if instance.weak_learner != "hybrid":
        return 2
    return getattr(instance, "hybrid_depth_", None) or 1


def _rebel_auto():
    n_iter, fraction, scoring = (PARAMS[name].default for name in ("n_iter_no_change", "validation_fraction", "scoring"))
    return {
        "n_estimators": _by_learner(CORE_DEFAULTS["n_estimators"], SIMILARITY_MAX_ESTIMATORS),
        "max_depth": _rebel_depth,
        "early_stopping": lambda instance: instance.weak_learner != "tree" and instance.n_estimators == "auto",
        "n_iter_no_change": _by_learner(n_iter, SIMILARITY_PATIENCE, HYBRID_PATIENCE),
        "validation_fraction": _by_learner(fraction, SIMILARITY_VALIDATION_FRACTION,
                                           HYBRID_VALIDATION_FRACTION),
        "scoring": _by_validation_rows(scoring, SIMILARITY_SCORING, "error", HYBRID_SCORING),
        "refit": _by_validation_rows(REFIT_AUTO["tree"], False, True, REFIT_AUTO["hybrid"]),
        # Resolved from the training rows in fit (rebelboost._scaling.choose_scaling): the attribute it sets.
        # Before a fit, and for trees (which ignore it), "feature".
        "similarity_scaling": lambda instance: getattr(instance, "similarity_scaling_", None) or "feature",
    }


_COMMON = ("n_estimators", "max_depth", "n_bins", "learning_rate", "n_jobs", "random_state", "verbose", "quick",
           "weight_trim", "subsample", "feature_fraction", "early_stopping", "validation_fraction",
           "n_iter_no_change", "tol", "scoring", "warm_start", "callbacks", "class_weight")

# Keyed by the estimator's ``_loss``. A new estimator is one entry here (plus a Param for each parameter
# no other estimator has).
ESTIMATORS = {
    "adaboost": Estimator("AdaBoostClassifier", _COMMON + ("criterion",)),
    "veb": Estimator("VEBBoostClassifier", _COMMON + ("criterion", "lam")),
    "rebel": Estimator("REBELClassifier", _COMMON + ("cost_matrix", "weak_learner", "similarity_scaling",
                                                     "similarity_cache_mb", "loss", "tree_penalty",
                                                     "similarity_max_candidates", "refit"),
                       defaults={name: "auto" for name in _rebel_auto()}, auto=_rebel_auto()),
    "squared_error": Estimator("BoostingRegressor",
                               ("n_estimators", "learning_rate", "max_depth", "min_samples_leaf", "n_bins", "subsample",
                                "feature_fraction", "early_stopping", "validation_fraction", "n_iter_no_change", "tol",
                                "scoring", "random_state", "n_jobs", "verbose", "warm_start", "callbacks", "quick"),
                               defaults={"n_estimators": 100, "learning_rate": 0.1, "max_depth": 6, "scoring": "rmse"},
                               choices={"scoring": REGRESSION_METRICS}),
}


def default_of(estimator, name):
    """The default of parameter ``name`` for the estimator keyed ``estimator`` in ESTIMATORS."""
    entry = ESTIMATORS[estimator]
    if name in entry.defaults:
        return entry.defaults[name]
    param = PARAMS[name]
    if param.core is None:
        return param.default
    value = CORE_DEFAULTS[param.core]
    return param.from_core(value) if param.from_core else value


def _constraints(param):
    if param.choices:
        return [StrOptions(set(param.choices))]
    if param.constraints:
        return list(param.constraints)
    return [_bound_constraint(param.core)]


def constraints_for(estimator):
    """The ``_parameter_constraints`` of the estimator keyed ``estimator``."""
    entry = ESTIMATORS[estimator]
    out = {name: [StrOptions(set(entry.choices[name]))] if name in entry.choices else _constraints(PARAMS[name])
           for name in entry.params}
    for name in entry.auto:
        out[name] = [*out[name], StrOptions({"auto"})]
    return out


def value_of(estimator, instance, name):
    """Parameter ``name`` of ``instance`` as its fit uses it: "auto" resolved by the estimator's rule."""
    value = getattr(instance, name)
    rule = ESTIMATORS[estimator].auto.get(name)
    return rule(instance) if rule is not None and isinstance(value, str) and value == "auto" else value


def core_arguments(estimator, instance):
    """The keyword arguments of ``_core.train`` for the (validated) parameters of ``instance``."""
    out = {}
    for name in ESTIMATORS[estimator].params:
        param = PARAMS[name]
        if param.core is None:
            continue
        value = value_of(estimator, instance, name)
        if param.to_core:
            out[param.core] = param.to_core(value)
        elif param.core in CORE_BOUNDS:
            out[param.core] = int(value) if CORE_BOUNDS[param.core][4] else float(value)
        else:
            out[param.core] = value
    return out
