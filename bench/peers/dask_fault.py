"""A worker killed (SIGKILL) mid-fit on a 2-worker LocalCluster: seconds from the kill until fit raises, when the
victim is another rank's worker and when it is the all-reduce's own worker (400 000 x 20 rows, depth-6 trees).

    python bench/peers/dask_fault.py
"""
import os, signal, threading, time, numpy as np, dask.array as da, distributed
from rebelboost.dask import DaskAdaBoostClassifier, DaskFitError
if __name__ == "__main__":
    rng = np.random.default_rng(0); X = rng.normal(size=(400000, 20)); y = (X[:, 0] > 0).astype(int)
    for victim_index in (1, 0):  # a rank's worker; the actor's worker (rank 0)
        with distributed.LocalCluster(n_workers=2, threads_per_worker=1, dashboard_address=":0") as cl, distributed.Client(cl) as c:
            Xd, yd = c.persist([da.from_array(X, chunks=(200000, 20)), da.from_array(y, chunks=200000)])
            distributed.wait([Xd, yd])
            out = {}
            def fit():
                t = time.monotonic()
                try:
                    DaskAdaBoostClassifier(client=c, n_estimators=100000, max_depth=6).fit(Xd, yd)
                except Exception as e:
                    out["error"] = e
                out["end"] = time.monotonic()
            th = threading.Thread(target=fit); th.start(); time.sleep(4)
            victim = sorted(c.scheduler_info(n_workers=-1)["workers"])[victim_index]
            pid = c.run(os.getpid, workers=[victim])[victim]
            killed = time.monotonic(); os.kill(pid, signal.SIGKILL); th.join(120)
            print("victim", victim_index, "alive" if th.is_alive() else "ended", round(out.get("end", float("nan")) - killed, 2), "s:", type(out.get("error")).__name__, str(out.get("error"))[:150])
