"""The fastest a cascade could be with these kernels: an oracle that knows every row's exit in advance.

Issue 19 asks a cascade's speed-up over full evaluation to reach 60 % of its ideal (full learners / mean
learners used), and 3x on the T-shirt/Shirt 1 000-tree task. This benchmark bounds what any scheme that makes
the work follow the rows still running can reach with the engine's kernels, by removing the scheme: the
cascade's own exits (learners per row, from the calibrated cascade) are computed first; then the rows that
leave after n learners are put together in a contiguous array, and the model truncated to n learners
evaluates them (full evaluation, 16-row groups always full, only the first n learners' columns copied, no
check at all). The sum over n of those calls is the oracle's time: the rows' tree work and copies at their
own exits with no checkpoint, packing or bookkeeping cost, and no knowledge wasted on lanes that left. The
arrays are built before timing (their copy is not counted), so the oracle is a bound, not a method.

Side by side in one run (interleaved rounds, process CPU time of all threads and wall time, medians), at
100 000 rows of the F-MNIST pairs of cascade_speed.py, with the +-inf check of the input on (as predict() does)
and off: full evaluation, the cascade, the oracle, and a read of one byte of every 64-byte line of X (numpy,
one thread): the memory traffic that refusing +-inf anywhere in X costs every path.

    OMP_WAIT_POLICY=passive python bench/cascade_oracle.py [--threads 2] [--rounds 7]

(docs/guide/cascades.md; results in bench/results/cascade_speed.md).
"""
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from cascade_fixed_cost import pair_task, run_pairs  # noqa: E402
from cascade_speed import CPU, interleaved  # noqa: E402

PAIRS = {"T-shirt/Shirt": (0, 6), "Dress/Coat": (3, 4), "Pullover/Coat": (2, 4)}


def oracle_parts(full, cm, X, threads):
    """The cascade's learners per row, and (truncated model, contiguous rows) for each exit count."""
    labels, learners = cm.predict(X, threads, -1, True, True, False, 0, True)
    parts = []
    for n in np.unique(learners):
        rows = np.ascontiguousarray(X[learners == n])
        parts.append((full.truncated(int(n)), rows))
    return labels, learners, parts


def oracle_labels(parts, X, learners, threads):
    """The oracle's labels in X's row order (they must be the cascade's where the cascade decided by its
    scores at the exit; a cascade row that leaves decides by its threshold, so only the learner counts are
    shared, and the labels are reported, not required to match)."""
    out = np.empty(len(X), dtype=np.int32)
    for (m, rows), n in zip(parts, np.unique(learners)):
        out[learners == n] = m.predict(rows, threads, -1, False, False, False, 0, False)
    return out


def measure(pair, threads, rounds):
    full, cm, X = pair_task(pair, threads, PAIRS)
    T = full.n_learners
    labels, learners, parts = oracle_parts(full, cm, X, threads)
    mean = float(learners.mean())

    def oracle(check_inf):
        for m, rows in parts:
            m.predict(rows, threads, -1, False, check_inf, False, 0, False)

    lines_of_x = X.view(np.uint8)[:, ::64]
    fns = {"full": lambda: full.predict(X, threads, -1, False, True, False, 0, False),
           "cascade": lambda: cm.predict(X, threads, -1, False, True, False, 0, True),
           "oracle": lambda: oracle(True),
           "full, no inf check": lambda: full.predict(X, threads, -1, False, False, False, 0, False),
           "cascade, no inf check": lambda: cm.predict(X, threads, -1, False, False, False, 0, True),
           "oracle, no inf check": lambda: oracle(False),
           "read every line of X (numpy, 1 thread)": lambda: int(lines_of_x.sum())}
    wall = interleaved(fns, rounds, cpu_key=pair)
    res = {k: (1e3 * CPU[(pair, k)], 1e3 * wall[k][1]) for k in fns}
    agree = float((oracle_labels(parts, X, learners, threads) == labels).mean())
    print(pair, mean, len(parts), res, flush=True)
    return pair, T, mean, len(parts), agree, res


def table(pair, T, mean, n_parts, agree, res):
    ideal = T / mean
    out = [f"{pair} (AdaBoost {T}; cascade mean learners {mean:.1f}, ideal {ideal:.2f}x; oracle: {n_parts} exit "
           f"counts, labels equal to the cascade's on {100 * agree:.2f} % of the rows):", "",
           "| call | CPU ms | wall ms | speed-up over full (CPU) | share of ideal (CPU) | speed-up (wall) |",
           "|---|---|---|---|---|---|"]
    for k, (cpu, wall) in res.items():
        ref = res["full, no inf check" if "no inf" in k else "full"]
        up = ref[0] / cpu
        out.append(f"| {k} | {cpu:.1f} | {wall:.1f} | {up:.2f}x | {100 * up / ideal:.0f} % | {ref[1] / wall:.2f}x |")
    out.append("")
    return out


if __name__ == "__main__":
    run_pairs(__doc__.splitlines()[0], PAIRS, measure, table, rounds=7)
