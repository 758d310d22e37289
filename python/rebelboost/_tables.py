"""Data files for the command line: CSV and Parquet through pyarrow, .npz through numpy, as named columns."""

from __future__ import annotations

import collections
import os

import numpy as np

from rebelboost._paths import check_path, open_regular

__all__ = ["read_table", "split_target", "feature_frame", "labels_like", "check_text", "one_line"]

_CSV = (".csv", ".txt")
_PARQUET = (".parquet", ".pq")


def read_table(path, header=True):
    """The file as a pandas DataFrame with one named column per field.

    CSV: the first row is the header unless ``header`` is False (columns are then named "0", "1", ...);
    empty cells, "NA", "nan" and the like are missing values. Parquet: its own column names. .npz: one 1-D
    array per column, the key is the column name (``np.savez(path, **columns)``). Repeated column names,
    rows of another width and an empty file are errors naming the problem.
    """
    import pyarrow as pa
    import pyarrow.csv as pacsv
    import pyarrow.parquet as pq

    path = check_path(path, "data file", reading=True)
    ext = os.path.splitext(path)[1].lower()
    if ext not in _CSV + _PARQUET + (".npz",):
        raise ValueError(f"{path}: unknown file type {ext!r}; use .csv, .parquet or .npz")
    with open_regular(path, "data file") as handle:  # a FIFO or device is refused, never waited on
        if ext == ".npz":
            return _read_npz(handle, path)
        if ext in _CSV:
            check_text(handle, path, "CSV")
            read_options, types = _csv_options(handle, header)
            table = None
            if types:  # the guessed types; any contradiction: read again with pyarrow's inference
                try:
                    table = pacsv.read_csv(handle, read_options=read_options,
                                           convert_options=pacsv.ConvertOptions(column_types=types))
                except pa.ArrowInvalid:
                    handle.seek(0)
            if table is None:
                try:
                    table = pacsv.read_csv(handle, read_options=read_options)
                except pa.ArrowInvalid as exc:
                    raise ValueError(f"{path}: not a readable CSV file ({one_line(exc)})") from None
                except UnicodeDecodeError as exc:  # a header beyond what check_text read
                    raise ValueError(f"{path}: the header is not UTF-8 text ({exc}); save the file as UTF-8") from None
            if not header:
                table = table.rename_columns([str(i) for i in range(table.num_columns)])
        else:
            try:
                table = pq.read_table(handle)
            except pa.ArrowInvalid as exc:
                raise ValueError(f"{path}: not a readable Parquet file ({one_line(exc)})") from None
    names = table.column_names
    repeated = repeated_names(names)
    if repeated:
        raise ValueError(f"{path}: repeated column names {repeated}; every column needs its own name")
    if table.num_rows == 0:
        raise ValueError(f"{path}: no data rows" + (" (a header but no data)" if names else ""))
    return table.to_pandas()


def check_text(handle, path, what, size=1 << 16):
    """ValueError unless the first `size` bytes of the file are UTF-8 text without NUL bytes: a binary
    file's parse error quoted its raw bytes, a Latin-1 header gave a bare UTF-8 decode error."""
    head = handle.read(size)
    handle.seek(0)
    nul = head.find(b"\0")
    if nul >= 0:
        raise ValueError(f"{path}: not a {what} file: binary data (a NUL byte at offset {nul})")
    try:
        head.decode("utf-8")
    except UnicodeDecodeError as exc:
        if exc.start < len(head) - 3 or len(head) < size:  # not just a character cut by the read
            line = head.count(b"\n", 0, exc.start) + 1
            raise ValueError(f"{path}: not UTF-8 text: byte 0x{head[exc.start]:02x} at offset {exc.start} (line {line}); "
                             f"save the {what} file as UTF-8 (Latin-1 or Windows-1252 text needs converting)") from None


def one_line(exc, limit=300):
    """An exception's message on one line of printable text, cut to `limit` characters (a parser may quote
    raw bytes or end its message with a newline)."""
    text = " ".join("".join(c if c.isprintable() else "?" for c in line) for line in str(exc).splitlines()).strip()
    return text if len(text) <= limit else text[:limit] + "..."


def _csv_options(handle, header):
    """pyarrow's read options for this CSV and, for a wide file, the column types its first rows show (or
    None). Speed only, never the result: blocks of at least 16 rows (pyarrow's 1 MiB blocks held one row of
    a 100 000-column file, and every block costs per column); for wide files one thread (per-column tasks
    cost more than they save) and int64/float64 types for the columns whose first (up to 16) values are
    plain integers or decimals, which skips pyarrow's per-column type inference. A guess that a later row
    contradicts fails the read, which is then done again with inference (``read_table``)."""
    import csv
    import re

    import pyarrow as pa
    import pyarrow.csv as pacsv

    lines = [handle.readline(64 << 20)]
    wide = lines[0].count(b",") >= 1000
    while wide and len(lines) < 17 and sum(map(len, lines)) < (16 << 20) and lines[-1]:
        lines.append(handle.readline(64 << 20))
    handle.seek(0)
    options = pacsv.ReadOptions(autogenerate_column_names=not header, use_threads=not wide,
                                block_size=min(max(1 << 20, 16 * len(lines[0])), 1 << 30))
    if not wide:
        return options, None
    try:
        rows = list(csv.reader(line.decode("utf-8") for line in lines if line.strip()))
    except (UnicodeDecodeError, csv.Error):
        return options, None
    names, data = (rows[0], rows[1:]) if header else ([f"f{i}" for i in range(len(rows[0]))], rows)
    if not data or any(len(row) != len(names) for row in data) or len(set(names)) != len(names):
        return options, None
    integer, decimal = re.compile(r"-?[0-9]{1,18}"), re.compile(r"-?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][-+]?[0-9]+)?")
    types = {}
    for name, values in zip(names, zip(*data)):
        if all(integer.fullmatch(v) for v in values):
            types[name] = pa.int64()
        elif all(decimal.fullmatch(v) for v in values):
            types[name] = pa.float64()
    return options, types or None


def repeated_names(names):
    """The names that occur more than once, sorted: one pass (a wide file's check was quadratic)."""
    return sorted(name for name, count in collections.Counter(names).items() if count > 1)


def _read_npz(handle, path):
    import pandas as pd

    try:
        with np.load(handle, allow_pickle=False) as archive:
            columns = {name: archive[name] for name in archive.files}
    except (ValueError, OSError) as exc:
        raise ValueError(f"{path}: not a readable .npz file ({exc})") from None
    if not columns:
        raise ValueError(f"{path}: no arrays")
    for name, values in columns.items():
        if values.ndim != 1:
            raise ValueError(f"{path}: array {name!r} has shape {values.shape}; every column must be 1-D")
    lengths = {len(v) for v in columns.values()}
    if len(lengths) != 1:
        raise ValueError(f"{path}: the arrays have different lengths {sorted(lengths)}")
    if lengths == {0}:
        raise ValueError(f"{path}: no data rows")
    return pd.DataFrame(columns)


def split_target(frame, target, path):
    """(features, labels or None): the label column chosen by name, or by index (negative from the end)."""
    if target is None:
        return frame, None
    names = [str(c) for c in frame.columns]
    if target in names:
        column = frame.columns[names.index(target)]
    else:
        try:
            index = int(target)
        except ValueError:
            raise ValueError(f"{path}: no column named {target!r} (columns: {_listing(names)})") from None
        if not -len(names) <= index < len(names):
            raise ValueError(f"{path}: --target {index} is out of range for {len(names)} columns "
                             f"(use -{len(names)} to {len(names) - 1}, or a column name)")
        column = frame.columns[index]
    labels = frame[column]
    if labels.isna().any():
        row = int(np.flatnonzero(labels.isna().to_numpy())[0])
        raise ValueError(f"{path}: the label column {column!r} is empty at data row {row + 1}")
    return frame.drop(columns=[column]), labels.to_numpy()


def feature_frame(frame, path, expected=None):
    """The feature columns as a float64 DataFrame, checked numeric and, when ``expected`` (the model's
    feature names) is given, matched to it by name: missing or extra columns are an error naming them."""
    import pandas as pd

    frame = frame.rename(columns=str)
    if expected is not None:
        expected = [str(n) for n in expected]
        missing = [n for n in expected if n not in frame.columns]
        extra = [n for n in frame.columns if n not in expected]
        if missing or extra:
            parts = []
            if missing:
                parts.append(f"missing columns the model was trained on: {_listing(missing)}")
            if extra:
                parts.append(f"columns the model does not know: {_listing(extra)} (drop them, or name the label "
                             "column with --target)")
            raise ValueError(f"{path}: " + "; ".join(parts))
        frame = frame[expected]
    if frame.shape[1] == 0:
        raise ValueError(f"{path}: no feature columns")
    numeric = {dtype: pd.api.types.is_numeric_dtype(dtype) or pd.api.types.is_bool_dtype(dtype)
               for dtype in set(frame.dtypes)}  # per dtype, not per column: a wide file has few dtypes
    for name, dtype in frame.dtypes.items():
        if numeric[dtype]:
            continue
        column = frame[name]
        bad = column[pd.to_numeric(column, errors="coerce").isna() & column.notna()]
        example = f" (e.g. {bad.iloc[0]!r} in data row {int(bad.index[0]) + 1})" if len(bad) else ""
        raise ValueError(f"{path}: column {name!r} is not numeric{example}")
    return frame.astype(np.float64)


def labels_like(labels, classes, path):
    """File labels converted to the dtype of the model's classes_ (so "1" in a file matches the class 1)."""
    if classes.dtype.kind == "O" or classes.dtype.kind == "U":
        return np.asarray([str(v) for v in labels], dtype=object)
    try:
        return np.asarray(labels).astype(classes.dtype)
    except (TypeError, ValueError):
        raise ValueError(f"{path}: the labels do not match the model's classes {classes.tolist()[:10]}") from None


def _listing(names, limit=10):
    shown = ", ".join(repr(n) for n in names[:limit])
    return shown + (f", ... ({len(names)} in all)" if len(names) > limit else "")
