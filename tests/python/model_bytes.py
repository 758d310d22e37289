"""An independent reader and writer of the model file layout (docs/design/model_format.md; rebelboost/io.hpp,
cpp/src/io/model_file.cpp).

Tests and the stress script (bench/hostile_files.py) take files apart, change any field - header counts,
metadata, tree arrays, similarity anchors and learners, cascade thresholds - and put them back together
with a *valid* checksum, so the loader's own checks, not the checksum, have to catch what is wrong.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field

import numpy as np

MAGIC = b"RBLBOOST"
HEADER = 24  # magic, u32 version, u32 reserved, u64 payload size
NODE = np.dtype([("feature", "<i4"), ("nan_left", "u1"), ("value", "i1"), ("padding", "<u2"), ("left", "<u4"),
                 ("right", "<u4"), ("threshold", "<f8"), ("gain", "<f8")])
SIMILARITY = np.dtype([("kind", "<u4"), ("anchor_i", "<u4"), ("anchor_j", "<u4"), ("padding", "<u4"), ("tau", "<f8")])
TREES, SIMILARITIES, HYBRID = 0, 1, 2  # the learner family field (HYBRID: version >= 6)


def fnv1a(data: bytes) -> int:
    """The file's checksum: 64-bit FNV-1a (offset basis 0xcbf29ce484222325, prime 0x100000001b3)."""
    h = 0xCBF29CE484222325
    for b in data:
        h = ((h ^ b) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return h


VERSION = 6  # the version this build writes (2 named the learner family, 3 added the soft cascade section,
# 4 REBEL's surrogate g after it, 5 covers, 6 regression models' leaf values)


def wrap(payload: bytes, version: int = VERSION) -> bytes:
    """A whole file around `payload`: header and a checksum that matches."""
    return MAGIC + struct.pack("<IIQ", version, 0, len(payload)) + payload + struct.pack("<Q", fnv1a(payload))


@dataclass
class Tree:
    step: np.ndarray  # float64, K entries
    nodes: np.ndarray  # NODE records
    declared_nodes: int | None = None  # the node count written (default: len(nodes))
    cover: np.ndarray | None = None  # version 5: float64 per node, written when the model's covers flag is 1
    leaf_value: np.ndarray | None = None  # version 6, regression models (loss 4): float64 per node


@dataclass
class Similarities:
    """A similarity model's learners: standardisation, anchors, and one SIMILARITY record + step each."""

    feature_mean: np.ndarray  # float64, d
    feature_scale: np.ndarray  # float64, d
    anchor_rows: np.ndarray  # uint64, A
    anchors: np.ndarray  # float64, A x d
    learners: np.ndarray  # SIMILARITY records, T
    steps: np.ndarray  # float64, T x K
    declared_anchors: int | None = None
    declared_learners: int | None = None

    def payload(self) -> bytes:
        out = [np.asarray(self.feature_mean, "<f8").tobytes(), np.asarray(self.feature_scale, "<f8").tobytes(),
               struct.pack("<Q", len(self.anchor_rows) if self.declared_anchors is None else self.declared_anchors)]
        for row, coords in zip(self.anchor_rows, self.anchors):
            out += [struct.pack("<Q", int(row)), np.asarray(coords, "<f8").tobytes()]
        out.append(struct.pack("<Q", len(self.learners) if self.declared_learners is None else self.declared_learners))
        for record, step in zip(self.learners, self.steps):
            out += [np.asarray(record, SIMILARITY).tobytes(), np.asarray(step, "<f8").tobytes()]
        return b"".join(out)


@dataclass
class Parts:
    loss: int
    n_features: int
    n_outputs: int
    bias: np.ndarray
    metadata: bytes
    trees: list = field(default_factory=list)
    learner: int = TREES  # version 1: a reserved zero
    declared_trees: int | None = None  # the tree count written (default: len(trees))
    similarities: Similarities | None = None  # learner == SIMILARITIES or HYBRID
    order: np.ndarray | None = None  # learner == HYBRID: each learner's kind (uint32: 0 tree, 1 similarity)
    version: int = VERSION
    cascade_every: int = 0  # version >= 3: the soft cascade (thresholds (n_checkpoints, classes))
    cascade_thresholds: np.ndarray = field(default_factory=lambda: np.zeros(0))
    g: int = 0  # version >= 4: REBEL's surrogate (0 exponential, 1 logistic, 2 squared)
    covers_flag: int | None = None  # version >= 5; default: 1 when the first tree has covers

    def payload(self) -> bytes:
        out = [struct.pack("<IIII", self.loss, self.n_features, self.n_outputs, self.learner),
               np.asarray(self.bias, "<f8").tobytes(), struct.pack("<Q", len(self.metadata)), self.metadata]
        # The sections follow the parts held, not the learner field (which a test may rewrite on its own).
        if self.similarities is None or self.order is not None:
            out.append(struct.pack("<Q", len(self.trees) if self.declared_trees is None else self.declared_trees))
            if self.version >= 5:
                flag = self.covers_flag
                if flag is None:
                    flag = int(bool(self.trees) and self.trees[0].cover is not None)
                out.append(struct.pack("<II", flag, 0))
            for tree in self.trees:
                count = len(tree.nodes) if tree.declared_nodes is None else tree.declared_nodes
                out += [struct.pack("<I", count), np.asarray(tree.step, "<f8").tobytes(),
                        np.asarray(tree.nodes, NODE).tobytes()]
                if self.version >= 5 and tree.cover is not None:
                    out.append(np.asarray(tree.cover, "<f8").tobytes())
                if self.version >= 6 and tree.leaf_value is not None:
                    out.append(np.asarray(tree.leaf_value, "<f8").tobytes())
        if self.similarities is not None:
            out.append(self.similarities.payload())
        if self.order is not None:
            order = np.asarray(self.order, "<u4")
            out += [struct.pack("<Q", len(order)), order.tobytes()]
        if self.version >= 3:
            classes = 2 if self.n_outputs == 1 else self.n_outputs
            thresholds = np.asarray(self.cascade_thresholds, "<f8").ravel()
            n_checkpoints = len(thresholds) // classes if classes else 0
            out += [struct.pack("<IIQ", self.cascade_every, classes, n_checkpoints), thresholds.tobytes()]
        if self.version >= 4:
            out.append(struct.pack("<I", self.g))
        return b"".join(out)

    def file(self) -> bytes:
        return wrap(self.payload(), self.version)

    def steps(self):
        """Every learner's step vector (views: writing to them changes the parts)."""
        similarities = list(self.similarities.steps) if self.similarities is not None else []
        return [tree.step for tree in self.trees] + similarities  # a hybrid's: its trees', then its similarities'


def _parse_trees(payload, at, n_outputs, version, regression=False):
    (n_trees,) = struct.unpack_from("<Q", payload, at)
    at += 8
    covers = False
    if version >= 5:
        (flag,) = struct.unpack_from("<I", payload, at)
        covers = flag == 1
        at += 8
    trees = []
    for _ in range(n_trees):
        (n_nodes,) = struct.unpack_from("<I", payload, at)
        at += 4
        step = np.frombuffer(payload, "<f8", n_outputs, at).copy()
        at += 8 * n_outputs
        nodes = np.frombuffer(payload, NODE, n_nodes, at).copy()
        at += NODE.itemsize * n_nodes
        cover = None
        if covers:
            cover = np.frombuffer(payload, "<f8", n_nodes, at).copy()
            at += 8 * n_nodes
        leaf_value = None
        if regression and version >= 6:
            leaf_value = np.frombuffer(payload, "<f8", n_nodes, at).copy()
            at += 8 * n_nodes
        trees.append(Tree(step, nodes, cover=cover, leaf_value=leaf_value))
    return trees, at


def _parse_similarities(payload, at, d, n_outputs):
    mean = np.frombuffer(payload, "<f8", d, at).copy()
    scale = np.frombuffer(payload, "<f8", d, at + 8 * d).copy()
    at += 16 * d
    (n_anchors,) = struct.unpack_from("<Q", payload, at)
    at += 8
    record = np.dtype([("row", "<u8"), ("coords", "<f8", (d,))])
    anchors = np.frombuffer(payload, record, n_anchors, at).copy()
    at += record.itemsize * n_anchors
    (n_learners,) = struct.unpack_from("<Q", payload, at)
    at += 8
    record = np.dtype([("similarity", SIMILARITY), ("step", "<f8", (n_outputs,))])
    learners = np.frombuffer(payload, record, n_learners, at).copy()
    at += record.itemsize * n_learners
    return Similarities(mean, scale, anchors["row"].copy(), anchors["coords"].reshape(n_anchors, d).copy(),
                        learners["similarity"].copy(), learners["step"].reshape(n_learners, n_outputs).copy()), at


def parse(data: bytes) -> Parts:
    """A valid file taken apart (format versions 1 to 6, every learner family)."""
    (version,) = struct.unpack_from("<I", data, 8)
    payload = data[HEADER:-8]
    loss, n_features, n_outputs, learner = struct.unpack_from("<IIII", payload, 0)
    at = 16
    bias = np.frombuffer(payload, "<f8", n_outputs, at).copy()
    at += 8 * n_outputs
    (meta_len,) = struct.unpack_from("<Q", payload, at)
    at += 8
    metadata = payload[at:at + meta_len]
    at += meta_len
    parts = Parts(loss, n_features, n_outputs, bias, metadata, learner=learner, version=version)
    if learner != SIMILARITIES:
        parts.trees, at = _parse_trees(payload, at, n_outputs, version, regression=loss == 4)
    if learner != TREES:
        parts.similarities, at = _parse_similarities(payload, at, n_features, n_outputs)
    if learner == HYBRID:
        (n_learners,) = struct.unpack_from("<Q", payload, at)
        parts.order = np.frombuffer(payload, "<u4", n_learners, at + 8).copy()
        at += 8 + 4 * n_learners
    if version >= 3:
        parts.cascade_every, classes, n_checkpoints = struct.unpack_from("<IIQ", payload, at)
        at += 16
        parts.cascade_thresholds = np.frombuffer(payload, "<f8", n_checkpoints * classes, at).copy()
        at += 8 * n_checkpoints * classes
    if version >= 4:
        (parts.g,) = struct.unpack_from("<I", payload, at)
        at += 4
    assert at == len(payload), f"not a file of format version {version}"
    return parts


def without_covers(data: bytes) -> bytes:
    """The same file with its trees' covers dropped: to compare the models of fits whose sample weights
    differ by a constant factor (the trees and steps are the same; the covers scale with the weights)."""
    parts = parse(data)
    for tree in parts.trees:
        tree.cover = None
    return parts.file()


def chain(depth: int, n_features: int, step: float, covers: bool = False) -> Tree:
    """A depth-`depth` chain of 2 depth + 1 nodes (each split's right child a leaf): lopsided, so a complete
    level-order copy of it would take 2^(depth + 1) - 1 entries."""
    nodes = np.zeros(2 * depth + 1, NODE)
    for i in range(depth):
        nodes[2 * i] = (i % n_features, i % 2, 0, 0, 2 * i + 2, 2 * i + 1, 0.25 * (i % 5) - 0.5, 0.01)
        nodes[2 * i + 1] = (-1, 0, 1 if i % 3 == 0 else -1, 0, 0, 0, 0.0, 0.0)
    nodes[2 * depth] = (-1, 0, 1, 0, 0, 0, 0.0, 0.0)
    # Covers that halve at every split (2^depth at the root), for models whose trees hold covers.
    cover = np.zeros(2 * depth + 1)
    for i in range(depth):
        cover[2 * i], cover[2 * i + 1] = 2.0 ** (depth - i), 2.0 ** (depth - i - 1)
    cover[2 * depth] = 1.0
    return Tree(np.array([step]), nodes, cover=cover if covers else None)
