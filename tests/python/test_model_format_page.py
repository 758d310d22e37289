"""docs/design/model_format.md, the independent reader tests/python/model_bytes.py and the core cannot drift
apart: the page's record tables are parsed and compared with the reader's dtypes, its version table with
kFormatVersion, and every learner family's file is taken apart and put back together byte for byte."""

import os
import re

import numpy as np
import pytest

from model_bytes import HEADER, MAGIC, NODE, SIMILARITY, VERSION, parse
from rebelboost import AdaBoostClassifier, BoostingRegressor, REBELClassifier

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
TYPES = {"u8": "u1", "i8": "i1", "u16": "<u2", "u32": "<u4", "i32": "<i4", "u64": "<u8", "f64": "<f8"}

with open(os.path.join(REPO, "docs", "design", "model_format.md"), encoding="utf-8") as _handle:
    PAGE = _handle.read()


def section(title):
    """The text under the heading `title` (any level) up to the next heading."""
    match = re.search(rf"^#+ {re.escape(title)}\n(.*?)(?=^#)", PAGE + "\n#", re.M | re.S)
    assert match, f"docs/design/model_format.md has no section {title!r}"
    return match.group(1)


def table(title):
    """The rows of the first table of a section, as lists of cells (header and separator dropped)."""
    rows = [line for line in section(title).splitlines() if line.startswith("|")]
    return [[cell.strip().strip("`") for cell in row.strip("|").split("|")] for row in rows[2:]]


def documented_dtype(title):
    fields = []
    for offset, name, kind in table(title):
        assert kind in TYPES, f"{title}: unknown type {kind!r} of {name}"
        fields.append((name, np.dtype(TYPES[kind]), int(offset)))
    return np.dtype({"names": [f[0] for f in fields], "formats": [f[1] for f in fields],
                     "offsets": [f[2] for f in fields]})


@pytest.mark.parametrize(("title", "dtype", "size"), [("Node record", NODE, 32), ("Similarity record", SIMILARITY, 24)])
def test_the_record_tables_are_the_readers_dtypes(title, dtype, size):
    documented = documented_dtype(title)
    assert documented.names == dtype.names
    for name in dtype.names:
        assert documented.fields[name] == dtype.fields[name], (title, name)
    assert dtype.itemsize == size and f"\n{size} bytes" in "\n" + section(title)


def test_the_header_table_is_the_readers_header():
    rows = table("Header and checksum")
    assert [row[1] for row in rows] == ["magic", "version", "reserved", "payload size"]
    assert rows[0][0] == "0" and rows[0][3] == MAGIC.decode()
    assert [int(row[0]) for row in rows[1:]] == [len(MAGIC), len(MAGIC) + 4, len(MAGIC) + 8]
    assert int(rows[-1][0]) + 8 == HEADER  # the payload starts after the u64 payload size


def test_the_version_table_ends_at_the_cores_format_version():
    with open(os.path.join(REPO, "cpp", "include", "rebelboost", "io.hpp"), encoding="utf-8") as handle:
        core = int(re.search(r"kFormatVersion = (\d+);", handle.read()).group(1))
    versions = [int(row[0]) for row in table("Versions")]
    assert versions == list(range(1, core + 1)), "one row per format version, 1 to kFormatVersion"
    assert VERSION == core, "tests/python/model_bytes.py writes another version than the core"


@pytest.fixture(scope="module")
def models():
    rng = np.random.RandomState(0)
    X = rng.normal(size=(400, 3))
    y2, y3 = (X[:, 0] + 0.3 * rng.normal(size=400) > 0).astype(int), rng.randint(0, 3, size=400)
    ring = (X[:, 0] ** 2 + X[:, 1] ** 2 < 1.0).astype(int) + (X[:, 2] > 0.3)  # similarities' and trees' shapes
    Xnan = X.copy()
    Xnan[rng.rand(*X.shape) < 0.05] = np.nan
    cascade = AdaBoostClassifier(n_estimators=40, n_jobs=1).fit(X[:200], y2[:200])
    cascade.calibrate_cascade(X[200:], y2[200:], max_accuracy_loss=0.05)
    return {
        "cascade": cascade,
        "trees": AdaBoostClassifier(n_estimators=4, max_depth=2, n_jobs=1).fit(Xnan, y2),
        "rebel": REBELClassifier(n_estimators=4, max_depth=2, n_jobs=1).fit(Xnan, y3),
        "similarities": REBELClassifier(n_estimators=4, weak_learner="similarity", n_jobs=1).fit(X, y3),
        "hybrid": REBELClassifier(n_estimators=40, weak_learner="hybrid", max_depth=1, n_jobs=1).fit(X, ring),
        "regression": BoostingRegressor(n_estimators=4, max_depth=2, n_jobs=1).fit(Xnan, X[:, 0] + X[:, 1]),
    }


@pytest.mark.parametrize("kind", ["trees", "rebel", "similarities", "hybrid", "regression", "cascade"])
def test_every_family_is_read_and_written_byte_for_byte(models, kind):
    data = models[kind]._model.to_bytes()
    parts = parse(data)
    assert parts.version == VERSION
    assert parts.file() == data
    if kind == "hybrid":
        assert parts.order is not None and set(parts.order.tolist()) == {0, 1}
        assert len(parts.order) == len(parts.trees) + len(parts.similarities.learners)


@pytest.mark.parametrize("name", ["adaboost_v1", "rebel_similarity_v2", "adaboost_cascade_v3"])
def test_older_versions_are_read_and_written_byte_for_byte(name):
    with open(os.path.join(REPO, "tests", "models", f"{name}.rbm"), "rb") as handle:
        data = handle.read()
    parts = parse(data)
    assert f"v{parts.version}" == name.rsplit("_", 1)[1]
    assert parts.file() == data
