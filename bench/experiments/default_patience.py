"""Which patience should the similarity and hybrid defaults stop with, once they refit on every row?

bench/results/default_refit.md: a refit on every training row at T / (1 - fraction) learners (T the carve's
stage) lowered the validation-quarter error of both families on digits and Fashion-MNIST 10k, but the
defaults still stop thousands of learners before their own validated 10 000-learner runs pick their stage
(Fashion-MNIST: 1 100 and 2 700 kept against 3 500 to 9 900). Per set, split and family, this script fits
once on the default's carve without stopping (10 000 learners, the carve's curve of the default's metric
in evals_result_) and once on every training row, then replays each stopping rule on the carve's curve:
  P500, P1000         stop when the carve has not improved (beyond tol) for that many learners
  rel0.5, rel1        stop after max(500, r x k) learners without improvement, k the last improving stage:
                      the patience grows with the stage, as slowly falling curves need
and keeps the rule's stage T (the carve's best, the latest of equal errors for the hybrid's error metric).
The refit's staged predictions at ceil(T / (1 - fraction)) give each rule's error (a refit to n learners is
the first n of a longer refit: boosting never looks ahead). Reported: the validation quarter's error (what
a rule may be chosen on; no fit saw that quarter), the test error, the learners a rule trains in all
(carve iterations until its stop plus the refit), and the stored "default, long" test error.

    OMP_WAIT_POLICY=passive python bench/experiments/default_patience.py [--datasets ...] [--families ...]

Writes bench/results/default_patience.{md,json} (per split rows in the JSON).
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "peers"))
import harness  # noqa: E402
import hybrid  # noqa: E402  (the protocol's data sets, split and N_JOBS)
from default_refit import stored_long  # noqa: E402

from rebelboost import REBELClassifier  # noqa: E402
from rebelboost._monitor import LATE_TIES  # noqa: E402
from rebelboost._params import SIMILARITY_MAX_ESTIMATORS, SIMILARITY_PATIENCE, refit_size  # noqa: E402

RULES = {"P500": (500, 0.0), "P1000": (1000, 0.0), "rel0.5": (500, 0.5), "rel1": (500, 1.0)}
TOL = 1e-7  # the estimator's default tol


def replay(curve, patience, ratio, late_ties):
    """(stop, T): the iteration the rule stops at (len(curve) if never) and the stage it keeps."""
    best, last_improving = np.inf, 0
    for k, value in enumerate(curve, start=1):
        if value < best - TOL:
            last_improving = k
        best = min(best, value)
        if k - last_improving >= max(patience, ratio * last_improving):
            break
    seen = np.asarray(curve[:k])
    stage = len(seen) - int(np.argmin(seen[::-1])) if late_ties else int(np.argmin(seen)) + 1
    return k, stage


def fit_split(name, seed, family, d):
    Xtr, ytr, Xva, yva, Xte, yte = d
    start = time.perf_counter()
    carve = REBELClassifier(weak_learner=family, n_iter_no_change=SIMILARITY_MAX_ESTIMATORS, refit=False,
                            n_jobs=hybrid.N_JOBS).fit(Xtr, ytr)
    carve_s = time.perf_counter() - start
    metric = next(iter(carve.evals_result_["validation"]))  # the default's: log_loss or error
    curve = carve.evals_result_["validation"][metric]
    late = metric in LATE_TIES
    stops = {rule: replay(curve, *spec, late) for rule, spec in RULES.items()}
    fraction = carve._stopping()["validation_fraction"]  # the family's carve (a quarter; hybrids 40 %)
    sizes = {rule: refit_size(stage, fraction, SIMILARITY_MAX_ESTIMATORS) for rule, (_, stage) in stops.items()}
    fixed = {"similarity_scaling": carve.similarity_scaling_}
    if family == "hybrid":
        fixed["max_depth"] = carve.hybrid_depth_
    start = time.perf_counter()
    refit = REBELClassifier(weak_learner=family, n_estimators=min(SIMILARITY_MAX_ESTIMATORS, max(sizes.values())),
                            early_stopping=False, n_jobs=hybrid.N_JOBS, **fixed).fit(Xtr, ytr)
    row = {"set": name, "split": seed, "family": family, "carve s": round(carve_s, 2),
           "refit s": round(time.perf_counter() - start, 2), "long test %": stored_long(name, seed, family)}
    for rule, (stop, stage) in stops.items():
        n = min(sizes[rule], refit.n_estimators_)
        row[f"{rule} stop"], row[f"{rule} T"], row[f"{rule} learners"] = stop, stage, stop + n
        row[f"{rule} val %"] = round(100 * float(np.mean(refit.predict(Xva, n_iter=n) != yva)), 2)
        row[f"{rule} test %"] = round(100 * float(np.mean(refit.predict(Xte, n_iter=n) != yte)), 2)
    return row


def summary(per_split, name, family):
    mine = [r for r in per_split if r["set"] == name and r["family"] == family]
    if not mine:
        return None
    mean = lambda key: (None if any(r[key] is None for r in mine)  # noqa: E731
                        else round(float(np.mean([r[key] for r in mine])), 2))
    out = {"set": name, "family": family, "splits": len(mine)}
    for part in ("val %", "test %", "T", "learners"):
        for rule in RULES:
            out[f"{rule}: {part}"] = mean(f"{rule} {part}")
    out["long: test %"] = mean("long test %")
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--datasets", nargs="+", default=hybrid.ALL_SETS)
    parser.add_argument("--families", nargs="+", default=["similarity", "hybrid"])
    parser.add_argument("--splits", type=int, default=5)
    parser.add_argument("--name", default="default_patience")
    args = parser.parse_args()
    assert RULES["P500"][0] == SIMILARITY_PATIENCE
    per_split, rows = [], []
    for name in args.datasets:
        X, y = hybrid.load(name)
        for family in args.families:
            for seed in range(args.splits):
                per_split.append(fit_split(name, seed, family, hybrid.split(X, y, seed)))
                print(per_split[-1], flush=True)
            rows.append(summary(per_split, name, family))
            lines = [f"Stopping rules replayed on the default's carve, each followed by the refit on every training "
                     "row at ceil(T / (1 - the family's validation_fraction)) learners, mean over the splits of "
                     "bench/hybrid.py (validation quarter: unseen by every fit; learners: carve iterations until the "
                     "stop plus the refit's; 'long': the stored 10 000-learner validated default):", ""]
            lines += harness.markdown_table(rows)
            harness.record(args.name, {"per_split": per_split, "summary": rows}, lines, threads=hybrid.N_JOBS)
    print("\n".join(lines))


if __name__ == "__main__":
    main()
