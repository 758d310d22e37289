"""An independent reader and writer of the model file layout (rebelboost/io.hpp, cpp/src/io/model_file.cpp).

Tests and the stress script (bench/hostile_files.py) take files apart, change any field - header counts,
metadata, tree arrays - and put them back together with a *valid* checksum, so the loader's own checks,
not the checksum, have to catch what is wrong.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field

import numpy as np

MAGIC = b"RBLBOOST"
HEADER = 24  # magic, u32 version, u32 reserved, u64 payload size
NODE = np.dtype([("feature", "<i4"), ("nan_left", "u1"), ("value", "i1"), ("padding", "<u2"), ("left", "<u4"),
                 ("right", "<u4"), ("threshold", "<f8"), ("gain", "<f8")])


def fnv1a(data: bytes) -> int:
    """The file's checksum: 64-bit FNV-1a (offset basis 0xcbf29ce484222325, prime 0x100000001b3)."""
    h = 0xCBF29CE484222325
    for b in data:
        h = ((h ^ b) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return h


VERSION = 3  # the version this build writes (2 named the learner family, 3 added the soft cascade section)


def wrap(payload: bytes, version: int = VERSION) -> bytes:
    """A whole file around `payload`: header and a checksum that matches."""
    return MAGIC + struct.pack("<IIQ", version, 0, len(payload)) + payload + struct.pack("<Q", fnv1a(payload))


@dataclass
class Tree:
    step: np.ndarray  # float64, K entries
    nodes: np.ndarray  # NODE records
    declared_nodes: int | None = None  # the node count written (default: len(nodes))


@dataclass
class Parts:
    loss: int
    n_features: int
    n_outputs: int
    bias: np.ndarray
    metadata: bytes
    trees: list = field(default_factory=list)
    reserved: int = 0
    declared_trees: int | None = None  # the tree count written (default: len(trees))
    version: int = VERSION
    cascade_every: int = 0  # version >= 3: the soft cascade (thresholds (n_checkpoints, classes))
    cascade_thresholds: np.ndarray = field(default_factory=lambda: np.zeros(0))

    def payload(self) -> bytes:
        out = [struct.pack("<IIII", self.loss, self.n_features, self.n_outputs, self.reserved),
               np.asarray(self.bias, "<f8").tobytes(), struct.pack("<Q", len(self.metadata)), self.metadata,
               struct.pack("<Q", len(self.trees) if self.declared_trees is None else self.declared_trees)]
        for tree in self.trees:
            count = len(tree.nodes) if tree.declared_nodes is None else tree.declared_nodes
            out += [struct.pack("<I", count), np.asarray(tree.step, "<f8").tobytes(),
                    np.asarray(tree.nodes, NODE).tobytes()]
        if self.version >= 3:
            classes = 2 if self.n_outputs == 1 else self.n_outputs
            thresholds = np.asarray(self.cascade_thresholds, "<f8").ravel()
            n_checkpoints = len(thresholds) // classes if classes else 0
            out += [struct.pack("<IIQ", self.cascade_every, classes, n_checkpoints), thresholds.tobytes()]
        return b"".join(out)

    def file(self) -> bytes:
        return wrap(self.payload(), self.version)


def parse(data: bytes) -> Parts:
    """A valid file of a tree model taken apart (format versions 1 to 3)."""
    (version,) = struct.unpack_from("<I", data, len(MAGIC))
    payload = data[HEADER:-8]
    loss, n_features, n_outputs, reserved = struct.unpack_from("<IIII", payload, 0)
    at = 16
    bias = np.frombuffer(payload, "<f8", n_outputs, at).copy()
    at += 8 * n_outputs
    (meta_len,) = struct.unpack_from("<Q", payload, at)
    at += 8
    metadata = payload[at:at + meta_len]
    at += meta_len
    (n_trees,) = struct.unpack_from("<Q", payload, at)
    at += 8
    trees = []
    for _ in range(n_trees):
        (n_nodes,) = struct.unpack_from("<I", payload, at)
        at += 4
        step = np.frombuffer(payload, "<f8", n_outputs, at).copy()
        at += 8 * n_outputs
        nodes = np.frombuffer(payload, NODE, n_nodes, at).copy()
        at += NODE.itemsize * n_nodes
        trees.append(Tree(step, nodes))
    every, thresholds = 0, np.zeros(0)
    if version >= 3:
        every, classes, n_checkpoints = struct.unpack_from("<IIQ", payload, at)
        at += 16
        thresholds = np.frombuffer(payload, "<f8", n_checkpoints * classes, at).copy()
        at += 8 * n_checkpoints * classes
    assert at == len(payload), f"not a version-{version} file"
    return Parts(loss, n_features, n_outputs, bias, metadata, trees, reserved, version=version, cascade_every=every,
                 cascade_thresholds=thresholds)


def chain(depth: int, n_features: int, step: float) -> Tree:
    """A depth-`depth` chain of 2 depth + 1 nodes (each split's right child a leaf): lopsided, so a complete
    level-order copy of it would take 2^(depth + 1) - 1 entries."""
    nodes = np.zeros(2 * depth + 1, NODE)
    for i in range(depth):
        nodes[2 * i] = (i % n_features, i % 2, 0, 0, 2 * i + 2, 2 * i + 1, 0.25 * (i % 5) - 0.5, 0.01)
        nodes[2 * i + 1] = (-1, 0, 1 if i % 3 == 0 else -1, 0, 0, 0, 0.0, 0.0)
    nodes[2 * depth] = (-1, 0, 1, 0, 0, 0, 0.0, 0.0)
    return Tree(np.array([step]), nodes)
