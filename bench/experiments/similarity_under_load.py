"""A similarity fit's time per learner with the machine idle and with two busy processes holding both
cores, under OpenMP's default (spinning) wait policy and under OMP_WAIT_POLICY=passive, side by side with a
baseline build (issue 22 point 3; docs/guide/similarity.md "Speed": threads_for_repeated).

    python bench/experiments/similarity_under_load.py --baseline /path/to/other/python --rows 3750 5000

Each fit (make_classification as bench/hybrid_speed.py: 10 classes, 30 features; 200 learners, early
stopping off, n_jobs=2) runs in a fresh process whose environment has no OMP_* variable except the case's
own; the busy processes are `while True: pass` loops started before and killed after each load's rounds.
Writes bench/results/similarity_under_load.{md,json}.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
import harness  # noqa: E402

FIT = ("import sys, json; sys.path.insert(0, {bench!r}); import hybrid_speed; "
       "print(json.dumps(hybrid_speed.per_learner('similarity', int(sys.argv[1]), 30, 200)))")


def fit(python_path, policy, rows):
    env = {k: v for k, v in os.environ.items() if not k.startswith("OMP_")}
    if policy:
        env["OMP_WAIT_POLICY"] = policy
    env["PYTHONPATH"] = python_path
    code = FIT.format(bench=os.path.dirname(HERE))
    run = subprocess.run([sys.executable, "-c", code, str(rows)], env=env, capture_output=True, text=True)
    if run.returncode != 0:
        raise RuntimeError(run.stderr)
    return json.loads(run.stdout.strip().splitlines()[-1])


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--baseline", required=True, help="PYTHONPATH of the build to compare with")
    parser.add_argument("--rows", type=int, nargs="+", default=[3750, 5000])
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    this = os.environ.get("PYTHONPATH", "")
    cases = [("baseline", args.baseline, None), ("this", this, None), ("this, passive", this, "passive")]
    rows = []
    for busy in (False, True):
        hogs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(2)] if busy else []
        time.sleep(1)
        try:
            for n in args.rows:
                for r in range(args.rounds):
                    for name, path, policy in cases:
                        got = fit(path, policy, n)
                        rows.append({"load": "2 busy processes" if busy else "idle", "N": n, "round": r + 1,
                                     "build": name, "OMP_WAIT_POLICY": policy or "(unset)",
                                     "ms per learner": got["ms per learner"],
                                     "CPU ms per learner": got["CPU ms per learner"]})
                        print(rows[-1], flush=True)
        finally:
            for hog in hogs:
                hog.kill()
    lines = [f"Similarity fit, 200 learners, n_jobs=2, 30 features, 10 classes; baseline PYTHONPATH={args.baseline}, "
             f"this PYTHONPATH={this or '(installed)'}; each fit in a fresh process:", ""]
    lines += harness.markdown_table(rows)
    harness.record("similarity_under_load", rows, lines, threads=2)
    print("\n".join(lines))


if __name__ == "__main__":
    main()
