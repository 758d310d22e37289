"""bench/harness.py records where a benchmark ran, and writes commands another machine can rerun;
bench/run.py knows every benchmark it runs."""

import json
import os
import subprocess
import sys

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(REPO, "bench"))
import harness  # noqa: E402

sys.path.pop(0)


def test_recorded_commands_carry_no_machine_specific_path():
    argv = [os.path.join(REPO, "bench", "peers", "scaling.py"), "--out", os.path.join(REPO, "bench", "results", "s.md"),
            "--cache", "/var/tmp/some-cache", "--repeats", "3"]
    assert harness.command_line(argv) == "python bench/peers/scaling.py --out bench/results/s.md --cache some-cache --repeats 3"
    assert harness.command_line([sys.executable, "bench/run.py", "--quick"]) == "python bench/run.py --quick"


def test_every_result_records_versions_commit_cpu_threads_openmp_and_load(tmp_path, monkeypatch):
    monkeypatch.setenv("OMP_WAIT_POLICY", "passive")
    env = harness.record("example", [{"rows": 10, "seconds": 0.5}], ["# Example", ""], out_dir=str(tmp_path), threads=2)
    with open(tmp_path / "example.json", encoding="utf-8") as handle:
        stored = json.load(handle)
    assert stored["results"] == [{"rows": 10, "seconds": 0.5}]
    recorded = stored["environment"]
    for key in ("date", "commit", "local_changes", "rebelboost_from", "versions", "cpu", "usable_cores", "threads",
                "openmp", "load_average", "load_average_after", "command"):
        assert key in recorded, key
    assert recorded["threads"] == 2 and recorded["openmp"]["OMP_WAIT_POLICY"] == "passive"
    assert {"rebelboost", "numpy", "scikit-learn", "python"} <= set(recorded["versions"])
    report = (tmp_path / "example.md").read_text()
    assert report.startswith("# Example") and "Environment: rebelboost" in report and "OMP_WAIT_POLICY=passive" in report
    assert env["commit"] == recorded["commit"]


def test_the_suite_lists_existing_scripts():
    sys.path.insert(0, os.path.join(REPO, "bench"))
    try:
        import run
    finally:
        sys.path.pop(0)
    for name, (script, _, _) in run.SUITE.items():
        assert os.path.isfile(os.path.join(REPO, script)), (name, script)
        assert not script.startswith("bench/experiments/"), "experiments are not regression benchmarks"
    assert set(run.QUICK) <= set(run.SUITE)
    listed = subprocess.run([sys.executable, os.path.join(REPO, "bench", "run.py"), "--list"], capture_output=True,
                            text=True, timeout=60)
    assert listed.returncode == 0, listed.stderr
    assert all(name in listed.stdout for name in run.SUITE)
    assert REPO not in listed.stdout
