"""Shared by bench scripts: where a benchmark ran and writing the report (kept for the scripts that import it;
bench/harness.py is the harness)."""

from __future__ import annotations

from harness import environment_line as _environment_line


def environment_line(threads=None):
    return _environment_line(threads)


def publish(lines, out):
    """Print the Markdown report and write it to `out` (when given)."""
    text = "\n".join(lines) + "\n"
    print(text)
    if out:
        with open(out, "w") as handle:
            handle.write(text)
