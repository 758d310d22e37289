"""Model files: the estimator's fitted state in the core's binary format, plus a JSON export for people.

The C++ core writes and reads the file (magic, version, checksum, validated on load). This module adds the
estimator's Python-side state (class, parameters, classes_, feature names) as JSON metadata inside it.
"""

from __future__ import annotations

import collections
import json
from typing import IO, TYPE_CHECKING, overload

import numpy as np

from rebelboost import _core
from rebelboost._paths import check_path
from rebelboost._registry import estimator_class
from rebelboost._validation import validate_parameters

if TYPE_CHECKING:
    from os import PathLike

    from rebelboost._base import BaseBoostingClassifier

__all__ = ["save", "load", "to_json", "ModelFileError"]

ModelFileError = _core.ModelFileError
SCHEMA = "rebelboost.model"  # to_json's document (docs/guide/json_schema.md); json_model reads it back
SCHEMA_VERSION = 1
_METADATA_VERSION = 1
_PAIRS = "__pairs__"  # a dict with (true, predicted) keys, such as REBEL's cost_matrix, as a JSON list
_ITEMS = "__items__"  # a dict with label keys that JSON would turn into strings, such as class_weight
_NOT_STORED = ("callbacks",)  # functions: not restorable from a file, stored as None


def _from_plain(value):
    """Inverse of _plain for what JSON cannot hold directly (dicts with tuple keys)."""
    if isinstance(value, dict) and set(value) == {_PAIRS}:
        pairs = value[_PAIRS]
        if not isinstance(pairs, list) or any(not isinstance(p, list) or len(p) != 3 for p in pairs):
            raise ModelFileError(f"corrupt model file metadata: bad {_PAIRS} entry")
        try:
            return {(p[0], p[1]): p[2] for p in pairs}
        except TypeError:
            raise ModelFileError(f"corrupt model file metadata: bad {_PAIRS} entry") from None
    if isinstance(value, dict) and set(value) == {_ITEMS}:
        items = value[_ITEMS]
        if not isinstance(items, list) or any(not isinstance(p, list) or len(p) != 2 for p in items):
            raise ModelFileError(f"corrupt model file metadata: bad {_ITEMS} entry")
        try:
            return {p[0]: p[1] for p in items}
        except TypeError:
            raise ModelFileError(f"corrupt model file metadata: bad {_ITEMS} entry") from None
    return value


def _plain(value):
    """JSON-safe version of a parameter value (numpy scalars become Python numbers)."""
    if isinstance(value, np.generic):
        return value.item()
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        if value and all(isinstance(k, tuple) and len(k) == 2 for k in value):  # {(true, predicted): cost}
            return {_PAIRS: [[_plain(k[0]), _plain(k[1]), _plain(v)] for k, v in value.items()]}
        if not all(isinstance(k, str) for k in value):  # {label: weight}: keep the labels' types
            return {_ITEMS: [[_plain(k), _plain(v)] for k, v in value.items()]}
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, np.ndarray):
        return value.tolist()
    return None  # e.g. a RandomState instance: not restorable, and irrelevant after fit


def _metadata(estimator):
    classes = getattr(estimator, "classes_", np.array([], dtype=np.float64))  # a regressor has none
    if classes.dtype.kind not in "biufUO":
        raise ValueError(f"classes_ of dtype {classes.dtype} cannot be stored in a model file; use pickle")
    class_list = [_plain(c) for c in classes.tolist()]
    if any(not isinstance(c, (bool, int, float, str)) for c in class_list):
        raise ValueError("only int, float, bool or str class labels can be stored in a model file; use pickle")
    meta = {
        "metadata_version": _METADATA_VERSION,
        "estimator": type(estimator).__name__,
        "params": {k: None if k in _NOT_STORED else _plain(v) for k, v in estimator.get_params(deep=False).items()},
        "classes": class_list,
        "classes_dtype": classes.dtype.str if classes.dtype.kind != "O" else "O",
        "n_features_in": int(estimator.n_features_in_),
        "rebelboost_version": _core.__version__,
    }
    meta.update(estimator._fitted_metadata())
    if hasattr(estimator, "feature_names_in_"):
        meta["feature_names_in"] = [str(n) for n in estimator.feature_names_in_]
    return json.dumps(meta, sort_keys=True).encode("utf-8")


def save(estimator: BaseBoostingClassifier, path: str | PathLike[str]) -> None:
    """Write a fitted estimator to ``path`` (atomic: temporary file in the same folder, then rename).

    A path holding a NUL byte is a ValueError, one naming a directory, FIFO, socket or device an OSError
    (both before anything is written)."""
    from sklearn.utils.validation import check_is_fitted

    path = check_path(path, "model file", reading=False)
    check_is_fitted(estimator)
    model = estimator._model
    model.metadata = _metadata(estimator)
    model.save(path)


def _corrupt(what):
    return ModelFileError(f"corrupt model file metadata: {what}")


def _metadata_classes(meta):
    """classes_ from the metadata, checked: a non-empty list of distinct plain labels in a storable dtype."""
    labels = meta["classes"]
    if not isinstance(labels, list) or not labels:
        raise _corrupt("'classes' is not a non-empty list")
    if any(not isinstance(c, (bool, int, float, str)) for c in labels):
        raise _corrupt("'classes' holds something other than int, float, bool or str labels")
    dtype = meta.get("classes_dtype", "O")
    if not isinstance(dtype, str):
        raise _corrupt("'classes_dtype' is not a string")
    try:
        if dtype == "O":
            classes = np.empty(len(labels), dtype=object)
            classes[:] = labels
        else:
            np_dtype = np.dtype(dtype)
            if np_dtype.kind not in "biufU":
                raise TypeError(f"dtype {dtype!r} is not a label dtype")
            classes = np.array(labels, dtype=np_dtype)
    except (TypeError, ValueError, OverflowError) as exc:
        raise _corrupt(f"classes do not fit 'classes_dtype' {dtype!r} ({exc})") from None
    if classes.tolist() != labels:  # e.g. "<U2" would cut "neg" to "ne", "<i8" 0.5 to 0
        raise _corrupt(f"classes change when stored as 'classes_dtype' {dtype!r}")
    if len(set(classes.tolist())) != len(classes):
        raise _corrupt("'classes' has repeated labels")
    return classes


def _restore(model):
    try:
        meta = json.loads(model.metadata.decode("utf-8"))
    except (UnicodeDecodeError, RecursionError, ValueError) as exc:  # ValueError: also an integer of 4 300+ digits
        raise ModelFileError(f"corrupt model file: metadata is not valid JSON ({exc})") from None
    try:  # "\ud800" is valid JSON but no Unicode: such a feature name broke every DataFrame predict later
        json.dumps(meta, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError as exc:
        raise _corrupt(f"a string holds a lone surrogate {exc.object[exc.start:exc.end]!r}, which is not Unicode "
                       "text") from None
    if not isinstance(meta, dict) or "estimator" not in meta or "classes" not in meta:
        raise ModelFileError("model file has no estimator metadata (was it written by rebelboost's Python API?)")
    name = meta["estimator"]
    cls = estimator_class(name) if isinstance(name, str) else None
    if cls is None:
        raise ModelFileError(f"model file names unknown estimator {name!r}")
    if model.loss_key != cls._loss:
        raise ModelFileError(f"model file names estimator {name} but holds a {model.loss} model")
    params = meta.get("params", {})
    if not isinstance(params, dict):
        raise _corrupt("'params' is not an object")
    known = cls().get_params()  # unknown names are dropped
    estimator = cls(**{k: _from_plain(v) for k, v in params.items() if k in known})
    try:  # the estimator's own validation, now rather than at first use (n_jobs, for one, matters to predict)
        validate_parameters(estimator)
    except (TypeError, ValueError, OverflowError) as exc:
        raise _corrupt(f"invalid parameters ({exc})") from None
    n_features = meta.get("n_features_in")
    if not isinstance(n_features, int) or isinstance(n_features, bool) or n_features != model.n_features:
        raise ModelFileError(
            f"model file metadata says {n_features!r} features but the model has {model.n_features}"
        )
    learner = estimator.get_params().get("weak_learner", "tree")
    if learner != model.learner:
        raise ModelFileError(f"model file metadata says weak_learner={learner!r} but the model holds {model.learner} learners")
    surrogate = estimator.get_params().get("loss", "exponential")
    if surrogate != model.rebel_loss:
        raise ModelFileError(f"model file metadata says loss={surrogate!r} but the model was trained with the "
                             f"{model.rebel_loss} loss")
    if model.loss_key == "squared_error":
        if meta["classes"] != []:
            raise ModelFileError("model file lists classes for a regressor")
    else:
        classes = _metadata_classes(meta)
        n_classes_model = 2 if model.n_outputs == 1 else model.n_outputs
        if len(classes) != n_classes_model:
            raise ModelFileError(f"model file lists {len(classes)} classes but the model predicts {n_classes_model}")
        estimator.classes_ = classes
    estimator.n_features_in_ = n_features
    try:
        estimator._restore_fitted_metadata(meta)
    except (TypeError, ValueError) as exc:
        raise _corrupt(f"bad fitted state ({exc})") from None
    if "feature_names_in" in meta:
        names = meta["feature_names_in"]
        if not isinstance(names, list) or any(not isinstance(n, str) for n in names) or len(names) != n_features:
            raise ModelFileError("model file feature names do not match its feature count")
        repeated = sorted(name for name, count in collections.Counter(names).items() if count > 1)
        if repeated:  # every later DataFrame predict would fail with an unrelated error
            raise ModelFileError(f"model file's feature_names_in are duplicated: {repeated[:10]}"
                                 + (f" ({len(repeated)} names)" if len(repeated) > 10 else ""))
        estimator.feature_names_in_ = np.asarray(names, dtype=object)
    estimator._model = model
    return estimator


def load(path: str | PathLike[str]) -> BaseBoostingClassifier:
    """Read a model file written by ``save``; returns the fitted estimator.

    Raises ModelFileError (a ValueError) for a truncated, corrupt or foreign file, OSError if the file
    cannot be read or is not a regular file (a FIFO or device is refused at once, never opened for a
    blocking read), ValueError for a path holding a NUL byte.
    """
    return _restore(_core.Model.load(check_path(path, "model file", reading=True)))


_JSON_CHUNK = 4096  # learners converted at a time: what the export holds beyond the model and its output
MAX_JSON_STRING_LEARNERS = 2**18  # to_json without a file: more learners must be streamed (docs/limitations.md)


@overload
def to_json(estimator: BaseBoostingClassifier, file: None = None) -> str: ...


@overload
def to_json(estimator: BaseBoostingClassifier, file: IO[str]) -> None: ...


def to_json(estimator: BaseBoostingClassifier, file: IO[str] | None = None) -> str | None:
    """A JSON document of the fitted model (schema "rebelboost.model" version 1, docs/guide/json_schema.md):
    the estimator's metadata (class, parameters, classes, feature names), bias, soft cascade, and per
    learner its tree (nodes, node covers) or similarity and its step. ``rebelboost.from_json`` reads a tree
    model's document back into an estimator with identical predictions.

    file : writable text stream, optional
        Write the document there piece by piece and return None: the export then holds one chunk of
        4 096 learners at a time beyond the model, whatever its size (``rebelboost export`` streams to its
        output this way). Without it the document is returned as a str, which holds all of it (about
        400 bytes per stump, twice that while it is joined: 6.6 times the model file's size), so a model
        of more than 2**18 = 262 144 learners is a ValueError at once: pass a file to stream it.
    """
    import io

    from sklearn.utils.validation import check_is_fitted

    check_is_fitted(estimator)
    if file is not None:
        _write_json(estimator, file)
        return None
    n = estimator._model.n_learners
    if n > MAX_JSON_STRING_LEARNERS:
        raise ValueError(f"to_json returns the whole document as a str, which for {n} learners (more than the limit "
                         f"of {MAX_JSON_STRING_LEARNERS}) would take about {n * 800 / 2**30:.1f} GiB; stream it to a "
                         "file instead: to_json(estimator, file), or `rebelboost export --output FILE`")
    out = io.StringIO()
    _write_json(estimator, out)
    return out.getvalue()


def _indented(value, level):
    """json.dumps(value, indent=1) as it sits `level` levels deep in an indent=1 document."""
    return json.dumps(value, indent=1).replace("\n", "\n" + " " * level)


def _write_list(out, chunks, level):
    """A JSON list whose items come chunk by chunk, formatted as json.dumps(..., indent=1) formats it."""
    out.write("[")
    first = True
    for items in chunks:
        for item in items:
            out.write(("\n" if first else ",\n") + " " * (level + 1) + _indented(item, level + 1))
            first = False
    out.write("]" if first else "\n" + " " * level + "]")


def _tree_chunks(model):
    for first in range(0, model.n_trees, _JSON_CHUNK):
        yield [{key: np.asarray(val).tolist() for key, val in tree.items()} for tree in model.trees(first, _JSON_CHUNK)]


def _similarity_chunks(model, s, steps):
    from rebelboost._similarity import _KINDS, anchor_rows

    rows = anchor_rows(s)
    for first in range(0, len(s["kind"]), _JSON_CHUNK):
        yield [{"kind": str(_KINDS[s["kind"][t]]), "anchor_rows": rows[t].tolist(),
                "tau": None if np.isnan(s["tau"][t]) else float(s["tau"][t]), "step": steps[t].tolist()}
               for t in range(first, min(first + _JSON_CHUNK, len(s["kind"])))]


def _row_chunks(array):
    for first in range(0, len(array), _JSON_CHUNK):
        yield array[first:first + _JSON_CHUNK].tolist()


def _write_json(estimator, out):
    """The document of to_json, written to `out` a chunk of learners at a time (the same text as
    json.dumps(document, indent=1) of the whole document)."""
    model = estimator._model
    cascade = model.cascade
    names = getattr(estimator, "feature_names_in_", None)
    head = {"schema": SCHEMA, "schema_version": SCHEMA_VERSION, "estimator": type(estimator).__name__,
            "loss": model.loss, "loss_key": model.loss_key, "learner": model.learner,
            "n_features": model.n_features, "n_outputs": model.n_outputs,
            "classes": [_plain(c) for c in getattr(estimator, "classes_", np.array([])).tolist()],
            "feature_names": None if names is None else [str(n) for n in names], "bias": model.bias.tolist(),
            "cascade": None if cascade is None else {"every": cascade[0], "thresholds": cascade[1].tolist()},
            "metadata": json.loads(_metadata(estimator))}
    out.write("{" + "".join(f"\n {json.dumps(key)}: {_indented(value, 1)}," for key, value in head.items()))
    if model.learner != "similarity":
        out.write('\n "trees": ')
        _write_list(out, _tree_chunks(model), 1)
    if model.learner == "hybrid":
        out.write(',\n "learner_kinds": ' + _indented(model.learner_kinds().tolist(), 1) + ",")
    if model.learner != "tree":
        steps = model.steps()
        if model.learner == "hybrid":
            steps = steps[model.learner_kinds() == 1]
        s = model.similarities()
        out.write('\n "similarities": ')
        _write_list(out, _similarity_chunks(model, s, steps), 1)
        out.write(',\n "anchors": {\n  "rows": ')
        _write_list(out, _row_chunks(s["anchor_rows"]), 2)
        out.write(',\n  "standardised": ')
        _write_list(out, _row_chunks(s["anchors"]), 2)
        out.write("\n },\n \"standardisation\": {\n  \"mean\": " + _indented(s["feature_mean"].tolist(), 2) +
                  ",\n  \"scale\": " + _indented(s["feature_scale"].tolist(), 2) + "\n }")
    out.write("\n}")
