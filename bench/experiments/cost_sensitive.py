"""Cost-sensitive benchmark (thesis Fig. 4.5): REBEL trained with the costs vs the two-step approach.

Two-step = REBEL trained with uniform costs, then the minimum-expected-cost class argmin_k sum_j p_j C[j, k]
from its predict_proba (the loss's own link, a posterior estimate under uniform costs). The data are
Gaussian mixtures with known parameters, so the Bayes risk (the same decision from the true posterior)
is reported as the floor both approaches aim at.

Settings:
  thesis  10 random datasets x 20 random cost matrices = 200 trials, as in the thesis: 1 000 training
          points, 100 stumps, off-diagonal costs |N(0, 1)| scaled so that a uniformly random guess costs 1;
          K in {3, 4, 5} classes, each a mixture of 3 Gaussians in 2-D. Test risk on 20 000 points (the
          thesis used 500).
  thesis-5k  the same 200 trials with 5 000 training points.
  harsh   20 trials with log-uniform costs in [0.1, 10] (a 100x spread), 600 training points, 200 depth-2
          trees, 2 Gaussians per class.

Diagnostics (thesis setting), to tell a weak implementation from a property of the loss:
  * population decision: argmax of the loss's pointwise minimiser with the true posterior plugged in, i.e.
    what REBEL's decision tends to with unlimited data and capacity;
  * the win count after 10 ... 800 stumps (staged predictions of the same models);
  * an independent numpy REBEL (rebel_numpy.py, exact thresholds) with the thesis's subcosts, and with
    "consistent" subcosts (c+ = c, c- = max(c) - c: also inside the thesis's family, and its decision
    tends to the minimum-expected-cost class).

  digits  real data, 10 classes: 5 splits x (20 random + 1 taxonomy cost matrix), depth 1 and 2, the number
          of trees chosen on a validation set (run_digits).

    python bench/experiments/cost_sensitive.py [--setting thesis|thesis-5k|harsh|digits|all]
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "peers"))  # datasets, compare_rebel
from compare_rebel import write  # noqa: E402

from rebel_numpy import NumpyRebelStumps, population_decision  # noqa: E402

from rebelboost import REBELClassifier  # noqa: E402

STAGES = (10, 25, 50, 100, 200, 400, 800)


def sample(rng, centers, n):
    K, n_comp, _ = centers.shape
    y = rng.randint(0, K, size=n)
    component = rng.randint(0, n_comp, size=n)
    return centers[y, component] + rng.normal(size=(n, 2)), y


def posterior(centers, X):
    """P(y | x) for equal class priors and equal-weight unit-variance components."""
    d2 = ((X[:, None, None, :] - centers[None]) ** 2).sum(axis=-1)  # (n, K, n_comp)
    log_lik = np.logaddexp.reduce(-0.5 * d2, axis=2)
    log_lik -= log_lik.max(axis=1, keepdims=True)
    p = np.exp(log_lik)
    return p / p.sum(axis=1, keepdims=True)


def random_costs(rng, K, kind):
    if kind == "thesis":
        C = np.abs(rng.normal(size=(K, K))) * (1 - np.eye(K))
        return C / C.mean()  # a uniformly random guess under equal priors costs 1
    return np.exp(rng.uniform(np.log(0.1), np.log(10.0), size=(K, K))) * (1 - np.eye(K))


def run_setting(kind, n_datasets, n_costs, n_train, n_comp, n_estimators, max_depth, diagnostics=False):
    rows = []
    costs_kind = "harsh" if kind == "harsh" else "thesis"
    for d in range(n_datasets):
        rng = np.random.RandomState(100 * d + (7 if kind == "harsh" else 0))
        K = rng.randint(3, 6)
        centers = rng.normal(scale=2.0, size=(K, n_comp, 2))
        X_train, y_train = sample(rng, centers, n_train)
        X_test, y_test = sample(rng, centers, 20000)
        n_fit = max(STAGES) if diagnostics else n_estimators
        uniform = REBELClassifier(n_estimators=n_fit, max_depth=max_depth).fit(X_train, y_train)
        staged_proba = list(uniform.staged_predict_proba(X_test))
        truth = posterior(centers, X_test)
        for c in range(n_costs):
            C = random_costs(np.random.RandomState(10_000 + 100 * d + c), K, costs_kind)
            sensitive = REBELClassifier(n_estimators=n_fit, max_depth=max_depth, cost_matrix=C).fit(X_train, y_train)
            staged_pred = list(sensitive.staged_predict(X_test))

            def risk(pred):
                return float(np.mean(C[y_test, pred]))

            def at(stages, t):  # the model after t trees (training may stop early)
                return stages[min(t, len(stages)) - 1]

            row = {
                "setting": kind, "dataset": d, "cost_matrix": c, "K": int(K),
                "rebel_risk": risk(at(staged_pred, n_estimators)),
                "two_step_risk": risk(np.argmin(at(staged_proba, n_estimators) @ C, axis=1)),
                "bayes_risk": risk(np.argmin(truth @ C, axis=1)),
                "rebel_population_risk": risk(population_decision(truth, C, "thesis")),
            }
            if diagnostics:
                row["stages"] = {t: [risk(at(staged_pred, t)), risk(np.argmin(at(staged_proba, t) @ C, axis=1))]
                                 for t in STAGES}
                for subcost in ("thesis", "consistent"):
                    model = NumpyRebelStumps(n_estimators, C, subcost).fit(X_train, y_train)
                    row[f"numpy_{subcost}_risk"] = risk(model.predict(X_test))
            rows.append(row)
        print(f"{kind}: dataset {d} done", flush=True)
    return rows


def run_digits(n_splits=5, n_costs=20, max_trees=400):
    """Real data: scikit-learn's digits (10 classes, 64 features), 5 random 50/25/25 splits; per split,
    20 random cost matrices as in the thesis setting plus one taxonomy-like matrix (confusions inside
    {0, 6, 8, 9}, {1, 7}, {2, 3, 5}, {4} cost 1, across groups 10). Depth 1 and 2; each method's number of
    trees (up to 400) is chosen by its validation risk, then the test risk is read at that number."""
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split

    X, y = load_digits(return_X_y=True)
    K = 10
    groups = [0, 1, 2, 2, 3, 2, 0, 1, 0, 0]
    taxonomy = np.array([[0.0 if i == j else 1.0 if groups[i] == groups[j] else 10.0 for j in range(K)] for i in range(K)])
    rows = []
    for split in range(n_splits):
        X_train, X_rest, y_train, y_rest = train_test_split(X, y, train_size=0.5, random_state=split, stratify=y)
        X_val, X_test, y_val, y_test = train_test_split(X_rest, y_rest, test_size=0.5, random_state=split, stratify=y_rest)
        for depth in (1, 2):
            uniform = REBELClassifier(n_estimators=max_trees, max_depth=depth).fit(X_train, y_train)
            proba_val = np.array(list(uniform.staged_predict_proba(X_val)))
            proba_test = np.array(list(uniform.staged_predict_proba(X_test)))
            matrices = [("random", random_costs(np.random.RandomState(20_000 + 100 * split + c), K, "thesis"))
                        for c in range(n_costs)] + [("taxonomy", taxonomy)]
            for c, (kind, C) in enumerate(matrices):
                extra = {}
                if depth == 1 and split < 2 and c < 8:  # the numpy REBEL's two subcost choices (slow: a subset)
                    for subcost in ("thesis", "consistent"):
                        ref = NumpyRebelStumps(max_trees, C, subcost).fit(X_train, y_train)
                        t = int(np.argmin([np.mean(C[y_val, np.argmax(H, axis=1)]) for H in ref.staged_scores(X_val)]))
                        H_test = list(ref.staged_scores(X_test))[t]
                        extra[f"numpy_{subcost}_risk"] = float(np.mean(C[y_test, np.argmax(H_test, axis=1)]))
                model = REBELClassifier(n_estimators=max_trees, max_depth=depth, cost_matrix=C).fit(X_train, y_train)
                val_risk = [np.mean(C[y_val, p]) for p in model.staged_predict(X_val)]
                t_rebel = int(np.argmin(val_risk))
                test_pred = list(model.staged_predict(X_test))[t_rebel]
                two_val = [np.mean(C[y_val, np.argmin(p @ C, axis=1)]) for p in proba_val]
                t_two = int(np.argmin(two_val))
                rows.append({
                    "setting": "digits", "split": split, "depth": depth, "costs": kind, "cost_matrix": c,
                    "rebel_risk": float(np.mean(C[y_test, test_pred])), "rebel_trees": t_rebel + 1,
                    "two_step_risk": float(np.mean(C[y_test, np.argmin(proba_test[t_two] @ C, axis=1)])),
                    "two_step_trees": t_two + 1, **extra,
                })
        print(f"digits: split {split} done", flush=True)
    return rows


def digits_lines(rows):
    lines = ["", "## Real data: digits (10 classes)", "",
             "5 random 50/25/25 splits; per split 20 random cost matrices (as in the thesis setting) and one taxonomy-like",
             "matrix (see `run_digits`); each method's number of trees (up to 400) picked by its own validation risk.", "",
             "| depth | costs | trials | REBEL with costs wins | ties | mean test risk REBEL | two-step | median trees REBEL / two-step |",
             "|---|---|---|---|---|---|---|---|"]
    for depth in (1, 2):
        for kind in ("random", "taxonomy"):
            r = [x for x in rows if x["depth"] == depth and x["costs"] == kind]
            if not r:
                continue
            a = np.array([[x["rebel_risk"], x["two_step_risk"]] for x in r])
            wins = int(np.sum(a[:, 0] < a[:, 1]))
            ties = int(np.sum(a[:, 0] == a[:, 1]))
            lines.append(f"| {depth} | {kind} | {len(r)} | {wins} ({100 * wins / len(r):.0f} %) | {ties} | {a[:, 0].mean():.4f} | "
                         f"{a[:, 1].mean():.4f} | {np.median([x['rebel_trees'] for x in r]):.0f} / "
                         f"{np.median([x['two_step_trees'] for x in r]):.0f} |")
    r = [x for x in rows if "numpy_thesis_risk" in x]
    if r:
        two = np.array([x["two_step_risk"] for x in r])
        lines += ["", f"Independent numpy REBEL, stumps, on {len(r)} of these trials (2 splits x 8 random matrices), trees "
                  "picked on validation:", "", "| subcosts | wins against the two-step | mean test risk | two-step |", "|---|---|---|---|"]
        for subcost in ("thesis", "consistent"):
            a = np.array([x[f"numpy_{subcost}_risk"] for x in r])
            lines.append(f"| {subcost} | {int(np.sum(a < two))} of {len(r)} | {a.mean():.4f} | {two.mean():.4f} |")
        lines += ["", "The Bayes-consistent subcosts help on the 2-D mixtures but fail on digits: their c- puts weight",
                  "max(c) - c_k on every wrong class, a push up shared by all scores that drowns the class signal."]
    return lines


def summary(rows):
    r = np.array([[x["rebel_risk"], x["two_step_risk"], x["bayes_risk"]] for x in rows])
    wins = int(np.sum(r[:, 0] < r[:, 1]))
    return wins, r.mean(axis=0), np.mean(r[:, 0] - r[:, 2]), np.mean(r[:, 1] - r[:, 2])


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--setting", choices=["thesis", "thesis-5k", "harsh", "digits", "all"], default="all")
    args = parser.parse_args(argv)
    settings = {
        "thesis": dict(n_datasets=10, n_costs=20, n_train=1000, n_comp=3, n_estimators=100, max_depth=1,
                       diagnostics=True),
        "thesis-5k": dict(n_datasets=10, n_costs=20, n_train=5000, n_comp=3, n_estimators=100, max_depth=1),
        "harsh": dict(n_datasets=20, n_costs=1, n_train=600, n_comp=2, n_estimators=200, max_depth=2),
    }
    chosen = list(settings) if args.setting == "all" else [s for s in [args.setting] if s in settings]
    lines = [f"# Cost-sensitive REBEL vs two-step (uniform training + minimum expected cost) ({time.strftime('%Y-%m-%d')})", "",
             "Test risk = mean cost on 20 000 test points; Bayes = the minimum-expected-cost decision from the true",
             "posterior (the floor). `python bench/experiments/cost_sensitive.py`; settings in the script's docstring.", "",
             "| setting | trials | REBEL with costs wins | mean risk REBEL | two-step | Bayes | excess over Bayes: REBEL | two-step |",
             "|---|---|---|---|---|---|---|---|"]
    all_rows = []
    for kind in chosen:
        rows = run_setting(kind, **settings[kind])
        all_rows += rows
        wins, means, excess_rebel, excess_two = summary(rows)
        lines.append(f"| {kind} | {len(rows)} | {wins} ({100 * wins / len(rows):.0f} %) | {means[0]:.4f} | {means[1]:.4f} | "
                     f"{means[2]:.4f} | {excess_rebel:.4f} | {excess_two:.4f} |")
    population = [r for r in all_rows if r["setting"] == "thesis"]
    if population:
        pop = np.array([r["rebel_population_risk"] for r in population])
        rebel = np.array([r["rebel_risk"] for r in population])
        two = np.array([r["two_step_risk"] for r in population])
        bayes = np.array([r["bayes_risk"] for r in population])
        lines += ["", "## Diagnostics", "",
                  "**Population decision** (thesis setting; the true posterior plugged into the pointwise minimiser of",
                  "REBEL's loss: where REBEL's decision goes with unlimited data and capacity): mean risk "
                  f"{pop.mean():.4f} vs Bayes {bayes.mean():.4f}; equal to the Bayes risk (within 1e-3) in "
                  f"{int(np.sum(pop - bayes < 1e-3))} of {len(pop)} trials. It beats the *trained* two-step in "
                  f"{int(np.sum(pop < two))}. Trained REBEL's excess over its population decision, "
                  f"{np.mean(rebel - pop):.4f}, is close to the two-step's excess over Bayes, {np.mean(two - bayes):.4f}: "
                  "the gap between the two approaches is mostly the loss's own bias, not the training."]
    staged = [r for r in all_rows if "stages" in r]
    if staged:
        lines += ["", "**After t stumps** (thesis setting, staged predictions of 800-stump models):", "",
                  "| stumps | REBEL with costs wins | mean risk REBEL | two-step |", "|---|---|---|---|"]
        for t in STAGES:
            r = np.array([x["stages"][t] for x in staged])
            lines.append(f"| {t} | {int(np.sum(r[:, 0] < r[:, 1]))} of {len(r)} | {r[:, 0].mean():.4f} | {r[:, 1].mean():.4f} |")
        two = np.array([x["two_step_risk"] for x in staged])
        lines += ["", "**Independent numpy REBEL** (rebel_numpy.py: exact thresholds, 100 stumps) against the same two-step:", "",
                  "| subcosts | wins | mean risk |", "|---|---|---|"]
        for subcost in ("thesis", "consistent"):
            r = np.array([x[f"numpy_{subcost}_risk"] for x in staged])
            lines.append(f"| {subcost} | {int(np.sum(r < two))} of {len(r)} | {r.mean():.4f} |")
    lines += ["", "Why two-step wins: REBEL's exponential surrogate is minimised pointwise by",
              "H_k = 1/2 ln(p_k c-_kk / sum_{j != k} p_j c+_jk) with c+ proportional to the squared costs, whose argmax",
              "is not the minimum-expected-cost class for general cost matrices (tests/python/test_rebel.py,",
              "test_min_risk_class_is_not_always_the_bayes_decision); with uniform costs the two coincide. The numpy",
              "'consistent' subcosts remove that bias (their population decision is the Bayes decision), yet the",
              "trained model still loses to the two-step in most trials: estimating a cost-weighted target from 1 000",
              "points is noisier than estimating the posterior with balanced weights and applying the costs exactly."]
    if args.setting in ("digits", "all"):
        digit_rows = run_digits()
        all_rows += digit_rows
        lines += digits_lines(digit_rows)
    write("rebel_cost_sensitive", lines, all_rows)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
