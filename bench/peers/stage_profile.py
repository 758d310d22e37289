"""Where a fit's time goes at 1 and 2 threads: the stages that do not speed up (the serial fraction).

Fits, through fit_info_'s stage timers (``_core.train``'s stage_seconds, the same numbers): (a) the
2 000 000 x 50 float32 binary task of scaling.py, 50 depth-3 trees (the AdaBoost loss, as
AdaBoostClassifier), and (b) Fashion-MNIST 10 classes, 60 depth-2 REBEL iterations; at 1 and 2 threads,
with default OpenMP settings and with OMP_WAIT_POLICY=passive (--policies). Per stage:

* wall seconds at 1 and 2 threads and the speed-up (what users see; on a shared machine it mixes the
  code's parallelism with the other jobs' share of the cores);
* the serial CPU seconds at 2 threads, from the stage's CPU clocks under OMP_WAIT_POLICY=passive (waiting
  threads then use no CPU): the training thread's CPU minus the other thread's, 2 x thread - process.
  CPU time only counts while a thread runs, so this measure holds whatever else the machine runs.

Then the serial fraction f (serial CPU over all CPU of the fit) and Amdahl's bound 1 / (f + (1 - f) / p)
at 2 and 16 threads. Each fit runs in its own process (data cached as .npy under --cache), threads,
policies and builds interleaved, the median of --repeats kept. --build NAME=DIR (repeatable) runs the fits
with DIR first on PYTHONPATH (a copy of another build's installed package), side by side: the before /
after table of a change:

    python bench/peers/stage_profile.py [--repeats 3] [--tasks synthetic,fmnist]
        [--policies default,passive] [--build before=../rebelboost-before --build after=] [--out bench/results/stage_profile.md]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
RESULTS = os.path.join(HERE, "..", "results")
TASKS = {  # name: (title, loss, depth, iterations)
    "synthetic": ("2 M x 50 float32, binary, {} depth-3 trees (AdaBoost)", "adaboost", 3, 50),
    "fmnist": ("Fashion-MNIST 60 000 x 784, 10 classes, {} depth-2 REBEL iterations", "rebel", 2, 60),
}


def cache_data(task, cache):
    """X and y of the task as .npy files in `cache` (made once)."""
    paths = [os.path.join(cache, f"{task}_{a}.npy") for a in ("X", "y")]
    if all(os.path.exists(p) for p in paths):
        return paths
    sys.path.insert(0, HERE)
    if task == "synthetic":
        from scaling import synthetic

        X, y, _, _ = synthetic()  # the test rows are drawn too, so the labels are scaling.py's
    else:
        from datasets import fashion_mnist

        X, y, _, _ = fashion_mnist()
    os.makedirs(cache, exist_ok=True)
    np.save(paths[0], np.ascontiguousarray(X, dtype=np.float32))
    np.save(paths[1], np.asarray(y, dtype=np.int32))
    return paths


def worker(task, threads, cache, iterations=None):
    """One fit in this process; prints {"wall": s, "stages": {clock: {stage: s}}, "rebelboost": path} as JSON."""
    import rebelboost
    from rebelboost import _core

    X_path, y_path = cache_data(task, cache)
    X, y = np.load(X_path), np.load(y_path)
    _, loss, depth, default_iterations = TASKS[task]
    iterations = iterations or default_iterations
    start = time.perf_counter()
    stages = _core.train(X, y, None, int(y.max()) + 1, loss, iterations, depth, 256, 1.0, threads)[5]
    wall = time.perf_counter() - start
    print(json.dumps({"wall": wall, "stages": stages, "rebelboost": os.path.dirname(rebelboost.__file__)}))


def run_fit(task, threads, policy, build_dir, cache, iterations):
    env = dict(os.environ)
    env.pop("OMP_WAIT_POLICY", None)
    if policy != "default":
        env["OMP_WAIT_POLICY"] = policy
    if build_dir:
        env["PYTHONPATH"] = build_dir + os.pathsep + env.get("PYTHONPATH", "")
    command = [sys.executable, os.path.abspath(__file__), "--worker", task, str(threads), "--cache", cache]
    out = subprocess.run(command + (["--iterations", str(iterations)] if iterations else []),
                         env=env, check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def median_fit(fits):
    return {"wall": statistics.median(f["wall"] for f in fits),
            "stages": {c: {s: statistics.median(f["stages"][c][s] for f in fits) for s in fits[0]["stages"][c]}
                       for c in fits[0]["stages"]},
            "rebelboost": fits[0]["rebelboost"]}


def amdahl(f, threads):
    return 1.0 / (f + (1.0 - f) / threads)


def serial_cpu(fit):
    """Per stage: CPU seconds the training thread spent alone, 2 x thread - process (2 threads, passive)."""
    t, p = fit["stages"]["thread_cpu"], fit["stages"]["process_cpu"]
    return {s: max(0.0, 2 * t[s] - p[s]) for s in t}


def build_section(name, res, policies):
    """Per-stage table and serial fraction of one build: res[(threads, policy)] -> median fit."""
    lines = [f"### {name}", "", "| stage | " + " | ".join(
        f"{pol}: 1 thread (s) | {pol}: 2 threads (s) | {pol}: speed-up" for pol in policies)
        + (" | passive, 2 threads: serial CPU (s) | its share of the stage's CPU |" if "passive" in policies else " |"),
        "|---|" + "---|" * (3 * len(policies) + (2 if "passive" in policies else 0))]
    first = res[(1, policies[0])]["stages"]["wall"]
    serial = serial_cpu(res[(2, "passive")]) if "passive" in policies else None
    for s in first:
        walls = [(res[(1, pol)]["stages"]["wall"][s], res[(2, pol)]["stages"]["wall"][s]) for pol in policies]
        if all(a < 5e-4 and b < 5e-4 for a, b in walls):
            continue
        cells = [f"{a:.3f} | {b:.3f} | " + (f"{a / b:.2f}x" if b > 0 else "-") for a, b in walls]
        if serial is not None:
            cpu = res[(2, "passive")]["stages"]["process_cpu"][s]
            cells.append(f"{serial[s]:.3f} | " + (f"{100 * serial[s] / cpu:.0f} %" if cpu > 0 else "-"))
        lines.append(f"| {s} | " + " | ".join(cells) + " |")
    lines.append("")
    for pol in policies:
        one, two = res[(1, pol)], res[(2, pol)]
        lines.append(f"- {pol}: fit wall time (Python) {one['wall']:.2f} s at 1 thread, {two['wall']:.2f} s at 2 "
                     f"threads ({one['wall'] / two['wall']:.2f}x).")
    if serial is not None:
        two = res[(2, "passive")]
        total_cpu = sum(two["stages"]["process_cpu"].values())
        f = sum(serial.values()) / total_cpu
        top = sorted(serial.items(), key=lambda kv: -kv[1])[:3]
        lines.append(f"- Serial fraction (passive, 2 threads, CPU clocks): {sum(serial.values()):.2f} of {total_cpu:.2f} "
                     f"CPU seconds, f = {100 * f:.1f} % (largest: " + ", ".join(f"{s} {v:.3f} s" for s, v in top)
                     + f"). Amdahl: at most {amdahl(f, 2):.2f}x at 2 threads, {amdahl(f, 16):.2f}x at 16; measured at "
                     f"2 threads (passive, wall): {res[(1, 'passive')]['wall'] / two['wall']:.2f}x.")
    lines.append("")
    return lines


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--worker", nargs=2, metavar=("TASK", "THREADS"), help=argparse.SUPPRESS)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--tasks", default="synthetic,fmnist")
    parser.add_argument("--policies", default="default,passive", help="OMP_WAIT_POLICY values ('default': unset)")
    parser.add_argument("--build", action="append", default=[], help="NAME=DIR (DIR empty: the installed rebelboost)")
    parser.add_argument("--cache", default="/tmp/rebelboost_stage_profile")
    parser.add_argument("--iterations", type=int, default=None, help="trees / iterations (a quick check; default: the task's)")
    parser.add_argument("--out", default=os.path.join(RESULTS, "stage_profile.md"))
    args = parser.parse_args(argv)
    if args.worker:
        return worker(args.worker[0], int(args.worker[1]), args.cache, args.iterations)
    builds = dict(b.split("=", 1) for b in args.build) or {"": ""}
    policies = args.policies.split(",")
    loads = [os.getloadavg()]
    results = {}
    for task in args.tasks.split(","):
        cache_data(task, args.cache)
        fits = {(b, t, pol): [] for b in builds for t in (1, 2) for pol in policies}
        for _ in range(args.repeats):
            for t in (1, 2):
                for pol in policies:
                    for b, path in builds.items():  # interleaved: a change of load hits every configuration alike
                        fits[(b, t, pol)].append(run_fit(task, t, pol, path, args.cache, args.iterations))
                        print(task, b or "installed", t, "threads", pol, round(fits[(b, t, pol)][-1]["wall"], 3), "s",
                              flush=True)
            loads.append(os.getloadavg())
        results[task] = {k: median_fit(v) for k, v in fits.items()}
    write(results, list(builds), policies, loads, args)


def write(results, builds, policies, loads, args):
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    from harness import command_line

    command = command_line()
    lines = [f"# Where the fit's time goes at 1 and 2 threads ({time.strftime('%Y-%m-%d')})", "",
             f"Command: `{command}`", "",
             "Load averages (1, 5, 15 min) before the run and after each repeat of each task: "
             + "; ".join("/".join(f"{x:.2f}" for x in la) for la in loads), "",
             f"Machine: {platform.processor() or platform.machine()}, {os.cpu_count()} logical CPUs, shared with other "
             f"jobs. OpenMP wait policies: {', '.join(policies)} ('default': OMP_WAIT_POLICY unset, what users get). "
             f"Each fit in its own process, configurations interleaved, medians of {args.repeats} repeats. Stages: "
             "fit_info_[\"stage_seconds\"] and [\"stage_cpu_seconds\"] (README \"Where a fit spends its time\"); "
             "stages below 0.5 ms in every column are left out.", ""]
    for task, res in results.items():
        lines += [f"## {TASKS[task][0].format(args.iterations or TASKS[task][3])}", ""]
        for b in builds:
            name = f"build `{b}`" if b else "this build"
            lines += build_section(name, {(t, pol): res[(b, t, pol)] for t in (1, 2) for pol in policies}, policies)
        if len(builds) == 2:
            a, b = builds
            lines += [f"### `{a}` -> `{b}`, side by side (wall seconds)", "",
                      "| threads | policy | stage | " + f"{a} | {b} | ratio |", "|---|---|---|---|---|---|"]
            for t in (1, 2):
                for pol in policies:
                    x, y = res[(a, t, pol)], res[(b, t, pol)]
                    for s, v in x["stages"]["wall"].items():
                        if v >= 0.01 * sum(x["stages"]["wall"].values()):
                            lines.append(f"| {t} | {pol} | {s} | {v:.3f} | {y['stages']['wall'][s]:.3f} | "
                                         f"{v / max(y['stages']['wall'][s], 1e-12):.2f}x |")
                    lines.append(f"| {t} | {pol} | whole fit | {x['wall']:.2f} | {y['wall']:.2f} | {x['wall'] / y['wall']:.2f}x |")
            lines.append("")
    with open(args.out, "w") as handle:
        handle.write("\n".join(lines) + "\n")
    with open(os.path.splitext(args.out)[0] + ".json", "w") as handle:
        json.dump({task: {"|".join(map(str, k)): v for k, v in res.items()} for task, res in results.items()}, handle,
                  indent=1)
    print("\n".join(lines))


if __name__ == "__main__":
    main()
