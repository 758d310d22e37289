"""REBEL's loss family (loss="exponential" | "logistic" | "squared"; docs/guide/rebel.md "The loss family").

Properties checked against references written here, independently of the engine: with 2 classes each loss
is its binary counterpart (a slow numpy LogitBoost / L2Boost with +-1 trees); the training loss falls every
iteration; every step is the minimiser a brute-force line search finds; predict_proba inverts the pointwise
minimiser; and the model file, pickling, warm start, thread counts and QuickBoost keep their promises.
"""

import pickle

import numpy as np
import pytest
from scipy.optimize import brentq, minimize_scalar
from scipy.special import expit
from sklearn.datasets import load_digits, make_classification

import rebelboost
from model_bytes import parse
from rebelboost import REBELClassifier

LOSSES = ["exponential", "logistic", "squared"]
LN2 = np.log(2.0)

# g, g' for each surrogate (thesis §4.3), written out here.
G = {
    "exponential": (np.exp, np.exp),
    "logistic": (lambda x: np.logaddexp(0.0, x) / LN2, lambda x: expit(x) / LN2),
    "squared": (lambda x: (1.0 + x) ** 2, lambda x: 2.0 * (1.0 + x)),
}


def _bytes(clf):
    """The fitted model's file bytes (its metadata as last saved: none here)."""
    return clf._model.to_bytes()


def _data(n=100, d=3, K=2, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    logits = X @ rng.normal(size=(d, K)) + rng.normal(scale=1.0, size=(n, K))
    return X, np.argmax(logits, axis=1)


# ---- K = 2: the binary counterpart, step by step --------------------------------------------------------
class BinaryReference:
    """Binary boosting of g(-y F) with +-1 trees (thesis App. 7.3), written from the method's description: the
    bias and every step minimise mean g(-y (F + f a)) + 2 eps (g(a) + g(-a)) (eps = the smoothing 1/(2N) times
    the current loss: REBEL's per-class smoothing, doubled because each of the 2 classes carries half the
    loss), found by a bounded scalar search; the root split maximises |sum_n f_n G_n| (G = dL/dF), the layers
    below maximise |sum_L q| + |sum_R q| with q_n = l_n(-1) - l_n(+1) at the current tree's step."""

    def __init__(self, loss, X, y):
        self.g, self.dg = G[loss]
        self.X, self.ys = X, np.where(y == 1, 1.0, -1.0)
        self.F = np.zeros(len(y))
        self.smoothing = 1.0 / (2 * len(y))

    def value(self, F):
        return np.mean(self.g(-self.ys * F))

    def step(self, f):
        eps = self.smoothing * self.value(self.F)
        phi = lambda a: self.value(self.F + f * a) + 2 * eps * (self.g(a) + self.g(-a))  # noqa: E731
        return minimize_scalar(phi, bounds=(-40, 40), method="bounded", options={"xatol": 1e-12}).x

    def _best_split(self, rows, score_of):
        """(feature, threshold, gain) of the best split of `rows` by score_of(left mask); features ascend,
        thresholds ascend, the first of equal scores wins; None unless strictly above the unsplit score."""
        best, best_score = None, score_of(np.zeros(len(rows), bool))
        for j in range(self.X.shape[1]):
            values = np.unique(self.X[rows, j])
            for v in values[:-1]:
                s = score_of(self.X[rows, j] <= v)
                if s > best_score * (1 + 1e-12):
                    best, best_score = (j, v), s
        return best

    def tree(self, depth):
        n = len(self.ys)
        gradient = -self.ys * self.dg(-self.ys * self.F)
        total = gradient.sum()
        split = self._best_split(np.arange(n), lambda left: abs(total - 2 * gradient[left].sum()))
        if split is None:
            return np.ones(n)
        f = np.where(self.X[:, split[0]] <= split[1], -1.0, 1.0)
        leaves = [np.flatnonzero(f < 0), np.flatnonzero(f > 0)]
        for _ in range(depth - 1):
            a = self.step(f)
            q = self.g(-self.ys * (self.F - a)) - self.g(-self.ys * (self.F + a))
            next_leaves = []
            for rows in leaves:
                sums = lambda left, r=rows: abs(q[r][left].sum()) + abs(q[r][~left].sum())  # noqa: E731
                s = self._best_split(rows, sums) if len(rows) >= 2 else None
                if s is None:
                    f[rows] = 1.0 if q[rows].sum() > 0 else (-1.0 if q[rows].sum() < 0 else f[rows[0]])
                    next_leaves.append(rows)
                    continue
                left = self.X[rows, s[0]] <= s[1]
                f[rows[left]] = 1.0 if q[rows[left]].sum() > 0 else -1.0
                f[rows[~left]] = -1.0 if q[rows[~left]].sum() < 0 else 1.0
                next_leaves += [rows[left], rows[~left]]
            leaves = next_leaves
        return f


@pytest.mark.parametrize("loss", ["logistic", "squared"])
@pytest.mark.parametrize("depth", [1, 2])
def test_two_classes_reduce_to_the_binary_counterpart(loss, depth):
    X, y = _data(n=100, seed=depth)
    T, lr = 6, 0.7
    clf = REBELClassifier(loss=loss, n_estimators=T, max_depth=depth, learning_rate=lr).fit(X, y)
    ref = BinaryReference(loss, X, y)
    bias = ref.step(np.ones(len(y)))
    ref.F += bias
    model_bias = np.asarray(clf._model.bias)
    # A line search by function values finds the argmin to ~1e-8 relative: agreement to 1e-6 is the test.
    np.testing.assert_allclose(model_bias[1], bias, rtol=1e-6, atol=1e-9)
    assert model_bias[0] == -model_bias[1]  # H_0 = -H_1 exactly (App. 7.3's induction)
    steps = clf.estimator_weights_
    np.testing.assert_array_equal(steps[:, 0], -steps[:, 1])
    staged = list(clf.staged_decision_function(X))
    assert len(staged) == T
    for t in range(T):
        f = ref.tree(depth)
        a = ref.step(f)
        np.testing.assert_allclose(steps[t, 1], lr * a, rtol=1e-6, atol=1e-9, err_msg=f"step of tree {t}")
        ref.F += lr * a * f
        # decision_function with 2 classes is H_1 - H_0 = 2 F
        np.testing.assert_allclose(staged[t], 2 * ref.F, rtol=1e-6, atol=1e-7, err_msg=f"scores after tree {t}")
        ref.F = staged[t] / 2  # the next tree from the engine's scores: a tree differing later is the engine's


# ---- the training loss falls in every iteration ---------------------------------------------------------
def _cost(K, seed):
    rng = np.random.default_rng(seed)
    C = rng.uniform(0.2, 5.0, size=(K, K))
    np.fill_diagonal(C, 0.0)
    return C


@pytest.mark.parametrize("loss", LOSSES)
@pytest.mark.parametrize("K", [2, 3, 10])
@pytest.mark.parametrize("costs", [False, True])
def test_training_loss_falls_every_iteration(loss, K, costs):
    X, y = _data(n=400, d=6, K=K, seed=K)
    C = _cost(K, K) if costs else None
    clf = REBELClassifier(loss=loss, n_estimators=25, max_depth=3, cost_matrix=C, learning_rate=1.0).fit(X, y)
    history = np.concatenate([[1.0], clf.fit_info_["train_loss"]])
    assert len(history) > 10
    assert np.all(np.diff(history) < 0), np.diff(history)
    assert np.all(np.isfinite(clf.estimator_weights_))


# ---- Newton steps against a brute-force line search -----------------------------------------------------
def _subcosts(C, loss):
    """c+ (K x K) and c- (K) per class, solved here: Eq. 4.3 with equality, theta the mean of c+ (brentq)."""
    g = G[loss][0]

    def pair_min(r):
        return minimize_scalar(lambda h: r * g(h) + g(-h), bounds=(-60, 60), method="bounded",
                               options={"xatol": 1e-12}).fun

    def r_of(x):
        return brentq(lambda r: pair_min(r) - x, 1e-12, 1e6, xtol=1e-14, rtol=1e-13)

    K = len(C)
    plus, minus = np.zeros((K, K)), np.zeros(K)
    for y in range(K):
        others = [k for k in range(K) if k != y]
        theta = brentq(lambda t: np.mean([r_of(C[y, k] / t) for k in others]) - 1.0, C[y].max() / 3.9, 100.0,
                       xtol=1e-14, rtol=1e-12)
        minus[y] = theta
        plus[y, others] = [theta * r_of(C[y, k] / theta) for k in others]
    return plus, minus


@pytest.mark.parametrize("loss", ["logistic", "squared"])
@pytest.mark.parametrize("costs", [False, True])
def test_steps_agree_with_a_brute_force_line_search(loss, costs):
    K = 3
    X, y = _data(n=150, d=4, K=K, seed=7)
    C = _cost(K, 3) if costs else np.ones((K, K)) - np.eye(K)
    Cs = C / C.max()
    plus, minus = _subcosts(Cs, loss) if costs else (np.full((K, K), 0.5) * (1 - np.eye(K)), np.full(K, 0.5))
    alpha = np.where(np.arange(K)[None, :] == y[:, None], minus[y][:, None], plus[y])
    alpha /= alpha.sum()  # the loss at H = 0 is 1 (g(0) = 1)
    sigma = np.where(np.arange(K)[None, :] == y[:, None], -1.0, 1.0)
    g = G[loss][0]
    smoothing = 1.0 / (K * len(y))
    clf = REBELClassifier(loss=loss, n_estimators=4, max_depth=2, cost_matrix=C if costs else None).fit(X, y)
    out = clf.explain(X)["output"]

    def line_search(H, f, k):
        eps = smoothing * np.sum(alpha * g(sigma * H))
        phi = lambda a: np.sum(alpha[:, k] * g(sigma[:, k] * (H[:, k] + f * a))) + eps * (g(a) + g(-a))  # noqa: E731
        return minimize_scalar(phi, bounds=(-40, 40), method="bounded", options={"xatol": 1e-13}).x

    H = np.zeros((len(y), K))
    bias = np.asarray(clf._model.bias)
    expected = [line_search(H, np.ones(len(y)), k) for k in range(K)]
    np.testing.assert_allclose(bias, expected, rtol=1e-6, atol=1e-9)
    H += bias
    for t in range(4):
        expected = [line_search(H, out[:, t], k) for k in range(K)]
        np.testing.assert_allclose(clf.estimator_weights_[t], expected, rtol=1e-6, atol=1e-9, err_msg=f"tree {t}")
        H += np.outer(out[:, t], clf.estimator_weights_[t])
    np.testing.assert_allclose(clf.decision_function(X), H, rtol=1e-9, atol=1e-12)


# ---- predict_proba --------------------------------------------------------------------------------------
@pytest.mark.parametrize("loss", LOSSES)
def test_predict_proba_inverts_the_pointwise_minimiser(loss):
    # One constant feature: no split helps, so H is the bias, the (smoothed) minimiser for the class shares p.
    # By hand (uniform costs, c+ = c- = 1/2): H_k = 1/2 logit p_k, logit p_k, 2 p_k - 1 for the three g's.
    p = np.array([0.5, 0.3, 0.2])
    y = np.repeat([0, 1, 2], (p * 20000).astype(int))
    X = np.zeros((len(y), 1))
    clf = REBELClassifier(loss=loss, n_estimators=3).fit(X, y)
    logit = np.log(p / (1 - p))
    by_hand = {"exponential": logit / 2, "logistic": logit, "squared": 2 * p - 1}[loss]
    np.testing.assert_allclose(clf._model.bias, by_hand, atol=2e-3)
    proba = clf.predict_proba(X[:5])
    np.testing.assert_allclose(proba, np.tile(p, (5, 1)), atol=2e-3)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0, rtol=1e-12)


@pytest.mark.parametrize("loss", LOSSES)
def test_predict_proba_rows_are_finite_sum_to_one_and_follow_predict(loss):
    X, y = _data(n=300, d=5, K=4, seed=1)
    clf = REBELClassifier(loss=loss, n_estimators=30, max_depth=3).fit(X, y)
    proba = clf.predict_proba(X)
    assert np.all(np.isfinite(proba)) and np.all(proba >= 0)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0, rtol=1e-12)
    np.testing.assert_array_equal(clf.classes_[np.argmax(proba, axis=1)], clf.predict(X))
    # Extreme and tied scores (a model may hold |H| up to 1e300).
    scores = np.array([[1e300, -1e300, 0.0, 0.0], [5.0, 5.0, -3.0, 20.0], [-1e300] * 4, [0.3, 0.3, 0.3, 0.3]])
    rows = clf._probabilities(scores)
    assert np.all(np.isfinite(rows)) and np.all(rows >= 0)
    np.testing.assert_allclose(rows.sum(axis=1), 1.0, rtol=1e-12)
    np.testing.assert_array_equal(np.argmax(rows, axis=1), np.argmax(scores, axis=1))


def test_predict_proba_with_two_classes_uses_each_loss_link():
    X, y = _data(n=200, d=3, K=2, seed=4)
    for loss in LOSSES:
        clf = REBELClassifier(loss=loss, n_estimators=10, max_depth=2).fit(X, y)
        H1 = clf.decision_function(X) / 2  # H_1 = -H_0
        expected = {"exponential": expit(2 * H1), "logistic": expit(H1), "squared": np.clip((1 + H1) / 2, 0, 1)}[loss]
        np.testing.assert_allclose(clf.predict_proba(X)[:, 1], expected, rtol=1e-12, atol=1e-15)


# ---- the model and its promises -------------------------------------------------------------------------
def test_exponential_is_the_default_and_unchanged():
    X, y = _data(n=200, d=4, K=3, seed=2)
    default = REBELClassifier(n_estimators=10, max_depth=2).fit(X, y)
    named = REBELClassifier(n_estimators=10, max_depth=2, loss="exponential").fit(X, y)
    assert default.loss == "exponential" and default.loss_ == "exponential"
    assert _bytes(default) == _bytes(named)


@pytest.mark.parametrize("loss", ["logistic", "squared"])
def test_model_file_pickle_and_loaded_link(loss, tmp_path):
    X, y = _data(n=200, d=4, K=3, seed=3)
    clf = REBELClassifier(loss=loss, n_estimators=8, max_depth=2).fit(X, y)
    assert clf._model.rebel_loss == loss
    path = tmp_path / "m.rbm"
    clf.save(path)
    loaded = rebelboost.load(path)
    assert loaded.loss == loss and loaded.loss_ == loss and loaded._model.rebel_loss == loss
    np.testing.assert_array_equal(loaded.predict_proba(X), clf.predict_proba(X))
    again = pickle.loads(pickle.dumps(clf))
    np.testing.assert_array_equal(again.predict_proba(X), clf.predict_proba(X))
    assert again.loss_ == loss


@pytest.mark.parametrize("loss", ["logistic", "squared"])
def test_same_model_for_every_thread_count_and_quick_mode(loss):
    X, y = _data(n=3000, d=8, K=4, seed=5)
    models = {(jobs, quick): _bytes(REBELClassifier(loss=loss, n_estimators=8, max_depth=4, n_jobs=jobs,
                                                              quick=quick, random_state=0).fit(X, y))
              for jobs in (1, 2, 3) for quick in (False, True, "auto")}
    assert len(set(models.values())) == 1
    # The Newton root has no QuickBoost bound: even quick=True scans it in full (the layers below may prune).
    info = REBELClassifier(loss=loss, n_estimators=3, max_depth=4, quick=True).fit(X, y).fit_info_
    assert np.all(info["full_nodes"] >= 1)


def test_warm_start_continues_and_refuses_another_loss():
    X, y = _data(n=300, d=4, K=3, seed=6)
    once = REBELClassifier(loss="logistic", n_estimators=12, max_depth=2).fit(X, y)
    warm = REBELClassifier(loss="logistic", n_estimators=5, max_depth=2, warm_start=True).fit(X, y)
    warm.set_params(n_estimators=12).fit(X, y)
    assert _bytes(warm) == _bytes(once)
    warm.set_params(loss="squared", n_estimators=15)
    with pytest.raises(ValueError, match="trained with REBEL's logistic loss, this training asks for the squared"):
        warm.fit(X, y)


def test_bad_loss_and_combinations_are_clear_errors():
    X, y = _data(n=100, d=3, K=3, seed=8)
    with pytest.raises(ValueError, match="loss"):
        REBELClassifier(loss="hinge").fit(X, y)
    with pytest.raises(ValueError, match="similarities need REBEL's exponential loss"):
        REBELClassifier(loss="logistic", weak_learner="similarity", n_estimators=2).fit(X, y)


def test_a_file_whose_metadata_disagrees_with_its_loss_is_refused(tmp_path):
    X, y = _data(n=100, d=3, K=3, seed=9)
    clf = REBELClassifier(loss="squared", n_estimators=3).fit(X, y)
    path = tmp_path / "m.rbm"
    clf.save(path)
    parts = parse(path.read_bytes())
    parts.g = 1  # the file now says logistic, its metadata squared
    path.write_bytes(parts.file())
    with pytest.raises(rebelboost.ModelFileError, match="loss='squared' but the model was trained with the logistic"):
        rebelboost.load(path)


def test_cost_matrix_changes_the_model_for_every_loss():
    X, y = load_digits(return_X_y=True)
    X, y = X[:600], y[:600]
    C = np.ones((10, 10)) - np.eye(10)
    C[3, :] = 10.0  # missing a 3 is expensive
    C[3, 3] = 0.0
    for loss in LOSSES:
        plain = REBELClassifier(loss=loss, n_estimators=20, max_depth=2).fit(X, y)
        costly = REBELClassifier(loss=loss, n_estimators=20, max_depth=2, cost_matrix=C).fit(X, y)
        recall = lambda c: np.mean(c.predict(X[y == 3]) == 3)  # noqa: E731
        assert recall(costly) >= recall(plain)
        assert _bytes(plain) != _bytes(costly)


def test_logistic_weighs_flipped_labels_less_than_exponential():
    X, y = make_classification(n_samples=600, n_features=8, n_informative=5, random_state=0)
    rng = np.random.default_rng(0)
    noisy = y.copy()
    flip = rng.random(len(y)) < 0.2
    noisy[flip] = 1 - noisy[flip]
    share = {}
    for loss in ["exponential", "logistic"]:
        clf = REBELClassifier(loss=loss, n_estimators=60, max_depth=3).fit(X, noisy)
        H = clf.decision_function(X)
        margin = np.where(noisy == 1, H, -H)
        weight = G[loss][1](-margin / 2)  # each row's gradient weight g'(-margin) (H_1 = -H_0 = d / 2)
        share[loss] = weight[flip].sum() / weight.sum()
    assert share["logistic"] < share["exponential"]
