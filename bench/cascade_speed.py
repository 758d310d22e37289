"""Soft cascade and exact early exit against full evaluation: wall time at 100 000 rows, side by side.

Per model: full evaluation, the cascade (calibrated with max_accuracy_loss at 95 % confidence on held-out
training rows, with the default every=None, which chooses the spacing, and with every=4) and exact early exit, on a batch of 100 000 rows
drawn with replacement from the task's test rows, 2 threads. The calls are interleaved, the order rotating
each round; the best of the rounds is reported (the machine is shared), with the median as a check, and the
median process CPU time of each call (the work, which other jobs disturb less than the wall time). The
cascade's ideal speed-up is n_learners / mean learners per row; its efficiency is the measured speed-up
over the ideal. One row at a time (2 000 rows through predict, 1 thread): full, exact exit and the default cascade.

Models: F-MNIST T-shirt vs Shirt, Pullover vs Coat and Dress vs Coat (a pair no setting was tuned on; AdaBoost,
depth 2, 1 000 trees; 784 float32 features), Hastie 10.2 (AdaBoost, depth 2, 400 trees; 10 float64 features), digits (REBEL, depth 2, 300
trees, 10 classes; 64 features), Letter (r-cran-mlbench's LetterRecognition, REBEL, depth 2, 400 trees, 26 classes;
16 features: issue 19's exact-exit case), and two models whose last learners are small, where exact exit
decides most rows early (REBEL depth 3 on make_classification, 20 features, 2 and 5 classes: 60 trees at
learning rate 1, then warm-started to 400 at 0.02).

    OMP_WAIT_POLICY=passive python bench/cascade_speed.py [--threads 2] [--rounds 15]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "peers"))
from datasets import fashion_pair, hastie  # noqa: E402
from run_environment import environment_line, publish  # noqa: E402

RESULTS = os.path.join(HERE, "results")
N_ROWS = 100_000


def fashion(a, b, threads):
    from sklearn.model_selection import train_test_split

    from rebelboost import AdaBoostClassifier

    X_train, y_train, X_test, _ = fashion_pair(a, b)
    X_fit, X_val, y_fit, y_val = train_test_split(X_train, y_train, test_size=0.2, random_state=0, stratify=y_train)
    clf = AdaBoostClassifier(n_estimators=1000, max_depth=2, n_jobs=threads).fit(X_fit, y_fit)
    return clf, X_val, y_val, X_test


def hastie_model(threads):
    from rebelboost import AdaBoostClassifier

    X_fit, y_fit, X_rest, y_rest = hastie(n_train=10_000, n_test=22_000, seed=0)
    clf = AdaBoostClassifier(n_estimators=400, max_depth=2, n_jobs=threads).fit(X_fit, y_fit)
    return clf, X_rest[:2000], y_rest[:2000], X_rest[2000:]


def digits_model(threads):
    from sklearn.datasets import load_digits

    from rebelboost import REBELClassifier

    X, y = load_digits(return_X_y=True)
    order = np.random.RandomState(0).permutation(len(y))
    X, y = X[order], y[order]
    clf = REBELClassifier(n_estimators=300, max_depth=2, n_jobs=threads).fit(X[:897], y[:897])
    return clf, X[897:1347], y[897:1347], X[1347:]


def letter_model(threads):
    import mlbench

    from rebelboost import REBELClassifier

    X, y = mlbench.load("LetterRecognition", target=0)  # 20 000 x 16, 26 classes
    order = np.random.RandomState(0).permutation(len(y))
    X, y = X[order], y[order]
    clf = REBELClassifier(n_estimators=400, max_depth=2, n_jobs=threads).fit(X[:10_000], y[:10_000])
    return clf, X[10_000:12_000], y[10_000:12_000], X[12_000:]


def fine_tuned_model(n_classes, threads):
    """REBEL, depth 3: 60 trees at learning rate 1, then warm-started to 400 at learning rate 0.02 (a model
    whose last learners are small: there exact exit decides most rows early)."""
    from sklearn.datasets import make_classification

    from rebelboost import REBELClassifier

    X, y = make_classification(42_000, 20, n_informative=10, n_classes=n_classes, class_sep=1.5, random_state=0)
    clf = REBELClassifier(n_estimators=60, max_depth=3, learning_rate=1.0, warm_start=True, n_jobs=threads)
    clf.fit(X[:20_000], y[:20_000]).set_params(n_estimators=400, learning_rate=0.02).fit(X[:20_000], y[:20_000])
    return clf, X[20_000:22_000], y[20_000:22_000], X[22_000:]


CPU = {}  # (model, path) -> median process CPU time of a call (all threads): the work, whatever the load


def interleaved(fns, rounds, cpu_key=None):
    """Best and median wall time of each call, interleaved with a rotating order, after a warm-up each.

    With cpu_key, also records each call's median process CPU time in CPU[(cpu_key, path)]: on a shared
    machine the wall time of a 2-thread call depends on the other jobs, the CPU time much less."""
    for f in fns.values():
        f()
    times = {k: [] for k in fns}
    cpu = {k: [] for k in fns}
    keys = list(fns)
    for i in range(rounds):
        for k in keys[i % len(keys):] + keys[:i % len(keys)]:
            start, start_cpu = time.perf_counter(), time.process_time()
            fns[k]()
            times[k].append(time.perf_counter() - start)
            cpu[k].append(time.process_time() - start_cpu)
    if cpu_key is not None:
        for k, v in cpu.items():
            CPU[(cpu_key, k)] = float(np.median(v))
    return {k: (min(v), float(np.median(v))) for k, v in times.items()}


def paired_ratios(full, path, rounds):
    """Median over rounds of full's time / path's time, wall and process CPU, the two calls back to back in an
    order alternating each round: a ratio within one round cancels the machine's slower drifts, which move
    both calls alike (the acceptance figure for exact exit, "never slower than full evaluation")."""
    full(), path()
    wall, cpu = [], []
    for i in range(rounds):
        pair = {}
        for key, fn in ((("full", full), ("path", path)) if i % 2 == 0 else (("path", path), ("full", full))):
            start, start_cpu = time.perf_counter(), time.process_time()
            fn()
            pair[key] = (time.perf_counter() - start, time.process_time() - start_cpu)
        wall.append(pair["full"][0] / pair["path"][0])
        cpu.append(pair["full"][1] / pair["path"][1])
    return float(np.median(wall)), float(np.median(cpu))


def measure(name, clf, X_val, y_val, X_pool, target, threads, rounds):
    import copy

    rng = np.random.RandomState(0)
    X = np.ascontiguousarray(X_pool[rng.randint(0, len(X_pool), N_ROWS)])
    T = clf._model.n_learners
    cascades = {}
    for every in (None, 4):
        c = copy.deepcopy(clf).calibrate_cascade(X_val, y_val, max_accuracy_loss=target, every=every)
        cascades["default" if every is None else every] = c
    model = clf._model
    # The same arguments on every path (inf check on, as predict() does).
    fns = {"full": lambda: model.predict(X, threads, -1, False, True, False, 0, False),
           "exact exit": lambda: model.predict(X, threads, -1, False, True, True, 0, False)}
    learners = {"full": float(T),
                "exact exit": float(model.predict(X, threads, -1, True, True, True, 0, False)[1].mean())}
    full_labels = model.predict(X, threads)
    assert np.array_equal(model.predict(X, threads, -1, False, True, True, 0, False), full_labels), "exit changed a label"
    for every, c in cascades.items():
        m = c._model
        label = f"cascade (default: every {c.cascade_report_['every']})" if every == "default" else f"cascade every {every}"
        fns[label] = (lambda m: lambda: m.predict(X, threads, -1, False, True, False, 0, True))(m)
        learners[label] = float(m.predict(X, threads, -1, True, True, False, 0, True)[1].mean())
    batch = interleaved(fns, rounds, cpu_key=name)
    # Exact exit against full alone, twice the rounds: the two calls side by side (the acceptance ratio).
    paired = interleaved({"full": fns["full"], "exact exit": fns["exact exit"]}, 2 * rounds)
    exit_ratio = paired_ratios(fns["full"], fns["exact exit"], 2 * rounds)
    rows = [np.ascontiguousarray(X[i:i + 1]) for i in range(2000)]
    cd = cascades["default"]._model
    one = {"full": lambda: [model.predict(r, 1, -1, False, True, False, 0, False) for r in rows],
           "exact exit": lambda: [model.predict(r, 1, -1, False, True, True, 0, False) for r in rows],
           f"cascade (default: every {cascades['default'].cascade_report_['every']})":
               lambda: [cd.predict(r, 1, -1, False, True, False, 0, True) for r in rows]}
    single = interleaved(one, 9, cpu_key=name + " one row")
    exit_ratio_one = paired_ratios(one["full"], one["exact exit"], 2 * 9)
    out = {"model": name, "n_learners": T, "target": target, "rows": N_ROWS, "threads": threads,
           "batch_ms": {k: [1e3 * v[0], 1e3 * v[1]] for k, v in batch.items()}, "mean_learners": learners,
           "exit_paired_ms": {k: [1e3 * v[0], 1e3 * v[1]] for k, v in paired.items()},
           "exit_ratio_batch": exit_ratio, "exit_ratio_one_row": exit_ratio_one,
           "one_row_us": {k: [1e6 * v[0] / len(rows), 1e6 * v[1] / len(rows)] for k, v in single.items()},
           "reports": {str(every): c.cascade_report_ for every, c in cascades.items()},
           "batch_cpu_ms": {k: 1e3 * CPU[(name, k)] for k in batch},
           "one_row_cpu_us": {k: 1e6 * CPU[(name + " one row", k)] / len(rows) for k in single}}
    print(json.dumps({k: out[k] for k in ("model", "batch_ms", "mean_learners", "one_row_us")}), flush=True)
    return out


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=15)
    args = parser.parse_args(argv)
    env_before = environment_line(args.threads)
    results = []
    clf, Xv, yv, Xp = fashion(0, 6, args.threads)
    results.append(measure("F-MNIST T-shirt/Shirt, AdaBoost 1 000", clf, Xv, yv, Xp, 0.01, args.threads, args.rounds))
    clf, Xv, yv, Xp = fashion(2, 4, args.threads)
    results.append(measure("F-MNIST Pullover/Coat, AdaBoost 1 000", clf, Xv, yv, Xp, 0.01, args.threads, args.rounds))
    clf, Xv, yv, Xp = fashion(3, 4, args.threads)
    results.append(measure("F-MNIST Dress/Coat, AdaBoost 1 000", clf, Xv, yv, Xp, 0.01, args.threads, args.rounds))
    clf, Xv, yv, Xp = hastie_model(args.threads)
    results.append(measure("Hastie 10.2, AdaBoost 400", clf, Xv, yv, Xp, 0.01, args.threads, args.rounds))
    clf, Xv, yv, Xp = digits_model(args.threads)
    results.append(measure("digits, REBEL 300 (10 classes)", clf, Xv, yv, Xp, 0.02, args.threads, args.rounds))
    clf, Xv, yv, Xp = letter_model(args.threads)
    results.append(measure("Letter, REBEL 400 (26 classes)", clf, Xv, yv, Xp, 0.02, args.threads, args.rounds))
    for K in (2, 5):
        clf, Xv, yv, Xp = fine_tuned_model(K, args.threads)
        results.append(measure(f"fine-tuned, REBEL 60 + 340 ({K} classes)", clf, Xv, yv, Xp, 0.01, args.threads,
                               args.rounds))
    env_after = environment_line(args.threads)
    lines = ["# Cascade and exact early exit against full evaluation, 100 000 rows", "",
             f"Command: `OMP_WAIT_POLICY={os.environ.get('OMP_WAIT_POLICY', 'unset')} python bench/cascade_speed.py "
             f"--threads {args.threads} --rounds {args.rounds}`", "",
             f"Before: {env_before}", "", f"After: {env_after}", "",
             "Batch: 100 000 rows, best of the interleaved rounds (median in brackets), speed-up = full / path. "
             "Cascade: max_accuracy_loss at 95 % confidence (target in the table); ideal = n_learners / mean "
             "learners; efficiency = speed-up / ideal. One row: 2 000 single-row predict calls, 1 thread, µs per row.", "",
             "| model | path | mean learners | ms per batch | speed-up | ideal | efficiency | one row µs | one row vs full |",
             "|---|---|---|---|---|---|---|---|---|"]
    for r in results:
        full = r["batch_ms"]["full"][0]
        for path, (best, median) in r["batch_ms"].items():
            ideal = r["n_learners"] / r["mean_learners"][path]
            speed = full / best
            one = r["one_row_us"].get(path)
            one_txt = f"{one[0]:.2f} | {r['one_row_us']['full'][0] / one[0]:.2f}x" if one else "- | -"
            lines.append(f"| {r['model']} ({r['target']}) | {path} | {r['mean_learners'][path]:.0f} | {best:.1f} ({median:.1f}) | "
                         f"{speed:.2f}x | {ideal:.2f}x | {100 * speed / ideal:.0f} % | {one_txt} |")
    lines += ["", "Exact exit against full evaluation alone, interleaved over twice the rounds (best, median); paired: "
              "the median over rounds of full / exit for the two calls run back to back (order alternating), wall "
              "and CPU, batch and one row (2 000 single-row calls, 1 thread, 18 rounds):", "",
              "| model | full ms | exact exit ms | exit speed (best) | exit speed (median) | paired batch wall, CPU | "
              "paired one row wall, CPU | learners per row |",
              "|---|---|---|---|---|---|---|---|"]
    for r in results:
        p, b, o = r["exit_paired_ms"], r["exit_ratio_batch"], r["exit_ratio_one_row"]
        lines.append(f"| {r['model']} | {p['full'][0]:.1f} ({p['full'][1]:.1f}) | {p['exact exit'][0]:.1f} "
                     f"({p['exact exit'][1]:.1f}) | {p['full'][0] / p['exact exit'][0]:.2f}x | "
                     f"{p['full'][1] / p['exact exit'][1]:.2f}x | {b[0]:.2f}x, {b[1]:.2f}x | {o[0]:.2f}x, {o[1]:.2f}x | "
                     f"{r['mean_learners']['exact exit']:.0f} of {r['n_learners']} |")
    lines += ["", "The same calls in process CPU time (all threads, median of the rounds; the work done, which the other "
              "jobs on a shared machine disturb far less than the wall time): speed-up = full / path.", "",
              "| model | path | mean learners | batch CPU ms | speed-up | ideal | efficiency | one row CPU µs | one row vs full |",
              "|---|---|---|---|---|---|---|---|---|"]
    for r in results:
        full, full_one = r["batch_cpu_ms"]["full"], r["one_row_cpu_us"]["full"]
        for path, ms in r["batch_cpu_ms"].items():
            ideal = r["n_learners"] / r["mean_learners"][path]
            one = r["one_row_cpu_us"].get(path)
            one_txt = f"{one:.2f} | {full_one / one:.2f}x" if one else "- | -"
            lines.append(f"| {r['model']} ({r['target']}) | {path} | {r['mean_learners'][path]:.0f} | {ms:.1f} | "
                         f"{full / ms:.2f}x | {ideal:.2f}x | {100 * full / ms / ideal:.0f} % | {one_txt} |")
    publish(lines, os.path.join(RESULTS, "cascade_speed.md"))
    with open(os.path.join(RESULTS, "cascade_speed.json"), "w") as handle:
        json.dump({"environment_before": env_before, "environment_after": env_after, "results": results}, handle,
                  indent=1, default=str)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
