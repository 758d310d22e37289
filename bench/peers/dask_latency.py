"""What one reduction costs on a 2-worker LocalCluster, for the designs issue 25 weighed:

- futures: the client submits one task per worker and gathers both results (a driver coordinating
  futures, one round trip per tree layer);
- actor from the client: the client calls an actor (a driver that holds an actor);
- star all-reduce through an actor, from the ranks (rebelboost.dask until 2026-11-27): one long task per
  worker calls the actor below once per reduction and gets the sum back;
- peer all-reduce among the ranks (rebelboost.dask now, rebelboost._collective): recursive doubling over
  Dask's worker-to-worker RPC.

Payloads of 0.4 MB and 8 MB per worker, plus the sizes a depth-3 tree of the 2 M x 50 task sends (about
0.1 to 0.4 MB). Median milliseconds per round trip over --rounds rounds.

    python bench/peers/dask_latency.py [--rounds 100] [--out bench/results/dask_latency.md]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import statistics
import subprocess
import sys
import time

import numpy as np

RESULTS = os.path.join(os.path.dirname(__file__), "..", "results")
SIZES = {"1 kB": 128, "0.1 MB": 12_800, "0.4 MB": 51_200, "8 MB": 1_024_000}  # int64 entries


def echo(values):
    return values


class Echo:
    def call(self, values):
        return values


class AllReduce:
    """A Dask actor that sums (or takes the maximum of) one int64 array from each of ``n_ranks`` ranks.

    Reduction ``seq`` completes when every rank has sent its array for it; every rank then receives the
    result. ``abort(reason)`` makes every waiting and later call raise, so no rank waits on a rank that
    died. The actor counts calls and bytes for the fit's record.
    """

    def __init__(self, n_ranks, timeout):
        self.n_ranks = n_ranks
        self.timeout = timeout
        self.rounds = {}
        self.aborted = None
        self.bytes_in = 0
        self.reductions = 0

    async def reduce(self, rank, seq, values, op):
        if self.aborted:
            raise RuntimeError(self.aborted)
        state = self.rounds.get(seq)
        if state is None:
            state = self.rounds[seq] = {"parts": {}, "done": asyncio.Event(), "result": None, "left": self.n_ranks}
        state["parts"][rank] = values
        self.bytes_in += values.nbytes
        if len(state["parts"]) == self.n_ranks:
            parts = list(state["parts"].values())
            result = parts[0].copy()
            combine = np.add if op == "sum" else np.maximum
            for p in parts[1:]:
                combine(result, p, out=result)
            state["result"] = result
            state["parts"] = None
            self.reductions += 1
            state["done"].set()
        else:
            start = time.monotonic()
            while not state["done"].is_set():
                try:
                    await asyncio.wait_for(state["done"].wait(), 1.0)
                except asyncio.TimeoutError:
                    pass
                if self.aborted:
                    raise RuntimeError(self.aborted)
                if time.monotonic() - start > self.timeout:
                    raise RuntimeError(f"reduction {seq}: rank(s) missing after {self.timeout:.0f} s")
        result = state["result"]
        state["left"] -= 1
        if state["left"] == 0:
            del self.rounds[seq]
        return result

    def abort(self, reason):
        self.aborted = reason
        for state in self.rounds.values():
            state["done"].set()

    def stats(self):
        return {"reductions": self.reductions, "bytes_in": self.bytes_in}


class _RankReducer:
    """What the core calls for each reduction on one rank: one blocking actor call."""

    def __init__(self, actor, rank, timeout):
        self.actor, self.rank, self.timeout = actor, rank, timeout
        self.seq = 0
        self.bytes_sent = 0
        self.seconds = 0.0

    def __call__(self, values, op):
        start = time.perf_counter()
        result = self.actor.reduce(self.rank, self.seq, values, op).result(timeout=self.timeout)
        self.seconds += time.perf_counter() - start
        self.seq += 1
        self.bytes_sent += values.nbytes
        return result


def timed_reductions(reducer, n_values, rounds):
    """Seconds per reduction of one rank, timed on its worker."""
    values = np.ones(n_values, dtype=np.int64)
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        reducer(values, "sum")
        times.append(time.perf_counter() - start)
    return times


def rank_loop(actor, rank, n_values, rounds):
    """One rank's side of the star all-reduce."""
    actor._try_bind_worker_client()
    return timed_reductions(_RankReducer(actor, rank, 60.0), n_values, rounds)


def peer_rank_loop(fit, rank, addresses, n_values, rounds):
    """One rank's side of the peer all-reduce (rebelboost._collective)."""
    from rebelboost._collective import PeerReducer

    reducer = PeerReducer(fit, rank, addresses, 60.0)
    times = timed_reductions(reducer, n_values, rounds)
    reducer.close()
    return times


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=100)
    parser.add_argument("--out", default=os.path.join(RESULTS, "dask_latency.md"))
    args = parser.parse_args(argv)
    import dask
    import distributed
    from distributed import Client, LocalCluster

    from rebelboost._collective import install_mailbox

    load_before = os.getloadavg()
    rows = {}
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0") as cluster, \
            Client(cluster) as client:
        workers = sorted(client.sync(client.scheduler.identity)["workers"])
        echo_actor = client.submit(Echo, actor=True, workers=[workers[0]]).result()
        client.run(install_mailbox)
        for label, n in SIZES.items():
            payload = np.ones(n, dtype=np.int64)
            parts = [client.scatter(payload, workers=[w]) for w in workers]
            futures, actor_calls = [], []
            for _ in range(args.rounds):
                start = time.perf_counter()
                client.gather([client.submit(echo, p, workers=[w], pure=False) for p, w in zip(parts, workers)])
                futures.append(time.perf_counter() - start)
            for _ in range(args.rounds):
                start = time.perf_counter()
                echo_actor.call(payload).result()
                actor_calls.append(time.perf_counter() - start)
            reducer = client.submit(AllReduce, 2, 60.0, actor=True, workers=[workers[0]], pure=False).result()
            ranks = [client.submit(rank_loop, reducer, r, n, args.rounds, workers=[w], pure=False)
                     for r, w in enumerate(workers)]
            per_rank = client.gather(ranks)
            allreduce = [max(a, b) for a, b in zip(*per_rank)]
            peers = [client.submit(peer_rank_loop, f"latency-{label}", r, workers, n, args.rounds, workers=[w],
                                   pure=False) for r, w in enumerate(workers)]
            peer = [max(a, b) for a, b in zip(*client.gather(peers))]
            rows[label] = {"futures_ms": 1e3 * statistics.median(futures),
                           "actor_from_client_ms": 1e3 * statistics.median(actor_calls),
                           "allreduce_from_ranks_ms": 1e3 * statistics.median(allreduce),
                           "peer_allreduce_ms": 1e3 * statistics.median(peer)}
            print(label, {k: round(v, 2) for k, v in rows[label].items()}, flush=True)
    meta = {"rebelboost_commit": subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                                                cwd=os.path.dirname(__file__)).stdout.strip(),
            "dask": dask.__version__, "distributed": distributed.__version__, "numpy": np.__version__,
            "python": platform.python_version(), "cpus": os.cpu_count(), "workers": "2 processes x 1 thread",
            "omp_wait_policy": os.environ.get("OMP_WAIT_POLICY", "default"),
            "load_before": [round(v, 2) for v in load_before], "load_after": [round(v, 2) for v in os.getloadavg()],
            "date": time.strftime("%Y-%m-%d %H:%M"),
            "command": "python bench/peers/dask_latency.py " + " ".join(sys.argv[1:])}
    lines = [f"# One reduction's cost on a LocalCluster ({meta['date']})", "", f"Command: `{meta['command']}`", "",
             f"Versions: rebelboost {meta['rebelboost_commit']}, dask {meta['dask']}, distributed {meta['distributed']}, "
             f"numpy {meta['numpy']}, Python {meta['python']}; {meta['cpus']} CPUs (shared VM), {meta['workers']}, "
             f"OpenMP wait policy {meta['omp_wait_policy']}; load "
             f"before {meta['load_before']}, after {meta['load_after']}.", "",
             f"Median milliseconds per round trip over {args.rounds} rounds; payload per worker. All-reduce: the "
             "slower of the two ranks per round (a reduction ends for the fit when both have their sum).", "",
             "| payload | futures: submit + gather to both workers | actor call from the client | star all-reduce "
             "through an actor, from the ranks | peer all-reduce among the ranks (rebelboost.dask) |",
             "|---|---|---|---|---|"]
    for label, r in rows.items():
        lines.append(f"| {label} | {r['futures_ms']:.2f} | {r['actor_from_client_ms']:.2f} | "
                     f"{r['allreduce_from_ranks_ms']:.2f} | {r['peer_allreduce_ms']:.2f} |")
    with open(args.out, "w") as handle:
        handle.write("\n".join(lines) + "\n")
    with open(os.path.splitext(args.out)[0] + ".json", "w") as handle:
        json.dump({"meta": meta, "results": rows}, handle, indent=1)
    print("\n".join(lines))


if __name__ == "__main__":
    main()
