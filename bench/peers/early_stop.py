"""Prediction that stops early, measured on Fashion-MNIST: exact early exit (10 classes) and soft cascades (binary).

1. Exact early exit, REBEL depth 2, 500 iterations on the 60 000 training images (10 classes): labels of
   predict(early_exit=True) against full evaluation on the 10 000 test images (asserted identical), mean
   learners per row for checks every 4-32 learners, wall time (batch, and one row at a time for 2 000 rows),
   and why it stops so late: after 250 learners the worst-case reach of the rest (sum |a_tl - a_tj|) against
   how far the scores really moved, and an oracle (the learner after which the argmax never changes again),
   the floor for any exact rule.
2. Soft cascade, T-shirt vs Shirt, AdaBoost depth 2, 1 000 trees on 80 % of the training pairs; thresholds
   calibrated on the other 20 % (a validation split of the training set, never the test set) for targets
   max_accuracy_loss and max_disagreement in {0.002, 0.005, 0.01, 0.02} (certified at 95 %), checkpoints every 1 and 4
   learners: mean learners per row and test error on the 2 000 test pairs against the target (the curve is
   bench/results/early_stop_cascade.png), plus wall time of batch and one-row prediction.

    OMP_WAIT_POLICY=passive python bench/peers/early_stop.py [--threads 2]
"""

from __future__ import annotations

import argparse
import copy
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
from compare_rebel import RESULTS, write  # noqa: E402
from datasets import fashion_mnist, fashion_pair  # noqa: E402
from predict_batch import interleaved_best as best_of  # noqa: E402

# Certifiable on the 2 400 calibration rows at 95 % (0 and 0.001 are not: calibrate_cascade refuses them).
TARGETS = (0.002, 0.005, 0.01, 0.02)


def exact_exit(threads, repeats):
    from rebelboost import REBELClassifier

    X_train, y_train, X_test, y_test = fashion_mnist()
    X_train, X_test = X_train.astype(np.float32), X_test.astype(np.float32)
    start = time.perf_counter()
    clf = REBELClassifier(n_estimators=500, max_depth=2, n_jobs=threads).fit(X_train, y_train)
    fit = time.perf_counter() - start
    model = clf._model
    full = clf.predict(X_test)
    out = {"fit_s": fit, "test_error": float(np.mean(full != y_test)), "checks": []}
    fns = {"full": lambda: model.predict(X_test, threads)}
    for every in (4, 8, 16, 32):
        labels, counts = model.predict(X_test, threads, -1, True, True, True, every)
        assert np.array_equal(labels, model.predict(X_test, threads)), "early exit changed a label"
        out["checks"].append({"every": every, "mean_learners": float(counts.mean()),
                              "median_learners": float(np.median(counts)), "rows_stopped_early": float(np.mean(counts < 500))})
        fns[f"exit every {every}"] = (lambda e: lambda: model.predict(X_test, threads, -1, False, True, True, e))(every)
    out["batch_s"] = best_of(fns, repeats)
    rows = [X_test[i:i + 1] for i in range(0, 10_000, 5)]
    one = {"full": lambda: [model.predict(r, 1) for r in rows],
           "exit every 8": lambda: [model.predict(r, 1, -1, False, True, True, 8) for r in rows]}
    out["one_row_us"] = {k: 1e6 * v / len(rows) for k, v in best_of(one, 3).items()}
    # Diagnostics from the per-learner outputs: the bound's reach after s learners vs the real movement.
    steps = np.array([t["step"] for t in model.trees()])
    signs = model.tree_outputs(X_test[:2000], threads).astype(np.float64)
    scores = model.bias + np.cumsum(signs[:, :, None] * steps[None], axis=1)  # after 1..T learners
    scores = np.concatenate([np.broadcast_to(model.bias, (2000, 1, 10)), scores], axis=1)
    lead = scores.argmax(axis=2)
    wrong = lead != lead[:, -1:]
    out["oracle_mean_learners"] = float(np.where(wrong.any(1), 501 - np.argmax(wrong[:, ::-1], axis=1), 0).mean())
    s = 250
    reach = np.abs(steps[s:, :, None] - steps[s:, None, :]).sum(axis=0)
    top2 = np.sort(scores[:, s], axis=1)
    moved = np.abs(scores[:, -1] - scores[:, s]).max(axis=1)
    out["after_250"] = {"median_gap": float(np.median(top2[:, -1] - top2[:, -2])),
                        "median_pair_reach": float(np.median(reach[np.triu_indices(10, 1)])),
                        "median_real_movement": float(np.median(moved))}
    return out


def cascade(threads, repeats):
    from sklearn.model_selection import train_test_split

    from rebelboost import AdaBoostClassifier

    X_train, y_train, X_test, y_test = fashion_pair(0, 6)
    X_fit, X_val, y_fit, y_val = train_test_split(X_train, y_train, test_size=0.2, random_state=0, stratify=y_train)
    clf = AdaBoostClassifier(n_estimators=1000, max_depth=2, n_jobs=threads).fit(X_fit, y_fit)
    full_error = float(np.mean(clf.predict(X_test) != y_test))
    curve = []
    for every in (1, 4):
        for kind in ("max_accuracy_loss", "max_disagreement"):
            for target in TARGETS:
                clf.calibrate_cascade(X_val, y_val, every=every, **{kind: target})
                labels, counts = clf.predict(X_test, cascade=True, return_n_learners=True)
                curve.append({"every": every, "kind": kind, "target": target, "mean_learners": float(counts.mean()),
                              "test_error": float(np.mean(labels != y_test)),
                              "error_change_pp": 100 * (float(np.mean(labels != y_test)) - full_error)})
                print(curve[-1], flush=True)
    sparse = copy.deepcopy(clf)
    clf.calibrate_cascade(X_val, y_val, max_accuracy_loss=0.002)
    sparse.calibrate_cascade(X_val, y_val, max_accuracy_loss=0.002, every=16)
    fns = {"full": lambda: clf.predict(X_test), "cascade": lambda: clf.predict(X_test, cascade=True),
           "cascade every 16": lambda: sparse.predict(X_test, cascade=True)}
    rows = [X_test[i:i + 1] for i in range(0, len(X_test), 2)]
    one = {"full": lambda: [clf.predict(r) for r in rows], "cascade": lambda: [clf.predict(r, cascade=True) for r in rows]}
    return {"full_test_error": full_error, "curve": curve, "batch_s": best_of(fns, repeats),
            "one_row_us": {k: 1e6 * v / len(rows) for k, v in best_of(one, 3).items()}}


def plot(result):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(10, 4))
    for every, style in ((1, "-o"), (4, "--s")):
        for kind, color in (("max_accuracy_loss", "C0"), ("max_disagreement", "C1")):
            pts = [p for p in result["curve"] if p["every"] == every and p["kind"] == kind]
            x = [100 * p["target"] for p in pts]
            axes[0].plot(x, [p["mean_learners"] for p in pts], style, color=color, label=f"{kind}, every {every}")
            axes[1].plot(x, [p["error_change_pp"] for p in pts], style, color=color, label=f"{kind}, every {every}")
    axes[0].set(xlabel="calibration target (% of validation rows)", ylabel="mean learners per test row (of 1 000)")
    axes[1].set(xlabel="calibration target (% of validation rows)", ylabel="test error change (percentage points)")
    axes[1].axhline(0.3, color="grey", lw=0.8, ls=":")
    axes[0].legend(fontsize=7)
    fig.suptitle("Soft cascade, F-MNIST T-shirt vs Shirt, AdaBoost depth 2, 1 000 trees")
    fig.tight_layout()
    fig.savefig(os.path.join(RESULTS, "early_stop_cascade.png"), dpi=110)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args(argv)
    load_before = f"{os.getloadavg()[0]:.2f}"
    ex = exact_exit(args.threads, args.repeats)
    ca = cascade(args.threads, args.repeats)
    plot(ca)
    full = ex["batch_s"]["full"]
    lines = [f"# Prediction that stops early, Fashion-MNIST ({time.strftime('%Y-%m-%d')}, {args.threads} threads)", "",
             "Command: `OMP_WAIT_POLICY=passive python bench/peers/early_stop.py`", "",
             "## Exact early exit: REBEL depth 2, 500 iterations, 10 classes, 10 000 test images",
             f"Test error {100 * ex['test_error']:.2f} %; labels with early exit identical to full evaluation on every "
             "test row (asserted).", "",
             "| check every | mean learners | median | rows stopping early | batch time / full |",
             "|---|---|---|---|---|"]
    for c in ex["checks"]:
        ratio = ex["batch_s"]["exit every %d" % c["every"]] / full
        lines.append(f"| {c['every']} | {c['mean_learners']:.1f} | {c['median_learners']:.0f} | "
                     f"{100 * c['rows_stopped_early']:.1f} % | {ratio:.2f} |")
    d = ex["after_250"]
    lines += ["", f"Batch full evaluation {1e3 * full:.1f} ms; one row at a time: full "
              f"{ex['one_row_us']['full']:.1f} µs, exact exit every 8 {ex['one_row_us']['exit every 8']:.1f} µs.", "",
              f"Why rows stop late: after 250 learners the median lead over the runner-up is {d['median_gap']:.2f}, "
              f"while the worst case the last 250 can move a pair of scores (sum |a_tl - a_tj|) is "
              f"{d['median_pair_reach']:.1f} (median over pairs); the scores really move by {d['median_real_movement']:.2f}. "
              f"An oracle that knew when the argmax stops changing would need {ex['oracle_mean_learners']:.1f} learners "
              "per row: far below what any bound over all leaf outcomes can certify.", "",
              "Issue 10's targets (at most 250 learners per row, 1.5x less time) are out of reach of an exact bound: the "
              "per-pair sums checked every 4 learners (the finest the prefix sums allow) are each pair's worst case "
              "over the remaining +-1 outputs, the tightest bound that treats those outputs as free +-1 values, and they "
              f"certify {ex['checks'][0]['mean_learners']:.0f} learners per row; evaluating "
              f"{ex['checks'][0]['mean_learners']:.0f} of 500 learners can save at most "
              f"{500 / ex['checks'][0]['mean_learners']:.2f}x, before the checks' own cost.", "",
              "## Soft cascade: T-shirt vs Shirt, AdaBoost depth 2, 1 000 trees (fit on 80 % of the training pairs, "
              "calibrated on the other 20 %)",
              f"Full evaluation test error {100 * ca['full_test_error']:.2f} % (2 000 test pairs; one row = 0.05 pp).", "",
              "| every | target | value | mean learners | fewer learners | test error | change (pp) |",
              "|---|---|---|---|---|---|---|"]
    for p in ca["curve"]:
        lines.append(f"| {p['every']} | {p['kind']} | {p['target']} | {p['mean_learners']:.1f} | "
                     f"{1000 / p['mean_learners']:.1f}x | {100 * p['test_error']:.2f} % | {p['error_change_pp']:+.2f} |")
    lines += ["", f"Wall time with max_accuracy_loss=0.002: batch (2 000 rows) full "
              f"{1e3 * ca['batch_s']['full']:.2f} ms, cascade every 1 {1e3 * ca['batch_s']['cascade']:.2f} ms, every 16 "
              f"{1e3 * ca['batch_s']['cascade every 16']:.2f} ms; one row at a time (every 1) full "
              f"{ca['one_row_us']['full']:.1f} µs, cascade {ca['one_row_us']['cascade']:.1f} µs.", "",
              f"Load average (1 min) before the run {load_before}, after {os.getloadavg()[0]:.2f} (2 cores, shared).", "",
              "![curve](early_stop_cascade.png)"]
    write("early_stop", lines, {"exact_exit": ex, "cascade": ca})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
