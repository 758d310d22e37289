"""AdaBoost against an independent brute-force implementation written here in numpy.

The reference searches every feature, every threshold between consecutive distinct values and both
polarities by weighted error, takes the smoothed closed-form step and reweights; it knows nothing about
bins, histograms or fixed-point sums.
"""

import numpy as np
import pytest

from rebelboost import AdaBoostClassifier


def midpoints(column):
    values = np.unique(column)
    return [a + (b - a) / 2 for a, b in zip(values[:-1], values[1:])]


def brute_force_stump(X, y_pm, w, candidates=None):
    """Best stump by weighted error: returns (feature, threshold, left_value, right_value, error).

    Thresholds are the midpoints between consecutive distinct values (of the full training column when
    `candidates` is given); on equal error the lowest threshold wins.
    """
    best = None
    total = w.sum()
    for j in range(X.shape[1]):
        for threshold in candidates[j] if candidates is not None else midpoints(X[:, j]):
            left = X[:, j] <= threshold
            # leaves (-1, +1): wrong = positives on the left + negatives on the right
            err = (w[left & (y_pm > 0)].sum() + w[~left & (y_pm < 0)].sum()) / total
            for left_value, e in ((-1, err), (1, 1 - err)):
                if best is None or e < best[4] - 1e-12:
                    best = (j, threshold, left_value, -left_value, e)
    return best


def reference_adaboost(X, y_pm, n_estimators, sample_weight=None):
    """Discrete AdaBoost with stumps, bias 1/2 ln(P/N) and smoothing eps = 1/N (rebelboost's documented choice)."""
    n = len(y_pm)
    s = np.ones(n) if sample_weight is None else np.asarray(sample_weight, dtype=float)
    eps = 1.0 / max(n, s.sum())
    s = s / s.sum()
    pos, neg = s[y_pm > 0].sum(), s[y_pm < 0].sum()
    bias = 0.5 * np.log((pos + eps) / (neg + eps))
    H = np.full(n, bias)
    stumps = []
    for _ in range(n_estimators):
        w = s * np.exp(-y_pm * H)
        w /= w.sum()
        j, thr, lv, rv, err = brute_force_stump(X, y_pm, w)
        alpha = 0.5 * np.log((1 - err + eps) / (err + eps))
        f = np.where(X[:, j] <= thr, lv, rv)
        H = H + alpha * f
        stumps.append((j, thr, lv, rv, alpha))
        if err == 0:
            break
    return bias, stumps


def engine_stumps(clf):
    out = []
    for tree in clf._model.trees():
        feature, threshold, value, left, right = (tree[k] for k in ("feature", "threshold", "value", "left", "right"))
        assert feature[0] >= 0, "root of a stump must split"
        out.append((feature[0], threshold[0], value[left[0]], value[right[0]], tree["step"][0]))
    return out


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("weighted", [False, True])
def test_first_stump_matches_brute_force(seed, weighted):
    rng = np.random.RandomState(seed)
    n, d = rng.randint(20, 80), rng.randint(1, 6)
    X = rng.normal(size=(n, d)).round(2)  # rounding creates ties in values
    y = (X[:, 0] + rng.normal(scale=1.0, size=n) > 0).astype(int)
    if y.min() == y.max():
        y[0] = 1 - y[0]
    sw = rng.exponential(size=n) if weighted else None
    y_pm = 2 * y - 1
    bias, ref = reference_adaboost(X, y_pm, 1, sw)
    clf = AdaBoostClassifier(n_estimators=1, n_jobs=1).fit(X, y, sample_weight=sw)
    got = engine_stumps(clf)[0]
    j, thr, lv, rv, alpha = ref[0]
    assert clf._model.bias[0] == pytest.approx(bias, rel=1e-12, abs=1e-12)
    assert (got[0], got[2], got[3]) == (j, lv, rv)
    assert got[1] == thr
    assert got[4] == pytest.approx(alpha, rel=1e-9)


@pytest.mark.parametrize("seed", range(4))
def test_boosting_sequence_matches_reference(seed):
    rng = np.random.RandomState(100 + seed)
    X = rng.uniform(size=(60, 4)).round(3)
    y = ((X[:, 0] > 0.5) ^ (X[:, 1] > 0.3)).astype(int)
    sw = rng.uniform(0.5, 2.0, size=60) if seed % 2 else None
    bias, ref = reference_adaboost(X, 2 * y - 1, 15, sw)
    clf = AdaBoostClassifier(n_estimators=15, n_jobs=1).fit(X, y, sample_weight=sw)
    got = engine_stumps(clf)
    assert len(got) == len(ref)
    for (gj, gthr, glv, grv, ga), (j, thr, lv, rv, a) in zip(got, ref):
        assert (gj, glv, grv) == (j, lv, rv)
        assert gthr == thr
        assert ga == pytest.approx(a, rel=1e-8)
    H_ref = np.full(len(X), bias)
    for j, thr, lv, rv, a in ref:
        H_ref += a * np.where(X[:, j] <= thr, lv, rv)
    np.testing.assert_allclose(clf.decision_function(X), H_ref, rtol=1e-9, atol=1e-9)


def test_depth2_tree_matches_layerwise_brute_force():
    """Depth 2: best stump, then each leaf's best split with the step held fixed (both by weighted error)."""
    rng = np.random.RandomState(7)
    X = rng.normal(size=(120, 3)).round(2)
    y = ((X[:, 0] > 0) & (X[:, 1] > -0.2) | (X[:, 2] > 1.0)).astype(int)
    y_pm = 2 * y - 1
    clf = AdaBoostClassifier(n_estimators=1, max_depth=2, n_jobs=1).fit(X, y)
    tree = clf._model.trees()[0]
    n = len(y)
    eps = 1.0 / n
    bias = 0.5 * np.log((y.mean() + eps) / (1 - y.mean() + eps))
    w = np.exp(-y_pm * bias)
    w /= w.sum()
    j, thr, lv, rv, _ = brute_force_stump(X, y_pm, w)
    assert (tree["feature"][0], tree["threshold"][0]) == (j, thr)
    f = np.empty(n)
    for side, mask in (("left", X[:, j] <= thr), ("right", X[:, j] > thr)):
        node = tree[side][0]
        sub = brute_force_stump(X[mask], y_pm[mask], w[mask], [midpoints(X[:, k]) for k in range(X.shape[1])])
        # a split is kept only if its leaves disagree (strict improvement over the node's majority)
        if tree["feature"][node] >= 0:
            assert (tree["feature"][node], tree["threshold"][node]) == sub[:2]
            sj, sthr, slv, srv, _ = sub
            f[mask] = np.where(X[mask, sj] <= sthr, slv, srv)
        else:
            f[mask] = tree["value"][node]
    err = w[f != y_pm].sum()
    alpha = 0.5 * np.log((1 - err + eps) / (err + eps))
    assert tree["step"][0] == pytest.approx(alpha, rel=1e-9)
    np.testing.assert_allclose(clf.decision_function(X), bias + alpha * f, rtol=1e-9, atol=1e-12)


def side_impurity(criterion, w_pos, w_neg):
    """A side's weighted impurity (unnormalised): Gini (T^2 - S^2) / (2T), or entropy T ln T - sum_y Z_y ln Z_y."""
    T = w_pos + w_neg
    if criterion == "gini":
        S = w_pos - w_neg
        return (T * T - S * S) / (2 * T)
    return sum(-z * np.log(z / T) for z in (w_pos, w_neg) if z > 0)


def brute_force_gini_stump(X, y_pm, w, criterion="gini"):
    """Best stump by weighted impurity summed over both sides; lowest (feature, threshold) on ties."""
    best = None
    for j in range(X.shape[1]):
        for threshold in midpoints(X[:, j]):
            left = X[:, j] <= threshold
            impurity = 0.0
            for side in (left, ~left):
                impurity += side_impurity(criterion, w[side & (y_pm > 0)].sum(), w[side & (y_pm < 0)].sum())
            if best is None or impurity < best[0] - 1e-12:
                best = (impurity, j, threshold)
    return best


@pytest.mark.parametrize("criterion", ["gini", "entropy"])
@pytest.mark.parametrize("seed", range(5))
def test_gini_criterion_stump_matches_brute_force(seed, criterion):
    rng = np.random.RandomState(50 + seed)
    X = rng.normal(size=(70, 4)).round(2)
    y = (X[:, 1] ** 2 + 0.3 * rng.normal(size=70) > 0.8).astype(int)
    sw = rng.exponential(size=70)
    y_pm = 2 * y - 1
    bias, _ = reference_adaboost(X, y_pm, 0, sw)
    w = sw / sw.sum() * np.exp(-y_pm * bias)
    w /= w.sum()
    _, j, thr = brute_force_gini_stump(X, y_pm, w, criterion)
    clf = AdaBoostClassifier(n_estimators=1, criterion=criterion, n_jobs=1).fit(X, y, sample_weight=sw)
    tree = clf._model.trees()[0]
    assert (tree["feature"][0], tree["threshold"][0]) == (j, thr)
    # leaves follow the weighted majority, the step is AdaBoost's for that tree
    left = X[:, j] <= thr
    for side, node in ((left, tree["left"][0]), (~left, tree["right"][0])):
        assert tree["value"][node] == (1 if (y_pm * w)[side].sum() > 0 else -1)
    f = np.where(left, tree["value"][tree["left"][0]], tree["value"][tree["right"][0]])
    err = w[f != y_pm].sum()
    eps = 1.0 / max(len(y), sw.sum())
    assert tree["step"][0] == pytest.approx(0.5 * np.log((1 - err + eps) / (err + eps)), rel=1e-9)


def test_gini_models_do_not_depend_on_threads_and_reject_rebel():
    from rebelboost import _core

    rng = np.random.RandomState(0)
    X = rng.normal(size=(5000, 8))
    X[rng.rand(*X.shape) < 0.05] = np.nan
    y = (np.nan_to_num(X[:, 0]) * np.nan_to_num(X[:, 1]) > 0).astype(int)
    a = AdaBoostClassifier(n_estimators=20, max_depth=3, criterion="gini", n_jobs=1).fit(X, y)
    b = AdaBoostClassifier(n_estimators=20, max_depth=3, criterion="gini", n_jobs=2).fit(X, y)
    assert a._model.to_bytes() == b._model.to_bytes()
    X_clean = np.nan_to_num(X)  # XOR: the Gini root is uninformative, depth 3 still fits it (as scikit-learn does)
    assert AdaBoostClassifier(n_estimators=20, max_depth=3, criterion="gini").fit(X_clean, y).score(X_clean, y) > 0.9
    with pytest.raises(ValueError, match="The 'criterion' parameter of AdaBoostClassifier must be a str among"):
        AdaBoostClassifier(criterion="variance").fit(X, y)
    for code in (1, 2):
        with pytest.raises(ValueError, match="gini and entropy criteria are available for the binary losses"):
            _core.train(X, y.astype(np.int32), None, 2, "rebel", 2, 1, 256, 1.0, 1, criterion=code)
