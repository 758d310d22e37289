"""Every snippet of README.md runs as written: each ```python block in a fresh interpreter, each ```bash
block not marked for CI (`<!-- ci: NAME -->`, which .ci/run runs itself) in bash, in an empty folder."""

import os
import re
import subprocess
import sys

import pytest

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
with open(os.path.join(REPO, "README.md"), encoding="utf-8") as _handle:
    README = _handle.read()

# (language, code, CI marker or None), in order
BLOCKS = [(m.group(2), m.group(3), m.group(1))
          for m in re.finditer(r"(?:<!-- ci: ([\w-]+) -->\s*)?```(\w+)\n(.*?)```", README, re.S)]
# The Dask example starts a LocalCluster: tests/python/test_dask.py runs it (test_the_readme_example_runs_as_written).
PYTHON = [code for lang, code, _ in BLOCKS if lang == "python" and "LocalCluster" not in code]
BASH = [code for lang, code, marker in BLOCKS if lang == "bash" and marker is None]


def test_every_block_is_run_somewhere():
    languages = {lang for lang, _, _ in BLOCKS}
    assert languages <= {"python", "bash"}, languages  # a C++ fragment would run nowhere
    markers = {marker for _, _, marker in BLOCKS if marker}
    with open(os.path.join(REPO, ".ci", "run"), encoding="utf-8") as handle:
        ci = handle.read()
    for marker in markers:
        assert f"readme_block {marker})" in ci, f"README block {marker} is marked for CI but .ci/run never runs it"
    assert len(PYTHON) >= 5 and BASH


@pytest.mark.slow
@pytest.mark.parametrize("code", PYTHON, ids=[f"python{i}" for i in range(len(PYTHON))])
def test_python_snippet_runs(code, tmp_path):
    done = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=300,
                          env=dict(os.environ, MPLBACKEND="agg"))
    assert done.returncode == 0, code + "\n" + done.stderr[-3000:]


@pytest.mark.slow
@pytest.mark.parametrize("code", BASH, ids=[f"bash{i}" for i in range(len(BASH))])
def test_bash_snippet_runs(code, tmp_path):
    # `python` and `rebelboost` are this interpreter's (a venv's bin, or where pip put the scripts)
    scripts = os.path.dirname(sys.executable)
    env = dict(os.environ, PATH=scripts + os.pathsep + os.environ.get("PATH", ""))
    done = subprocess.run(["bash", "-euo", "pipefail", "-c", code], cwd=tmp_path, capture_output=True, text=True,
                          timeout=300, env=env)
    assert done.returncode == 0, code + "\n" + done.stdout[-2000:] + done.stderr[-3000:]
