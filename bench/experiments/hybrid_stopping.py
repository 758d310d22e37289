"""Stopping rules for the hybrid's default (issue 22 part 2; docs/guide/similarity.md "Defaults").

Per split (50/25/25 %, similarity_benchmark.split): the hybrid validated as bench/hybrid.py does it (fit on
the training half, depth and stage picked on the validation quarter's error), and the default's setting
(75 % of the training half fitted, the carved 25 % watched) at depth 1 and 2, the test error of the stage
each rule would keep: metric (the core's loss, error, log loss) x patience (50, 500) x ties (the first or,
for the error, the latest of equal best values), and the cap itself. Rules are applied to the recorded
curves offline, so one fit per depth serves them all.

    OMP_WAIT_POLICY=passive nice -n 5 python bench/experiments/hybrid_stopping.py wine hybrid 2000 1,2 5

Arguments: data set (scikit-learn's name, or an r-cran-mlbench csv cached by bench/hybrid.py), learner, cap,
depths of the validated run, splits.
"""
import json
import os
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "peers"))
from similarity_benchmark import load, split
from rebelboost import REBELClassifier
from rebelboost._validation import split_validation

def curves(clf, X, y):
    err, ll = [], []
    for s in clf.staged_decision_function(X):
        p = clf._scores_to_proba(s); idx = clf._scores_to_index(s)
        err.append(np.mean(idx != y))
        ll.append(-np.mean(np.log(np.clip(p[np.arange(len(y)), y], 1e-300, 1))))
    return np.array(err), np.array(ll)

def stop(values, patience, last_tie, tol=1e-7):
    best, best_k, anchor = np.inf, 0, 0
    for k, v in enumerate(values, 1):
        if v < best - tol: best, best_k, anchor = v, k, k
        elif last_tie and v <= best + tol: best_k, anchor = k, k
        if k - anchor >= patience: break
    return best_k

name, learner, T = sys.argv[1], sys.argv[2], int(sys.argv[3])
depths = [int(d) for d in sys.argv[4].split(",")] if len(sys.argv) > 4 else [2]
csv = os.path.expanduser(f"~/.cache/rebelboost-bench/{name}.csv")
if os.path.exists(csv):
    t = np.genfromtxt(csv, delimiter=",", skip_header=1); t = t[~np.isnan(t).any(axis=1)]; X, y = t[:, :-1], t[:, -1].astype(int)
else:
    X, y = load(name)
_, y = np.unique(y, return_inverse=True)
out = {}
for seed in range(int(sys.argv[5]) if len(sys.argv) > 5 else 5):
    Xtr, ytr, Xva, yva, Xte, yte = split(X, y, seed)
    row = {}
    # the validated long run: full training half, T and depth picked on the validation quarter's error
    best = None
    for depth in depths:
        clf = REBELClassifier(weak_learner=learner, n_estimators=T, early_stopping=False, max_depth=depth, n_jobs=2).fit(Xtr, ytr)
        ve, _ = curves(clf, Xva, yva); te, _ = curves(clf, Xte, yte)
        k = int(np.argmin(ve))
        if best is None or ve[k] < best[0]: best = (ve[k], te[k], depth, k + 1)
    row["validated"] = best[1]; row["validated_choice"] = best[2:]
    # the default: 75 % of the training half, carved 25 % watched
    Xa, ya, _, val = split_validation(Xtr, ytr, None, 0.25, 0)
    for depth in (1, 2):
        t = time.time()
        clf = REBELClassifier(weak_learner=learner, n_estimators=T, early_stopping=False, max_depth=depth, n_jobs=2).fit(Xa, ya)
        secs = time.time() - t
        clf2 = REBELClassifier(weak_learner=learner, n_estimators=T, early_stopping=False, max_depth=depth, n_jobs=2).fit(Xa, ya, eval_set=[(val.X, val.y)])
        vloss = clf2.evals_result_["valid_0"]["loss"]
        ve, vll = curves(clf, val.X, val.y); te, _ = curves(clf, Xte, yte)
        for metric, vals in (("loss", vloss), ("error", ve), ("log_loss", vll)):
            for pat in (50, 500):
                for lt in (False, True):
                    if metric != "error" and lt: continue
                    k = stop(vals, pat, lt)
                    row[f"d{depth} {metric} p{pat}{' last' if lt else ''}"] = (te[k - 1], k)
        row[f"d{depth} cap"] = (te[-1], T)
        row[f"d{depth} sim share"] = float(np.mean(clf.fit_info_["learner"])) if learner == "hybrid" else 1.0
    out[seed] = row
    print(name, seed, json.dumps(row), flush=True)
keys = [k for k in out[0] if k not in ("validated", "validated_choice") and "share" not in k]
print(f"{name} {learner} validated mean {100*np.mean([r['validated'] for r in out.values()]):.2f}")
for k in keys:
    print(f"  {k:28s} {100*np.mean([r[k][0] for r in out.values()]):6.2f}  T {np.mean([r[k][1] for r in out.values()]):7.0f}")
