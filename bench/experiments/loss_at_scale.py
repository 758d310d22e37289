"""REBEL's three losses against LightGBM at scale: Fashion-MNIST, 10 classes, 2 threads, test error against
wall time, every stage picked on validation error.

The 60 000 training images are split 50 000 / 10 000 (train / validation; numpy permutation seed = the split
seed, seed 0 is time_to_accuracy.py's split); the 10 000 test images are only reported. Each REBEL loss
(exponential, logistic, squared) trains the same configuration (depth 6, learning_rate 0.5,
feature_fraction 0.3: issue 24's) until a wall-time cap; per-tree timestamps give the curve, staged scores
the validation and test error after every tree, and the stage is the tree of lowest validation error (ties:
the first). LightGBM trains with its defaults, stopped on validation error with patience 200
(time_to_accuracy.run_lightgbm), its stage picked the same way. One split by default; `--splits 0,1,2`
runs three.

    OMP_WAIT_POLICY=passive nice -n 5 python bench/experiments/loss_at_scale.py [--cap 700] [--splits 0]
"""

from __future__ import annotations

import argparse
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, ".."))  # harness
sys.path.insert(0, os.path.join(HERE, "..", "peers"))  # datasets
from harness import markdown_table, record  # noqa: E402
from time_to_accuracy import PATIENCE, THREADS, run_lightgbm, run_rebel, split  # noqa: E402

LOSSES = ["exponential", "logistic", "squared"]
CONFIG = {"max_depth": 6, "learning_rate": 0.5, "feature_fraction": 0.3}
MARKS = [30, 60, 120, 240, 400, 700, 1000]  # seconds at which the curves are tabulated


def run_loss(data, loss, cap, max_trees):
    curve, _ = run_rebel(data, {**CONFIG, "subsample": 1.0, "loss": loss}, cap, max_trees, [])
    return {k: curve[k] for k in ("time_s", "val_error", "test_error")}


def picked(curve, budget=float("inf")):
    """(stage, val error, test error, time) of the lowest validation error among stages fitted by `budget`."""
    times = np.asarray(curve["time_s"])
    n = int(np.searchsorted(times, budget, side="right"))
    if n == 0:
        return None
    val = np.asarray(curve["val_error"][:n])
    stage = int(np.argmin(val)) + 1
    return stage, float(val[stage - 1]), float(curve["test_error"][stage - 1]), float(times[stage - 1])


def rows_of(curves, seed):
    rows = []
    for name, curve in curves.items():
        stage, val, test, at = picked(curve)
        row = {"split": seed, "model": name, "stages fitted": len(curve["time_s"]),
               "fit s": f"{curve['time_s'][-1]:.0f}", "picked stage": stage, "at s": f"{at:.0f}",
               "val error %": f"{100 * val:.2f}", "test error %": f"{100 * test:.2f}"}
        for mark in MARKS:
            p = picked(curve, mark)
            row[f"test % by {mark} s"] = f"{100 * p[2]:.2f}" if p and mark <= curve["time_s"][-1] + 1e-9 else ""
        rows.append(row)
    return rows


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cap", type=float, default=700.0, help="wall seconds per REBEL loss")
    parser.add_argument("--max-trees", type=int, default=20000)
    parser.add_argument("--max-rounds", type=int, default=5000, help="LightGBM (early stopping ends it)")
    parser.add_argument("--splits", default="0", help="comma-separated split seeds, e.g. 0,1,2")
    parser.add_argument("--models", default=",".join(LOSSES + ["LightGBM"]))
    parser.add_argument("--out-name", default="loss_at_scale")
    args = parser.parse_args(argv)
    results, rows = {}, []
    for seed in (int(s) for s in args.splits.split(",")):
        data = split(seed)
        curves = {}
        for name in args.models.split(","):
            load = os.getloadavg()[0]
            if name == "LightGBM":
                curve, _ = run_lightgbm(data, args.max_rounds, [])
                curve = {k: curve[k] for k in ("time_s", "val_error", "test_error")}
            else:
                curve = run_loss(data, name, args.cap, args.max_trees)
            curves[name] = {**curve, "load_start": load, "load_end": os.getloadavg()[0]}
            print(seed, name, len(curve["time_s"]), "stages", picked(curve), flush=True)
            results[f"split {seed}"] = curves
            rows = [r for r in rows if r["split"] != seed] + rows_of(curves, seed)
            lines = ["# REBEL's losses against LightGBM at scale (Fashion-MNIST, 10 classes, 2 threads)", "",
                     f"50 000 / 10 000 train / validation split of the training set (split seeds {args.splits}), "
                     "clean test set of 10 000. REBEL: depth 6, learning_rate 0.5, feature_fraction 0.3, each loss "
                     f"until {args.cap:g} s of fit; LightGBM: defaults, stopped on validation error with patience "
                     f"{PATIENCE}. Every stage is the one of lowest validation error (over the whole run, or among "
                     "the stages fitted by the time in the column: the curve against wall time). Times are each "
                     "library's own fit time on a shared machine (load averages in the JSON).", ""]
            lines += markdown_table(rows)
            record(args.out_name, results, lines, threads=THREADS)


if __name__ == "__main__":
    main()
