"""The benchmark harness: what every result records about where it ran, and how it is written.

- ``environment(threads)``: library versions, commit (and whether the tree had local changes), CPU model,
  usable cores, threads, the OpenMP settings, the load average, the date and the command, as a dict;
- ``environment_line(threads)``: the same as one line for a Markdown report;
- ``command_line(argv)``: the command that reran this, with no machine-specific path (scripts relative to
  the repository, the interpreter as ``python``, other absolute paths as their base name);
- ``record(name, results, lines, out_dir)``: writes ``<name>.json`` (``{"environment": ..., "results":
  ...}``) and ``<name>.md`` (the report lines, then the environment and the command);
- ``markdown_table(rows)``: a list of dicts as a Markdown table.

``bench/run.py`` reruns the suite (``--quick`` or ``--full``) through this module.
"""

from __future__ import annotations

import datetime
import json
import os
import platform
import shlex
import subprocess
import sys
from importlib import metadata

BENCH = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(BENCH)
RESULTS = os.path.join(BENCH, "results")
PACKAGES = ["rebelboost", "numpy", "scikit-learn", "pandas", "pyarrow", "lightgbm", "xgboost", "dask", "distributed"]
OPENMP_VARIABLES = ["OMP_NUM_THREADS", "OMP_WAIT_POLICY", "OMP_PROC_BIND", "OMP_DYNAMIC", "GOMP_SPINCOUNT",
                    "REBELBOOST_WORK_PER_THREAD", "REBELBOOST_KERNELS"]


def _git(*args: str) -> str:
    try:
        return subprocess.run(["git", "-C", REPO, *args], capture_output=True, text=True, timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return ""


def versions() -> dict:
    """Installed versions of the libraries a benchmark may use (None: not installed)."""
    out = {"python": platform.python_version()}
    for name in PACKAGES:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = None
    if out["rebelboost"] is None:  # imported from a checkout (no installed metadata): the module says
        try:
            import rebelboost

            out["rebelboost"] = rebelboost.__version__
        except ImportError:
            pass
    return out


def cpu_model() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as handle:
            for line in handle:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def usable_cores() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


def command_line(argv: list[str] | None = None, env_prefix: dict | None = None) -> str:
    """The command as one could rerun it from the repository root on another machine."""
    argv = list(sys.argv if argv is None else argv)
    parts = []
    for i, arg in enumerate(argv):
        if os.path.isabs(arg) or (i == 0 and os.path.exists(arg)):
            path = os.path.abspath(arg)
            if path == os.path.abspath(sys.executable):
                parts.append("python")
                continue
            inside = os.path.commonpath([path, REPO]) == REPO
            parts.append(os.path.relpath(path, REPO) if inside else os.path.basename(path))
        else:
            parts.append(arg)
    if parts and parts[0].endswith(".py"):
        parts.insert(0, "python")
    prefix = [f"{k}={shlex.quote(str(v))}" for k, v in (env_prefix or {}).items()]
    return " ".join(prefix + [shlex.quote(p) for p in parts])


def rebelboost_source() -> str:
    """Which rebelboost a benchmark measures (without a path): this checkout's, an installed wheel's or
    another checkout's (an editable install elsewhere: its commit is not the one recorded)."""
    import importlib.util

    spec = importlib.util.find_spec("rebelboost")
    if spec is None or not spec.origin:
        return "not installed"
    origin = os.path.realpath(spec.origin)
    if os.path.commonpath([origin, REPO]) == REPO:
        return "this checkout"
    if "site-packages" in origin or "dist-packages" in origin:
        return "an installed package"
    return "another checkout"


def environment(threads=None, argv: list[str] | None = None) -> dict:
    """Where and how a result was measured."""
    commit = _git("rev-parse", "--short", "HEAD") or "unknown"
    # Results files do not count: a benchmark that rewrites its own results during the run is still clean.
    dirty = bool(_git("status", "--porcelain", "--untracked-files=no", "--", ".", ":(exclude)bench/results"))
    return {
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "commit": commit,
        "local_changes": dirty,
        "rebelboost_from": rebelboost_source(),
        "versions": versions(),
        "cpu": cpu_model(),
        "machine": platform.machine(),
        "system": platform.system(),
        "usable_cores": usable_cores(),
        "threads": threads if threads else "default (all usable cores)",
        "openmp": {name: os.environ.get(name) for name in OPENMP_VARIABLES},
        "load_average": [round(v, 2) for v in os.getloadavg()] if hasattr(os, "getloadavg") else None,
        "command": command_line(argv),
    }


def environment_line(threads=None, env: dict | None = None) -> str:
    env = env or environment(threads)
    v = env["versions"]
    libraries = ", ".join(f"{k} {v[k]}" for k in PACKAGES if v.get(k) and k != "rebelboost")
    openmp = ", ".join(f"{k}={val}" for k, val in env["openmp"].items() if val is not None) or "no OMP_* set"
    load = " ".join(f"{x:.2f}" for x in env["load_average"]) if env["load_average"] else "unknown"
    return (f"rebelboost {v['rebelboost']} ({env['rebelboost_from']}; commit {env['commit']}"
            f"{' + local changes' if env['local_changes'] else ''}), "
            f"Python {v['python']}, {libraries}; {env['cpu']}, {env['usable_cores']} usable cores, threads "
            f"{env['threads']}, {openmp}; load average 1/5/15 min {load}; {env['date']}")


def _cell(value) -> str:
    if isinstance(value, float):
        return f"{value:.4g}"
    return " ".join(str(value).split()).replace("|", "\\|")


def markdown_table(rows: list[dict]) -> list[str]:
    columns: list[str] = []
    for row in rows:
        columns += [k for k in row if k not in columns]
    if not columns:
        return []
    lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    lines += ["| " + " | ".join(_cell(row.get(c, "")) for c in columns) + " |" for row in rows]
    return lines


def _plain(value):
    if hasattr(value, "tolist"):
        return value.tolist()
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


def record(name: str, results, lines: list[str], out_dir: str = RESULTS, threads=None, env: dict | None = None) -> dict:
    """Write <out_dir>/<name>.json and .md: the results with the environment they were measured in."""
    env = env or environment(threads)
    if "load_average_after" not in env:  # a report rewritten from saved results keeps the run's own
        env["load_average_after"] = [round(v, 2) for v in os.getloadavg()] if hasattr(os, "getloadavg") else None
    os.makedirs(out_dir, exist_ok=True)
    with open(os.path.join(out_dir, name + ".json"), "w", encoding="utf-8") as handle:
        json.dump({"environment": env, "results": _plain(results)}, handle, indent=1)
        handle.write("\n")
    text = "\n".join(list(lines) + ["", f"Environment: {environment_line(env=env)}; load after "
                                    f"{' '.join(f'{x:.2f}' for x in env['load_average_after'] or [])}.",
                                    "", f"Command: `{env['command']}`"]) + "\n"
    with open(os.path.join(out_dir, name + ".md"), "w", encoding="utf-8") as handle:
        handle.write(text)
    return env
