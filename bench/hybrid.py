"""Issue 22's acceptance protocol: the hybrid weak learner against trees and similarities, the default
stopping rule of similarities and hybrids, and the best standard method.

Per data set, random stratified 50/25/25 splits (train / validation / test); every choice, the number of
learners included, is made on the validation quarter and the test quarter is scored once:
  trees           REBEL trees, depth {1, 2, 3}, up to --tree-learners trees
  similarity      similarity_scaling {feature, global}, up to --max-learners learners
  hybrid          max_depth {1, 2} x similarity_scaling {feature, global}, up to --max-learners learners
                  (tree_penalty 0)
  hybrid depth 3  the same at max_depth 3 (a row of its own, added 2026-11-29 so that the hybrid's trees get
                  the trees' depths {1, 2, 3}: the trees picked depth 3 on most splits of digits and
                  Fashion-MNIST)
  hybrid penalty  tree_penalty {1, 10, 1e9 (similarities only)} x similarity_scaling {feature, global},
                  stumps, up to --max-learners learners
  hybrid tuned    (derived, no fit of its own) per split the one of "hybrid", "hybrid depth 3" (where it
                  ran) and "hybrid penalty" with the lowest validation error, the first in that order on
                  ties: the validated hybrid over the whole grid max_depth {1, 2, 3} x tree_penalty {0} and
                  max_depth 1 x tree_penalty {1, 10, 1e9} (docs/guide/similarity.md "The tree penalty"); the
                  acceptance checks use it where it exists
  REBEL validated (derived) per split the one of "trees", "similarity" and "hybrid tuned" ("hybrid" where
                  it is missing) with the lowest validation error; on ties the lower validation log loss at
                  the chosen stage where every family recorded it, else the first in that order: what a
                  user who validates the weak learner gets; the check against the best standard method
                  uses it (not the REBEL row with the lowest mean test error, which picks on the test set)
  similarity/hybrid default
                  REBELClassifier(weak_learner=...) with every parameter at its default (early stopping on a
                  split it carves from the training half itself; docs/guide/similarity.md "Defaults"),
                  fitted on the training half
  similarity/hybrid default, eval_set
                  the same defaults with the validation quarter as eval_set instead of the carve (the issue's
                  own baseline: "default parameters and early stopping on the validation split"); the early
                  stopping rule is the default's (auto scoring and patience), not the protocol's best stage
  similarity/hybrid default, long
                  the default parameters (auto depth and scaling) without early stopping, up to --max-learners
                  learners, the stage picked on the validation error as for the rows above: the defaults' own
                  validated long run, so that "default, eval_set" minus it is the cost of the stopping rule alone
  LightGBM tuned  num_leaves {7, 15, 31} x learning_rate {0.03, 0.1, 0.3}, up to 1 000 trees, early stopping
                  on validation
  RBF SVM         standardised features, C {0.1, 1, 10, 100, 1000} x gamma {0.01, 0.03, 0.1, 0.3, 1, 3} / d
  MLP             standardised features, one hidden layer of 4 d or 4 K units (max 400), the better
  k-NN            standardised features, k {1, 3, 5, 9, 15}
The stage of every REBEL model is picked from its validation error after each learner (an eval_set scored
with "error"). Data sets: wine, breast cancer, digits (scikit-learn), Fashion-MNIST 10k (Debian's
dataset-fashion-mnist, 10 000 random training images), Sonar, Ionosphere and PimaIndiansDiabetes (Debian's
r-cran-mlbench, read with Rscript), and Vehicle (r-cran-mlbench) for the analysis of point 4.

    OMP_WAIT_POLICY=passive nice -n 5 python bench/hybrid.py --quick
    OMP_WAIT_POLICY=passive nice -n 5 python bench/hybrid.py --datasets wine sonar --splits 5 --resume

Results are cached per data set, split and method in bench/results/hybrid.json (``--resume`` skips what is
there), and summarised in bench/results/hybrid.md with the acceptance checks of issue 22. ``--summary NAME
...`` prints the summary of the named results files together, fitting nothing:

    python bench/hybrid.py --summary hybrid hybrid_digits hybrid_fmnist10k
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import warnings

import numpy as np
from sklearn.exceptions import ConvergenceWarning
from sklearn.metrics import log_loss
from sklearn.neighbors import KNeighborsClassifier
from sklearn.neural_network import MLPClassifier
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC

from rebelboost import REBELClassifier

BENCH = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, BENCH)
sys.path.insert(0, os.path.join(BENCH, "peers"))
sys.path.insert(0, os.path.join(BENCH, "experiments"))
import harness  # noqa: E402
import mlbench  # noqa: E402  (the r-cran-mlbench sets)
import similarity_benchmark  # noqa: E402  (its loaders of the scikit-learn and Fashion-MNIST sets, its split)
from similarity_benchmark import split  # noqa: E402

N_JOBS = 2
MLBENCH_SETS = {"sonar": "Sonar", "ionosphere": "Ionosphere", "pima": "PimaIndiansDiabetes", "vehicle": "Vehicle"}
PENALTIES = (1.0, 10.0, 1e9)  # tree_penalty beyond 0 ("hybrid" has 0); 1e9: similarities only
ALL_SETS = ["wine", "breast_cancer", "digits", "fmnist10k", "sonar", "ionosphere", "pima"]


def load(name):
    if name in MLBENCH_SETS:
        return mlbench.load(MLBENCH_SETS[name])
    return similarity_benchmark.load(name)  # wine, breast_cancer, digits, fmnist10k


def error(model, X, y, **kw):
    return float(np.mean(model.predict(X, **kw) != y))


def rebel_on_validation(d, options, make):
    """Fits make(option) for each option watching the validation error; returns the option and stage with the
    lowest validation error (the first on ties), its test error, and the seconds of the chosen and all fits.
    Also, under "latest", the same option's *latest* stage of that lowest validation error and its test error:
    the stage the estimator's own early stopping keeps among equal best ones (bench/results/hybrid.md, the
    stage rule)."""
    Xtr, ytr, Xva, yva, Xte, yte = d
    best, total = None, 0.0
    for option in options:
        start = time.perf_counter()
        clf = make(option).set_params(scoring="error").fit(Xtr, ytr, eval_set=[(Xva, yva)])
        seconds = time.perf_counter() - start
        total += seconds
        val = np.asarray(clf.evals_result_["valid_0"]["error"])
        T = int(np.argmin(val)) + 1
        if best is None or val[T - 1] < best[0]:
            best = (val[T - 1], option, T, clf, seconds)
    val, option, T, clf, seconds = best
    result = {"error": error(clf, Xte, yte, n_iter=T), "validation_error": float(val), "choice": f"{option}, T={T}",
              "fit_seconds": seconds, "tuning_seconds": total, "n_learners": T,
              "validation_log_loss": float(log_loss(yva, clf.predict_proba(Xva, n_iter=T), labels=clf.classes_))}
    if clf.weak_learner == "hybrid":
        result["similarity_share"] = float(np.mean(clf.fit_info_["learner"][:T]))
    curve = np.asarray(clf.evals_result_["valid_0"]["error"])
    latest = int(np.flatnonzero(curve == curve[T - 1])[-1]) + 1
    result["latest"] = {"error": error(clf, Xte, yte, n_iter=latest), "n_learners": latest}
    return result


def rebel_methods(d, tree_learners, max_learners):
    def make(**kw):
        return REBELClassifier(n_jobs=N_JOBS, early_stopping=False, **kw)

    return {
        "trees": lambda: rebel_on_validation(d, (1, 2, 3), lambda depth: make(
            max_depth=depth, n_estimators=tree_learners)),
        "similarity": lambda: rebel_on_validation(d, ("feature", "global"), lambda scaling: make(
            weak_learner="similarity", similarity_scaling=scaling, n_estimators=max_learners)),
        "hybrid": lambda: rebel_on_validation(d, [(depth, scaling) for depth in (1, 2) for scaling in ("feature", "global")],
                                              lambda o: make(weak_learner="hybrid", max_depth=o[0], similarity_scaling=o[1],
                                                             n_estimators=max_learners)),
        "hybrid depth 3": lambda: rebel_on_validation(d, [(3, scaling) for scaling in ("feature", "global")],
                                                      lambda o: make(weak_learner="hybrid", max_depth=o[0],
                                                                     similarity_scaling=o[1], n_estimators=max_learners)),
        "hybrid penalty": lambda: rebel_on_validation(d, [(p, s) for p in PENALTIES for s in ("feature", "global")],
                                                      lambda o: make(weak_learner="hybrid", max_depth=1, tree_penalty=o[0],
                                                                     similarity_scaling=o[1], n_estimators=max_learners)),
        "similarity default": lambda: default_fit(d, "similarity"),
        "hybrid default": lambda: default_fit(d, "hybrid"),
        "similarity default, eval_set": lambda: default_fit(d, "similarity", eval_set=True),
        "hybrid default, eval_set": lambda: default_fit(d, "hybrid", eval_set=True),
        "similarity default, long": lambda: rebel_on_validation(d, ("defaults",), lambda _: make(
            weak_learner="similarity", n_estimators=max_learners)),
        "hybrid default, long": lambda: rebel_on_validation(d, ("defaults",), lambda _: make(
            weak_learner="hybrid", n_estimators=max_learners)),
    }


def default_fit(d, learner, eval_set=False):
    """REBELClassifier(weak_learner=learner) with every parameter at its default, fitted on the training half:
    early stopping on a split it carves itself, or with eval_set on the validation quarter (as the issue's own
    baseline: "default parameters and early stopping on the validation split")."""
    Xtr, ytr, Xva, yva, Xte, yte = d
    start = time.perf_counter()
    clf = REBELClassifier(weak_learner=learner, n_jobs=N_JOBS).fit(Xtr, ytr, eval_set=[(Xva, yva)] if eval_set else None)
    refit = clf.fit_info_.get("refit")
    choice = f"T={clf.best_iteration_ if refit else clf.n_estimators_} of {clf.fit_info_['n_iterations']} " \
             f"({clf.fit_info_['stop_reason']})" + (f", refit {refit['n_estimators']} on every row" if refit else "")
    return {"error": error(clf, Xte, yte), "fit_seconds": time.perf_counter() - start, "choice": choice,
            "n_learners": int(clf.n_estimators_)}


def sklearn_on_validation(d, options, make):
    Xtr, ytr, Xva, yva, Xte, yte = d
    best, total = None, 0.0
    for option in options:
        start = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            model = make(option).fit(Xtr, ytr)
        total += time.perf_counter() - start
        val = error(model, Xva, yva)
        if best is None or val < best[0]:
            best = (val, option, model)
    return {"error": error(best[2], Xte, yte), "validation_error": best[0], "choice": str(best[1]),
            "tuning_seconds": total}


def lightgbm_tuned(d):
    import lightgbm as lgb

    Xtr, ytr, Xva, yva, Xte, yte = d
    best = None
    for leaves in (7, 15, 31):
        for rate in (0.03, 0.1, 0.3):
            model = lgb.LGBMClassifier(n_estimators=1000, num_leaves=leaves, learning_rate=rate, min_child_samples=3,
                                       n_jobs=N_JOBS, verbose=-1)
            model.fit(Xtr, ytr, eval_set=[(Xva, yva)], callbacks=[lgb.early_stopping(50, verbose=False)])
            val = error(model, Xva, yva)
            if best is None or val < best[0]:
                best = (val, (leaves, rate, model.best_iteration_), model)
    return {"error": error(best[2], Xte, yte), "validation_error": best[0], "choice": str(best[1])}


def standard_methods(d):
    n_features, n_classes = d[0].shape[1], len(np.unique(d[1]))
    scaled = lambda model: make_pipeline(StandardScaler(), model)  # noqa: E731
    return {
        "LightGBM tuned": lambda: lightgbm_tuned(d),
        "RBF SVM": lambda: sklearn_on_validation(d, [(C, g) for C in (0.1, 1, 10, 100, 1000) for g in (0.01, 0.03, 0.1, 0.3, 1, 3)],
                                                 lambda o: scaled(SVC(C=o[0], gamma=o[1] / n_features))),
        "MLP": lambda: sklearn_on_validation(d, sorted({min(400, 4 * n_features), min(400, 4 * n_classes)}),
                                             lambda h: scaled(MLPClassifier((h,), max_iter=2000, random_state=0))),
        "k-NN": lambda: sklearn_on_validation(d, (1, 3, 5, 9, 15), lambda k: scaled(KNeighborsClassifier(k))),
    }


HYBRID_GRID = ("hybrid", "hybrid depth 3", "hybrid penalty")  # "hybrid tuned" picks among them, in this order on ties
REBEL_FAMILIES = ("trees", "similarity", "hybrid tuned")  # "REBEL validated" picks among them, in this order on ties


def tie_break(family, method):
    """Among families of equal validation error: the lower validation log loss where every family recorded one
    (runs from 2026-11-29 10:30 UTC on), else the order of REBEL_FAMILIES."""
    if all("validation_log_loss" in result for result in family.values()):
        return (family[method]["validation_log_loss"], REBEL_FAMILIES.index(method))
    return (0.0, REBEL_FAMILIES.index(method))


def with_tuned_hybrid(per):
    """The splits of one data set with the derived rows added: "hybrid tuned" where "hybrid" and "hybrid
    penalty" ran (the row of HYBRID_GRID with the lowest validation error, the first on ties, as one grid
    over them would pick; "hybrid depth 3" where it ran), and "REBEL
    validated" where trees, similarities and a hybrid ran (the family with the lowest validation error)."""
    out = {}
    for seed, split_results in per.items():
        out[seed] = dict(split_results)
        if "hybrid" in split_results and "hybrid penalty" in split_results:
            grid = [split_results[m] for m in HYBRID_GRID if m in split_results]
            out[seed]["hybrid tuned"] = min(grid, key=lambda result: result["validation_error"])  # the first on ties
        family = {m: out[seed].get(m) for m in REBEL_FAMILIES}
        family["hybrid tuned"] = family["hybrid tuned"] or out[seed].get("hybrid")
        if all(family.values()):
            best = min(REBEL_FAMILIES, key=lambda m: (family[m]["validation_error"], tie_break(family, m)))
            out[seed]["REBEL validated"] = {**family[best], "choice": f"{best}: {family[best]['choice']}"}
    return out


def paired_spread(per, a, b):
    """The standard error of the mean per-split difference a - b (points), over the splits where both ran: how
    far the difference of the means may be the splits' noise."""
    diffs = [100 * (s[a]["error"] - s[b]["error"]) for s in per.values() if a in s and b in s]
    if len(diffs) < 2:
        return f"{len(diffs)} split"
    return f"s.e. {float(np.std(diffs, ddof=1)) / np.sqrt(len(diffs)):.2f} over {len(diffs)} splits"


def latest_stages(per):
    """The splits with each REBEL family row's test error at its latest equal-best validation stage (rows that
    recorded it; the others left out), for the checks under the estimator's own stage rule."""
    out = {}
    for seed, split_results in per.items():
        out[seed] = {m: {**r, "error": r["latest"]["error"]} for m, r in split_results.items()
                     if m in ("trees", "similarity") + HYBRID_GRID and "latest" in r}
    return out


def family_gaps(per, label):
    """Issue 22's hybrid-vs-family check on one set's splits (None where a family is missing): the hybrid row
    compared ("hybrid tuned" where it ran), whether it is within 0.3 points of the better family and better
    than both, and the gap's text."""
    tuned = with_tuned_hybrid(per)
    hybrid_row = "hybrid tuned" if any("hybrid tuned" in s for s in tuned.values()) else "hybrid"
    splits = [s for s in tuned.values() if all(m in s for m in ("trees", "similarity", hybrid_row))]
    if not splits:
        return None
    mean = {m: 100 * float(np.mean([s[m]["error"] for s in splits])) for m in ("trees", "similarity", hybrid_row)}
    better = min(mean["trees"], mean["similarity"])
    family = "trees" if mean["trees"] <= mean["similarity"] else "similarity"
    text = f"{label}: {mean[hybrid_row] - better:+.2f} against {family} ({paired_spread(tuned, hybrid_row, family)})"
    return hybrid_row, mean[hybrid_row] <= better + 0.3, mean[hybrid_row] < better, text


def summarise(results, datasets):
    """Mean test error (%) per data set and method, and issue 22's acceptance checks on what ran: each check
    compares means over the splits where every row it compares ran (a set's rows may have run on different
    splits)."""
    lines, rows, checks = [], [], {"hybrid_close": 0, "hybrid_best": 0, "hybrid_gap": [], "latest_close": 0,
                                   "latest_best": 0, "latest_sets": 0, "latest_gap": [], "default_close": [],
                                   "default_eval_close": [], "default_own_close": [], "default_own_carve": [],
                                   "standard_close": 0,
                                   "standard_lowest": 0, "sets": 0}
    standard = ("LightGBM tuned", "RBF SVM", "MLP", "k-NN")
    for name in datasets:
        per = with_tuned_hybrid(results.get(name, {}))
        methods = sorted({m for split in per.values() for m in split})
        mean = {m: 100 * float(np.mean([s[m]["error"] for s in per.values() if m in s])) for m in methods}
        count = {m: sum(1 for s in per.values() if m in s) for m in methods}
        rows.append({"set": name, **{m: f"{mean[m]:.2f} ({count[m]})" for m in methods}})

        def common(*compared):
            """Mean test error (%) of each of `compared` over the splits where all of them ran (None: none)."""
            splits = [s for s in per.values() if all(m in s for m in compared)]
            return {m: 100 * float(np.mean([s[m]["error"] for s in splits])) for m in compared} if splits else None

        gaps = family_gaps(results.get(name, {}), name)
        if gaps is None:
            continue
        hybrid_row, close, best, text = gaps
        checks["sets"] += 1
        checks["hybrid_close"] += close
        checks["hybrid_best"] += best
        checks["hybrid_gap"].append(text)
        for learner, validated in (("similarity", "similarity"), ("hybrid", hybrid_row)):
            for variant, key, against in (("", "default_close", validated), (", eval_set", "default_eval_close", validated),
                                          (", eval_set", "default_own_close", f"{learner} default, long"),
                                          ("", "default_own_carve", f"{learner} default, long")):
                default = f"{learner} default{variant}"
                pair = common(default, against)
                if pair:
                    checks[key].append(f"{name} {learner}: {pair[default] - pair[against]:+.2f} "
                                       f"({paired_spread(per, default, against)})")
        latest = family_gaps(latest_stages(results.get(name, {})), name)
        if latest:
            checks["latest_close"] += latest[1]
            checks["latest_best"] += latest[2]
            checks["latest_sets"] += 1
            checks["latest_gap"].append(latest[3])
        against = common("REBEL validated", *standard)
        if against:
            best_peer = min(against[m] for m in standard)
            checks["standard_close"] += against["REBEL validated"] <= best_peer + 1.0
            checks["standard_lowest"] += against["REBEL validated"] < best_peer
    lines += ["Mean test error (%) over the splits that ran (their number in brackets):", ""]
    lines += harness.markdown_table(rows)
    lines += ["", f"On the {checks['sets']} sets with trees, similarities and hybrids: hybrid (tuned where it ran) within 0.3 points of the "
                  f"better family on {checks['hybrid_close']}, better than both on {checks['hybrid_best']}; "
                  f"REBEL validated within 1 point of the best standard method on {checks['standard_close']}, lowest mean "
                  f"on {checks['standard_lowest']}.",
              "Hybrid (tuned where it ran) minus the better family (points; in brackets the standard error of the "
              "per-split differences' mean): " + "; ".join(checks["hybrid_gap"]),
              f"With the estimator's own stage rule (each REBEL row at the latest of its equal best validation stages; "
              f"rows that recorded it): hybrid within 0.3 points of the better family on {checks['latest_close']} of "
              f"{checks['latest_sets']} sets, better than both on {checks['latest_best']}; gaps: "
              + "; ".join(checks["latest_gap"]),
              "Defaults minus their validated long run (the tuned hybrid; the similarity validated over both "
              "scalings) (points; in brackets the standard error of the per-split differences' mean): "
              + "; ".join(checks["default_close"]),
              "Defaults minus their own validated long run (\"default, long\": the default parameters, 10 000 "
              "learners, the stage of lowest validation error): " + "; ".join(checks["default_own_carve"]),
              "The same with the validation quarter as the defaults' eval_set (no carve; \"default, eval_set\"): "
              + "; ".join(checks["default_eval_close"]),
              "\"default, eval_set\" minus the defaults' own validated long run (\"default, long\": the stopping rule's "
              "cost alone): " + "; ".join(checks["default_own_close"])]
    return lines


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="wine, sonar, 1 split, 1 000 learners, no standard methods")
    parser.add_argument("--datasets", nargs="+", default=ALL_SETS)
    parser.add_argument("--splits", type=int, default=5)
    parser.add_argument("--max-learners", type=int, default=10_000)
    parser.add_argument("--tree-learners", type=int, default=1_000)
    parser.add_argument("--methods", nargs="+", default=None, help="only these methods")
    parser.add_argument("--resume", action="store_true")
    parser.add_argument("--refit", action="store_true",
                        help="with --resume: fit the --methods again even where they ran (the stored row is replaced; a "
                             "changed test error or choice is reported)")
    parser.add_argument("--name", default="hybrid")
    parser.add_argument("--summary", nargs="+", metavar="NAME", help="print the summary of these results files, fit nothing")
    args = parser.parse_args()
    if args.summary:
        results = {}
        for name in args.summary:
            results.update(json.load(open(os.path.join(harness.RESULTS, f"{name}.json")))["results"])
        print("\n".join(summarise(results, [name for name in ALL_SETS if name in results])))
        return
    if args.quick:
        args.datasets, args.splits, args.max_learners, args.tree_learners = ["wine", "sonar"], 1, 1000, 200
        args.methods = args.methods or ["trees", "similarity", "hybrid", "similarity default", "hybrid default"]
        args.name = "hybrid_quick"
    path = os.path.join(harness.RESULTS, f"{args.name}.json")
    results = json.load(open(path))["results"] if args.resume and os.path.exists(path) else {}
    for name in args.datasets:
        X, y = load(name)
        for seed in range(args.splits):
            d = split(X, y, seed)
            done = results.setdefault(name, {}).setdefault(str(seed), {})
            methods = {**rebel_methods(d, args.tree_learners, args.max_learners), **standard_methods(d)}
            for method, run in methods.items():
                if (args.methods and method not in args.methods) or (method in done and not args.refit):
                    continue
                before = done.get(method)
                start = time.perf_counter()
                done[method] = run()
                if before and (before["error"], before["choice"]) != (done[method]["error"], done[method]["choice"]):
                    print(f"{name} split {seed} {method}: the refit differs from the stored row "
                          f"({before['error']}, {before['choice']})", flush=True)
                done[method]["seconds"] = time.perf_counter() - start
                print(f"{name} split {seed} {method}: {100 * done[method]['error']:.2f} % ({done[method]['choice']}, "
                      f"{done[method]['seconds']:.1f} s)", flush=True)
                harness.record(args.name, results, summarise(results, args.datasets), threads=N_JOBS)


if __name__ == "__main__":
    main()
