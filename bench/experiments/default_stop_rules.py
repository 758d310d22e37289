"""Issue 22, point 2: would another stopping rule bring the default similarity fit closer to its validated
error? Rules applied to the curves of one long fit per split, so every rule sees the same models.

Per set and split of bench/hybrid.py (50/25/25), the default similarity fit's own carve is rebuilt (25 % of
the training half, stratified, random_state 0, as REBELClassifier carves it with random_state=None), and
REBELClassifier(weak_learner="similarity", similarity_scaling="auto") is fitted on the rest with --learners
learners and early stopping off, watching the carve. Its curves per stage: the carve's log loss and error,
and the test quarter's error. The rules (patience P learners, --patience):
  log loss         stop once the carve's log loss has not improved for P learners; keep its best stage
                   (the default today: docs/guide/similarity.md "Defaults"; reproduces the stored
                   "similarity default" rows where the fit ran as long)
  ll stop, error stage
                   the same stop; keep the stage of the lowest carve error up to it (the latest on ties)
  ll stop, error stage after the ll best
                   the same stop; the lowest carve error between the log loss's best stage and the stop
  error            stop once the carve's error has not improved for P learners (an equal value counts as
                   improving, as scoring="error" counted until 2026-11-29); keep its latest best stage
  oracle           the lowest test error of any stage (no rule reaches it)
beside the stored validated "similarity" row (bench/results/hybrid*.json: scaling and stage picked on the
validation quarter, up to 10 000 learners, fitted on the whole training half).

    OMP_WAIT_POLICY=passive python bench/experiments/default_stop_rules.py
    OMP_WAIT_POLICY=passive python bench/experiments/default_stop_rules.py --datasets fmnist10k --splits 1 --learners 8000

Writes bench/results/default_stop_rules.{md,json} (another name with --name).
"""

from __future__ import annotations

import argparse
import json
import os
import sys

import numpy as np
from sklearn.model_selection import train_test_split

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)
import harness  # noqa: E402
import hybrid  # noqa: E402  (bench/hybrid.py: its loaders, splits and stored results)
from similarity_benchmark import split  # noqa: E402

from rebelboost import REBELClassifier  # noqa: E402

SETS = ["wine", "breast_cancer", "digits", "sonar", "ionosphere", "pima"]
RULES = ("log loss", "ll stop, error stage", "ll stop, error stage after the ll best", "error", "oracle")


def curves(X, y, seed, learners):
    """The carve's log loss and error and the test quarter's error after each learner of one long fit."""
    Xtr, ytr, _, _, Xte, yte = split(X, y, seed)
    fit, carve = train_test_split(np.arange(len(ytr)), test_size=0.25, stratify=ytr, random_state=0)
    fit.sort()
    carve.sort()
    clf = REBELClassifier(weak_learner="similarity", n_estimators=learners, early_stopping=False, scoring="log_loss",
                          n_jobs=hybrid.N_JOBS).fit(Xtr[fit], ytr[fit], eval_set=[(Xtr[carve], ytr[carve])])
    log_loss = np.asarray(clf.evals_result_["valid_0"]["log_loss"])
    carve_error = np.array([np.mean(p != ytr[carve]) for p in clf.staged_predict(Xtr[carve])])
    test_error = np.array([np.mean(p != yte) for p in clf.staged_predict(Xte)])
    return log_loss, carve_error, test_error, len(carve), clf.similarity_scaling_


def watch(curve, patience, late_ties):
    """(stop, best): the 0-based stage at which early stopping on `curve` stops and the best stage it keeps,
    by the estimator's rule until 2026-11-29 (rebelboost._monitor.TrainingMonitor): the patience counts from
    the last stage that beat the best by more than `tol` (or, late_ties, equalled it: since 2026-11-29 a tie no
    longer restarts it); the kept stage is the lowest value up to the stop, the first such (the latest with
    late_ties)."""
    tol = REBELClassifier().tol
    best_value, counted_from, stop = np.inf, 0, len(curve) - 1
    for t, value in enumerate(curve):
        if value < best_value - tol or (late_ties and value <= best_value):
            counted_from = t
        best_value = min(best_value, value)
        if t - counted_from >= patience:
            stop = t
            break
    seen = curve[:stop + 1]
    return stop, latest_lowest(seen) if late_ties else int(np.argmin(seen))


def latest_lowest(values):
    return int(np.flatnonzero(values == values.min())[-1])


def stages(log_loss, carve_error, test_error, patience):
    """Each rule's kept stage (0-based), and the stage its fit stops at."""
    stop, best = watch(log_loss, patience, late_ties=False)
    error_stop, error_best = watch(carve_error, patience, late_ties=True)
    kept = {"log loss": best, "ll stop, error stage": latest_lowest(carve_error[:stop + 1]),
            "ll stop, error stage after the ll best": best + latest_lowest(carve_error[best:stop + 1]),
            "error": error_best, "oracle": int(np.argmin(test_error))}
    stops = {"log loss": stop, "ll stop, error stage": stop, "ll stop, error stage after the ll best": stop,
             "error": error_stop, "oracle": len(test_error) - 1}
    return kept, stops


def stored_validated(name, seed):
    for results in ("hybrid", "hybrid_digits", "hybrid_fmnist10k"):
        path = os.path.join(harness.RESULTS, f"{results}.json")
        found = json.load(open(path))["results"].get(name, {}).get(str(seed), {}).get("similarity")
        if found:
            return found["error"]
    return None


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--datasets", nargs="+", default=SETS)
    parser.add_argument("--splits", type=int, default=5)
    parser.add_argument("--learners", type=int, default=6000)
    parser.add_argument("--patience", type=int, nargs="+", default=[500, 1000])
    parser.add_argument("--name", default="default_stop_rules")
    args = parser.parse_args()
    per_split, rows = [], []
    for name in args.datasets:
        X, y = hybrid.load(name)
        for seed in range(args.splits):
            log_loss, carve_error, test_error, n_carve, scaling = curves(X, y, seed, args.learners)
            for patience in args.patience:
                kept, stops = stages(log_loss, carve_error, test_error, patience)
                per_split.append({"set": name, "split": seed, "carve rows": n_carve, "scaling": scaling,
                                  "patience": patience, "validated": stored_validated(name, seed),
                                  **{f"{rule}: test %": round(100 * float(test_error[t]), 2) for rule, t in kept.items()},
                                  **{f"{rule}: stage": t + 1 for rule, t in kept.items()},
                                  **{f"{rule}: stops at": t + 1 for rule, t in stops.items()}})
            print(per_split[-1], flush=True)
    for name in args.datasets:
        for patience in args.patience:
            mine = [r for r in per_split if r["set"] == name and r["patience"] == patience]
            validated = [r["validated"] for r in mine if r["validated"] is not None]
            row = {"set": name, "patience": patience, "splits": len(mine), "carve rows": mine[0]["carve rows"],
                   "validated (stored) %": round(100 * float(np.mean(validated)), 2) if len(validated) == len(mine) else ""}
            for rule in RULES:
                row[rule] = round(float(np.mean([r[f"{rule}: test %"] for r in mine])), 2)
            for rule in ("log loss", "error"):
                row[f"{rule}: mean stop"] = int(np.mean([r[f"{rule}: stops at"] for r in mine]))
            rows.append(row)
    lines = [f"Mean test error (%) of the stage each rule keeps, one fit of {args.learners} learners per split on the "
             "default's carve (the rules: this script's docstring):", ""]
    lines += harness.markdown_table(rows)
    harness.record(args.name, {"per_split": per_split, "summary": rows}, lines, threads=hybrid.N_JOBS)
    print("\n".join(lines))


if __name__ == "__main__":
    main()
