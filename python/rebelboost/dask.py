"""rebelboost on Dask: data-parallel training on a dask.distributed cluster, the same model bit for bit as a
local fit of the same rows, for any number of workers and any chunking (docs/distributed.md).

How a fit runs:

- The rows stay on the workers that hold them. Each worker that holds blocks of X becomes one
  participant ("rank") and runs the ordinary training loop of the C++ core on its own rows, as one
  long task. The client never gathers the training rows.
- Every total the loop needs over all rows (per layer: the nodes' histograms, row counts and value sums;
  the losses' weight sums) is an integer or the digits of an exact sum, summed over the ranks by one
  all-reduce. So every rank sees the totals a local fit computes and grows the same tree.
- The all-reduce runs among the ranks, over Dask's worker-to-worker RPC (``rebelboost._collective``):
  recursive doubling, log2(ranks) exchanges per reduction, no worker in the middle.
- Bin edges come from the rows a local fit would sample (``_core.bin_sample_rows``, by global row
  index), fitted once in a task, then sent to every rank.
- Eval sets (validation data) are copied whole to every rank, so early stopping decides the same on all.
- A worker lost during fit stops it: the client notices within about a second, aborts the fit on every
  rank and raises :class:`DaskFitError`; nothing waits forever.

The estimators take the local estimators' parameters (validated by the same code) plus ``client``.
"""

from __future__ import annotations

import inspect
import uuid
import re
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

try:
    import dask
    import dask.array as da
    import dask.dataframe as dd
    from distributed import default_client, futures_of, get_worker, wait
except ImportError as e:  # pragma: no cover - the optional extra is missing
    raise ImportError("rebelboost.dask needs dask and distributed: pip install 'rebelboost[dask]'") from e

from sklearn.utils.validation import check_is_fitted

from rebelboost import _core
from rebelboost._collective import DaskFitError, PeerReducer, abort_fit, exclusive_workers, install_mailbox
from rebelboost._monitor import TrainingMonitor
from rebelboost._validation import check_eval_sets
from rebelboost.adaboost import AdaBoostClassifier
from rebelboost.rebel import REBELClassifier
from rebelboost.veb import VEBBoostClassifier

if TYPE_CHECKING:
    from os import PathLike

    from distributed import Client
    from typing_extensions import Self

    from rebelboost._base import BaseBoostingClassifier

__all__ = ["DaskAdaBoostClassifier", "DaskREBELClassifier", "DaskVEBBoostClassifier", "DaskFitError"]

_POLL_SECONDS = 0.25  # how often the client checks the ranks' tasks and workers during fit


# ---- what runs on the workers ------------------------------------------------------------------
def _take(block, rows):
    return np.asarray(block)[rows]


def _bin_edges(X_parts, w_parts, n_bins):
    X = _concat(X_parts, np.float64)
    w = _concat(w_parts, np.float64) if w_parts else None
    return _core.bin_edges(X, n_bins, w, 1)


def _concat(blocks, dtype, n_features=None):
    """The blocks as one C-contiguous array; one block that already is one is used as it is (no copy: a worker
    holding its rows as one block never needs twice their memory)."""
    blocks = [np.asarray(b) for b in blocks]
    if len(blocks) == 1 and blocks[0].flags.c_contiguous:
        return blocks[0]
    if blocks:
        return np.ascontiguousarray(np.concatenate(blocks))
    return np.empty((0, n_features) if n_features is not None else (0,), dtype=dtype)


# The core's messages that name a row of this rank's X (its data checks): named as rows of the whole X.
_LOCAL_ROW_MESSAGES = ("X contains", "sample_weight contains", "label index")


def _global_row_message(message, rows):
    if not message.startswith(_LOCAL_ROW_MESSAGES):
        return message
    return re.sub(r"\brow (\d+)", lambda m: f"row {rows[int(m.group(1))]}", message)


def _fit_part(rank, fit, addresses, X_blocks, y_blocks, w_blocks, offsets, spec, eval_blocks):
    """One rank's fit: its rows in global order, the core's training loop with reductions over the ranks.
    Returns the model (rank 0 only) and what the fit recorded."""
    start = time.perf_counter()
    X = _concat(X_blocks, spec["dtype"], spec["n_features"])
    y = _concat(y_blocks, np.int32)
    w = _concat(w_blocks, np.float64) if spec["weighted"] else None
    rows = _concat([np.arange(o, o + len(b), dtype=np.uint64) for o, b in zip(offsets, y_blocks)], np.uint64)
    local = spec["estimator"]
    evals = []
    if eval_blocks:
        eval_set = [tuple(_concat(p, None) if p is not None else None for p in parts) for parts in eval_blocks]
        evals = check_eval_sets(local, eval_set, local.classes_, X.dtype, spec["class_weights"])
    stopping = local._stopping()
    monitor = TrainingMonitor(local, len(local.classes_), evals, stopping["scoring"], stopping["early_stopping"],
                              stopping["n_iter_no_change"], local.tol, 0, None)
    reducer = PeerReducer(fit, rank, addresses, spec["timeout"])
    core = dict(spec["core"])
    if local.n_jobs is None:  # the worker's threads, not the client machine's cores
        core["n_threads"] = get_worker().state.nthreads
    init = _core.Model.from_bytes(spec["init_model"]) if spec["init_model"] is not None else None
    try:
        model, history, stop_reason, stop_message, error, stages = _core.train(
            X, y, w, len(local.classes_), local._loss, bin_seed=spec["bin_seed"], seed=spec["seed"],
            callback=monitor if monitor.needed else None, init_model=init, eval_sets=[e.core_tuple() for e in evals],
            reducer=reducer, bin_edges=spec["edges"], global_rows=rows, **core)
    except ValueError as e:
        raise ValueError(_global_row_message(str(e), rows)) from None
    except RuntimeError:
        if reducer.failure is not None:  # the cluster's fault (a peer gone, an abort), not this rank's data
            raise reducer.failure from None
        raise
    finally:
        reducer.close()
    if error is not None:
        raise error
    stats = {"rank": rank, "rows": int(X.shape[0]), "reductions": reducer.seq, "bytes_sent": reducer.bytes_sent,
             "bytes_received": reducer.bytes_received, "reduce_seconds": reducer.seconds, "seconds": time.perf_counter() - start,
             "stage_seconds": stages["wall"]}
    if rank != 0:
        return {"stats": stats}
    return {"stats": stats, "model": model.to_bytes(), "history": history, "stop_reason": stop_reason,
            "stop_message": stop_message, "stages": stages, "scoring": monitor.scoring,
            "evals": {name: list(values) for name, values in monitor.history.items()},
            "best_iteration": monitor.best_iteration, "early_stopping": monitor.early_stopping}


# ---- inputs --------------------------------------------------------------------------------------
def _as_dask_matrix(X):
    """(dask array with one block per row chunk, feature names or None)."""
    names = None
    if isinstance(X, dd.DataFrame):
        names = [str(c) for c in X.columns] if all(isinstance(c, str) for c in X.columns) else None
        X = X.to_dask_array(lengths=True)
    elif not isinstance(X, da.Array):
        raise TypeError(f"X must be a dask array or a dask DataFrame, got {type(X).__name__}")
    if X.ndim != 2:
        raise ValueError(f"X must be 2-D, got {X.ndim} dimensions")
    if any(np.isnan(c) for c in X.chunks[0]):
        raise ValueError("X has blocks of unknown length; use to_dask_array(lengths=True) or compute_chunk_sizes()")
    if X.dtype not in (np.float32, np.float64):
        X = X.astype(np.float64)
    return X.rechunk({1: -1}), names


def _as_dask_vector(v, chunks, what):
    """v as a 1-D dask array chunked like X's rows: a dask array or Series, or any 1-D array-like (labels
    and weights are small next to X: cut into X's row blocks)."""
    if isinstance(v, dd.Series):
        v = v.to_dask_array(lengths=True)
    elif not isinstance(v, da.Array):
        v = np.asarray(v)
        if v.ndim == 1 and v.shape[0] == sum(chunks):
            v = da.from_array(v, chunks=(chunks,))
    if not isinstance(v, da.Array) or v.ndim != 1:
        raise ValueError(f"{what} must be 1-D with one entry per row of X: a dask array or Series, or an array")
    if v.shape[0] != sum(chunks):
        raise ValueError(f"{what} has {v.shape[0]} entries; X has {sum(chunks)} rows")
    return v.rechunk((chunks,))


def _label_stats(y, w):
    """Per block, in one pass: its sorted labels with their rows and weight sums, and whether a weight is bad."""
    labels, index = np.unique(np.asarray(y), return_inverse=True)
    weights = None if w is None else np.asarray(w, dtype=np.float64)
    bad = weights is not None and len(weights) > 0 and (not np.all(np.isfinite(weights)) or weights.min() < 0)
    return {"labels": labels, "bad_weight": bool(bad),
            "totals": np.stack([np.bincount(index, minlength=len(labels)).astype(np.float64),
                                np.bincount(index, weights=weights, minlength=len(labels))])}


def _encode(y, classes):
    return np.searchsorted(classes, np.asarray(y)).astype(np.int32)


def _final_weights(y_encoded, w, per_class):
    """class_weight times sample_weight, as the local fit computes it."""
    per_row = None if per_class is None else per_class[y_encoded]
    if w is None:
        return per_row
    w = np.asarray(w, dtype=np.float64)
    return w if per_row is None else w * per_row


# ---- the estimators ------------------------------------------------------------------------------
class _DaskMixin:
    """fit on dask collections, predictions as dask arrays, to_local(), save()."""

    _local_class = None
    client: Client | None

    if TYPE_CHECKING:  # _dask_class gives each class this __init__: the local class's parameters and client
        def __init__(self, *args: Any, client: Client | None = None, **kwargs: Any) -> None: ...

    def _client(self):
        return self.client if self.client is not None else default_client()

    def fit(self, X: Any, y: Any, sample_weight: Any = None,
            eval_set: tuple[Any, ...] | Sequence[tuple[Any, ...]] | None = None) -> Self:
        """Fit on a dask array or DataFrame X and labels y (dask array or Series), on the cluster of
        ``client`` (or the default client). The fitted model is the one the local estimator gets from the
        same rows (``to_local()``), bit for bit. ``eval_set``: (X, y) or (X, y, sample_weight) tuples of
        numpy or dask data, copied whole to every worker. Early stopping needs an eval_set (a carved
        validation split would move training rows). Not supported: callbacks, weak_learner="similarity",
        weight_trim < 1 (clear errors)."""
        local = self._local()
        local._validate_params()
        self._refuse_unsupported(local, eval_set)
        client = self._client()
        watched = _live_workers(client)  # a loss of any of them stops the fit
        warm = bool(self.warm_start) and hasattr(self, "_model")
        X, names = _as_dask_matrix(X)
        chunks = X.chunks[0]
        y = _as_dask_vector(y, chunks, "y")
        w = None if sample_weight is None else _as_dask_vector(sample_weight, chunks, "sample_weight")
        classes, per_class, totals = self._labels(client, y, w, local, watched)
        if warm and not np.array_equal(classes, self.classes_):
            raise ValueError(f"warm_start=True: y has the classes {classes.tolist()[:10]}, the fitted model "
                             f"{self.classes_.tolist()[:10]}; fit again with warm_start=False")
        # The local fit's class checks, on one row per class weighted by its total (the same rule, once).
        local._check_classes(classes, np.arange(len(classes)), None if w is None and per_class is None else totals,
                             classes)
        y_enc = y.map_blocks(_encode, classes, dtype=np.int32)
        weighted = w is not None or per_class is not None
        w_fin = da.map_blocks(_final_weights, y_enc, w, per_class, dtype=np.float64) if weighted else None
        X, y_enc = client.persist([X, y_enc])
        if weighted:
            w_fin = client.persist(w_fin)
        bin_seed, seed = self._seeds(warm)
        local._fit_seeds = (bin_seed, seed)
        edges = self._edges(client, X, w_fin, bin_seed, watched)
        local.classes_ = classes
        local.n_features_in_ = X.shape[1]
        if names is not None:
            local.feature_names_in_ = np.asarray(names, dtype=object)
        spec = {"dtype": X.dtype, "n_features": X.shape[1], "weighted": weighted, "estimator": local,
                "class_weights": per_class, "bin_seed": bin_seed, "seed": seed, "edges": edges,
                "core": {**local._core_params(), **local._core_extra()}, "timeout": float(self._timeout()),
                "init_model": self._model.to_bytes() if warm else None}
        result, stats = self._run(client, X, y_enc, w_fin, spec, self._eval_parts(client, eval_set), watched)
        self._finish(local, result, stats, classes, names, X.shape[1])
        return self

    def _refuse_unsupported(self, local, eval_set):
        if self.callbacks:
            raise ValueError(f"{type(self).__name__} does not run callbacks (they would run on every worker); "
                             "use eval_set with early_stopping, or the local estimator")
        if getattr(local, "weak_learner", "tree") != "tree":
            raise ValueError(f"weak_learner={local.weak_learner!r} is not distributed: a similarity compares a query with "
                             "every training row, so each iteration would move the rows; use REBELClassifier "
                             "on one machine")
        if local.weight_trim < 1.0:
            raise ValueError("weight_trim < 1 is not distributed (it needs a global weight quantile every "
                             "iteration); use subsample or feature_fraction")
        if local._stopping()["early_stopping"] and not eval_set:
            raise ValueError("early_stopping=True needs an eval_set on Dask (carving a validation split would "
                             "move training rows between workers)")

    def _timeout(self):
        return 600.0  # seconds a rank waits for the others at one reduction before it gives up

    def _labels(self, client, y, w, local, watched):
        """(classes, class_weight per class or None, (2, K) totals: rows and weights per class)."""
        w_blocks = w.to_delayed() if w is not None else [None] * y.numblocks[0]
        stats = _gather_watching(client, client.compute([dask.delayed(_label_stats)(yb, wb)
                                                         for yb, wb in zip(y.to_delayed(), w_blocks)]), watched)
        if any(s.get("bad_weight") for s in stats):
            raise ValueError("sample_weight contains a negative, NaN or infinite value; weights must be finite "
                             "and >= 0")
        classes = np.unique(np.concatenate([s["labels"] for s in stats]))
        if len(classes) > _core.MAX_CLASSES:
            raise ValueError(f"y has {len(classes)} distinct classes, more than the limit of {_core.MAX_CLASSES}")
        totals = np.zeros((2, len(classes)))
        for block in stats:
            totals[:, np.searchsorted(classes, block["labels"])] += block["totals"]
        per_class = None
        if local.class_weight is not None:
            from sklearn.utils.class_weight import compute_class_weight

            if isinstance(local.class_weight, str):  # "balanced", as scikit-learn computes it
                per_class = totals[0].sum() / (len(classes) * totals[0])
            else:
                per_class = compute_class_weight(local.class_weight, classes=classes, y=classes)
            per_class = np.asarray(per_class, dtype=np.float64)
            totals = np.stack([totals[0], totals[1] * per_class if w is not None else totals[0] * per_class])
        elif w is None:
            totals = np.stack([totals[0], totals[0]])
        if w is not None or per_class is not None:
            total = totals[1].sum()
            if not total > 0:
                raise ValueError("sample_weight sums to zero; at least one weight must be positive")
        return classes, per_class, totals[1]

    def _edges(self, client, X, w, bin_seed, watched):
        """The local fit's bin edges: its sample of global rows, taken from each block where it lives, then
        fitted in one task."""
        rows = _core.bin_sample_rows(X.shape[0], bin_seed=bin_seed).astype(np.int64)
        keys = {f.key: f for f in futures_of([X] + ([w] if w is not None else []))}
        bounds = np.concatenate([[0], np.cumsum(X.chunks[0])])
        holders = client.who_has(list(keys.values()))
        X_parts, w_parts = [], []

        def take(key, local):  # on a worker that holds the block: the block never moves, only the sample
            return client.submit(_take, keys[key], local, workers=sorted(holders[key]), allow_other_workers=False,
                                 pure=False)

        for i, key in enumerate(_block_keys(X)):
            local = rows[(rows >= bounds[i]) & (rows < bounds[i + 1])] - bounds[i]
            if len(local) == 0:
                continue
            X_parts.append(take(key, local))
            if w is not None:
                w_parts.append(take(_block_keys(w)[i], local))
        return _gather_watching(client, [client.submit(_bin_edges, X_parts, w_parts, int(self.n_bins), pure=False)],
                                watched)[0]

    def _eval_parts(self, client, eval_set):
        """Each eval set as lists of blocks (futures of dask data, scattered numpy data) for every rank."""
        if eval_set is None:
            return []
        if isinstance(eval_set, tuple):
            eval_set = [eval_set]
        parts = []
        for item in eval_set:
            if not isinstance(item, tuple) or len(item) not in (2, 3):
                raise ValueError("eval_set must be a list of (X, y) or (X, y, sample_weight) tuples")
            sets = []
            for k, v in enumerate(item):
                if v is None:
                    sets.append(None)
                    continue
                if isinstance(v, (dd.DataFrame, dd.Series)):
                    v = v.to_dask_array(lengths=True)
                if isinstance(v, da.Array):
                    if k == 0:
                        v = v.rechunk({1: -1})
                    v = client.persist(v)
                    by_key = {f.key: f for f in futures_of(v)}
                    sets.append([by_key[key] for key in _block_keys(v)])
                else:
                    sets.append([client.scatter(np.asarray(v), broadcast=True)])
            parts.append(sets)
        return parts

    def _run(self, client, X, y, w, spec, eval_parts, watched):
        keys = {f.key: f for f in futures_of([X, y] + ([w] if w is not None else []))}
        X_keys, y_keys = _block_keys(X), _block_keys(y)
        w_keys = _block_keys(w) if w is not None else [None] * len(y_keys)
        holders = client.who_has([keys[k] for k in X_keys])
        offsets = np.concatenate([[0], np.cumsum(X.chunks[0])[:-1]]).astype(np.int64)
        by_worker, assigned = {}, {}
        for i, key in enumerate(X_keys):  # a block held twice goes to the holder with the fewest rows so far
            addr = min(sorted(holders[key]), key=lambda a: assigned.get(a, 0))
            assigned[addr] = assigned.get(addr, 0) + X.chunks[0][i]
            by_worker.setdefault(addr, []).append(i)
        ranks = sorted(by_worker)
        with exclusive_workers(client, ranks):  # no two fits wait for each other's threads
            client.run(install_mailbox, workers=ranks)
            fit = f"fit-{uuid.uuid4().hex}"
            futures = []
            for rank, addr in enumerate(ranks):
                blocks = by_worker[addr]
                futures.append(client.submit(
                    _fit_part, rank, fit, ranks, [keys[X_keys[i]] for i in blocks], [keys[y_keys[i]] for i in blocks],
                    [keys[w_keys[i]] for i in blocks] if w is not None else [], [int(offsets[i]) for i in blocks],
                    spec, eval_parts, workers=[addr], allow_other_workers=False, pure=False, retries=0))
            try:
                results = self._watch(client, futures, watched, (fit, ranks))
            finally:
                for f in futures:
                    if not f.done():
                        f.cancel()
        per_rank = [r["stats"] for r in results]
        stats = {"workers": len(ranks), "rows_per_worker": [r["rows"] for r in per_rank], "per_rank": per_rank,
                 "reductions": per_rank[0]["reductions"], "bytes_in": sum(r["bytes_received"] for r in per_rank)}
        return results[0], stats

    def _watch(self, client, futures, watched, fit):
        """Wait for every rank; a failed task or a lost worker aborts the all-reduce and raises at once."""
        while True:
            try:
                wait(futures, timeout=_POLL_SECONDS)
            except TimeoutError:
                pass
            failed = [f.exception() for f in futures if f.status == "error"]
            if failed:
                _abort(client, fit, f"another rank failed: {failed[0]!r}")
                # A rank's own error (bad data, say) comes first; the others only saw the abort.
                own = [e for e in failed if not isinstance(e, DaskFitError)]
                if own and not _lost_peer(own[0]):
                    raise own[0]
                raise DaskFitError(f"the fit failed on the cluster ({(own or failed)[0]!r}); no model was kept (the "
                                   "estimator is unchanged)") from (own or failed)[0]
            if all(f.status == "finished" for f in futures):
                return client.gather(futures)
            lost = _lost_workers(client, watched)
            lost += [f"task {f.key} ({f.status})" for f in futures if f.status in ("lost", "cancelled")]
            if lost:
                _abort(client, fit, f"worker {lost[0]} left the cluster during fit")
                raise DaskFitError(f"worker {lost[0]} left the cluster during fit; no model was kept (the "
                                   "estimator is unchanged). Fit again on the remaining workers.")

    def _finish(self, local, result, stats, classes, names, n_features):
        model = _core.Model.from_bytes(result["model"])
        self._check_divergence(result["stop_reason"], result["stop_message"], model.n_learners)
        self.classes_ = classes
        self.n_features_in_ = n_features
        if names is not None:
            self.feature_names_in_ = np.asarray(names, dtype=object)
        elif hasattr(self, "feature_names_in_"):
            del self.feature_names_in_
        if hasattr(local, "cost_matrix_"):
            self.cost_matrix_ = local.cost_matrix_
        if hasattr(local, "loss_"):  # REBEL's surrogate: what predict_proba inverts
            self.loss_ = local.loss_
        self._fit_seeds = local._fit_seeds
        self._model = model

        class _Record:  # what _record_fit reads of a TrainingMonitor
            scoring = result["scoring"]
            history = result["evals"]
            best_iteration = result["best_iteration"]
            early_stopping = result["early_stopping"]

        self._record_fit(result["history"], result["stop_reason"], _Record, result["stages"])
        self.fit_info_["dask"] = stats

    # ---- local twin, prediction, persistence ---------------------------------------------------
    def _local(self):
        params = {k: v for k, v in self.get_params(deep=False).items() if k != "client"}
        return self._local_class(**params)

    def to_local(self) -> BaseBoostingClassifier:
        """The fitted model as the local estimator (``REBELClassifier`` for ``DaskREBELClassifier``, ...)."""
        check_is_fitted(self)
        local = self._local()
        for key, value in self.__dict__.items():
            if key.endswith("_") and not key.startswith("__") or key in ("_model", "_fit_seeds"):
                setattr(local, key, value)
        return local

    def save(self, path: str | PathLike[str]) -> None:
        """Write the model file the local estimator writes (``rebelboost.load`` gives the local estimator)."""
        self.to_local().save(path)

    def _blockwise(self, X, method, width, dtype, **kwargs):
        """local.method on every block of a dask X: (n,) when width is None, else (n, width); empty blocks stay
        empty. Other X (numpy, pandas) is predicted here, as the local estimator does."""
        check_is_fitted(self)
        local = self.to_local()
        if not isinstance(X, (da.Array, dd.DataFrame)):  # numpy or pandas in: computed here, numpy out
            return getattr(local, method)(X, **kwargs)
        X, _ = _as_dask_matrix(X)
        if width is None:
            return X.map_blocks(_apply_block, local, method, kwargs, (), dtype, drop_axis=1, dtype=dtype)
        return X.map_blocks(_apply_block, local, method, kwargs, (width,), dtype, chunks=(X.chunks[0], (width,)),
                            dtype=dtype)

    def predict(self, X: Any, **kwargs: Any) -> Any:
        """Labels as a dask array (blockwise, with the fitted model); keyword arguments as the local predict."""
        return self._blockwise(X, "predict", None, self.classes_.dtype, **kwargs)

    def predict_proba(self, X: Any) -> Any:
        """Class probabilities as a dask array (n_samples, n_classes)."""
        return self._blockwise(X, "predict_proba", len(self.classes_), np.float64)

    def decision_function(self, X: Any) -> Any:
        """Scores as a dask array: (n_samples,) for binary models, else (n_samples, n_classes)."""
        k = len(self.classes_)  # two classes: one score, scikit-learn's convention
        return self._blockwise(X, "decision_function", None if k == 2 else k, np.float64)

    def __getstate__(self):
        state = super().__getstate__()
        state["client"] = None  # a client holds sockets; the unpickled estimator uses the default client
        return state


def _live_workers(client):
    """The addresses of the cluster's workers, asked of the scheduler itself. Not ``client.scheduler_info()``:
    the client's periodic refresh can overwrite the answer before it is returned with a copy that lists no
    worker (distributed 2026.8), which read as every worker lost (a fit failed so in the tests)."""
    return set(client.sync(client.scheduler.identity)["workers"])


def _lost_workers(client, watched):
    return sorted(set(watched) - _live_workers(client))


def _gather_watching(client, futures, watched):
    """The results of `futures`, waited for in short polls: if a worker of `watched` leaves the cluster first,
    DaskFitError (Dask alone would wait for blocks that only that worker held, for ever)."""
    while True:
        try:
            wait(futures, timeout=_POLL_SECONDS)
        except TimeoutError:
            pass
        if all(f.done() for f in futures):
            return client.gather(futures)
        lost = _lost_workers(client, watched)
        if lost:
            client.cancel(futures)
            raise DaskFitError(f"worker {lost[0]} left the cluster during fit (before training started); no "
                               "model was kept (the estimator is unchanged)")


def _abort(client, fit, reason):
    """Stop every rank of the fit waiting at a reduction (a lost worker's ranks need no stopping)."""
    fit_id, ranks = fit
    try:
        alive = _live_workers(client)
        # Not waited for: the scheduler would wait up to its connect timeout for a worker that just died.
        client.run(abort_fit, fit_id, reason, workers=[r for r in ranks if r in alive], wait=False)
    except Exception:  # noqa: BLE001 - the cluster is going away: its ranks fail on their own
        pass


def _lost_peer(error):
    """Whether a rank failed because a worker went away (a cluster fault, not the data's)."""
    return isinstance(error, OSError) and ("contact" in str(error) or "closed" in str(error).lower())


def _apply_block(block, local, method, kwargs, tail, dtype):
    if block.shape[0] == 0:
        return np.empty((0,) + tail, dtype=dtype)
    return getattr(local, method)(block, **kwargs)


def _block_keys(x):
    """The keys of x's blocks in row order (x has one block per row chunk)."""
    keys = x.__dask_keys__()
    return list(keys) if x.ndim == 1 else [row[0] for row in keys]


def _dask_class(local_class, doc):
    """The Dask twin of a local estimator: its parameters (same constraints) plus ``client``."""
    signature = inspect.signature(local_class.__init__)
    params = list(signature.parameters.values()) + [
        inspect.Parameter("client", inspect.Parameter.KEYWORD_ONLY, default=None, annotation="Client | None")]

    def __init__(self: Any, *args: Any, client: Client | None = None, **kwargs: Any) -> None:
        local_class.__init__(self, *args, **kwargs)
        self.client = client

    __init__.__signature__ = signature.replace(parameters=params)
    constraints = {**local_class._parameter_constraints, "client": "no_validation"}
    name = "Dask" + local_class.__name__
    return type(name, (_DaskMixin, local_class), {"__init__": __init__, "__doc__": doc, "_local_class": local_class,
                                                   "_parameter_constraints": constraints, "__module__": __name__})


_DOC = """{local} on a dask.distributed cluster: the same parameters plus ``client`` (None: the default
client). ``fit`` takes dask arrays or DataFrames; ``predict``, ``predict_proba`` and ``decision_function``
return dask arrays; ``to_local()`` gives the fitted {local}, whose model equals, bit for bit, the one
{local} fits on the same rows (docs/distributed.md). ``fit_info_["dask"]`` records the workers, rows per
worker, reductions and bytes moved."""

if TYPE_CHECKING:  # what _dask_class builds, as a type checker sees it: the local class's API plus client
    class DaskAdaBoostClassifier(_DaskMixin, AdaBoostClassifier): ...  # type: ignore[misc]
    class DaskVEBBoostClassifier(_DaskMixin, VEBBoostClassifier): ...  # type: ignore[misc]
    class DaskREBELClassifier(_DaskMixin, REBELClassifier): ...  # type: ignore[misc]
else:
    DaskAdaBoostClassifier = _dask_class(AdaBoostClassifier, _DOC.format(local="AdaBoostClassifier"))
    DaskVEBBoostClassifier = _dask_class(VEBBoostClassifier, _DOC.format(local="VEBBoostClassifier"))
    DaskREBELClassifier = _dask_class(REBELClassifier, _DOC.format(local="REBELClassifier"))
