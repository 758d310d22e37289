"""Time of `rebelboost train` on wide CSV files (many columns, 4 rows) against the number of columns.

    python bench/cli_wide_csv.py [--columns 10000 40000 100000] [--rows 4] [--out bench/results/cli_wide_csv.md]

Each file has N numeric feature columns and a label column; the CLI trains AdaBoost with 5 stumps on it in a
fresh process (wall time of the whole command: start-up, reading, checks, training, saving). The repeated
column-name check alone is timed in-process too, the old way (``names.count(n)`` per column) and the
current one (``collections.Counter``), on the same names. Acceptance (issue 23): 100 000 columns under 5 s.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from run_environment import environment_line, publish  # noqa: E402


def write_csv(path, n_columns, n_rows, rng):
    values = rng.normal(size=(n_rows, n_columns))
    with open(path, "w") as handle:
        handle.write(",".join(f"f{i}" for i in range(n_columns)) + ",label\n")
        for r in range(n_rows):
            handle.write(",".join(f"{v:.6g}" for v in values[r]) + f",{r % 2}\n")


def time_check(names, old):
    from rebelboost._tables import repeated_names

    start = time.perf_counter()
    if old:
        sorted({n for n in names if names.count(n) > 1})
    else:
        repeated_names(names)
    return time.perf_counter() - start


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--columns", type=int, nargs="+", default=[10_000, 40_000, 100_000])
    parser.add_argument("--rows", type=int, default=4)
    parser.add_argument("--repeat", type=int, default=3, help="runs of the command per width (median and min)")
    parser.add_argument("--old-check-up-to", type=int, default=40_000,
                        help="time the old quadratic check only up to this many columns")
    parser.add_argument("--out", default=None)
    args = parser.parse_args()
    env = environment_line()
    rng = np.random.RandomState(0)
    rows = []
    with tempfile.TemporaryDirectory(prefix="rb-wide-") as folder:
        for n in args.columns:
            data, model = os.path.join(folder, f"wide{n}.csv"), os.path.join(folder, f"wide{n}.rbm")
            write_csv(data, n, args.rows, rng)
            walls = []
            for _ in range(args.repeat):
                start = time.perf_counter()
                result = subprocess.run([sys.executable, "-m", "rebelboost", "train", data, "--target", "label",
                                         "--model", model, "--n-estimators", "5"], capture_output=True, text=True)
                walls.append(time.perf_counter() - start)
                if result.returncode != 0:
                    raise SystemExit(f"train failed on {n} columns: {result.stderr}")
            names = [f"f{i}" for i in range(n)] + ["label"]
            old = time_check(names, True) if n <= args.old_check_up_to else None
            rows.append((n, os.path.getsize(data) / 2**20, (float(np.median(walls)), min(walls)), time_check(names, False), old))
            print(rows[-1], flush=True)
    lines = [f"# `rebelboost train` on wide CSV files ({args.rows} rows)", "",
             f"Command: `python bench/cli_wide_csv.py --columns {' '.join(map(str, args.columns))} --rows {args.rows} "
             f"--repeat {args.repeat}`",
             "", f"Environment: {env}.", "",
             "| columns | file MiB | `rebelboost train` wall s, median (min) of runs | repeated-name check, Counter (s) | "
             "same check, old `names.count` per column (s) |", "|---|---|---|---|---|"]
    for n, mib, wall, new, old in rows:  # wall: (median, min)
        old_text = f"{old:.2f}" if old is not None else "not run (quadratic)"
        lines.append(f"| {n} | {mib:.2f} | {wall[0]:.2f} ({wall[1]:.2f}) | {new:.4f} | {old_text} |")
    lines += ["", "Acceptance (issue 23): 100 000 columns x 4 rows trains in under 5 s with the CLI. Before the fix the "
              "old check alone grew with the square of the columns (the column above; about 6x per 2.5x more "
              "columns), and with the check made linear the same 100 000-column command still took 12.4 s: "
              "pyarrow's 1 MiB blocks held about one row each and its per-column type inference and threads "
              "cost ~60 us per column. Wide files (1 000+ columns) are now read in blocks of 16+ rows, on one "
              "thread, with int64/float64 types guessed from the first 16 rows (a later row that contradicts "
              "a guess makes the reader fall back to pyarrow's inference, so the frame is always the same)."]
    publish(lines, args.out)


if __name__ == "__main__":
    main()
