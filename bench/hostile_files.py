"""Stress test of the model loader: thousands of hostile model files with valid checksums, each loaded and
used to predict in a worker process under a memory cap and a time limit.

    python bench/hostile_files.py [--n 2000] [--seed 0] [--memory-gib 2] [--timeout 10] [--out FILE]

The files are built from real models of every kind (AdaBoost, VEB-Boost, REBEL with 3 and 2 classes, REBEL
with Localized Similarities, per-feature and global scaling) by rewriting what a file controls: counts
(features, outputs, trees, nodes, anchors, learners, metadata), indices (children, features, anchors,
learner kinds), depths (chains up to 255 levels, 40 000 depth-12 chains, full depth-8 trees), numbers
(NaN, inf, huge or subnormal thresholds, steps, bias, gains, means, scales, anchors, tau; anchors 1e-160
apart), relabelled metadata (estimator, classes, feature counts and names, costs) and huge parameters
(n_jobs, n_estimators, learning_rate, weak_learner, ...) and soft cascade sections (checkpoint counts and
intervals, NaN/inf/negative thresholds), one to three changes per file. Each file is written with a correct
header and checksum (tests/python/model_bytes.py).

A worker process under an address-space cap (RLIMIT_AS) loads the files one at a time with rebelboost.load
and calls predict (also with early exit and the cascade when there is one), predict_proba,
decision_function, staged_decision_function and feature_importances_ (tree models) on 300 rows (NaN
included for tree models; similarity models refuse NaN), predict from a DataFrame with the model's feature
names when it has them, and to_json to a stream (models of up to 10 000 learners). The parent gives each
file `--timeout` seconds and starts a new worker after a crash or a hang. Counted: files that load and predict with finite
outputs, files rejected with a ModelFileError (grouped by message), and failures: crashes (the worker
dies), hangs (past the time limit), non-finite outputs, any other exception. Exit status 1 if there is any
failure. Writes a Markdown table to --out when given.

--structured (issue 23, round 2): the mutations are structure-aware instead (STRUCTURED: any metadata JSON
value, repeated keys, feature names, cascade layout, plus relabel/huge_parameter/cascade), and paths
(FIFOs, sockets, devices, directories, NUL bytes) and hostile CSV shapes are given to load, save and the CLI.
"""

from __future__ import annotations

import argparse
import collections
import copy
import json
import os
import re
import resource
import select
import stat
import subprocess
import sys
import tempfile
import textwrap
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "python"))
from model_bytes import NODE, Tree, chain, parse  # noqa: E402


# ---- the base models ------------------------------------------------------------------------------------
def base_files(folder):
    from rebelboost import AdaBoostClassifier, REBELClassifier, VEBBoostClassifier

    rng = np.random.RandomState(0)
    X = rng.normal(size=(400, 4))
    X[rng.rand(*X.shape) < 0.05] = np.nan
    binary = np.where(np.nan_to_num(X[:, 0]) + 0.7 * rng.normal(size=400) > 0, "yes", "no")
    multi = np.argmax(np.nan_to_num(X[:, :3]) + 0.7 * rng.normal(size=(400, 3)), axis=1)
    models = {"adaboost": AdaBoostClassifier(n_estimators=8, max_depth=3).fit(X, binary),
              "veb": VEBBoostClassifier(n_estimators=8, max_depth=2).fit(X, binary),
              "rebel": REBELClassifier(n_estimators=8, max_depth=3, cost_matrix={(0, 1): 2.0}).fit(X, multi),
              "rebel-2": REBELClassifier(n_estimators=8, max_depth=2).fit(X, binary),
              "similarity": REBELClassifier(n_estimators=8, weak_learner="similarity").fit(np.nan_to_num(X), multi),
              "similarity-2": REBELClassifier(n_estimators=6, weak_learner="similarity",
                                              similarity_scaling="global").fit(np.nan_to_num(X), binary)}
    out = {}
    for kind, clf in models.items():
        path = os.path.join(folder, f"base-{kind}.rbm")
        clf.save(path)
        with open(path, "rb") as handle:
            out[kind] = handle.read()
    return out


# ---- mutations: each takes (parts, rng) and changes one thing a file controls -----------------------------
HUGE_INTS = [0, 1, 2, 3, 255, 256, 511, 512, 4096, 4097, 2**16, 2**24, 2**24 + 1, 2**31 - 1, 2**31, 2**32 - 1]
ODD_FLOATS = [np.nan, np.inf, -np.inf, 1e308, -1e308, 1e300, 1e200, 5e-324, -0.0, 0.0, 2.0, 1e-300]


def _tree(parts, rng):
    return parts.trees[rng.randint(len(parts.trees))] if parts.trees else None


def count_features(parts, rng):
    parts.n_features = int(rng.choice(HUGE_INTS))


def count_outputs(parts, rng):
    k = int(rng.choice([0, 1, 2, 3, 5, 4096, 4097, 2**16, 2**32 - 1]))
    parts.n_outputs = k
    if rng.rand() < 0.5 and k <= 4096:  # sizes consistent with the count: only the meaning is wrong
        parts.bias = np.resize(parts.bias, k)
        for tree in parts.trees:
            tree.step = np.resize(tree.step, k)
        if parts.similarities is not None:
            steps = parts.similarities.steps
            parts.similarities.steps = np.resize(steps, (len(steps), k))


def count_trees(parts, rng):
    if parts.similarities is not None:
        return similarity_counts(parts, rng)
    parts.declared_trees = int(rng.choice([0, len(parts.trees) + 1, max(0, len(parts.trees) - 1), 2**32, 2**63]))


def count_nodes(parts, rng):
    tree = _tree(parts, rng)
    if tree is not None:
        tree.declared_nodes = int(rng.choice([0, 1, len(tree.nodes) + 1, 512, 2**31, 2**32 - 1]))


def many_one_leaf_trees(parts, rng):
    if parts.similarities is not None:
        return similarity_numbers(parts, rng)
    leaf = Tree(np.zeros(len(parts.bias)), np.zeros(1, NODE))
    leaf.nodes[0] = (-1, 0, 1, 0, 0, 0, 0.0, 0.0)
    parts.trees = [leaf] * int(rng.choice([1000, 100_000, 1_000_001]))


def child_index(parts, rng):
    tree = _tree(parts, rng)
    splits = np.flatnonzero(tree.nodes["feature"] >= 0) if tree is not None else []
    if len(splits):
        i = int(rng.choice(splits))
        field = "left" if rng.rand() < 0.5 else "right"
        tree.nodes[i][field] = int(rng.choice([0, i, i + 1, len(tree.nodes), 2**31, 2**32 - 1]))


def feature_index(parts, rng):
    tree = _tree(parts, rng)
    if tree is not None:
        i = rng.randint(len(tree.nodes))
        tree.nodes[i]["feature"] = int(rng.choice([-2, -1, parts.n_features, 2**31 - 1, -(2**31), 0]))


def leaf_value(parts, rng):
    tree = _tree(parts, rng)
    if tree is not None:
        tree.nodes[rng.randint(len(tree.nodes))]["value"] = int(rng.choice([0, 2, -2, 127, -128]))


def node_bytes(parts, rng):
    tree = _tree(parts, rng)
    if tree is not None:
        field = str(rng.choice(["nan_left", "padding"]))
        tree.nodes[rng.randint(len(tree.nodes))][field] = int(rng.choice([2, 255]))


def deep_chain(parts, rng):
    if parts.similarities is not None:
        return similarity_numbers(parts, rng)
    depth = int(rng.choice([9, 12, 100, 255]))
    covers = bool(parts.trees) and parts.trees[0].cover is not None  # covers are on every tree or none
    parts.trees.append(_steps(chain(depth, max(1, min(parts.n_features, 4)), 0.01, covers), len(parts.bias)))


def many_deep_chains(parts, rng):
    if parts.similarities is not None:
        return similarity_numbers(parts, rng)
    n = int(rng.choice([2000, 40_000]))
    parts.trees = [_steps(chain(12, max(1, min(parts.n_features, 4)), 0.001 * (t % 7 - 3)), len(parts.bias))
                   for t in range(n)]


def full_trees(parts, rng):
    if parts.similarities is not None:
        return similarity_numbers(parts, rng)
    nodes = np.zeros(511, NODE)
    for i in range(255):
        nodes[i] = (i % max(1, min(parts.n_features, 4)), i % 2, 0, 0, 2 * i + 1, 2 * i + 2, rng.normal(), 0.01)
    nodes[255:] = [(-1, 0, 1 if i % 2 else -1, 0, 0, 0, 0.0, 0.0) for i in range(256)]
    cover = None
    if parts.trees and parts.trees[0].cover is not None:  # covers are on every tree or none: halving ones
        cover = 2.0 ** -np.floor(np.log2(np.arange(1, 512)))
    parts.trees += [_steps(Tree(np.array([0.01]), nodes, cover=cover), len(parts.bias))
                    for _ in range(int(rng.choice([1, 200])))]


def _steps(tree, k):
    """The tree with a step vector of k entries (k: the bias's length, which a count mutation does not change)."""
    tree.step = np.full(k, float(tree.step[0]))
    return tree


def odd_number(parts, rng):
    where = str(rng.choice(["threshold", "gain", "step", "bias", "all_steps"]))
    value = float(rng.choice(ODD_FLOATS))
    tree = _tree(parts, rng)
    if where in ("threshold", "gain") and tree is not None:
        tree.nodes[rng.randint(len(tree.nodes))][where] = value
    elif where == "step" and tree is not None and len(tree.step):
        tree.step[rng.randint(len(tree.step))] = value
    elif where == "bias" and len(parts.bias):
        parts.bias[rng.randint(len(parts.bias))] = value
    elif where == "all_steps":
        for step in parts.steps():
            step[:] = value


def header_fields(parts, rng):
    field = str(rng.choice(["loss", "learner", "version"]))
    setattr(parts, field, int(rng.choice([0, 1, 2, 3, 4, 2**32 - 1])))


def similarity_numbers(parts, rng):
    s = parts.similarities
    if s is None:
        return
    field = str(rng.choice(["feature_mean", "feature_scale", "anchors", "tau", "close_anchors"]))
    value = float(rng.choice(ODD_FLOATS + [-1.0, 1e-160, 1e154]))
    if field == "tau" and len(s.learners):
        s.learners[rng.randint(len(s.learners))]["tau"] = value
    elif field == "anchors" and s.anchors.size:
        s.anchors[rng.randint(len(s.anchors)), rng.randint(s.anchors.shape[1])] = value
    elif field == "close_anchors" and len(s.anchors) >= 2:  # two-point learners on nearly equal anchors
        s.anchors[:] = rng.choice([1e-160, 1e-300, 1e150]) * rng.rand(*s.anchors.shape)
    elif field in ("feature_mean", "feature_scale"):
        getattr(s, field)[rng.randint(len(getattr(s, field)))] = value


def similarity_indices(parts, rng):
    s = parts.similarities
    if s is None or not len(s.learners):
        return
    t = rng.randint(len(s.learners))
    field = str(rng.choice(["kind", "anchor_i", "anchor_j", "padding"]))
    s.learners[t][field] = int(rng.choice([0, 1, 2, 3, len(s.anchors), 2**32 - 1, s.learners[t]["anchor_i"]]))


def similarity_counts(parts, rng):
    s = parts.similarities
    if s is None:
        return
    field = str(rng.choice(["declared_anchors", "declared_learners", "many_learners"]))
    if field == "many_learners":  # 10^5 constant learners: a long staged prediction, bounded steps
        n = int(rng.choice([1000, 100_000]))
        s.learners = np.zeros(n, s.learners.dtype)
        s.steps = np.full((n, s.steps.shape[1]), 1e-3)
        s.anchors, s.anchor_rows = s.anchors[:0], s.anchor_rows[:0]
    else:
        setattr(s, field, int(rng.choice([0, 1, 2**32, 2**63])))


def cascade(parts, rng):
    """A soft cascade section with hostile checkpoints: counts, intervals, NaN/inf/negative thresholds."""
    classes = 2 if len(parts.bias) == 1 else max(len(parts.bias), 1)  # the real K, not a rewritten count
    n = int(rng.choice([0, 1, 3, 10**6 // classes]))
    parts.cascade_every = int(rng.choice([0, 1, 2, 2**32 - 1]))
    thresholds = rng.choice([0.0, 0.5, -0.5, 1e308, np.inf, -np.inf, np.nan, 5e-324], size=n * classes)
    parts.cascade_thresholds = thresholds if rng.rand() < 0.7 else np.abs(thresholds[: max(0, len(thresholds) - 1)])


def _meta(parts):
    try:
        meta = json.loads(parts.metadata)
    except (ValueError, RecursionError):  # an earlier mutation wrote bytes that are not JSON
        meta = None
    return meta if isinstance(meta, dict) else {}


def relabel(parts, rng):
    meta = _meta(parts)
    key = str(rng.choice(["estimator", "classes", "classes_dtype", "n_features_in", "feature_names_in",
                          "cost_matrix", "metadata"]))
    values = {
        "estimator": ["AdaBoostClassifier", "VEBBoostClassifier", "REBELClassifier", "Nope", None, 3],
        "classes": [[0, 1], [0, 1, 2], ["a", "b", "c", "d"], [0, 0], [], [[1], [2]], list(range(5000)), None],
        "classes_dtype": ["<i8", "<U1", "|b1", "<f8", "O", "|V8", "M8", 7],
        "n_features_in": [0, 3, 5, 2**24 + 1, 2**40, -1, "4", None],
        "feature_names_in": [["a"], ["a", "b", "c", "d"], [1, 2, 3, 4], "abcd", ["x"] * 10**5],
        "cost_matrix": [[[0, 1], [1, 0]], [[0, float("nan"), 1], [1, 0, 1], [1, 1, 0]], [[0, -1, 1], [1, 0, 1], [1, 1, 0]],
                        [[0, 1e308, 1], [1, 0, 1], [1, 1, 0]], "x", None],
    }
    if key == "metadata":
        parts.metadata = bytes(rng.choice([b"", b"\xff\xfe", b"[" * 100_000, b"{}", b"null", b'{"estimator": "AdaBoostClassifier"}']))
        return
    choices = values[key]
    meta[key] = copy.deepcopy(choices[rng.randint(len(choices))])
    parts.metadata = json.dumps(meta).encode()


def huge_parameter(parts, rng):
    meta = _meta(parts)
    if not isinstance(meta.get("params"), dict):  # missing, or rewritten to another type by meta_value
        meta["params"] = {}
    params = meta["params"]
    name, choices = [
        ("n_jobs", [10**6, 10**30, -(10**9), 0, 1000, "all", 2.5]),
        ("n_estimators", [10**9, 0, -1, 10**6 + 1, 1e30]),
        ("max_depth", [100, 0, 10**9]),
        ("learning_rate", [1e308, -1.0, 0.0, "fast", None]),
        ("n_bins", [10**9, 2, 257]),
        ("lam", [1e300, -1.0, 2.0]),
        ("random_state", [2**100, -1, "seed"]),
        ("verbose", [10**12, -1]),
        ("quick", ["sometimes", 2]),
        ("subsample", [0.0, 2.0, float("nan")]),
        ("cost_matrix", [[[0, 1], [1, 0]], "x", {"__pairs__": [[0, 1, 1e308]]}, {"__pairs__": "x"}]),
        ("weak_learner", ["tree", "similarity", "forest"]),
    ][rng.randint(12)]
    params[name] = copy.deepcopy(choices[rng.randint(len(choices))])
    parts.metadata = json.dumps(meta).encode()


MUTATIONS = [count_features, count_outputs, count_trees, count_nodes, many_one_leaf_trees, child_index,
             feature_index, leaf_value, node_bytes, deep_chain, many_deep_chains, full_trees, odd_number,
             header_fields, relabel, huge_parameter, similarity_numbers, similarity_indices, similarity_counts, cascade]
RARE = {many_one_leaf_trees: 0.05, many_deep_chains: 0.05, full_trees: 0.5, similarity_counts: 0.5}  # big files


# ---- round 2 (issue 23): structure-aware mutations of the metadata JSON, feature names and cascade -------
HOSTILE_JSON = [None, True, -1, 0, 2**63, -(2**63) - 1, 1e308, float("nan"), float("-inf"), "", "x" * 100_000,
                "\ud800", "a\0b", [], {}, [[[]]], [None] * 1000, {"__pairs__": [[0, 1, 2]]}, {"__pairs__": [[[], 1, 2]]},
                {"__items__": [[0, 1]]}, {"__items__": "x"}, {"__items__": [[[0], 1]]}]
RAW_JSON = ["9" * 5000, "-" + "9" * 4301, "1e999999", "[" * 5000 + "]" * 5000, "NaN", "-Infinity", '"\\ud800"',
            "0." + "0" * 10_000 + "1", '"' + "\\u0000" * 1000 + '"']


def _json_paths(value, path=()):
    yield path
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _json_paths(item, path + (key,))
    elif isinstance(value, list):
        for i, item in enumerate(value[:20]):
            yield from _json_paths(item, path + (i,))


def meta_value(parts, rng):
    """Any value of the metadata JSON (nested parameters, cost rows, classes, names) removed, replaced by a
    value of another type, or by text no Python value serializes to (a 5 000-digit integer, 5 000 nested
    lists, NaN literals, lone surrogates)."""
    meta = _meta(parts)
    paths = list(_json_paths(meta))[1:]
    if not paths:
        return
    path = paths[rng.randint(len(paths))]
    parent = meta
    for key in path[:-1]:
        parent = parent[key]
    action = rng.randint(3)
    if action == 0 and isinstance(parent, dict):
        del parent[path[-1]]
    elif action == 1:
        parent[path[-1]] = "@@raw@@"
        raw = RAW_JSON[rng.randint(len(RAW_JSON))]
        parts.metadata = json.dumps(meta).replace('"@@raw@@"', raw, 1).encode()
        return
    else:
        parent[path[-1]] = copy.deepcopy(HOSTILE_JSON[rng.randint(len(HOSTILE_JSON))])
    parts.metadata = json.dumps(meta).encode()


def meta_duplicate_key(parts, rng):
    """A key written twice in the JSON text (the parser keeps the last): the first copy hostile or the second."""
    text = parts.metadata.decode("utf-8", "replace")
    meta = _meta(parts)
    if not text.startswith("{") or not meta:
        return
    key = sorted(meta)[rng.randint(len(meta))]
    value = json.dumps(HOSTILE_JSON[rng.randint(len(HOSTILE_JSON))])
    if rng.rand() < 0.5:
        parts.metadata = ("{" + json.dumps(key) + ": " + value + ", " + text[1:]).encode()
    else:
        parts.metadata = (text[:-1] + ", " + json.dumps(key) + ": " + value + "}").encode()


def feature_names(parts, rng):
    """feature_names_in rewritten: repeated, empty, NUL or lone-surrogate names, 100 000-character names,
    numbers, too many or too few, reversed (a valid permutation)."""
    meta = _meta(parts)
    n = parts.n_features if 0 < parts.n_features <= 4096 else 4
    base = [f"f{i}" for i in range(n)]
    options = [base[:-1] + base[:1], [""] * n, ["a\0b"] + base[1:], ["x" * 100_000] + base[1:],
               ["\ud800"] + base[1:], base + ["extra"], base[:-1], list(range(n)), base[::-1], [base[0]] * n]
    meta["feature_names_in"] = options[rng.randint(len(options))]
    parts.metadata = json.dumps(meta).encode()


def cascade_structure(parts, rng):
    """Cascade sections hostile in layout, not only in numbers: checkpoints past the last learner, an interval
    longer than the model, thresholds that do not fill the last checkpoint (bytes left over), decreasing or
    increasing thresholds, one checkpoint per learner."""
    classes = 2 if len(parts.bias) == 1 else max(len(parts.bias), 1)
    T = len(parts.similarities.learners) if parts.similarities is not None else len(parts.trees)
    every = int(rng.choice([1, max(1, T // 3), T, T + 1, 2**31]))
    n = int(rng.choice([max(1, T // every), max(1, T // every) + 1, 2 * T + 1, 1]))
    thresholds = np.sort(rng.normal(scale=rng.choice([1e-300, 1.0, 1e300]), size=n * classes))
    if rng.rand() < 0.5:
        thresholds = thresholds[::-1].copy()
    if rng.rand() < 0.2:
        thresholds = thresholds[:-1]
    parts.cascade_every, parts.cascade_thresholds = every, thresholds


STRUCTURED = [meta_value, meta_duplicate_key, feature_names, cascade_structure, relabel, huge_parameter, cascade]


def hostile_files(bases, n, seed, folder, mutations=MUTATIONS):
    """Writes n hostile files; yields (path, kind, mutation names)."""
    rng = np.random.RandomState(seed)
    weights = np.array([RARE.get(m, 1.0) for m in mutations])
    weights /= weights.sum()
    kinds = sorted(bases)
    for i in range(n):
        kind = kinds[i % len(kinds)]
        parts = parse(bases[kind])
        chosen = [mutations[j] for j in rng.choice(len(mutations), size=rng.randint(1, 4), p=weights)]
        for mutation in chosen:
            mutation(parts, rng)
        path = os.path.join(folder, f"hostile-{i:05d}.rbm")
        with open(path, "wb") as handle:
            handle.write(parts.file())
        yield path, kind, [m.__name__ for m in chosen]


# ---- the worker: loads and predicts, one file per request ---------------------------------------------------
WORKER = textwrap.dedent("""
    import io, json, sys, time, warnings
    import numpy as np
    import pandas as pd
    import rebelboost
    warnings.simplefilter("ignore")
    rng = np.random.RandomState(1)
    print("ready", flush=True)
    for line in sys.stdin:
        path = line.strip()
        start = time.perf_counter()
        try:
            clf = rebelboost.load(path)
        except rebelboost.ModelFileError as exc:
            print(json.dumps({"status": "rejected", "message": str(exc)[:300]}), flush=True)
            continue
        except Exception as exc:
            print(json.dumps({"status": "error", "message": f"load: {type(exc).__name__}: {exc}"[:300]}), flush=True)
            continue
        try:
            X = rng.normal(size=(300, clf.n_features_in_))
            if getattr(clf, "weak_learner", "tree") == "tree":  # similarity models refuse NaN (documented)
                X[rng.rand(*X.shape) < 0.1] = np.nan
            outputs = [clf.predict_proba(X), clf.decision_function(X)]
            if hasattr(clf, "feature_importances_"):  # tree models only
                outputs.append(clf.feature_importances_)
            outputs += list(clf.staged_decision_function(X[:20]))
            labels = clf.predict(X)
            names = getattr(clf, "feature_names_in_", None)
            if names is not None:  # by name, as a DataFrame (repeated names used to break every such call)
                labels = np.concatenate([labels, clf.predict(pd.DataFrame(X, columns=list(names)))])
            if clf.n_estimators_ <= 10_000:
                rebelboost.to_json(clf, io.StringIO())
            if clf.cascade_ is not None:
                labels = np.concatenate([labels, clf.predict(X, cascade=True), clf.predict(X, early_exit=True)])
            finite = all(np.isfinite(o).all() for o in outputs) and len(labels) % len(X) == 0
            status = "ok" if finite else "nonfinite"
            print(json.dumps({"status": status, "message": "", "seconds": time.perf_counter() - start}), flush=True)
        except Exception as exc:
            print(json.dumps({"status": "error", "message": f"predict: {type(exc).__name__}: {exc}"[:300]}), flush=True)
""")


class Worker:
    def __init__(self, memory_bytes):
        def limit():
            resource.setrlimit(resource.RLIMIT_AS, (memory_bytes, memory_bytes))

        self.proc = subprocess.Popen([sys.executable, "-c", WORKER], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL, preexec_fn=limit)
        self.buffer = b""
        if self._line(120) != b"ready":
            raise RuntimeError("the worker did not start")

    def _line(self, timeout):
        """The next line the worker prints, or None if it died or said nothing for `timeout` seconds."""
        deadline = time.monotonic() + timeout
        fd = self.proc.stdout.fileno()
        while b"\n" not in self.buffer:
            remaining = deadline - time.monotonic()
            if remaining <= 0 or not select.select([fd], [], [], remaining)[0]:
                return None
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                return None
            self.buffer += chunk
        line, self.buffer = self.buffer.split(b"\n", 1)
        return line.strip()

    def ask(self, path, timeout):
        """The worker's answer for `path`, or {"status": "crash"/"hang"} (the worker is then gone)."""
        self.proc.stdin.write(path.encode() + b"\n")
        self.proc.stdin.flush()
        line = self._line(timeout)
        if line is not None:
            return json.loads(line)
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
            return {"status": "hang", "message": f"no answer within {timeout} s"}
        return {"status": "crash", "message": f"worker died with status {self.proc.returncode}"}

    def peak_rss_mib(self):
        try:
            with open(f"/proc/{self.proc.pid}/status") as handle:
                for line in handle:
                    if line.startswith("VmHWM:"):
                        return int(line.split()[1]) // 1024
        except OSError:
            pass
        return 0

    def close(self):
        if self.proc.poll() is None:
            self.proc.stdin.close()
            self.proc.wait()


def run(args):
    results = []
    peak = 0
    generate_s = run_s = 0.0
    with tempfile.TemporaryDirectory(prefix="rb-hostile-") as folder:
        bases = base_files(folder)
        worker = Worker(args.memory_gib << 30)
        files = hostile_files(bases, args.n, args.seed, folder, STRUCTURED if args.structured else MUTATIONS)
        while True:  # one file at a time: generated, loaded by the worker, deleted
            t0 = time.perf_counter()
            item = next(files, None)
            generate_s += time.perf_counter() - t0
            if item is None:
                break
            path, kind, mutations = item
            t0 = time.perf_counter()
            answer = worker.ask(path, args.timeout)
            answer.update(kind=kind, mutations=mutations, wall=time.perf_counter() - t0,
                          size=os.path.getsize(path), file=os.path.basename(path))
            run_s += answer["wall"]
            results.append(answer)
            peak = max(peak, worker.peak_rss_mib())
            if answer["status"] in ("crash", "hang"):
                worker = Worker(args.memory_gib << 30)
            os.unlink(path)
        worker.close()
        extra = {}
        if args.structured:
            extra["paths"] = path_cases(folder, os.path.join(folder, "base-adaboost.rbm"), args.timeout)
            extra["csv"] = csv_cases(folder, max(60.0, args.timeout))
    return results, generate_s, run_s, peak, extra


# ---- round 2: paths and data files the CLI and the loader are given ---------------------------------------
def _timed(command, timeout, code=None):
    """(returncode or "hang", seconds, stderr) of a command run with a time limit."""
    start = time.perf_counter()
    try:
        proc = subprocess.run(command if code is None else [sys.executable, "-c", code], capture_output=True,
                              text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return "hang", time.perf_counter() - start, ""
    return proc.returncode, time.perf_counter() - start, proc.stderr


def path_cases(folder, base_model, timeout):
    """FIFOs, NUL bytes, directories, devices and sockets given as model or data paths, to rebelboost.load,
    the core's Model.load, save and the CLI: each must fail with a clear error, at once. A save to a symbolic
    link replaces the link (atomic rename), so that case must succeed and leave the FIFO it named alone."""
    import socket

    fifo = os.path.join(folder, "fifo.rbm")
    os.mkfifo(fifo)
    link = os.path.join(folder, "link.rbm")
    sock_path = os.path.join(folder, "sock.rbm")
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(sock_path)
    data = os.path.join(folder, "paths.csv")
    with open(data, "w") as handle:
        handle.write("a,b,label\n" + "".join(f"{i % 7},{i % 3},{i % 2}\n" for i in range(50)))
    cases = []
    targets = {"FIFO": fifo, "symlink to a FIFO": link, "socket": sock_path, "directory": folder, "char device": "/dev/zero",
               "NUL byte (file exists before it)": base_model + "\0junk", "NUL byte (first)": "\0" + base_model}
    for name, target in targets.items():
        for api, call in (("rebelboost.load", "rebelboost.load(p)"), ("_core.Model.load", "rebelboost._core.Model.load(p)"),
                          ("save", "rebelboost.load(m).save(p)")):
            if api == "save" and name == "char device":
                continue
            if os.path.lexists(link):  # a fresh link for every case: a save replaces it
                os.unlink(link)
            os.symlink(fifo, link)
            code = (f"import rebelboost\np, m = {target!r}, {base_model!r}\ntry:\n    {call}\n"
                    "except (OSError, ValueError) as exc:\n    print(type(exc).__name__, exc)\n    raise SystemExit(9)\n")
            rc, seconds, err = _timed(None, timeout, code)
            expected = rc == 9 if not (api == "save" and target == link) else (
                rc == 0 and os.path.isfile(link) and not os.path.islink(link) and stat.S_ISFIFO(os.lstat(fifo).st_mode))
            cases.append((f"{api}: {name}", rc, seconds, expected))
        if os.path.lexists(link):
            os.unlink(link)
        os.symlink(fifo, link)
        if "NUL" not in name:
            for cli in (["predict", data, "--model", target], ["train", target, "--target", "label", "--model",
                                                                 os.path.join(folder, "out.rbm")]):
                rc, seconds, err = _timed([sys.executable, "-m", "rebelboost", *cli], timeout)
                clear = rc == 4 and len(err.strip().splitlines()) == 1 and "not a regular file" in err
                cases.append((f"CLI {cli[0]}: {name} as {'--model' if cli[0] == 'predict' else 'data file'}", rc,
                              seconds, clear))
    sock.close()
    return cases


def csv_cases(folder, timeout):
    """CSV files of hostile shapes and contents given to `rebelboost train`: each trains (exit 0) or is one
    clear line of error (exit 3, or 5 for memory), within the time limit."""
    rng = np.random.RandomState(0)
    shapes = {
        "100 000 columns x 4 rows": (100_000, 4, None), "4 columns x 300 000 rows": (4, 300_000, None),
        "20 000 columns x 100 rows": (20_000, 100, None), "100 000 columns, header only": (100_000, 0, None),
        "100 000 columns, a text column": (100_000, 4, "text"), "100 000 columns, one short row": (100_000, 4, "ragged"),
        "one 10 MB cell": (2, 4, "huge cell"), "binary": (0, 0, "binary"), "Latin-1 header": (0, 0, "latin"),
        "empty file": (0, 0, "empty"), "repeated names, 50 000 columns": (50_000, 4, "repeated"),
    }
    cases = []
    for name, (columns, rows, twist) in shapes.items():
        path = os.path.join(folder, "shape.csv")
        with open(path, "wb") as handle:
            if twist == "binary":
                handle.write(rng.bytes(100_000))
            elif twist == "latin":
                handle.write("caf\xe9,label\n1,0\n2,1\n".encode("latin-1"))
            elif twist != "empty":
                names = [f"f{i}" for i in range(columns)]
                if twist == "repeated":
                    names[-1] = names[0]
                handle.write((",".join(names) + ",label\n").encode())
                values = rng.randint(0, 100, size=(rows, columns)).astype(str).tolist() if twist != "huge cell" else \
                    [["1" * 10_000_000, "2"]] * rows
                for r, row in enumerate(values):
                    if twist == "text" and r == 2:
                        row[7] = "oops"
                    if twist == "ragged" and r == 1:
                        row = row[:-1]
                    handle.write((",".join(row) + f",{r % 2}\n").encode())
        rc, seconds, err = _timed([sys.executable, "-m", "rebelboost", "train", path, "--target", "label", "--model",
                                   os.path.join(folder, "shape.rbm"), "--n-estimators", "3"], timeout)
        lines = err.strip().splitlines()
        clear = rc == 0 or (rc in (3, 5) and len(lines) == 1 and lines[0].isprintable() and len(lines[0]) < 600)
        cases.append((name, rc, seconds, clear))
        os.unlink(path)
    return cases


def report(results, args, generate_s, run_s, peak, load, extra=None):
    counts = collections.Counter(r["status"] for r in results)
    failures = [r for r in results if r["status"] in ("crash", "hang", "nonfinite", "error")]
    rejections = collections.Counter(re.sub(r"-?\d[\d.e+]*", "N", r["message"])[:90]
                                     for r in results if r["status"] == "rejected")
    slowest = max(results, key=lambda r: r["wall"])
    lines = [
        f"# Hostile model files: {len(results)} files, valid checksums"
        + (" (round 2: structure-aware mutations)" if args.structured else ""),
        "",
        f"Command: `python bench/hostile_files.py --n {args.n} --seed {args.seed} --memory-gib {args.memory_gib} "
        f"--timeout {args.timeout}{' --structured' if args.structured else ''}` (worker processes capped at {args.memory_gib} GiB of address space, "
        f"{args.timeout} s per file; generation {generate_s:.0f} s, loading and predicting {run_s:.0f} s; "
        f"load average 1/5/15 min at the start {' '.join(f'{v:.2f}' for v in load)}).",
        "",
        "| outcome | files |",
        "|---|---|",
        f"| loaded, predicted, every output finite | {counts['ok']} |",
        f"| rejected with ModelFileError | {counts['rejected']} |",
        f"| crashes (worker died) | {counts['crash']} |",
        f"| hangs (> {args.timeout} s) | {counts['hang']} |",
        f"| non-finite outputs | {counts['nonfinite']} |",
        f"| other exceptions | {counts['error']} |",
        "",
        f"Largest file {max(r['size'] for r in results) / 2**20:.1f} MiB; slowest file {slowest['wall']:.2f} s "
        f"({slowest['file']}: {', '.join(slowest['mutations'])}, {slowest['status']}); worker peak RSS {peak} MiB.",
        "",
        f"Rejections by message ({len(rejections)} distinct; numbers replaced by N, cut at 90 characters):",
        "",
        "| message | files |",
        "|---|---|",
    ]
    lines += [f"| {m.replace('|', '/')} | {c} |" for m, c in rejections.most_common()]
    for title, cases in (extra or {}).items():
        heading = {"paths": "Paths given to the loader, save and the CLI (each a clear OSError/ValueError or CLI exit 4 "
                            "with one line, within the time limit; a save to a symbolic link replaces the link)",
                   "csv": "CSV files given to `rebelboost train` (exit 0, or one clear line with exit 3 or 5)"}[title]
        lines += ["", f"{heading}: {sum(c[3] for c in cases)} of {len(cases)} as expected, "
                  f"{sum(c[1] == 'hang' for c in cases)} hangs.", "", "| case | exit | seconds | as expected |", "|---|---|---|---|"]
        lines += [f"| {name} | {rc} | {seconds:.2f} | {'yes' if ok else 'NO'} |" for name, rc, seconds, ok in cases]
        failures += [{"file": name, "kind": title, "mutations": [], "status": "unexpected", "message": f"exit {rc}"}
                     for name, rc, seconds, ok in cases if not ok]
    if failures:
        lines += ["", "Failures:", ""] + [f"- {r['file']} ({r['kind']}: {', '.join(r['mutations'])}): {r['status']} "
                                          f"{r['message']}" for r in failures[:50]]
    return "\n".join(lines) + "\n", not failures


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--memory-gib", type=int, default=2)
    parser.add_argument("--timeout", type=float, default=10.0)
    parser.add_argument("--out", default=None)
    parser.add_argument("--structured", action="store_true",
                        help="round 2 (issue 23): structure-aware mutations of the metadata JSON, feature names and "
                             "cascade section, plus FIFOs, NUL paths and hostile CSV shapes given to the CLI")
    args = parser.parse_args()
    load = os.getloadavg()
    results, generate_s, run_s, peak, extra = run(args)
    text, clean = report(results, args, generate_s, run_s, peak, load, extra)
    print(text)
    if args.out:
        with open(args.out, "w") as handle:
            handle.write(text)
    sys.exit(0 if clean else 1)


if __name__ == "__main__":
    main()
