"""A slow, independent REBEL with stumps in numpy, for any subcost choice (thesis §4.3 coupled sum).

Used by cost_sensitive.py to ask whether a different choice of subcosts inside the thesis's family would
change the cost-sensitive result. Exact thresholds (midpoints between sorted distinct values, no binning),
general K-vector weights w+_n = c+_n o exp[H_n] and w-_n = c-_n o exp[-H_n] (w- is not restricted to the
true class), the closed-form step a = 1/2 ln((s- + eps) / (s+ + eps)) with eps = 1 / (K N) of the total
weight, and argmax_k H_k as the decision. Meant for small 2-D problems (O(T d N log N)).

Subcost choices (cost row c = C[y, :], zero diagonal):
  "thesis"      c+ = sqrt(K-1) / (2 ||c||) c^2,  c- = ||c|| / (2 sqrt(K-1)) delta_y     (thesis §4.3)
  "consistent"  c+ = c,  c- = max(c) - c (so c-_y = max(c))
The second also satisfies the thesis's upper-bound condition (Eq. 4.3): for a wrong class k with
cost c_k <= m = max(c), min_h (c_k e^h + (2m - c_k) e^-h) - 2 sqrt(c_k (m - c_k)) >= c_k. Its pointwise
minimiser is H_k = 1/2 ln((sum_j p_j m_j - R_k) / R_k) with R_k = sum_j p_j C[j, k], decreasing in the
expected cost R_k, so argmax H is the minimum-expected-cost class; with equal off-diagonal costs it is the
thesis's choice up to a constant factor.
"""

from __future__ import annotations

import numpy as np


def subcosts(C, kind):
    """(c+, c-) as K x K arrays: row y holds the subcost vectors of a sample of class y."""
    C = np.asarray(C, dtype=np.float64)
    K = C.shape[0]
    if kind == "thesis":
        norm = np.linalg.norm(C, axis=1)
        return np.sqrt(K - 1) / (2 * norm)[:, None] * C**2, np.diag(norm / (2 * np.sqrt(K - 1)))
    if kind == "consistent":
        return C.copy(), C.max(axis=1, keepdims=True) - C
    raise ValueError(f"unknown subcost choice {kind!r}")


def population_decision(p, C, kind):
    """argmax of the loss's pointwise minimiser for posteriors p (n x K): the decision with infinite data."""
    cplus, cminus = subcosts(C, kind)
    with np.errstate(divide="ignore", invalid="ignore"):
        score = np.log(p @ cminus) - np.log(p @ cplus)
    return np.argmax(np.nan_to_num(score, nan=-np.inf), axis=1)


class NumpyRebelStumps:
    def __init__(self, n_estimators, cost_matrix, subcost="thesis"):
        self.n_estimators = n_estimators
        self.cost_matrix = np.asarray(cost_matrix, dtype=np.float64)
        self.subcost = subcost

    def fit(self, X, y):
        X = np.asarray(X, dtype=np.float64)
        n, d = X.shape
        K = self.cost_matrix.shape[0]
        cplus, cminus = subcosts(self.cost_matrix, self.subcost)
        wp, wm = cplus[y].copy(), cminus[y].copy()
        smoothing = 1.0 / (K * n)

        def rescale(wp, wm):
            t = wp.sum() + wm.sum()
            return wp / t, wm / t

        def step(sp, sm):
            eps = smoothing * (sp.sum() + sm.sum())
            return 0.5 * np.log((sm + eps) / (sp + eps))

        wp, wm = rescale(wp, wm)
        self.bias_ = step(wp.sum(0), wm.sum(0))  # the homogeneous learner f = +1
        wp, wm = rescale(wp * np.exp(self.bias_), wm * np.exp(-self.bias_))
        orders = [np.argsort(X[:, j], kind="stable") for j in range(d)]
        self.stumps_ = []
        for _ in range(self.n_estimators):
            best = None
            for j in range(d):
                o = orders[j]
                xs = X[o, j]
                cut = np.nonzero(xs[:-1] < xs[1:])[0]
                if len(cut) == 0:
                    continue
                left_p, left_m = np.cumsum(wp[o], 0)[cut], np.cumsum(wm[o], 0)[cut]
                # f = +1 left of the threshold: s+ = left w+ + right w-, s- = left w- + right w+.
                sp = left_p + (wm.sum(0) - left_m)
                sm = left_m + (wp.sum(0) - left_p)
                loss = np.sqrt(sp * sm).sum(1)
                i = int(np.argmin(loss))
                if best is None or loss[i] < best[0]:
                    best = (loss[i], j, 0.5 * (xs[cut[i]] + xs[cut[i] + 1]))
            if best is None:
                break
            _, j, threshold = best
            f = np.where(X[:, j] <= threshold, 1.0, -1.0)[:, None]
            plus = f[:, 0] > 0
            a = step(wp[plus].sum(0) + wm[~plus].sum(0), wm[plus].sum(0) + wp[~plus].sum(0))
            wp, wm = rescale(wp * np.exp(f * a), wm * np.exp(-f * a))
            self.stumps_.append((j, threshold, a))
        return self

    def staged_scores(self, X):
        H = np.tile(self.bias_, (len(X), 1))
        for j, threshold, a in self.stumps_:
            H = H + np.where(X[:, j] <= threshold, 1.0, -1.0)[:, None] * a
            yield H

    def predict(self, X):
        H = np.tile(self.bias_, (len(X), 1))
        for H in self.staged_scores(X):
            pass
        return np.argmax(H, axis=1)
