"""Reading the JSON document of ``to_json`` back into a fitted estimator (docs/guide/json_schema.md).

The document is untrusted: every field's type, length and range is checked here before the core builds
the model, and the core then validates it as it validates a model file (child indices, covers, finite
values, limits). Any problem is a ``ModelFileError`` (a ``ValueError``) naming the field.
"""

from __future__ import annotations

import json
from typing import IO, TYPE_CHECKING

import numpy as np

from rebelboost import _core
from rebelboost.serialization import SCHEMA, SCHEMA_VERSION, ModelFileError, _restore

if TYPE_CHECKING:
    from rebelboost._base import BaseBoostingClassifier

__all__ = ["from_json", "SCHEMA", "SCHEMA_VERSION"]

# Node arrays of a tree: numpy kinds accepted ("i": integers, "f": numbers) and the range of integers.
_INT32 = (-(2**31), 2**31 - 1)
_UINT32 = (0, 2**32 - 1)
_NODE_FIELDS = {"feature": ("i", np.int32, (-1, _INT32[1])), "nan_left": ("b", np.uint8, None),
                "value": ("i", np.int8, (-1, 1)), "left": ("i", np.uint32, _UINT32),
                "right": ("i", np.uint32, _UINT32), "threshold": ("f", np.float64, None),
                "gain": ("f", np.float64, None)}


def _bad(what):
    return ModelFileError(f"invalid rebelboost JSON: {what}")


def _array(value, kind, dtype, bounds, what, length=None):
    """A 1-D array of `dtype` from a JSON list, refusing other types (bools as numbers, floats as integers,
    nested lists, strings, null) and integers outside `bounds`."""
    if not isinstance(value, list):
        raise _bad(f"{what} is {type(value).__name__}, not a list")
    if length is not None and len(value) != length:
        raise _bad(f"{what} has {len(value)} entries, expected {length}")
    if kind == "b":
        if any(not isinstance(v, bool) for v in value):
            raise _bad(f"{what} must hold true or false")
        return np.asarray(value, dtype=dtype)
    if any(isinstance(v, bool) or not isinstance(v, (int, float)) for v in value):
        raise _bad(f"{what} must hold numbers only")
    if kind == "i":
        if any(not isinstance(v, int) for v in value):
            raise _bad(f"{what} must hold integers only")
        if value and (min(value) < bounds[0] or max(value) > bounds[1]):
            raise _bad(f"{what} holds an integer outside [{bounds[0]}, {bounds[1]}]")
    return np.asarray(value, dtype=dtype)


def _field(doc, key, types, what=None):
    if key not in doc:
        raise _bad(f"'{key}' is missing")
    value = doc[key]
    if not isinstance(value, types) or isinstance(value, bool):  # JSON true is not the integer 1
        raise _bad(f"'{what or key}' has the wrong type ({type(value).__name__})")
    return value


def _tree(node, t, n_outputs):
    if not isinstance(node, dict):
        raise _bad(f"tree {t} is not an object")
    where = f"tree {t}"
    feature = _field(node, "feature", list, f"{where} feature")
    n = len(feature)
    if not 1 <= n <= _core.MAX_TREE_NODES:
        raise _bad(f"{where} has {n} nodes (1 to {_core.MAX_TREE_NODES})")
    out = {}
    for key, (kind, dtype, bounds) in _NODE_FIELDS.items():
        out[key] = _array(_field(node, key, list, f"{where} {key}"), kind, dtype, bounds, f"{where} {key}", n)
    out["step"] = _array(_field(node, "step", list, f"{where} step"), "f", np.float64, None, f"{where} step", n_outputs)
    cover = node.get("cover")
    out["cover"] = None if cover is None else _array(cover, "f", np.float64, None, f"{where} cover", n)
    leaf_value = node.get("leaf_value")  # regression trees only
    out["leaf_value"] = None if leaf_value is None else _array(leaf_value, "f", np.float64, None, f"{where} leaf_value", n)
    return out


def _check_head(doc):
    if not isinstance(doc, dict):
        raise _bad("the document is not a JSON object")
    if doc.get("schema") != SCHEMA:
        raise _bad(f"'schema' is {doc.get('schema')!r}, not {SCHEMA!r} (a document written by to_json)")
    version = _field(doc, "schema_version", int)
    if not 1 <= version <= SCHEMA_VERSION:
        raise _bad(f"schema_version {version} (this build reads 1 to {SCHEMA_VERSION})")
    if _field(doc, "learner", str) != "tree":
        raise _bad("from_json reads tree models; similarity models round-trip through save and load")
    loss = _field(doc, "loss_key", str)
    n_features = _field(doc, "n_features", int)
    if not 1 <= n_features <= _core.MAX_FEATURES:
        raise _bad(f"n_features {n_features} (1 to {_core.MAX_FEATURES})")
    bias = _field(doc, "bias", list)
    if not 1 <= len(bias) <= _core.MAX_CLASSES:
        raise _bad(f"bias has {len(bias)} entries (1 to {_core.MAX_CLASSES})")
    return loss, n_features, _array(bias, "f", np.float64, None, "bias")


def _metadata(doc):
    """The estimator's metadata (as a model file holds it), which must agree with the document's copies."""
    meta = _field(doc, "metadata", dict)
    if "classes" in doc and doc["classes"] != meta.get("classes"):
        raise _bad("'classes' differs from metadata's classes")
    names = doc.get("feature_names")
    if names != meta.get("feature_names_in"):
        raise _bad("'feature_names' differs from metadata's feature_names_in")
    try:
        return json.dumps(meta, sort_keys=True, allow_nan=False).encode("utf-8")
    except (ValueError, UnicodeEncodeError) as exc:
        raise _bad(f"metadata cannot be stored ({exc})") from None


def from_json(document: str | bytes | IO[str] | IO[bytes]) -> BaseBoostingClassifier:
    """A fitted estimator from a JSON document written by ``to_json`` (a str, bytes or a text stream).

    Predictions are those of the estimator that was exported, bit for bit. The document is checked as a
    model file is: wrong types, out-of-range indices, children that do not form a tree, sizes beyond the
    limits (docs/limitations.md) and non-finite numbers where the model needs finite ones raise
    ``ModelFileError`` (a ``ValueError``) naming the field. Tree models only (similarity models
    round-trip through ``save`` and ``load``).
    """
    if hasattr(document, "read"):
        document = document.read()
    try:
        doc = json.loads(document)
    except (ValueError, RecursionError, TypeError) as exc:
        raise _bad(f"not JSON ({exc})") from None
    loss, n_features, bias = _check_head(doc)
    trees = _field(doc, "trees", list)
    if len(trees) > _core.MAX_TREES:
        raise _bad(f"{len(trees)} trees, more than the limit {_core.MAX_TREES}")
    model = _core.Model.from_trees(loss, n_features, bias, [_tree(t, i, len(bias)) for i, t in enumerate(trees)],
                                   _metadata(doc))
    cascade = doc.get("cascade")
    if cascade is not None:
        if not isinstance(cascade, dict):
            raise _bad("'cascade' is not an object")
        every = _field(cascade, "every", int, "cascade every")
        if not 1 <= every <= _UINT32[1]:
            raise _bad(f"cascade every {every}")
        rows = _field(cascade, "thresholds", list, "cascade thresholds")
        if len(rows) > len(trees):
            raise _bad(f"cascade has {len(rows)} checkpoints for {len(trees)} trees")
        classes = 2 if len(bias) == 1 else len(bias)
        thresholds = [_array(r, "f", np.float64, None, "cascade thresholds row", classes) for r in rows]
        model = model.with_cascade(every, np.asarray(thresholds, dtype=np.float64).reshape(-1, classes))
    return _restore(model)
