"""Long similarity fits on F-MNIST: what an eval set costs, and whether threading the selection's passes pays.

5 000 training rows of Fashion-MNIST 10k (similarity_benchmark.py's split 1), similarity-REBEL, 2 threads,
--learners learners. Each configuration runs in its own process (REBELBOOST_WORK_PER_THREAD is read once per
process), one after the other in one run, each on a quiet machine and again beside --busy processes that
each spin one core (the shared-machine case). Configurations:
  default           the library's threading threshold, no eval set
  eval set          the same with a 2 500-row eval set watched every iteration
  threshold 65536   REBELBOOST_WORK_PER_THREAD=65536: the selection's passes on F-MNIST run on 2 threads
Default OpenMP settings (no OMP_WAIT_POLICY), as users run. Every configuration must give the same model
(sha1 of its training-set scores); the script fails otherwise.

    python bench/peers/similarity_threads.py
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import subprocess
import sys

from similarity_benchmark import RESULTS

CONFIGS = {"default": ({}, False), "eval set": ({}, True), "threshold 65536": ({"REBELBOOST_WORK_PER_THREAD": "65536"}, False)}

CHILD = """
import hashlib, json, resource, sys, time
sys.path.insert(0, {here!r})
from similarity_benchmark import load, split
from rebelboost import REBELClassifier
X, y = load("fmnist10k")
Xtr, ytr, Xva, yva, _, _ = split(X, y, 1)
start, cpu = time.perf_counter(), time.process_time()
clf = REBELClassifier(weak_learner="similarity", n_estimators={learners}, n_jobs=2, scoring="error")
clf.fit(Xtr, ytr, eval_set=[(Xva, yva)] if {with_eval} else None)
wall, cpu = time.perf_counter() - start, time.process_time() - cpu
print(json.dumps({{"wall_s": wall, "cpu_s": cpu,
                  "model": hashlib.sha1(clf.decision_function(Xtr).tobytes()).hexdigest()[:12]}}))
"""


def spin():
    while True:
        pass


def run(config, learners):
    env_extra, with_eval = CONFIGS[config]
    code = CHILD.format(here=os.path.dirname(os.path.abspath(__file__)), learners=learners, with_eval=with_eval)
    out = subprocess.run([sys.executable, "-c", code], env={**os.environ, **env_extra}, check=True,
                         capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1]) | {"load_1min": os.getloadavg()[0]}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--learners", type=int, default=1500)
    parser.add_argument("--busy", type=int, default=1, help="processes spinning one core each, for the busy rows")
    parser.add_argument("--out", default=os.path.join(RESULTS, "similarity_threads"))
    args = parser.parse_args()
    os.environ.pop("OMP_WAIT_POLICY", None)
    rows = []
    for state in ("quiet", f"{args.busy} busy"):
        spinners = [multiprocessing.Process(target=spin, daemon=True) for _ in range(args.busy if state != "quiet" else 0)]
        for p in spinners:
            p.start()
        try:
            for config in (CONFIGS if state == "quiet" else ("default", "threshold 65536")):
                rows.append({"machine": state, "config": config, **run(config, args.learners)})
                print(rows[-1], flush=True)
        finally:
            for p in spinners:
                p.terminate()
    if len({r["model"] for r in rows}) != 1:
        raise SystemExit(f"models differ between configurations: {rows}")
    with open(args.out + ".json", "w") as handle:
        json.dump({"learners": args.learners, "rows": rows}, handle, indent=1)
    base = {r["machine"]: r["wall_s"] for r in rows if r["config"] == "default"}
    lines = ["# Long similarity fits: the eval set's cost, and threading the selection's passes", "",
             f"`python bench/peers/similarity_threads.py` (F-MNIST 10k split 1, 5 000 training rows, "
             f"{args.learners} learners, 2 threads, default OpenMP settings; one process per row, all in one run; "
             f"busy rows beside {args.busy} process(es) spinning one core each). Every row gave the same model "
             f"(sha1 {rows[0]['model']}).", "",
             "| machine | configuration | wall s | CPU s | wall / default | load (1 min) |", "|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['machine']} | {r['config']} | {r['wall_s']:.1f} | {r['cpu_s']:.1f} | "
                     f"{r['wall_s'] / base[r['machine']]:.2f} | {r['load_1min']:.1f} |")
    with open(args.out + ".md", "w") as handle:
        handle.write("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
