"""Does picking tau_ratio on the validation split change who is best on digits and breast cancer?

similarity_close_calls.py's splits and protocol (50/25/25, the scaling picked on validation as
similarity_benchmark.py picks it), similarity-REBEL trained until the training loss falls below 1/N for each
tau_ratio in TAUS (the one-point learners' tau = tau_ratio x squared distance to the nearest other point;
two-point learners have no tau); the tau_ratio with the lowest validation error is kept (ties: the default
0.5 first, then the smaller). Its test error is compared with the default's and with the RBF SVM and MLP
errors that similarity_close_calls.json recorded on the same splits (same functions, same seeds). The test
quarter is only read for the reported errors. Writes bench/results/similarity_tau.{md,json}.

    OMP_WAIT_POLICY=passive python bench/experiments/similarity_tau.py --splits 20
"""

from __future__ import annotations

import argparse
import json
import os
import time

import numpy as np

from rebelboost import REBELClassifier
from similarity_benchmark import N_JOBS, RESULTS, load, pick_on_validation, split
from similarity_close_calls import paired_difference

TAUS = (0.5, 0.1, 0.25, 0.75, 0.9)  # the default first: it wins ties
RIVALS = ("RBF SVM (5x6 grid, val)", "MLP (best of 2, val)")


def until_one_over_n(d, scaling, tau, max_learners):
    Xtr, ytr, Xva, yva, Xte, yte = d
    threshold = 2.0 / (len(np.unique(ytr)) * len(ytr))
    clf = REBELClassifier(weak_learner="similarity", similarity_scaling=scaling, n_estimators=max_learners,
                          n_jobs=N_JOBS, callbacks=[lambda record: record["train_loss"] < threshold])
    clf._similarity_options = {**REBELClassifier._similarity_options, "tau_ratio": tau}
    clf.fit(Xtr, ytr)
    return {"val": float(np.mean(clf.predict(Xva) != yva)), "test": float(np.mean(clf.predict(Xte) != yte)),
            "T": int(clf.n_estimators_)}


def run(name, n_splits, max_learners):
    X, y = load(name)
    rows = []
    for seed in range(n_splits):
        d = split(X, y, seed)
        (scaling, *_), _ = pick_on_validation(d, ("feature", "global"), lambda s: REBELClassifier(
            weak_learner="similarity", similarity_scaling=s, n_estimators=200, n_jobs=N_JOBS))
        fits = {tau: until_one_over_n(d, scaling, tau, max_learners) for tau in TAUS}
        picked = min(TAUS, key=lambda tau: fits[tau]["val"])  # min keeps the first of equal values
        rows.append({"scaling": scaling, "fits": {str(t): f for t, f in fits.items()}, "picked": picked})
        print(name, seed, scaling, picked, {t: (f["val"], f["test"]) for t, f in fits.items()}, flush=True)
    return rows


def summary(name, rows, rivals, rng):
    default = np.array([r["fits"]["0.5"]["test"] for r in rows])
    picked = np.array([r["fits"][str(r["picked"])]["test"] for r in rows])
    cells = [name, str(len(rows)), f"{100 * default.mean():.2f} +- {100 * default.std():.2f}",
             f"{100 * picked.mean():.2f} +- {100 * picked.std():.2f}",
             ", ".join(f"{t}: {sum(r['picked'] == t for r in rows)}" for t in TAUS)]
    for rival in RIVALS:
        theirs = np.array([r[rival] for r in rivals[: len(rows)]])
        mean, low, high, (wins, ties, losses) = paired_difference(picked, theirs, rng)
        cells.append(f"{100 * theirs.mean():.2f} ({100 * mean:+.2f} [{100 * low:+.2f}, {100 * high:+.2f}]; "
                     f"{wins}/{ties}/{losses})")
    return "| " + " | ".join(cells) + " |"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", nargs="+", default=["breast_cancer", "digits"])
    parser.add_argument("--splits", type=int, default=20)
    parser.add_argument("--max-learners", type=int, default=3000)
    parser.add_argument("--out", default=os.path.join(RESULTS, "similarity_tau"))
    parser.add_argument("--table-only", action="store_true", help="rewrite the .md from the stored .json")
    args = parser.parse_args()
    with open(os.path.join(RESULTS, "similarity_close_calls.json")) as handle:
        close_calls = json.load(handle)
    if args.table_only:
        with open(args.out + ".json") as handle:
            stored = json.load(handle)
    else:
        start, load_before = time.perf_counter(), os.getloadavg()
        results = {name: run(name, args.splits, args.max_learners) for name in args.datasets}
        stored = {"seconds": time.perf_counter() - start, "load_before": load_before, "load_after": os.getloadavg(),
                  "splits": args.splits, "results": results}
        with open(args.out + ".json", "w") as handle:
            json.dump(stored, handle, indent=1)
    write_table(stored, close_calls, args.out)


def write_table(stored, close_calls, out):
    results, seconds, load_before, load_after = (stored[k] for k in ("results", "seconds", "load_before", "load_after"))
    lines = ["# Localized Similarities: tau_ratio picked on validation", "",
             f"`OMP_WAIT_POLICY=passive python bench/experiments/similarity_tau.py --splits "
             f"{stored['splits']}` ({seconds:.0f} s; load average {load_before[0]:.1f} / {load_before[1]:.1f} before, "
             f"{load_after[0]:.1f} / {load_after[1]:.1f} after, 1 / 5 min). Splits, scaling choice and rivals "
             "as in similarity_close_calls.md; similarity-REBEL trained until the loss falls below 1/N for "
             f"tau_ratio in {TAUS}, the one with the lowest validation error kept (ties: 0.5, then the order "
             "listed). Test error in % (mean +- std); rival columns: its mean error (picked-tau similarity-REBEL "
             "minus rival, points, with a 95 % bootstrap interval over splits; W/T/L splits where similarity-REBEL "
             "is lower / equal / higher).", "",
             "| data set | splits | tau_ratio 0.5 (default) | tau_ratio picked on validation | picks | "
             + " | ".join(RIVALS) + " |", "|---" * (5 + len(RIVALS)) + "|"]
    rng = np.random.default_rng(0)
    lines += [summary(name, rows, close_calls[name], rng) for name, rows in results.items()]
    with open(out + ".md", "w") as handle:
        handle.write("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
