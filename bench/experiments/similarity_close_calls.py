"""The close calls of similarity_benchmark.py on more splits: similarity-REBEL trained until the training loss
falls below 1/N against the RBF SVM and the MLP (the best rivals on digits and breast cancer), with the same
protocol and the same functions (50/25/25 splits, every choice on the validation quarter), on splits 0..n-1
(the first 5 are similarity_benchmark.py's). Reports mean test errors, paired differences with a 95 %
bootstrap interval over splits, and wins / ties / losses. Writes bench/results/similarity_close_calls.{md,json}.

    OMP_WAIT_POLICY=passive python bench/experiments/similarity_close_calls.py --splits 20
"""

from __future__ import annotations

import argparse
import json
import os
import time

import numpy as np

from similarity_benchmark import RESULTS, load, mlp, similarity_rebel, split, svm

OURS = "similarity-REBEL (loss < 1/N)"
RIVALS = ("RBF SVM (5x6 grid, val)", "MLP (best of 2, val)")


def run(name, n_splits, max_learners):
    X, y = load(name)
    rows = []
    for seed in range(n_splits):
        d = split(X, y, seed)
        row = {}
        row.update(similarity_rebel(d, max_learners))
        row.update(svm(d))
        row.update(mlp(d, seed))
        rows.append({m: row[m]["error"] for m in (OURS, *RIVALS)} | {"n_test": len(d[5])})
        print(name, seed, {m: round(100 * v, 2) for m, v in rows[-1].items() if m != "n_test"}, flush=True)
    return rows


def paired_difference(ours, theirs, rng):
    """ours - theirs per split (negative: similarity-REBEL better): its mean, the 95 % bootstrap interval of
    the mean over splits (10 000 resamples from rng), and the splits where ours is lower / equal / higher."""
    diff = np.asarray(ours) - np.asarray(theirs)
    low, high = np.percentile(rng.choice(diff, size=(10_000, len(diff))).mean(axis=1), [2.5, 97.5])
    wins, ties = int(np.sum(diff < 0)), int(np.sum(diff == 0))
    return diff.mean(), low, high, (wins, ties, len(diff) - wins - ties)


def summary(name, rows, rng):
    ours = np.array([r[OURS] for r in rows])
    lines = [f"| {name} | {len(rows)} | {100 * ours.mean():.2f} +- {100 * ours.std():.2f} |"]
    for rival in RIVALS:
        theirs = np.array([r[rival] for r in rows])
        mean, low, high, (wins, ties, losses) = paired_difference(ours, theirs, rng)
        lines[0] += (f" {100 * theirs.mean():.2f} +- {100 * theirs.std():.2f} | {100 * mean:+.2f} "
                     f"[{100 * low:+.2f}, {100 * high:+.2f}] | {wins}/{ties}/{losses} |")
    return lines


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", nargs="+", default=["digits", "breast_cancer"])
    parser.add_argument("--splits", type=int, default=20)
    parser.add_argument("--max-learners", type=int, default=3000)
    parser.add_argument("--out", default=os.path.join(RESULTS, "similarity_close_calls"))
    args = parser.parse_args()
    start, load_before = time.perf_counter(), os.getloadavg()[0]
    results = {name: run(name, args.splits, args.max_learners) for name in args.datasets}
    with open(args.out + ".json", "w") as handle:
        json.dump(results, handle, indent=1)
    rng = np.random.default_rng(0)
    lines = ["# Similarity-REBEL against its closest rivals, on more splits", "",
             f"`OMP_WAIT_POLICY=passive python bench/experiments/similarity_close_calls.py --splits {args.splits}` "
             f"({time.perf_counter() - start:.0f} s; load average {load_before:.1f} before, "
             f"{os.getloadavg()[0]:.1f} after). The protocol and code of similarity_benchmark.py: 50/25/25 "
             "splits, every choice on the validation quarter, the first 5 splits are its splits. Test error in % "
             "(mean +- std over splits); difference = similarity-REBEL minus rival, in points, with a 95 % "
             "bootstrap interval over splits; W/T/L = splits where similarity-REBEL is lower / equal / higher.", "",
             f"| data set | splits | {OURS} | " + " | ".join(f"{r} | difference [95 %] | W/T/L" for r in RIVALS) + " |",
             "|---" * (3 + 3 * len(RIVALS)) + "|"]
    for name, rows in results.items():
        lines += summary(name, rows, rng)
    with open(args.out + ".md", "w") as handle:
        handle.write("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
