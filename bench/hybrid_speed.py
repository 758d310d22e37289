"""Issue 22, point 3: similarity and hybrid fits, seconds per learner against N and d, and a default fit on
5 000 rows x 30 features at 2 threads (target: under 30 s).

Data: scikit-learn's make_classification (10 classes, 10 informative features, the rest noise; seed 0), so
N and d vary independently; the per-learner time is a fixed number of learners (early stopping off)
divided into the fit's wall time, and the process CPU time per learner beside it (on a shared machine the
wall time measures the load as much as the code). The default fit uses REBELClassifier(weak_learner=...)
with every parameter at its default (docs/guide/similarity.md "Defaults": up to 10 000 learners, early
stopping on a carved 25 % split with a patience of 500; hybrids: the validation error, and depth 3 from 512
training rows, so depth 3 here).

    OMP_WAIT_POLICY=passive nice -n 5 python bench/hybrid_speed.py
    OMP_WAIT_POLICY=passive nice -n 5 python bench/hybrid_speed.py --quick
    OMP_WAIT_POLICY=passive nice -n 5 python bench/hybrid_speed.py --learners 200 --defaults similarity
    OMP_WAIT_POLICY=passive nice -n 5 python bench/hybrid_speed.py --learners 200 --baseline /work/main/python
    python bench/hybrid_speed.py --default-runs 3 --defaults similarity hybrid --scalings auto feature

Writes bench/results/hybrid_speed.{md,json} (hybrid_speed_quick with --quick). --baseline PATH puts every fit
in fresh processes, first with PYTHONPATH=PATH (another checkout's build, e.g. main's), then with this
process's PYTHONPATH, and reports both side by side with their ratios (hybrid_speed_compare.{md,json}).
--default-runs N times only the default fits, N rounds, each fit in a fresh process under each OpenMP wait
policy of --policies (OpenMP's default and passive unless told) and each similarity_scaling of --scalings
("auto", the default, unless told), interleaved (hybrid_speed_default.{md,json}).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

from sklearn.datasets import make_classification

from rebelboost import REBELClassifier

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402

THREADS = 2


def data(n, d, seed=0):
    return make_classification(n_samples=n, n_features=d, n_informative=min(10, d), n_redundant=0,
                               n_classes=10, n_clusters_per_class=1, random_state=seed)


def per_learner(learner, n, d, learners):
    X, y = data(n, d)
    clf = REBELClassifier(weak_learner=learner, n_estimators=learners, early_stopping=False, n_jobs=THREADS)
    start, cpu = time.perf_counter(), time.process_time()
    clf.fit(X, y)
    seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
    return {"learner": learner, "N": n, "d": d, "learners": int(clf.n_estimators_),
            "ms per learner": round(1e3 * seconds / clf.n_estimators_, 3),
            "CPU ms per learner": round(1e3 * cpu / clf.n_estimators_, 3),
            "two-point candidates per learner": round(float(clf.fit_info_["candidates"].mean()), 1),
            "fit s": round(seconds, 2)}


def default_fit(learner, n, d, scaling=None):
    """REBELClassifier(weak_learner=learner) with every other parameter at its default (similarity_scaling too,
    unless `scaling` names one), timed."""
    X, y = data(n, d, seed=1)
    options = {} if scaling is None else {"similarity_scaling": scaling}
    start, cpu = time.perf_counter(), time.process_time()
    clf = REBELClassifier(weak_learner=learner, n_jobs=THREADS, **options).fit(X, y)
    seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
    return {"learner": learner, "N": n, "d": d, "scaling": clf.similarity_scaling_,
            "learners kept": int(clf.n_estimators_),
            "iterations": int(clf.fit_info_["n_iterations"]), "stop": clf.fit_info_["stop_reason"],
            "refit s": round(refit["seconds"], 2) if (refit := clf.fit_info_.get("refit")) else 0.0,
            "fit s": round(seconds, 2), "CPU s": round(cpu, 2), "under 30 s": seconds < 30}


def in_fresh_process(python_path, function, *args, omp_wait_policy=""):
    """function(*args) of this module in a new interpreter whose PYTHONPATH is python_path; omp_wait_policy:
    "" keeps this process's OMP_WAIT_POLICY, "default" unsets it (OpenMP's own default), else its value."""
    code = (f"import json, sys; sys.path.insert(0, {os.path.dirname(os.path.abspath(__file__))!r}); "
            f"import hybrid_speed, rebelboost; r = hybrid_speed.{function}(*{args!r}); "
            "r['module'] = rebelboost.__file__; print(json.dumps(r))")
    env = dict(os.environ, PYTHONPATH=python_path)
    if omp_wait_policy == "default":
        env.pop("OMP_WAIT_POLICY", None)
    elif omp_wait_policy:
        env["OMP_WAIT_POLICY"] = omp_wait_policy
    run = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    if run.returncode != 0:
        raise RuntimeError(f"{function}{args} under PYTHONPATH={python_path} failed:\n{run.stderr}")
    return json.loads(run.stdout.splitlines()[-1])


def side_by_side(baseline, function, *args):
    """One row: the baseline's fit, then this checkout's, with the ratios baseline / this."""
    base = in_fresh_process(baseline, function, *args)
    this = in_fresh_process(os.environ.get("PYTHONPATH", ""), function, *args)
    row = {k: v for k, v in this.items() if k in ("learner", "N", "d")}
    for key in [k for k in this if k not in ("learner", "N", "d", "module", "under 30 s")]:
        row[f"{key} (base)"], row[f"{key} (this)"] = base[key], this[key]
        if key in ("ms per learner", "CPU ms per learner", "fit s", "CPU s") and this[key]:
            row[f"{key} ratio"] = round(base[key] / this[key], 2)
    row["modules"] = f"{base['module']} | {this['module']}"
    return row


def compare(args, sizes):
    """Rows side by side; the report is rewritten after every row, so a long run keeps what it measured."""
    rows, defaults = [], []

    def report():
        lines = [f"Baseline (PYTHONPATH={args.baseline}) then this checkout, each fit in a fresh process, "
                 f"{args.learners} learners, {THREADS} threads, early stopping off; ratio = baseline / this:", ""]
        lines += harness.markdown_table(rows)
        if defaults:
            lines += ["", "Default fits on 5 000 x 30 (target: under 30 s):", ""] + harness.markdown_table(defaults)
        harness.record("hybrid_speed_compare", {"per_learner": rows, "default": defaults}, lines, threads=THREADS)
        return lines

    for learner in ("similarity", "hybrid"):
        for n, d in sizes:
            rows.append(side_by_side(args.baseline, "per_learner", learner, n, d, args.learners))
            report()
    for learner in args.defaults:
        defaults.append(side_by_side(args.baseline, "default_fit", learner, 5000, 30))
        report()
    print("\n".join(report()))


def default_runs(args):
    """--default-runs N: the default fits on 5 000 x 30, each learner x scaling x OpenMP wait policy N times, every
    fit in a fresh process, interleaved round by round so that a drift of the shared machine hits each alike."""
    rows = []

    def report():
        lines = [f"Default fits on 5 000 x 30, {THREADS} threads, each in a fresh process (target: under 30 s); "
                 "policy: OMP_WAIT_POLICY of the fit ('default': unset, OpenMP's spinning default); load: the "
                 "1-minute load average before the fit:", ""]
        lines += harness.markdown_table(rows)
        lines += ["", "Per learner, scaling and policy: the slowest fit and how many finished under 30 s:", ""]
        groups = {}
        for row in rows:
            groups.setdefault((row["learner"], row["asked"], row["policy"]), []).append(row["fit s"])
        lines += harness.markdown_table([{"learner": k[0], "similarity_scaling": k[1], "policy": k[2],
                                          "median fit s": sorted(v)[len(v) // 2], "slowest fit s": max(v),
                                          "under 30 s": f"{sum(t < 30 for t in v)} of {len(v)}"}
                                         for k, v in groups.items()])
        harness.record("hybrid_speed_default", {"default": rows}, lines, threads=THREADS)
        return lines

    for round_ in range(1, args.default_runs + 1):
        for learner in args.defaults:
            for scaling in args.scalings:
                for policy in args.policies:
                    load = round(os.getloadavg()[0], 2)
                    row = in_fresh_process(os.environ.get("PYTHONPATH", ""), "default_fit", learner, 5000, 30,
                                           None if scaling == "auto" else scaling, omp_wait_policy=policy)
                    row.pop("module")
                    rows.append({"round": round_, "asked": scaling, "policy": policy, "load": load, **row})
                    report()
    print("\n".join(report()))


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="fewer sizes and learners, no default fit")
    parser.add_argument("--learners", type=int, default=1000, help="learners per timed fit")
    parser.add_argument("--defaults", nargs="*", default=["similarity", "hybrid"], help="learners of the default fits")
    parser.add_argument("--baseline", help="PYTHONPATH of a build to time side by side with this one")
    parser.add_argument("--sizes", nargs="*", help="N,d pairs instead of the standard ones (e.g. 5000,30)")
    parser.add_argument("--default-runs", type=int, default=0,
                        help="only the default fits, this many rounds, in fresh processes (hybrid_speed_default)")
    parser.add_argument("--scalings", nargs="+", default=["auto"], help="similarity_scaling of --default-runs")
    parser.add_argument("--policies", nargs="+", default=["default", "passive"],
                        help="OMP_WAIT_POLICY of --default-runs ('default': unset)")
    args = parser.parse_args()
    if args.default_runs:
        return default_runs(args)
    sizes = [(1000, 10), (2000, 10), (5000, 10), (1000, 30), (1000, 100)] if not args.quick else [(1000, 10), (2000, 10)]
    if args.sizes:
        sizes = [tuple(int(v) for v in pair.split(",")) for pair in args.sizes]
    if args.baseline:
        return compare(args, sizes)
    learners = args.learners if not args.quick else 200
    rows = [per_learner(learner, n, d, learners) for learner in ("similarity", "hybrid") for n, d in sizes]
    defaults = [default_fit(learner, 5000, 30) for learner in args.defaults] if not args.quick else []
    lines = [f"Seconds per learner, {learners} learners, {THREADS} threads, early stopping off:", ""]
    lines += harness.markdown_table(rows)
    if defaults:
        lines += ["", "Default fits on 5 000 x 30 (target: under 30 s):", ""] + harness.markdown_table(defaults)
    name = "hybrid_speed_quick" if args.quick else "hybrid_speed"
    harness.record(name, {"per_learner": rows, "default": defaults}, lines, threads=THREADS)
    print("\n".join(lines))


if __name__ == "__main__":
    main()
