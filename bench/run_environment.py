"""Shared by bench scripts: where a benchmark ran (versions, commit, threads, CPU, load) and writing the report."""

from __future__ import annotations

import os
import platform
import subprocess
import sys


def environment_line(threads=None):
    import numpy
    import pyarrow

    import rebelboost

    folder = os.path.dirname(os.path.abspath(__file__))
    try:
        commit = subprocess.run(["git", "-C", folder, "rev-parse", "--short", "HEAD"], capture_output=True,
                                text=True, timeout=10).stdout.strip() or "unknown"
        dirty = subprocess.run(["git", "-C", folder, "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, timeout=10).stdout.strip()
    except OSError:
        commit, dirty = "unknown", ""
    load = " ".join(f"{v:.2f}" for v in os.getloadavg())
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return (f"rebelboost {rebelboost.__version__} (commit {commit}{' + local changes' if dirty else ''}), "
            f"Python {platform.python_version()}, numpy {numpy.__version__}, pyarrow {pyarrow.__version__}; "
            f"{platform.machine()}, {cores} usable cores, threads {threads if threads else 'default (all cores)'}, "
            f"OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS', 'unset')}; load average 1/5/15 min {load}; "
            f"{sys.platform}")


def publish(lines, out):
    """Print the Markdown report and write it to `out` (when given)."""
    text = "\n".join(lines) + "\n"
    print(text)
    if out:
        with open(out, "w") as handle:
            handle.write(text)
