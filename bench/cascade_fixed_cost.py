"""Where a cascade's time goes: the fixed cost it shares with full evaluation, against the tree work.

Issue 19 asks the cascade's speed-up to follow its learners (full learners / mean learners used). That bound
holds only if almost all of full evaluation's time is tree work. This benchmark measures, side by side in one
run (interleaved rounds, process CPU time and wall time, medians), on the F-MNIST pairs of cascade_speed.py at
100 000 rows:

- full evaluation truncated to the first n learners (n = 1, 16, 64, the cascade's mean learners, all): the
  cost of evaluating a segment for every row, whose n = 1 value is the fixed cost (the input check, reading
  784-wide rows, the per-chunk set-up) and whose n = mean learners value is the ideal-segment reference;
- full evaluation and the cascade with and without the +-inf check of the Python entry (a pass over all of X);
- a pass that reads one byte of every 64-byte line of X (numpy): the memory traffic alone.

A cascade paying full evaluation's fixed cost would reach at most full / (fixed + tree work of the mean
learners); the cascade pays less (it copies only the columns its rows still need), but it pays the inf check.
Run: `OMP_WAIT_POLICY=passive python bench/cascade_fixed_cost.py --threads 2 --rounds 9`
(docs/guide/cascades.md; results in bench/results/cascade_speed.md).
"""
import argparse
import copy
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from cascade_speed import CPU, N_ROWS, fashion, interleaved  # noqa: E402
from run_environment import environment_line  # noqa: E402

PAIRS = {"T-shirt/Shirt": (0, 6), "Dress/Coat": (3, 4)}


def pair_task(pair, threads, pairs=PAIRS):
    """The full model, its cascade (max_accuracy_loss 0.01) and the 100 000-row batch of an F-MNIST pair."""
    clf, X_val, y_val, X_pool = fashion(*pairs[pair], threads)
    c = copy.deepcopy(clf).calibrate_cascade(X_val, y_val, max_accuracy_loss=0.01)
    X = np.ascontiguousarray(X_pool[np.random.RandomState(0).randint(0, len(X_pool), N_ROWS)])
    return clf._model, c._model, X


def measure(pair, threads, rounds):
    full, cm, X = pair_task(pair, threads)
    T = full.n_learners
    mean = float(cm.predict(X, threads, -1, True, True, False, 0, True)[1].mean())
    fns = {}
    for n in sorted({1, 16, 64, int(round(mean)), T}):
        fns[f"full, first {n}"] = (lambda n: lambda: full.predict(X, threads, n, False, True, False, 0, False))(n)
    fns["full, no inf check"] = lambda: full.predict(X, threads, -1, False, False, False, 0, False)
    fns["full, first 1, no inf check"] = lambda: full.predict(X, threads, 1, False, False, False, 0, False)
    fns["cascade"] = lambda: cm.predict(X, threads, -1, False, True, False, 0, True)
    fns["cascade, no inf check"] = lambda: cm.predict(X, threads, -1, False, False, False, 0, True)
    lines_of_x = X.view(np.uint8)[:, ::64]
    fns["read every line of X (numpy, 1 thread)"] = lambda: int(lines_of_x.sum())
    wall = interleaved(fns, rounds, cpu_key=pair)
    res = {k: (1e3 * CPU[(pair, k)], 1e3 * wall[k][1]) for k in fns}  # median CPU and wall ms
    print(pair, mean, res, flush=True)
    return pair, T, mean, res


def table(pair, T, mean, res):
    full = res[f"full, first {T}"][0]
    fixed = res["full, first 1"][0]
    work = max(full - fixed, 1e-9)
    bound = full / (fixed + work * mean / T)
    out = [f"{pair} (AdaBoost {T}, cascade mean learners {mean:.0f}, ideal {T / mean:.2f}x):", "",
           "| call | CPU ms | wall ms | CPU vs full |", "|---|---|---|---|"]
    for k, (cpu, wall) in res.items():
        out.append(f"| {k} | {cpu:.1f} | {wall:.1f} | {full / cpu:.2f}x |")
    out += ["", f"Fixed cost (first 1 learner) {fixed:.1f} ms = {100 * fixed / full:.0f} % of full; tree work "
            f"{work:.1f} ms for {T} learners. A cascade that paid this fixed cost would reach at most "
            f"{bound:.2f}x in CPU (measured {full / res['cascade'][0]:.2f}x: it reads only the lines its rows need).", ""]
    return out


def run_pairs(description, pairs, measure, table, rounds, argv=None):
    """The command line of the per-pair cascade benchmarks: measure(pair, threads, rounds) for each pair, then
    the environment and table(*result) of each, printed."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=rounds)
    parser.add_argument("--pairs", nargs="*", default=list(pairs))
    args = parser.parse_args(argv)
    before = environment_line(args.threads)
    results = [measure(p, args.threads, args.rounds) for p in args.pairs]
    lines = [f"Before: {before}", "", f"After: {environment_line(args.threads)}", ""]
    for r in results:
        lines += table(*r)
    print("\n".join(lines))


if __name__ == "__main__":
    run_pairs(__doc__.splitlines()[0], PAIRS, measure, table, rounds=9)
