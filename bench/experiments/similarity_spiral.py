"""Localized Similarities on the thesis's spiral (Figs. 5.2, 5.3, 5.6): zero training error, test error and
its stability between 200 and 1 000 iterations, label noise, the exact step against the closed form on
sign(f), and tree-REBEL beside them. Writes bench/results/similarity_spiral.{md,json} and the boundary and
training-curve plots similarity_spiral_boundaries.png, similarity_spiral_curves.png. The 30 % label-noise
diagnostic repeats that case on spirals of fewer turns and beside k-nearest-neighbour rules (k picked on the
test set: a reference for what a local rule can reach from these 333 noisy points, not a rival).

The thesis does not give its spiral's number of turns. The default, 1 turn, is the one that matches what it
reports of Figs. 5.2-5.4: zero training error near iteration 35 and perfect test classification after 1 000
(our 1-turn spiral: 33 learners; 0.75 turns: 17; 1.5 turns: 99). `--turns 1.5` reruns the harder spiral
(the earlier default; its results are kept in similarity_spiral_1.5turns.md).

    OMP_WAIT_POLICY=passive python bench/experiments/similarity_spiral.py
    OMP_WAIT_POLICY=passive python bench/experiments/similarity_spiral.py --turns 1.5 --out bench/results/similarity_spiral_1.5turns
"""

from __future__ import annotations

import argparse
import json
import os
import time

import numpy as np

from sklearn.neighbors import KNeighborsClassifier

from rebelboost import REBELClassifier

RESULTS = os.path.join(os.path.dirname(__file__), "..", "results")


def spiral(n=500, n_classes=3, turns=1.0, jitter=0.02, seed=0):
    """Three interleaved arms from the centre out (radius 0.05 to 1); positions drawn uniformly along
    each arm, with Gaussian jitter. Shuffled."""
    rng = np.random.RandomState(seed)
    X, y = [], []
    for k in range(n_classes):
        m = n // n_classes + (k < n % n_classes)
        s = np.sqrt(rng.uniform(0.0025, 1.0, size=m))  # uniform density over the disc's area
        angle = 2 * np.pi * k / n_classes + 2 * np.pi * turns * s
        X.append(np.c_[s * np.cos(angle), s * np.sin(angle)] + rng.normal(scale=jitter, size=(m, 2)))
        y.append(np.full(m, k))
    X, y = np.vstack(X), np.concatenate(y)
    order = rng.permutation(len(y))
    return X[order], y[order]


def flip(y, fraction, n_classes, rng):
    """A copy of y with `fraction` of the labels replaced by a different class, chosen uniformly."""
    y = y.copy()
    idx = rng.choice(len(y), size=int(round(fraction * len(y))), replace=False)
    y[idx] = (y[idx] + rng.randint(1, n_classes, size=len(idx))) % n_classes
    return y


def with_rule(rule):
    class Rule(REBELClassifier):
        _similarity_options = {**REBELClassifier._similarity_options, "step_rule": rule}

    return Rule


def curves(clf, Xtr, ytr, Xte, yte):
    train = np.array([np.mean(p != ytr) for p in clf.staged_predict(Xtr)])
    test = np.array([np.mean(p != yte) for p in clf.staged_predict(Xte)])
    return train, test


def run(noise, rule, Xtr, ytr, Xte, yte, n_estimators, n_jobs, yte_clean):
    start = time.perf_counter()
    clf = with_rule(rule)(weak_learner="similarity", n_estimators=n_estimators, n_jobs=n_jobs).fit(Xtr, ytr)
    seconds = time.perf_counter() - start
    train, test = curves(clf, Xtr, ytr, Xte, yte)
    loss = clf.fit_info_["train_loss"]
    zero = np.flatnonzero(train == 0)
    kinds = dict(zip(*np.unique(clf.learners_["kind"], return_counts=True)))
    return clf, {
        "noise": noise, "rule": rule, "fit_seconds": seconds, "n_learners": int(clf.n_estimators_),
        "first_zero_training_error": int(zero[0] + 1) if zero.size else None,
        "test_error_200": float(test[199]), "test_error_final": float(test[-1]), "test_error_min": float(test.min()),
        "test_error_max_200_to_final": float(test[199:].max()),
        "clean_test_error_final": float(np.mean(clf.predict(Xte) != yte_clean)),
        "loss_falls_every_iteration": bool(np.all(np.diff(np.r_[1.0, loss]) < 0)),
        "iterations_loss_rose": int(np.sum(np.diff(np.r_[1.0, loss]) >= 0)),
        "candidates_mean": float(clf.fit_info_["candidates"].mean()),
        "kinds": {str(k): int(v) for k, v in kinds.items()},
        "curves": {"train_loss": loss.tolist(), "train_error": train.tolist(), "test_error": test.tolist()},
    }


def plot(models, data, curves_of, path_boundaries, path_curves):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    grid = np.linspace(-1.15, 1.15, 300)
    gx, gy = np.meshgrid(grid, grid)
    G = np.c_[gx.ravel(), gy.ravel()]
    fig, axes = plt.subplots(2, len(models), figsize=(4 * len(models), 8), squeeze=False)
    colors = np.array(["tab:blue", "tab:orange", "tab:green"])
    for col, (title, clf) in enumerate(models):
        Xtr, ytr, Xte, yte = data[title]
        background = clf.predict(G).reshape(gx.shape)
        for row, (X, y, name) in enumerate([(Xtr, ytr, "train"), (Xte, yte, "test")]):
            ax = axes[row, col]
            ax.contourf(gx, gy, background, levels=[-0.5, 0.5, 1.5, 2.5], colors=["#c6dbef", "#fdd0a2", "#c7e9c0"])
            wrong = clf.predict(X) != y
            ax.scatter(*X[~wrong].T, c=colors[y[~wrong]], s=8, marker="*")
            ax.scatter(*X[wrong].T, facecolors="none", edgecolors=colors[y[wrong]], s=22, marker="o")
            ax.set_title(f"{title}: {name} ({wrong.mean():.1%} wrong)", fontsize=9)
            ax.set_xticks([])
            ax.set_yticks([])
    fig.tight_layout()
    fig.savefig(path_boundaries, dpi=80)
    fig, axes = plt.subplots(1, len(curves_of), figsize=(4.5 * len(curves_of), 3.6), squeeze=False)
    for ax, (title, c) in zip(axes[0], curves_of):
        t = np.arange(1, len(c["train_loss"]) + 1)
        ax.plot(t, c["train_error"], label="train error")
        ax.plot(t, c["test_error"], label="test error")
        ax.set_ylim(0, max(0.5, max(c["test_error"])))
        ax2 = ax.twinx()
        ax2.semilogy(t, c["train_loss"], color="gray", lw=0.8, label="train loss")
        ax.set_title(title, fontsize=9)
        ax.set_xlabel("iteration")
        ax.legend(loc="upper right", fontsize=7)
    fig.tight_layout()
    fig.savefig(path_curves, dpi=80)


def noise_diagnostic(n_estimators, n_jobs, main_turns, noise=0.3, draws=5):
    """Mean final test error (flipped and unflipped test labels) over the draws of the flipped labels, per
    number of turns of the spiral; and the best k-NN's on the same draws."""
    lines = ["", f"Diagnostic, {noise:.0%} flipped ({draws} draws, the same as above for {main_turns:g} turns): "
             "the spiral's geometry decides the target, not the learner. Also the learner after which the "
             "clean labels are fitted (the thesis saw about 35).", "",
             "| turns | zero training error at (clean labels) | similarity-REBEL, flipped test labels | unflipped "
             "test labels | best k-NN (k in 1, 5, 15, 31, picked on test), flipped | unflipped |",
             "|---|---|---|---|---|---|"]
    for turns in (0.75, 1.0, 1.5):
        X, y = spiral(turns=turns)
        n_train = 2 * len(y) // 3
        clean = REBELClassifier(weak_learner="similarity", n_estimators=n_estimators, n_jobs=n_jobs)
        fitted = clean.fit(X[:n_train], y[:n_train]).staged_predict(X[:n_train])
        zero = next((t for t, p in enumerate(fitted, 1) if np.all(p == y[:n_train])), None)
        ours, knn = [], {k: [] for k in (1, 5, 15, 31)}
        for seed in range(1, 1 + draws):
            rng = np.random.RandomState(seed)
            ytr, yte = flip(y[:n_train], noise, 3, rng), flip(y[n_train:], noise, 3, rng)
            clf = REBELClassifier(weak_learner="similarity", n_estimators=n_estimators, n_jobs=n_jobs)
            for store, model in [(ours, clf)] + [(knn[k], KNeighborsClassifier(k)) for k in knn]:
                pred = model.fit(X[:n_train], ytr).predict(X[n_train:])
                store.append((np.mean(pred != yte), np.mean(pred != y[n_train:])))
        best = min(knn.values(), key=lambda v: np.mean(v, axis=0)[0])
        (a, b), (c, e) = np.mean(ours, axis=0), np.mean(best, axis=0)
        lines.append(f"| {turns} | {zero} | {a:.1%} | {b:.1%} | {c:.1%} | {e:.1%} |")
    return lines


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n-estimators", type=int, default=1000)
    parser.add_argument("--n-jobs", type=int, default=2)
    parser.add_argument("--turns", type=float, default=1.0, help="turns of each arm (the thesis does not say; "
                        "1 matches its ~35 learners to zero training error)")
    parser.add_argument("--noise-draws", type=int, default=5, help="draws of the flipped labels per noise level")
    parser.add_argument("--out", default=os.path.join(RESULTS, "similarity_spiral"))
    args = parser.parse_args()
    X, y = spiral(turns=args.turns)
    n_train = 2 * len(y) // 3
    rows, models, data, curves_of = [], [], {}, []
    for noise in (0.0, 0.1, 0.3):
        rng = np.random.RandomState(1)
        ytr, yte = flip(y[:n_train], noise, 3, rng), flip(y[n_train:], noise, 3, rng)
        Xtr, Xte = X[:n_train], X[n_train:]
        for rule in ("exact", "sign") if noise == 0.0 else ("exact",):
            clf, row = run(noise, rule, Xtr, ytr, Xte, yte, args.n_estimators, args.n_jobs, y[n_train:])
            if noise > 0:  # other draws of the flipped labels: the spread a 167-point test set has
                others = []
                for seed in range(2, 2 + args.noise_draws - 1):
                    r2 = np.random.RandomState(seed)
                    others.append(run(noise, rule, Xtr, flip(y[:n_train], noise, 3, r2), Xte,
                                      flip(y[n_train:], noise, 3, r2), args.n_estimators, args.n_jobs, y[n_train:])[1])
                finals = [row["test_error_final"]] + [o["test_error_final"] for o in others]
                cleans = [row["clean_test_error_final"]] + [o["clean_test_error_final"] for o in others]
                row["draws"] = {"test_error_final": finals, "clean_test_error_final": cleans}
            rows.append(row)
            if rule == "exact":
                title = f"similarity, {noise:.0%} flipped"
                models.append((title, clf))
                data[title] = (Xtr, ytr, Xte, yte)
                curves_of.append((title, row["curves"]))
        if noise == 0.0:  # tree-REBEL on the same split, for the picture and the numbers
            for depth in (1, 3):
                start = time.perf_counter()
                trees = REBELClassifier(n_estimators=args.n_estimators, max_depth=depth, n_jobs=args.n_jobs).fit(Xtr, ytr)
                seconds = time.perf_counter() - start
                train, test = curves(trees, Xtr, ytr, Xte, yte)
                zero = np.flatnonzero(train == 0)
                rows.append({"noise": 0.0, "rule": f"trees depth {depth}", "fit_seconds": seconds,
                             "n_learners": int(trees.n_estimators_),
                             "first_zero_training_error": int(zero[0] + 1) if zero.size else None,
                             "test_error_200": float(test[min(199, len(test) - 1)]), "test_error_final": float(test[-1]),
                             "test_error_min": float(test.min()),
                             "test_error_max_200_to_final": float(test[min(199, len(test) - 1):].max())})
                if depth == 3:
                    title = "trees depth 3, 0% flipped"
                    models.insert(1, (title, trees))
                    data[title] = (Xtr, ytr, Xte, yte)
    with open(args.out + ".json", "w") as handle:
        json.dump(rows, handle, indent=1)
    plot(models, data, curves_of, args.out + "_boundaries.png", args.out + "_curves.png")
    lines = [
        "# Localized Similarities on the spiral (thesis Figs. 5.2, 5.3, 5.6)",
        "",
        f"`OMP_WAIT_POLICY=passive python bench/experiments/similarity_spiral.py --turns {args.turns:g}` "
        f"(500 points, 3 arms, {args.turns:g} turns, 2/3 train; {args.n_estimators} learners, n_jobs={args.n_jobs}; "
        "labels flipped to another class at random in train and test alike).",
        "",
        "| labels flipped | learner, step | zero training error at | test error @200 | @final | max test error 200..final |"
        " final error on the unflipped test labels | loss falls every iteration | candidates / iteration | fit s |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        clean = f"{r['clean_test_error_final']:.1%}" if "clean_test_error_final" in r else "-"
        falls = f"{r['loss_falls_every_iteration']} ({r['iterations_loss_rose']} rises)" if "iterations_loss_rose" in r else "-"
        candidates = f"{r['candidates_mean']:.1f}" if "candidates_mean" in r else "-"
        lines.append(
            f"| {r['noise']:.0%} | {r['rule']} | {r['first_zero_training_error']} | {r['test_error_200']:.1%} | "
            f"{r['test_error_final']:.1%} | {r['test_error_max_200_to_final']:.1%} | {clean} | {falls} | {candidates} | "
            f"{r['fit_seconds']:.1f} |")
    for r in rows:
        if "draws" in r:
            d = r["draws"]
            lines.append(f"\n{r['noise']:.0%} flipped, {len(d['test_error_final'])} draws of the flipped labels: final test "
                         f"error {np.mean(d['test_error_final']):.1%} +- {np.std(d['test_error_final']):.1%} "
                         f"(each draw: {', '.join(f'{v:.1%}' for v in d['test_error_final'])}); on the unflipped "
                         f"test labels {np.mean(d['clean_test_error_final']):.1%} +- {np.std(d['clean_test_error_final']):.1%}. "
                         f"A test set of {len(y) - n_train} points has a binomial spread of "
                         f"{np.sqrt(r['noise'] * (1 - r['noise']) / (len(y) - n_train)):.1%} around the flip rate.")
    lines += noise_diagnostic(args.n_estimators, args.n_jobs, args.turns)
    name = os.path.basename(args.out)
    lines += ["", f"Plots: `{name}_boundaries.png` (top: train, bottom: test; circles are misclassified), "
              f"`{name}_curves.png` (errors, and the training loss on a log axis)."]
    with open(args.out + ".md", "w") as handle:
        handle.write("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
