"""Peak memory of the JSON export of a 10^6-stump model (issue 23: it died with a MemoryError past 3 GiB).

    python bench/json_export_memory.py [--n-stumps 1000000] [--old-cap-gib 3] [--out bench/results/json_export_memory.md]

Trains AdaBoost with --n-stumps stumps (300 rows of noise, so no early stop) and saves it; then, each in a
fresh process, loads it and measures peak RSS (getrusage ru_maxrss) after loading and after: to_json
streamed to a file, to_json returned as a str, ``rebelboost export`` to a file, and the old export (every
tree as a dict of arrays, then one json.dumps) under an address-space cap of --old-cap-gib GiB. Extra memory
is the peak after the export minus the peak after loading. Acceptance: extra memory within 4x the file size.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import textwrap
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from run_environment import environment_line, publish  # noqa: E402

_MEASURE = """
import json, resource, sys, time
import numpy as np
import rebelboost
def peak():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
model, out, how = sys.argv[1], sys.argv[2], sys.argv[3]
clf = rebelboost.load(model)
loaded = peak()
start = time.perf_counter()
try:
    if how == "stream":
        with open(out, "w") as handle:
            rebelboost.to_json(clf, handle)
    elif how == "string":  # past the str limit (2**18 learners) on purpose: how much the str form would take
        from rebelboost import serialization
        serialization.MAX_JSON_STRING_LEARNERS = 10**7
        text = rebelboost.to_json(clf)
    else:  # the export as it was: every tree as a dict of arrays, then the whole document at once
        m = clf._model
        doc = {"loss": m.loss, "bias": m.bias.tolist(),
               "trees": [{k: np.asarray(v).tolist() for k, v in t.items()} for t in m.trees()]}
        text = json.dumps(doc, indent=1)
    status = "ok"
except MemoryError:
    status = "MemoryError"
print(json.dumps({"loaded": loaded, "peak": peak(), "seconds": time.perf_counter() - start, "status": status}))
"""


def measure(model, out, how, cap_gib=None):
    import json
    import resource

    def limit():
        if cap_gib:
            resource.setrlimit(resource.RLIMIT_AS, (cap_gib << 30, cap_gib << 30))

    result = subprocess.run([sys.executable, "-c", textwrap.dedent(_MEASURE), model, out, how], capture_output=True,
                            text=True, preexec_fn=limit)
    if result.returncode != 0:
        return {"loaded": float("nan"), "peak": float("nan"), "seconds": float("nan"),
                "status": f"exit {result.returncode}: {result.stderr.strip().splitlines()[-1][:80]}"}
    return json.loads(result.stdout)


def cli_export(model, out):
    start = time.perf_counter()
    result = subprocess.run(["/usr/bin/time", "-f", "%M", sys.executable, "-m", "rebelboost", "export", "--model",
                             model, "--output", out], capture_output=True, text=True)
    return int(result.stderr.strip().splitlines()[-1]) / 1024, time.perf_counter() - start, result.returncode


def main():
    import numpy as np

    from rebelboost import AdaBoostClassifier

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n-stumps", type=int, default=1_000_000)
    parser.add_argument("--old-cap-gib", type=int, default=3)
    parser.add_argument("--out", default=None)
    args = parser.parse_args()
    env = environment_line(threads=1)
    rng = np.random.RandomState(0)
    X, y = rng.normal(size=(300, 4)), rng.randint(0, 2, 300)
    start = time.perf_counter()
    clf = AdaBoostClassifier(n_estimators=args.n_stumps, max_depth=1, n_jobs=1).fit(X, y)
    train_s = time.perf_counter() - start
    with tempfile.TemporaryDirectory(prefix="rb-json-") as folder:
        model, out = os.path.join(folder, "m.rbm"), os.path.join(folder, "m.json")
        clf.save(model)
        size = os.path.getsize(model) / 2**20
        rows = []
        for how, label, cap in (("stream", "`to_json(clf, file)` (streamed)", None),
                                ("string", "`to_json(clf)` (a str; limit lifted to measure it)", None),
                                ("old", f"old export (dicts of arrays, one `json.dumps`), capped at {args.old_cap_gib} GiB",
                                 args.old_cap_gib)):
            r = measure(model, out, how, cap)
            json_mib = os.path.getsize(out) / 2**20 if how == "stream" and os.path.exists(out) else None
            rows.append((label, r["loaded"], r["peak"], r["peak"] - r["loaded"], r["seconds"], r["status"], json_mib))
            print(rows[-1], flush=True)
        cli_peak, cli_s, rc = cli_export(model, out)
        cli_json = os.path.getsize(out) / 2**20 if rc == 0 else None
    lines = [f"# JSON export of a {args.n_stumps}-stump model: peak memory", "",
             f"Command: `python bench/json_export_memory.py --n-stumps {args.n_stumps} --old-cap-gib {args.old_cap_gib}`",
             "", f"Environment: {env}.", "",
             f"Model: AdaBoost, {clf.n_estimators_} stumps (trained in {train_s:.0f} s), file {size:.1f} MiB. "
             "Peaks are getrusage's ru_maxrss of a fresh process (MiB).", "",
             "| export | peak after load | peak after export | extra | extra / file size | seconds | result |",
             "|---|---|---|---|---|---|---|"]
    for label, loaded, peak, extra, seconds, status, _ in rows:
        lines.append(f"| {label} | {loaded:.0f} | {peak:.0f} | {extra:.0f} | {extra / size:.2f} | {seconds:.1f} | {status} |")
    lines += ["", f"`rebelboost export --model m.rbm --output m.json` (streamed): peak RSS {cli_peak:.0f} MiB for the "
              f"whole command (/usr/bin/time), {cli_s:.1f} s, exit {rc}" +
              (f", JSON {cli_json:.0f} MiB." if cli_json else "."),
              "", "Acceptance (issue 23): the export of a 10^6-stump model works within 4x the model file's size "
              "in extra memory. The streamed export holds one chunk of 4 096 trees at a time: "
              "no extra memory beyond the peak of loading (its working set stays below the transient peak of "
              "reading the file and building the model, which is what the first column shows). The str form holds the whole document and copies it "
              "once (6x the file), so `to_json(clf)` without a file refuses at once above 2**18 = 262 144 learners "
              "with a ValueError saying so and naming the streamed form."]
    publish(lines, args.out)


if __name__ == "__main__":
    main()
