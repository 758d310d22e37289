"""Determinism, concurrency and memory, measured (the figures issue 12 opened with).

    python bench/robustness.py [determinism] [concurrency] [memory] [killed_saves] [concurrent_saves]
                               [--out bench/results/robustness.md]

determinism  every loss x subsampling heuristic (none, weight_trim, subsample, feature_fraction, all three,
             the Gini criterion, sample weights; REBEL also with Localized Similarities) x depth 1 and 3, each
             fitted with n_jobs 1, 2, 4 and quick False, True, "auto": the 9 models of a configuration must be
             the same bytes.
concurrency  8 threads predict (predict_proba and predict) with a fitted model, comparing each result with
             the one computed alone, while the main thread fits another model, whose bytes are compared
             with the same fit done alone.
memory       peak resident memory added by fitting 1 000 000 x 50 float32 (AdaBoost, 100 stumps) and by
             LightGBM (100 trees, default leaves), each in a fresh process with 2 threads; the data is
             made first and the kernel's peak counter reset (/proc/self/clear_refs) before the fit.
killed_saves a process saving a large model in a loop is SIGKILLed at random instants 50 times: temporary
             files seen after each kill, model files that no longer load, and what the next save leaves.
concurrent_saves  two processes save two different models to the same path in a loop for 20 s while this
             one loads that path again and again: every load must give one of the two models, byte for byte.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import textwrap
import threading
import time

import numpy as np

from rebelboost import AdaBoostClassifier, REBELClassifier, VEBBoostClassifier

HEURISTICS = {"none": {}, "weight_trim": {"weight_trim": 0.9}, "subsample": {"subsample": 0.7},
              "feature_fraction": {"feature_fraction": 0.6},
              "all three": {"weight_trim": 0.9, "subsample": 0.7, "feature_fraction": 0.6},
              "gini": {"criterion": "gini"}, "sample weights": {}, "similarity": {"weak_learner": "similarity"}}
BINARY_ONLY, REBEL_ONLY = {"gini"}, {"similarity"}


def data(seed, n=3000, d=20, classes=2):
    rng = np.random.RandomState(seed)
    X = rng.normal(size=(n, d)).astype(np.float32)
    X[rng.rand(n, d) < 0.05] = np.nan
    scores = np.nan_to_num(X[:, :classes]) + 0.8 * rng.normal(size=(n, classes))
    y = np.argmax(scores, axis=1) if classes > 2 else (scores[:, 0] + scores[:, 1] > 0).astype(int)
    return X, y, rng.exponential(size=n)


def determinism():
    configs = mismatched = fits = 0
    for cls, classes in ((AdaBoostClassifier, 2), (VEBBoostClassifier, 2), (REBELClassifier, 4)):
        for name, extra in HEURISTICS.items():
            if (name in BINARY_ONLY and cls is REBELClassifier) or (name in REBEL_ONLY and cls is not REBELClassifier):
                continue
            for depth in (1, 3):
                X, y, w = data(configs, classes=classes)
                if name == "similarity":  # similarities compare whole rows: no NaN, fewer rows
                    X, y = np.nan_to_num(X[:600]), y[:600]
                weights = w if name == "sample weights" else None
                models = set()
                for n_jobs in (1, 2, 4):
                    for quick in (False, True, "auto"):
                        clf = cls(n_estimators=30, max_depth=depth, n_jobs=n_jobs, quick=quick, random_state=3, **extra)
                        models.add(clf.fit(X, y, sample_weight=weights)._model.to_bytes())
                        fits += 1
                configs += 1
                mismatched += len(models) > 1
    return {"configurations": configs, "fits": fits, "configurations with differing models": mismatched}


def concurrency(n_threads=8, seconds_floor=2.0):
    X, y, _ = data(100, n=20000, d=30)
    model = REBELClassifier(n_estimators=100, max_depth=3).fit(X, np.argmax(np.nan_to_num(X[:, :4]), axis=1))
    reference = model.predict_proba(X), model.predict(X)
    Xb, yb, _ = data(101, n=60000, d=40)
    alone = AdaBoostClassifier(n_estimators=60, max_depth=3).fit(Xb, yb)._model.to_bytes()
    stop = threading.Event()
    counts = {"predictions": 0, "mismatches": 0}
    lock = threading.Lock()

    def predictor():
        while not stop.is_set():
            ok = np.array_equal(model.predict_proba(X), reference[0]) and np.array_equal(model.predict(X), reference[1])
            with lock:
                counts["predictions"] += 1
                counts["mismatches"] += not ok

    threads = [threading.Thread(target=predictor) for _ in range(n_threads)]
    for t in threads:
        t.start()
    start = time.perf_counter()
    fits = same = 0
    while fits == 0 or time.perf_counter() - start < seconds_floor:
        same += AdaBoostClassifier(n_estimators=60, max_depth=3).fit(Xb, yb)._model.to_bytes() == alone
        fits += 1
    stop.set()
    for t in threads:
        t.join()
    return {"predicting threads": n_threads, "predictions (20 000 rows each)": counts["predictions"],
            "prediction mismatches": counts["mismatches"], "fits meanwhile": fits, "fits differing from the fit alone": fits - same}


MEMORY = textwrap.dedent("""
    import json, sys
    import numpy as np
    def status(key):
        with open("/proc/self/status") as f:
            return next(int(l.split()[1]) for l in f if l.startswith(key)) / 1024
    rng = np.random.RandomState(0)
    X = np.empty((1_000_000, 50), dtype=np.float32)
    for i in range(0, len(X), 100_000):
        X[i:i + 100_000] = rng.normal(size=(100_000, 50))
    y = (X[:, 0] + X[:, 1] * X[:, 2] + rng.normal(size=len(X)) > 0).astype(np.int32)
    if sys.argv[1] == "rebelboost":
        from rebelboost import AdaBoostClassifier
        clf = AdaBoostClassifier(n_estimators=100, n_jobs=2)
    else:
        from lightgbm import LGBMClassifier
        clf = LGBMClassifier(n_estimators=100, n_jobs=2, verbose=-1)
    before = status("VmRSS:")
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")  # reset VmHWM to the current resident size
    clf.fit(X, y)
    print(json.dumps({"data MiB": X.nbytes / 2**20, "before MiB": before, "peak added MiB": status("VmHWM:") - before}))
""")


def memory():
    out = {}
    for library in ("rebelboost", "lightgbm"):
        proc = subprocess.run([sys.executable, "-c", MEMORY, library], capture_output=True, text=True, check=True)
        out[library] = json.loads(proc.stdout.strip().splitlines()[-1])
    return out


KILLED_WRITER = textwrap.dedent("""
    import importlib.util, sys
    spec = importlib.util.spec_from_file_location("rebelboost._core", sys.argv[1])
    core = importlib.util.module_from_spec(spec)  # the core alone: no scikit-learn to import
    spec.loader.exec_module(core)
    model = core.Model.load(sys.argv[2])
    print("ready", flush=True)
    while True:
        model.save(sys.argv[3])
""")


def killed_saves(n_kills=50):
    """A process saving a ~16 MB model in a loop, SIGKILLed at random instants n_kills times."""
    import signal
    import tempfile

    from rebelboost import _core

    rng = np.random.RandomState(0)
    X, y, _ = data(7, n=20000, d=30)
    clf = AdaBoostClassifier(n_estimators=1000, max_depth=8, learning_rate=0.1).fit(X, y)
    with tempfile.TemporaryDirectory(prefix="rb-killed-") as folder:
        source, target = os.path.join(folder, "source.rbm"), os.path.join(folder, "out", "model.rbm")
        os.mkdir(os.path.dirname(target))
        clf.save(source)
        left = unreadable = 0
        left_bytes = 0
        for _ in range(n_kills):
            proc = subprocess.Popen([sys.executable, "-c", KILLED_WRITER, _core.__file__, source, target],
                                    stdout=subprocess.PIPE, text=True)
            proc.stdout.readline()
            time.sleep(rng.uniform(0.0, 0.3))
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait()
            proc.stdout.close()
            others = [f for f in os.listdir(os.path.dirname(target)) if f != "model.rbm"]
            left += len(others)
            left_bytes += sum(os.path.getsize(os.path.join(os.path.dirname(target), f)) for f in others)
            if os.path.exists(target):
                try:
                    _core.Model.load(target)
                except ValueError:
                    unreadable += 1
        clf.save(target)
        after = len(os.listdir(os.path.dirname(target))) - 1
        size = os.path.getsize(source) / 2**20
    return {"model file MiB": round(size, 1), "saves killed (SIGKILL)": n_kills,
            "temporary files present right after a kill (summed over kills)": f"{left} ({left_bytes / 2**20:.0f} MiB)",
            "unreadable model files after a kill": unreadable, "temporary files left after the next save": after}


CONCURRENT_WRITER = textwrap.dedent("""
    import importlib.util, sys, time
    spec = importlib.util.spec_from_file_location("rebelboost._core", sys.argv[1])
    core = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(core)
    model = core.Model.load(sys.argv[2])
    deadline, saves = time.monotonic() + float(sys.argv[4]), 0
    while time.monotonic() < deadline:
        model.save(sys.argv[3])
        saves += 1
    print(saves)
""")


def concurrent_saves(seconds=20.0):
    """Two writers save different models to one path while the reader loads it; every load is one of them."""
    import tempfile

    from rebelboost import _core

    X, y, _ = data(11, n=5000, d=20)
    models = [AdaBoostClassifier(n_estimators=n, max_depth=6).fit(X, y) for n in (200, 300)]
    with tempfile.TemporaryDirectory(prefix="rb-concurrent-") as folder:
        target = os.path.join(folder, "out", "model.rbm")
        os.mkdir(os.path.dirname(target))
        sources = [os.path.join(folder, f"source{i}.rbm") for i in range(2)]
        for clf, source in zip(models, sources):
            clf.save(source)
        expected = {_core.Model.load(source).to_bytes() for source in sources}
        models[0].save(target)
        writers = [subprocess.Popen([sys.executable, "-c", CONCURRENT_WRITER, _core.__file__, source, target,
                                     str(seconds)], stdout=subprocess.PIPE, text=True) for source in sources]
        loads = unreadable = other = 0
        while any(w.poll() is None for w in writers):
            try:
                other += _core.Model.load(target).to_bytes() not in expected
            except ValueError:
                unreadable += 1
            loads += 1
        saves = sum(int(w.communicate()[0]) for w in writers)
        left = len(os.listdir(os.path.dirname(target))) - 1
        sizes = " and ".join(f"{os.path.getsize(source) / 2**20:.1f}" for source in sources)
    return {"model files MiB (200 and 300 depth-6 trees)": sizes,
            "saves (2 processes, same path)": saves, "loads meanwhile": loads, "unreadable loads": unreadable,
            "loads that were neither model": other, "temporary files left": left}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("parts", nargs="*",
                        default=["determinism", "concurrency", "memory", "killed_saves", "concurrent_saves"])
    parser.add_argument("--out", default=None)
    args = parser.parse_args()
    load_before = os.getloadavg()
    results = {part: globals()[part]() for part in args.parts}
    load_after = os.getloadavg()
    lines = [f"# Robustness figures\n\nCommand: `python bench/robustness.py {' '.join(args.parts)}` "
             "(2-core shared VM; OMP_WAIT_POLICY as the environment sets it; load average 1/5/15 min "
             f"{' '.join(f'{v:.2f}' for v in load_before)} before, {' '.join(f'{v:.2f}' for v in load_after)} after).\n"]
    for part, figures in results.items():
        lines.append(f"\n## {part}\n\n| measure | value |\n|---|---|")
        for key, value in figures.items():
            if isinstance(value, dict):
                value = ", ".join(f"{k} {v:.0f}" for k, v in value.items())
            lines.append(f"| {key} | {value} |")
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out:
        with open(args.out, "w") as handle:
            handle.write(text)


if __name__ == "__main__":
    main()
