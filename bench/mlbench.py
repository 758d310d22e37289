"""Data sets of Debian's r-cran-mlbench package (R's mlbench) as numpy arrays, read once through Rscript and
cached as CSV under ~/.cache/rebelboost-bench (factor columns as their integer codes, rows with NA dropped,
the class in its own column)."""

from __future__ import annotations

import os
import subprocess

import numpy as np

MLBENCH = "/usr/lib/R/site-library/mlbench/data"
CACHE = os.path.join(os.path.expanduser("~"), ".cache", "rebelboost-bench")


def load(name: str, target: int = -1) -> tuple[np.ndarray, np.ndarray]:
    """(X, y) of mlbench's data set `name` (e.g. "Vehicle", "Sonar"); y as class codes 0..K-1 of the column
    `target` (the last by default; LetterRecognition's class is its first column, 0)."""
    os.makedirs(CACHE, exist_ok=True)
    csv = os.path.join(CACHE, f"{name}.csv")
    if not os.path.exists(csv):
        script = (f"load('{MLBENCH}/{name}.rda'); d <- get('{name}'); "
                  "d[] <- lapply(d, function(c) if (is.factor(c)) as.numeric(c) else c); "
                  f"write.csv(d, '{csv}', row.names = FALSE)")
        subprocess.run(["Rscript", "-e", script], check=True, capture_output=True)
    table = np.genfromtxt(csv, delimiter=",", skip_header=1)
    table = table[~np.isnan(table).any(axis=1)]
    _, y = np.unique(table[:, target], return_inverse=True)
    return np.delete(table, target, axis=1), y
