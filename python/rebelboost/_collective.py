"""The all-reduce among the ranks of a distributed fit, over dask.distributed's own worker-to-worker RPC.

Every rank's worker holds a :class:`Mailbox`: a handler on the worker's RPC server (as Dask's P2P shuffle
adds its own) that receives a peer's array and keeps it until the rank asks for it. ``install_mailbox``
adds it, once per worker, through ``client.run``; several fits share it, each under its own id. A reduction is recursive
doubling: with P ranks (a power of two) each rank exchanges its running sum with rank ``r ^ d`` for
d = 1, 2, 4, ..., so after log2(P) exchanges every rank holds the total. With W ranks that are not a power
of two, the ranks r >= P (P the largest power of two below W) first hand their arrays to rank r - P and
get the total back at the end. The arrays are int64 (exact fixed-point and ExactSum digits), so the order
of the additions never changes the result.

Against the star all-reduce through one actor, a reduction costs one worker-to-worker message per step
instead of a call to the actor's worker and its answer, and no worker receives W arrays (docs/distributed.md,
"The protocol and its costs").
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
import weakref
from contextlib import contextmanager

import numpy as np
from distributed import Lock, get_worker
from distributed.protocol import to_serialize
from distributed.utils import sync

_PUT = "rebelboost_allreduce_put"
_POLL_SECONDS = 1.0

logger = logging.getLogger("rebelboost.dask")

# One distributed.Lock per client and worker, reused by every fit: each Lock object keeps a lease-refresh
# timer on the client's loop for as long as it lives, so a new one per fit would add timers without bound.
_WORKER_LOCKS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_WORKER_LOCKS_GUARD = threading.Lock()


class DaskFitError(RuntimeError):
    """A distributed fit failed because of the cluster (a worker lost, the all-reduce aborted)."""


class Mailbox:
    """Arrays sent to this worker's ranks, keyed by (fit, reduction, step, sender), and the fits aborted."""

    def __init__(self):
        self.slots = {}
        self.aborted = {}

    def _slot(self, key):
        slot = self.slots.get(key)
        if slot is None:
            slot = self.slots[key] = {"event": asyncio.Event(), "values": None}
        return slot

    async def put(self, fit, seq, step, src, values):
        if fit in self.aborted:
            return "aborted"
        slot = self._slot((fit, seq, step, src))
        slot["values"] = values
        slot["event"].set()
        return "OK"

    async def take(self, fit, seq, step, src, timeout):
        """The array `src` sent for this step: waits until it came, the fit is aborted, or `timeout`."""
        key = (fit, seq, step, src)
        slot = self._slot(key)
        start = time.monotonic()
        while not slot["event"].is_set():
            if fit in self.aborted:
                raise DaskFitError(self.aborted[fit])
            if time.monotonic() - start > timeout:
                raise DaskFitError(f"reduction {seq}: rank {src} sent nothing for {timeout:.0f} s")
            try:
                await asyncio.wait_for(slot["event"].wait(), _POLL_SECONDS)
            except asyncio.TimeoutError:
                pass
        if fit in self.aborted:
            raise DaskFitError(self.aborted[fit])
        del self.slots[key]
        return slot["values"]

    def abort(self, fit, reason):
        self.aborted[fit] = reason
        for key, slot in self.slots.items():
            if key[0] == fit:
                slot["event"].set()

    def forget(self, fit):
        """Drop what is left of a finished fit (its abort mark stays: a late message is refused)."""
        for key in [k for k in self.slots if k[0] == fit]:
            del self.slots[key]


def install_mailbox(dask_worker=None):
    """Run on a worker (``client.run``): give it a mailbox and its handler, unless it has them."""
    if getattr(dask_worker, "_rebelboost_mailbox", None) is None:
        dask_worker._rebelboost_mailbox = Mailbox()
        dask_worker.handlers[_PUT] = dask_worker._rebelboost_mailbox.put


async def abort_fit(fit, reason, dask_worker=None):
    """Run on a worker (``client.run``): every rank of `fit` waiting there raises DaskFitError(reason).
    A coroutine, so that the client need not wait for it (``client.run(..., wait=False)`` runs only those)."""
    mailbox = getattr(dask_worker, "_rebelboost_mailbox", None)
    if mailbox is not None:
        mailbox.abort(fit, reason)


@contextmanager
def exclusive_workers(client, addresses):
    """Hold a lock for each worker of a fit, taken in address order, while its ranks run.

    Every rank of a fit must run at once: each waits for all the others at every reduction. Two fits sharing
    workers could otherwise each hold a worker's thread that the other's rank is queued behind, and both
    would wait until the backstop timeout. Taking the locks in one order for every fit rules that circular
    wait out. A rank uses all its worker's threads (``n_jobs=None``), so fits that share a worker run one
    after the other; fits on disjoint workers still run side by side (docs/distributed.md, "Faults and
    awkward layouts")."""
    held = []
    try:
        for address in sorted(addresses):
            lock = _worker_lock(client, address)
            if not lock.acquire(timeout=1.0):
                logger.info("waiting for another rebelboost fit to finish on %s", address)
                lock.acquire()
            held.append(lock)
        yield
    finally:
        for lock in reversed(held):
            try:
                lock.release()
            except Exception:  # noqa: BLE001 - the scheduler is gone: its locks went with it
                pass


def _worker_lock(client, address):
    with _WORKER_LOCKS_GUARD:
        locks = _WORKER_LOCKS.setdefault(client, {})
        if address not in locks:
            locks[address] = Lock(f"rebelboost-worker-{address}", scheduler_rpc=client.scheduler, loop=client.loop)
        return locks[address]


class PeerReducer:
    """One rank's side, called by the C++ core for each reduction: the sum (or maximum) over every rank of
    an int64 array. Counts reductions, bytes sent and received, and seconds spent."""

    def __init__(self, fit, rank, addresses, timeout):
        self.worker = get_worker()
        self.mailbox = self.worker._rebelboost_mailbox
        self.fit, self.rank, self.addresses, self.timeout = fit, rank, list(addresses), timeout
        self.seq = 0
        self.failure = None  # the error that ended a reduction: the core raises it again as RuntimeError
        self.bytes_sent = self.bytes_received = 0
        self.seconds = 0.0

    def __call__(self, values, op):
        start = time.perf_counter()
        values = np.ascontiguousarray(values, dtype=np.int64)
        combine = np.add if op == "sum" else np.maximum
        try:
            result = sync(self.worker.loop, self._allreduce, values, combine)
        except BaseException as e:
            self.failure = e
            raise
        self.seq += 1
        self.seconds += time.perf_counter() - start
        return result

    def close(self):
        self.mailbox.forget(self.fit)

    async def _send(self, dest, step, values):
        # No answer is awaited: that would add a round trip to every step. A peer that is gone fails the write
        # (or never sends its own part, and the client aborts the fit); an aborted peer drops the message.
        try:
            await self.worker.rpc(self.addresses[dest]).rebelboost_allreduce_put(
                fit=self.fit, seq=self.seq, step=step, src=self.rank, values=to_serialize(values), reply=False)
        except (OSError, asyncio.TimeoutError) as e:  # CommClosedError is an OSError
            raise DaskFitError(f"rank {dest} ({self.addresses[dest]}) could not be reached: {e}") from None
        self.bytes_sent += values.nbytes

    async def _take(self, src, step):
        values = await self.mailbox.take(self.fit, self.seq, step, src, self.timeout)
        self.bytes_received += values.nbytes
        return values

    async def _exchange(self, peer, step, acc, combine):
        send = asyncio.ensure_future(self._send(peer, step, acc))
        try:
            other = await self._take(peer, step)
        finally:
            await send
        return combine(acc, other)

    async def _allreduce(self, acc, combine):
        n, r = len(self.addresses), self.rank
        p = 1 << (n.bit_length() - 1)  # the largest power of two <= n
        if r >= p:  # fold into rank r - p, get the total back from it
            await self._send(r - p, "fold", acc)
            return await self._take(r - p, "unfold")
        if r + p < n:
            acc = combine(acc, await self._take(r + p, "fold"))
        d = 1
        while d < p:
            acc = await self._exchange(r ^ d, d, acc, combine)
            d <<= 1
        if r + p < n:
            await self._send(r + p, "unfold", acc)
        return acc
