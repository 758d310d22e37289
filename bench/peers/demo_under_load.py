"""`rebelboost demo` fit time while CPU-bound processes keep every core busy: default OpenMP settings vs
OMP_WAIT_POLICY=passive.

The script starts one busy-looping process per core, runs the demo as a fresh process (the OpenMP runtime
reads OMP_WAIT_POLICY when it loads) alternately with the default environment and with
OMP_WAIT_POLICY=passive, --repeats times each, then stops the load. It reports the median fit time of
each and their ratio, and the same without load for reference. Users run default settings; passive is
the reference for "no thread penalty".

    python bench/peers/demo_under_load.py [--repeats 15] [--out bench/results/demo_under_load.md]
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import platform
import re
import statistics
import subprocess
import sys
import time

RESULTS = os.path.join(os.path.dirname(__file__), "..", "results")


def busy():
    while True:
        pass


def demo_fit_ms(passive, extra):
    env = {k: v for k, v in os.environ.items() if k not in ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT")}
    if passive:
        env["OMP_WAIT_POLICY"] = "passive"
    out = subprocess.run([sys.executable, "-m", "rebelboost", "demo", *extra], env=env, capture_output=True, text=True,
                         check=True).stdout
    return float(re.search(r"fit ([0-9.]+) ms", out).group(1))


def measure(repeats, extra):
    default, passive = [], []
    for _ in range(repeats):  # interleaved, so a change in the machine's state hits both alike
        default.append(demo_fit_ms(False, extra))
        passive.append(demo_fit_ms(True, extra))
    return default, passive


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--demo-args", default="", help="extra arguments for `rebelboost demo`")
    parser.add_argument("--out", default=os.path.join(RESULTS, "demo_under_load.md"))
    args = parser.parse_args(argv)
    extra = args.demo_args.split()
    cores = os.cpu_count() or 1

    load_before = os.getloadavg()[0]
    idle_default, idle_passive = measure(args.repeats, extra)
    load = [multiprocessing.Process(target=busy, daemon=True) for _ in range(cores)]
    for p in load:
        p.start()
    try:
        time.sleep(1.0)
        busy_default, busy_passive = measure(args.repeats, extra)
        load_busy = os.getloadavg()[0]
    finally:
        for p in load:
            p.terminate()
        for p in load:
            p.join()

    med = statistics.median
    rows = [("no load", idle_default, idle_passive), (f"{cores} busy processes", busy_default, busy_passive)]
    lines = [f"# `rebelboost demo` under CPU load ({time.strftime('%Y-%m-%d')})", "",
             f"Command: `python bench/peers/demo_under_load.py --repeats {args.repeats}"
             + (f" --demo-args '{args.demo_args}'" if args.demo_args else "") + "`", "",
             f"Machine: {platform.processor() or platform.machine()}, {cores} logical CPUs. The demo's fit "
             "(breast cancer, 200 stumps, n_jobs=None: every core) in a fresh process; default OpenMP settings vs "
             "OMP_WAIT_POLICY=passive, interleaved; the load is one busy-looping process per core, started and "
             "stopped by the script. Medians (min-max) of the fit time in ms. Load average (1 min, uptime) before: "
             f"{load_before:.2f}; at the end of the loaded rounds: {load_busy:.2f} (other jobs on the machine included).", "",
             "| machine state | default | OMP_WAIT_POLICY=passive | default / passive |", "|---|---|---|---|"]
    for name, d, p in rows:
        lines.append(f"| {name} | {med(d):.1f} ({min(d):.1f}-{max(d):.1f}) | {med(p):.1f} ({min(p):.1f}-{max(p):.1f}) | "
                     f"{med(d) / med(p):.2f} |")
    with open(args.out, "w") as handle:
        handle.write("\n".join(lines) + "\n")
    with open(os.path.splitext(args.out)[0] + ".json", "w") as handle:
        json.dump({name: {"default_ms": d, "passive_ms": p} for name, d, p in rows}, handle, indent=1)
    print("\n".join(lines))


if __name__ == "__main__":
    main()
