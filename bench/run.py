"""Reruns the benchmark suite: every regression benchmark of bench/ and bench/peers/ (research experiments live
in bench/experiments/ and are run one by one, see bench/README.md).

    python bench/run.py --quick            # small sizes (6 min on a loaded 2-core VM); results in build/bench-quick/
    python bench/run.py --full             # the recorded runs: results in bench/results/ (hours)
    python bench/run.py --full --only predict_batch,demo_under_load
    python bench/run.py --list             # the suite and each benchmark's commands

Each benchmark runs as its own process (`python bench/...`, from the repository root). The suite's record,
<out>/suite_<mode>.json and .md, holds for every benchmark its command (no machine-specific path), exit
status, wall time and the environment before it ran (bench/harness.py: versions, commit, CPU, threads,
OpenMP settings, load). `--quick` writes every benchmark's own report under build/bench-quick/ too, never
over the recorded results.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time

import harness

# name: (script, quick arguments, full arguments); "{out}" is the results folder of the run.
SUITE = {
    "demo_under_load": ("bench/peers/demo_under_load.py", ["--repeats", "1", "--out", "{out}/demo_under_load.md"],
                        ["--out", "{out}/demo_under_load.md"]),
    "adaboost_peers": ("bench/peers/compare_adaboost.py",
                       ["--quick", "--lgb-rounds", "50", "--out", "{out}/adaboost_peers.md"],
                       ["--out", "{out}/adaboost_peers.md"]),
    "predict_peers": ("bench/peers/compare_predict.py", [], []),
    "predict_batch": ("bench/peers/predict_batch.py", ["--repeats", "1"], []),
    "early_stop": ("bench/peers/early_stop.py", ["--repeats", "1"], []),
    "contrib_speed": ("bench/peers/contrib_speed.py",
                      ["--rows", "5000", "--trees", "50", "--repeats", "1", "--out", "{out}"], []),
    "quickboost_panel": ("bench/peers/quickboost_panel.py", ["--iters", "50", "--rebel-iters", "20", "--repeats", "1"], []),
    "scaling": ("bench/peers/scaling.py",
                ["--repeats", "1", "--tasks", "synthetic", "--trees", "5", "--threads", "1,2", "--out", "{out}/scaling.md"],
                ["--out", "{out}/scaling.md"]),
    "stage_profile": ("bench/peers/stage_profile.py",
                      ["--repeats", "1", "--tasks", "synthetic", "--iterations", "5", "--out", "{out}/stage_profile.md"],
                      ["--out", "{out}/stage_profile.md"]),
    "calibration": ("bench/peers/calibration.py", ["--out", "{out}/calibration.md"], ["--out", "{out}/calibration.md"]),
    "similarity_speed": ("bench/peers/similarity_speed.py", ["--iterations", "2", "--out", "{out}/similarity_speed"],
                         ["--out", "{out}/similarity_speed"]),
    "similarity_cache_speed": ("bench/peers/similarity_cache_speed.py",
                               ["--fmnist-iterations", "2", "--out", "{out}/similarity_cache_speed"],
                               ["--out", "{out}/similarity_cache_speed"]),
    "json_export_memory": ("bench/json_export_memory.py", ["--n-stumps", "20000", "--out", "{out}/json_export_memory.md"],
                           ["--out", "{out}/json_export_memory.md"]),
    "regressor": ("bench/regressor.py", ["--quick", "--out", "{out}"], ["--out", "{out}"]),
    "cli_wide_csv": ("bench/cli_wide_csv.py", ["--columns", "2000", "--repeat", "1", "--out", "{out}/cli_wide_csv.md"],
                     ["--out", "{out}/cli_wide_csv.md"]),
}
# Quick runs: 7 to 121 s each, 6.3 min in all, measured at load 4-7 on the shared 2-core VM.
QUICK = ["demo_under_load", "adaboost_peers", "predict_batch", "quickboost_panel", "scaling", "json_export_memory",
         "cli_wide_csv"]


def commands(mode: str, out: str, names: list[str]) -> list[tuple[str, list[str]]]:
    out_rel = os.path.relpath(out, harness.REPO)
    result = []
    for name in names:
        script, quick, full = SUITE[name]
        args = [a.replace("{out}", out_rel) for a in (quick if mode == "quick" else full)]
        result.append((name, [sys.executable, script, *args]))
    return result


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--quick", action="store_true", help="small sizes; results in build/bench-quick/")
    mode.add_argument("--full", action="store_true", help="the recorded sizes; results in bench/results/")
    mode.add_argument("--list", action="store_true", help="print the suite's commands and exit")
    parser.add_argument("--only", default=None, help="comma-separated benchmark names (see --list)")
    parser.add_argument("--out", default=None, help="results folder (default: see --quick / --full)")
    args = parser.parse_args(argv)
    kind = "quick" if args.quick else "full"
    out = args.out or (os.path.join(harness.REPO, "build", "bench-quick") if args.quick else harness.RESULTS)
    names = args.only.split(",") if args.only else (QUICK if args.quick else list(SUITE))
    unknown = [n for n in names if n not in SUITE]
    if unknown:
        parser.error(f"unknown benchmark(s) {', '.join(unknown)}; --list shows the suite")
    if args.list:
        for name in SUITE:
            for label, which in (("quick", "quick"), ("full ", "full")):
                if which == "quick" and name not in QUICK:
                    continue
                (_, cmd), = commands(which, os.path.join(harness.REPO, "build", "bench-quick") if which == "quick"
                                     else harness.RESULTS, [name])
                print(f"{name:24s} {label} {harness.command_line(cmd)}")
        return 0
    os.makedirs(out, exist_ok=True)
    env = dict(os.environ)
    if args.quick:
        env["REBELBOOST_BENCH_RESULTS"] = out  # scripts without --out (bench/peers/compare_rebel.write) write here
    rows, records = [], []
    for name, cmd in commands(kind, out, names):
        before = harness.environment(argv=cmd)
        print(f"== {name}: {before['command']}", flush=True)
        start = time.perf_counter()
        rc = subprocess.run(cmd, cwd=harness.REPO, env=env).returncode
        seconds = time.perf_counter() - start
        load_after = [round(v, 2) for v in os.getloadavg()]
        records.append({"name": name, "returncode": rc, "seconds": round(seconds, 1), "load_average_after": load_after,
                        "environment": before})
        rows.append({"benchmark": name, "exit": rc, "seconds": round(seconds, 1),
                     "load before / after": f"{before['load_average'][0]:.2f} / {load_after[0]:.2f}",
                     "command": f"`{before['command']}`"})
    lines = [f"# Benchmark suite ({kind})", "", f"`python bench/run.py --{kind}`: each benchmark's report is in "
             f"{os.path.relpath(out, harness.REPO)}/ under its name.", ""] + harness.markdown_table(rows)
    harness.record(f"suite_{kind}", records, lines, out_dir=out)
    failed = [r["name"] for r in records if r["returncode"] != 0]
    print(f"suite {kind}: {len(records) - len(failed)} of {len(records)} benchmarks ran"
          + (f"; failed: {', '.join(failed)}" if failed else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
