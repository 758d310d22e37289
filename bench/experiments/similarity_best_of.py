"""Is similarity-REBEL the best of all methods, set by set, and can these data sets tell?

Reads the per-split test errors of similarity_benchmark.py run on 20 splits
(similarity_benchmark_20splits.json: digits, wine, breast cancer, every method) and of
similarity_fmnist_splits.py (Fashion-MNIST 10k; similarity-REBEL at its validation stage), and writes, per
data set:
  - every method's mean test error and similarity-REBEL's rank;
  - the paired difference to the best rival (similarity-REBEL minus rival, over the same splits) with a 95 %
    bootstrap interval over splits, and the same difference in test points per split;
  - P(best): the share of bootstrap resamples of the splits in which similarity-REBEL has the lowest mean
    of all methods (ties share the win);
  - splits needed: how many splits the observed paired difference would need before its normal 95 %
    interval excluded zero, (1.96 sd / mean)^2, i.e. whether more splits could settle the ranking.
Then the number of sets on which similarity-REBEL has the lowest mean, and its distribution over the
bootstrap (sets resampled independently): how often "best on at least half of the sets" holds.

Nothing is trained here; the method compared is the one each benchmark declares in advance
(similarity-REBEL trained until the loss falls below 1/N; on Fashion-MNIST, where that is out of reach, the
stage picked on validation after a fixed number of learners).

    python bench/experiments/similarity_best_of.py
"""

from __future__ import annotations

import argparse
import json
import math
import os

import numpy as np

from similarity_benchmark import RESULTS

OURS_SMALL = "similarity-REBEL (loss < 1/N)"
OURS_FMNIST = "similarity-REBEL (validation stage)"
OTHER_OURS = ("similarity-REBEL (<=200, val)", "similarity-REBEL (last stage)")  # not rivals: our own variants
N_TEST = {"wine": 45, "breast_cancer": 143, "digits": 450, "fmnist10k": 2500}  # the test quarter's rows
RESAMPLES = 10_000


def sets(small_path, fmnist_path):
    """{data set: (ours, {rival: errors})}, errors in % per split, splits aligned."""
    out = {}
    with open(small_path) as handle:
        small = json.load(handle)
    for name, entry in small.items():
        rows = entry["splits"]
        rivals = [m for m in rows[0] if m != OURS_SMALL and m not in OTHER_OURS]
        out[name] = (100 * np.array([r[OURS_SMALL]["error"] for r in rows]),
                     {m: 100 * np.array([r[m]["error"] for r in rows]) for m in rivals})
    if os.path.exists(fmnist_path):
        with open(fmnist_path) as handle:
            rows = json.load(handle)["splits"]
        rivals = [m for m in rows[0] if isinstance(rows[0][m], dict) and "error" in rows[0][m]
                  and m != OURS_FMNIST and m not in OTHER_OURS]
        out["fmnist10k"] = (100 * np.array([r[OURS_FMNIST]["error"] for r in rows]),
                            {m: 100 * np.array([r[m]["error"] for r in rows]) for m in rivals})
    return out


def best_share(ours, rivals, index):
    """Share of the resampled split sets (rows of index) in which ours has the lowest mean (ties shared)."""
    means = np.stack([ours[index].mean(axis=1)] + [r[index].mean(axis=1) for r in rivals.values()])
    lowest = means.min(axis=0)
    at_lowest = np.isclose(means, lowest)
    return float(np.mean(at_lowest[0] / at_lowest.sum(axis=0))), at_lowest[0] / at_lowest.sum(axis=0)


def analyse(name, ours, rivals, rng):
    n = len(ours)
    best_rival = min(rivals, key=lambda m: rivals[m].mean())
    diff = ours - rivals[best_rival]
    index = rng.randint(0, n, size=(RESAMPLES, n))
    low, high = np.percentile(diff[index].mean(axis=1), [2.5, 97.5])
    p_best, per_resample = best_share(ours, rivals, index)
    sd = diff.std(ddof=1) if n > 1 else float("nan")
    needed = (1.96 * sd / diff.mean()) ** 2 if n > 1 and diff.mean() != 0 else float("inf")
    rank = 1 + sum(v.mean() < ours.mean() for v in rivals.values())
    return {"splits": n, "ours": float(ours.mean()), "rank": int(rank), "methods": 1 + len(rivals),
            "best_rival": best_rival, "best_rival_error": float(rivals[best_rival].mean()),
            "difference": float(diff.mean()), "interval": [float(low), float(high)],
            "difference_test_points": float(diff.mean() * N_TEST[name] / 100), "sd": float(sd),
            "splits_needed": float(needed), "p_best": p_best,
            "means": {m: float(v.mean()) for m, v in rivals.items()}}, per_resample


def verdict(r):
    low, high = r["interval"]
    if r["rank"] == 1 and high < 0:
        return "best, interval below 0"
    if r["rank"] == 1:
        return "best mean, interval spans 0"
    if low > 0:
        return "worse, interval above 0"
    return "not best, interval spans 0"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--small", default=os.path.join(RESULTS, "similarity_benchmark_20splits.json"))
    parser.add_argument("--fmnist", default=os.path.join(RESULTS, "similarity_fmnist_splits.json"))
    parser.add_argument("--out", default=os.path.join(RESULTS, "similarity_best_of"))
    args = parser.parse_args()
    rng = np.random.RandomState(0)
    results, draws = {}, []
    for name, (ours, rivals) in sets(args.small, args.fmnist).items():
        results[name], per_resample = analyse(name, ours, rivals, rng)
        draws.append(per_resample)
    count = sum(r["rank"] == 1 for r in results.values())
    half = (len(results) + 1) // 2
    wins = np.sum(draws, axis=0)  # expected number of sets won, per joint resample (ties shared)
    p_half = float(np.mean(wins >= half - 1e-9))
    summary = {"sets": len(results), "best_on": count, "half": half, "p_best_on_half": p_half,
               "expected_best_on": float(np.mean(wins))}
    with open(args.out + ".json", "w") as handle:
        json.dump({"sets": results, "summary": summary}, handle, indent=1)
    lines = [
        "# Is similarity-REBEL the best of all methods? Set by set, with the noise",
        "",
        "`python bench/experiments/similarity_best_of.py` (nothing trained: it reads "
        "`similarity_benchmark_20splits.json` and `similarity_fmnist_splits.json`). similarity-REBEL: trained "
        "until the loss falls below 1/N (digits, wine, breast cancer); on Fashion-MNIST 10k, where that is out "
        "of reach, the stage with the lowest validation error after a fixed number of learners. Errors in %, "
        "means over splits. Difference = similarity-REBEL minus the best rival, per split, mean with a 95 % "
        f"bootstrap interval ({RESAMPLES} resamples of the splits); in test points = that difference times "
        "the test quarter's rows; P(best) = share of resamples in which similarity-REBEL has the lowest mean "
        "of all methods; splits needed = (1.96 sd / mean difference)^2 rounded up, the splits at which the "
        "observed difference would leave zero outside its interval (1: already outside).",
        "",
        "| data set | splits | methods | similarity-REBEL | rank | best rival | its error | difference [95 %] "
        "| in test points per split | P(best) | splits needed | verdict |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for name, r in results.items():
        lines.append(f"| {name} | {r['splits']} | {r['methods']} | {r['ours']:.2f} | {r['rank']} | {r['best_rival']} | "
                     f"{r['best_rival_error']:.2f} | {r['difference']:+.2f} [{r['interval'][0]:+.2f}, "
                     f"{r['interval'][1]:+.2f}] | {r['difference_test_points']:+.2f} | {r['p_best']:.2f} | "
                     f"{math.ceil(r['splits_needed']):,} | {verdict(r)} |")
    lines += ["", f"Sets on which similarity-REBEL has the lowest mean: **{count} of {len(results)}** (the target: at "
              f"least {half}). Over joint bootstrap resamples of every set's splits, the expected number is "
              f"{summary['expected_best_on']:.2f}, and at least {half} hold in {100 * p_half:.0f} % of them.", "",
              "Every method's mean test error (%; -: not run on that set):", ""]
    methods = list(dict.fromkeys(m for r in results.values() for m in r["means"]))
    lines += ["| data set | similarity-REBEL | " + " | ".join(methods) + " |", "|---|---|" + "---|" * len(methods)]
    for name, r in results.items():
        cells = [f"{r['means'][m]:.2f}" if m in r["means"] else "-" for m in methods]
        lines.append(f"| {name} | {r['ours']:.2f} | " + " | ".join(cells) + " |")
    with open(args.out + ".md", "w") as handle:
        handle.write("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
