"""Why similarities trail on Vehicle (issue 22, point 4): does the metric move them?

Vehicle (r-cran-mlbench: 846 silhouettes, 18 shape features, 4 classes) is the set where an MLP errs about
17.5 % and every other method at least 23 %. Localized Similarities compare whole rows by a Euclidean
distance, so the metric is theirs to lose. Each metric below is fitted on the training half only and fed to
similarity-REBEL with one global scale (`similarity_scaling="global"`; "feature" is the default per-feature
deviation):

- feature: the default, each feature divided by its deviation;
- whitened: PCA whitening (decorrelated, unit variance per component);
- importance^p: standardised features times (importance / max importance)^p, the importances of a REBEL tree
  model on the training half (p in {0.5, 1, 2}, picked on validation);
- NCA: scikit-learn's NeighborhoodComponentsAnalysis, a metric learned for nearest neighbours;
- LDA: the 3 discriminant directions (a learned projection).

Protocol: 50/25/25 stratified splits (seeds 0..S-1); similarity-REBEL grows up to --learners learners and
the stage of lowest validation error is kept; k-NN (k picked on validation) under the same metric shows
whether the metric itself helps a distance-based method; trees (depth 1-3 picked on validation) and an MLP
(small grid on validation) are the references. The test quarter is read only for the reported errors.

    OMP_WAIT_POLICY=passive python bench/experiments/vehicle_metric.py --splits 5
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

import numpy as np
from sklearn.decomposition import PCA
from sklearn.discriminant_analysis import LinearDiscriminantAnalysis
from sklearn.model_selection import train_test_split
from sklearn.neighbors import KNeighborsClassifier, NeighborhoodComponentsAnalysis
from sklearn.neural_network import MLPClassifier
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from rebelboost import REBELClassifier

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))  # harness, mlbench
import mlbench  # noqa: E402
from harness import markdown_table, record  # noqa: E402

THREADS = 2


def split(X, y, seed):
    Xtr, Xrest, ytr, yrest = train_test_split(X, y, test_size=0.5, random_state=seed, stratify=y)
    Xva, Xte, yva, yte = train_test_split(Xrest, yrest, test_size=0.5, random_state=seed, stratify=yrest)
    return Xtr, ytr, Xva, yva, Xte, yte


def importance_scaler(Xtr, ytr, power):
    trees = REBELClassifier(max_depth=2, n_estimators=300, n_jobs=THREADS, random_state=0).fit(Xtr, ytr)
    weight = (trees.feature_importances_ / trees.feature_importances_.max()) ** power
    scaler = StandardScaler().fit(Xtr)
    return lambda X: scaler.transform(X) * weight


def metrics(Xtr, ytr):
    """{name: (transform, similarity_scaling)}, every transform fitted on the training half only."""
    scaler = StandardScaler().fit(Xtr)
    whiten = PCA(whiten=True, random_state=0).fit(Xtr)
    nca = make_pipeline(StandardScaler(), NeighborhoodComponentsAnalysis(random_state=0, max_iter=200)).fit(Xtr, ytr)
    lda = make_pipeline(StandardScaler(), LinearDiscriminantAnalysis()).fit(Xtr, ytr)
    out = {"feature": (lambda X: X, "feature"), "standardised, global": (scaler.transform, "global"),
           "whitened": (whiten.transform, "global"), "NCA": (nca.transform, "global"), "LDA": (lda.transform, "global")}
    for power in (0.5, 1.0, 2.0):
        out[f"importance^{power:g}"] = (importance_scaler(Xtr, ytr, power), "global")
    return out


def similarity_error(d, transform, scaling, learners):
    """Test error at the stage of lowest validation error (the first on ties), that error and the stage."""
    Xtr, ytr, Xva, yva, Xte, yte = d
    clf = REBELClassifier(weak_learner="similarity", similarity_scaling=scaling, n_estimators=learners,
                          n_jobs=THREADS, scoring="error")
    clf.fit(transform(Xtr), ytr, eval_set=[(transform(Xva), yva)])
    val = np.asarray(clf.evals_result_["valid_0"]["error"])
    T = int(np.argmin(val)) + 1
    return float(np.mean(clf.predict(transform(Xte), n_iter=T) != yte)), float(val[T - 1]), T


def knn_error(d, transform, scaling):
    """k-NN under the similarities' metric: the transform, then per-feature deviations for "feature"."""
    Xtr, ytr, Xva, yva, Xte, yte = d
    Z = [transform(X) for X in (Xtr, Xva, Xte)]
    if scaling == "feature":
        scaler = StandardScaler().fit(Z[0])
        Z = [scaler.transform(z) for z in Z]
    val = {k: np.mean(KNeighborsClassifier(k).fit(Z[0], ytr).predict(Z[1]) != yva) for k in range(1, 16, 2)}
    k = min(val, key=val.get)
    return float(np.mean(KNeighborsClassifier(k).fit(Z[0], ytr).predict(Z[2]) != yte))


def reference_errors(d):
    Xtr, ytr, Xva, yva, Xte, yte = d
    best = {}
    for depth in (1, 2, 3):
        clf = REBELClassifier(max_depth=depth, n_estimators=1000, n_jobs=THREADS, scoring="error")
        clf.fit(Xtr, ytr, eval_set=[(Xva, yva)])
        val = np.asarray(clf.evals_result_["valid_0"]["error"])
        T = int(np.argmin(val)) + 1
        if "trees" not in best or val[T - 1] < best["trees"][0]:
            best["trees"] = (val[T - 1], float(np.mean(clf.predict(Xte, n_iter=T) != yte)))
    for hidden in ((100,), (200,), (100, 100)):
        for alpha in (1e-4, 1e-2):
            mlp = make_pipeline(StandardScaler(), MLPClassifier(hidden, alpha=alpha, max_iter=3000, random_state=0))
            mlp.fit(Xtr, ytr)
            val = np.mean(mlp.predict(Xva) != yva)
            if "MLP" not in best or val < best["MLP"][0]:
                best["MLP"] = (val, float(np.mean(mlp.predict(Xte) != yte)))
    return {name: test for name, (_, test) in best.items()}


def one_split(X, y, seed, learners):
    d = split(X, y, seed)
    rows = []
    for name, (transform, scaling) in metrics(d[0], d[1]).items():
        start = time.perf_counter()
        test, val, T = similarity_error(d, transform, scaling, learners)
        rows.append({"split": seed, "metric": name, "similarity test": test, "similarity val": val, "stage": T,
                     "k-NN test": knn_error(d, transform, scaling), "seconds": time.perf_counter() - start})
    return rows, reference_errors(d)


def summary(rows, references, n_splits):
    out = []
    for name in dict.fromkeys(r["metric"] for r in rows):
        mine = [r for r in rows if r["metric"] == name]
        test = np.array([r["similarity test"] for r in mine])
        out.append({"metric": name, "similarity test % (mean)": round(100 * test.mean(), 2),
                    "std": round(100 * test.std(ddof=1), 2) if len(test) > 1 else "",
                    "similarity val % (mean)": round(100 * np.mean([r["similarity val"] for r in mine]), 2),
                    "stage (median)": int(np.median([r["stage"] for r in mine])),
                    "k-NN test % (mean)": round(100 * np.mean([r["k-NN test"] for r in mine]), 2)})
    picked = []  # per split, the metric of lowest similarity validation error (the first listed on ties)
    for seed in dict.fromkeys(r["split"] for r in rows):
        mine = [r for r in rows if r["split"] == seed]
        picked.append(min(mine, key=lambda r: r["similarity val"]))
    test = np.array([r["similarity test"] for r in picked])
    out.append({"metric": "picked on validation (" + ", ".join(r["metric"] for r in picked) + ")",
                "similarity test % (mean)": round(100 * test.mean(), 2),
                "std": round(100 * test.std(ddof=1), 2) if len(test) > 1 else "",
                "similarity val % (mean)": round(100 * np.mean([r["similarity val"] for r in picked]), 2),
                "stage (median)": int(np.median([r["stage"] for r in picked])), "k-NN test % (mean)": ""})
    lines = ["# Vehicle: does the metric move the similarities? (issue 22, point 4)", "",
             f"{n_splits} stratified 50/25/25 splits; every transform fitted on the training half; stage and k "
             "picked on validation error (see the script's docstring).", ""]
    lines += markdown_table(out)
    lines += ["", "References on the same splits (test % mean): " + ", ".join(
        f"{name} {100 * np.mean([r[name] for r in references]):.2f}" for name in references[0]), ""]
    return lines


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--splits", type=int, default=5)
    parser.add_argument("--learners", type=int, default=3000)
    parser.add_argument("--out-name", default="vehicle_metric")
    parser.add_argument("--report", default=None, help="rewrite the report from this JSON of an earlier run")
    args = parser.parse_args()
    if args.report:
        with open(args.report, encoding="utf-8") as handle:
            saved = json.load(handle)
        rows, references = saved["results"]["rows"], saved["results"]["references"]
        lines = summary(rows, references, len(references))
        record(args.out_name, saved["results"], lines, threads=THREADS, env=saved["environment"])
        print("\n".join(lines))
        return
    X, y = mlbench.load("Vehicle")
    rows, references = [], []
    for seed in range(args.splits):
        r, ref = one_split(X, y, seed, args.learners)
        rows += r
        references.append(ref)
        print(f"split {seed}: " + ", ".join(f"{x['metric']} {100 * x['similarity test']:.1f}" for x in r), ref, flush=True)
    lines = summary(rows, references, args.splits)
    record(args.out_name, {"rows": rows, "references": references}, lines, threads=THREADS)
    print("\n".join(lines))


if __name__ == "__main__":
    main()
