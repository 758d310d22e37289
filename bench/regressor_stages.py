"""The regressor's CPU per tree by stage, for builds side by side (issue 24's per-tree speed work).

For each build (a folder to import rebelboost from, or "." for this checkout's PYTHONPATH), in interleaved
rounds, each fit in its own process: make_friedman1(--rows, 10, noise=1), float32, BoostingRegressor depth 3,
--threads threads; after a warm-up fit, per tree = (a --trees fit - a 1-tree fit) / (--trees - 1), in wall time, process CPU time and
`fit_info_["stage_cpu_seconds"]["process"]` per stage (both threads). Prints one line per fit and the medians.

    OMP_WAIT_POLICY=passive python bench/regressor_stages.py --builds /work/main/python,. --rounds 5
"""
import argparse
import json
import os
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from run_environment import environment_line  # noqa: E402

CHILD = r"""
import json, sys, time
import numpy as np
from sklearn.datasets import make_friedman1
from rebelboost import BoostingRegressor
rows, trees, threads = (int(a) for a in sys.argv[1:4])
X, y = make_friedman1(rows, 10, noise=1.0, random_state=0)
X = X.astype(np.float32)
def fit(k):
    m = BoostingRegressor(n_estimators=k, max_depth=3, learning_rate=0.1, n_jobs=threads, random_state=0)
    c, w = time.process_time(), time.perf_counter()
    m.fit(X, y)
    return time.perf_counter() - w, time.process_time() - c, m.fit_info_["stage_cpu_seconds"]["process"]
fit(1)  # warm-up: the first fit's one-time costs (thread pool, first touches) stay out of both
w1, c1, s1 = fit(1)
wk, ck, sk = fit(trees)
per = lambda a, b: (a - b) / (trees - 1) * 1e3
print(json.dumps({"wall": per(wk, w1), "cpu": per(ck, c1), "stages": {k: per(sk[k], s1.get(k, 0.0)) for k in sk}}))
"""


def one_fit(build, rows, trees, threads):
    env = dict(os.environ)
    if build != ".":
        env["PYTHONPATH"] = build
    out = subprocess.run([sys.executable, "-c", CHILD, str(rows), str(trees), str(threads)], env=env,
                         capture_output=True, text=True, check=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--builds", default=".", help="comma-separated folders to import rebelboost from (.: PYTHONPATH)")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--trees", type=int, default=40)
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    builds = args.builds.split(",")
    print(environment_line(args.threads))
    results = {b: [] for b in builds}
    for r in range(args.rounds):
        for b in builds:
            res = one_fit(b, args.rows, args.trees, args.threads)
            results[b].append(res)
            stages = ", ".join(f"{k} {v:.2f}" for k, v in res["stages"].items() if abs(v) >= 0.05)
            print(f"round {r} {b}: wall {res['wall']:.2f} ms, cpu {res['cpu']:.2f} ms per tree; {stages}", flush=True)
    for b in builds:
        med = lambda key: statistics.median(x[key] for x in results[b])
        stages = {k: statistics.median(x["stages"][k] for x in results[b]) for k in results[b][0]["stages"]}
        shown = ", ".join(f"{k} {v:.2f}" for k, v in stages.items() if abs(v) >= 0.05)
        print(f"median {b}: wall {med('wall'):.2f} ms, cpu {med('cpu'):.2f} ms per tree; {shown}")


if __name__ == "__main__":
    raise SystemExit(main())
