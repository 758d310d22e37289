// Prefix sums of |a_t| (per class, or per pair of classes) and the exact-exit test (see exit_bounds.hpp).
#include "predict/exit_bounds.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

namespace rebelboost::predict {

namespace {

// Index of the pair (a, b), a < b, among the K (K - 1) / 2 pairs.
std::size_t pair_index(std::size_t a, std::size_t b, std::size_t K) { return a * K - a * (a + 1) / 2 + (b - a - 1); }

}  // namespace

ExitBounds::ExitBounds(const Model& model) : K_(model.n_outputs) {
  const std::size_t T = model.n_learners();
  n_checkpoints_ = (T + kGranularity - 1) / kGranularity + 1;
  pairs_ = K_ > 1 && K_ <= kMaxPairClasses;
  const std::size_t P = K_ * (K_ - 1) / 2;
  class_sum_.assign(n_checkpoints_ * K_, 0.0);
  if (pairs_) pair_sum_.assign(n_checkpoints_ * P, 0.0);
  if (K_ > 1) spread_sum_.assign(n_checkpoints_, 0.0);
  std::vector<double> cls(K_, 0.0), pair(pairs_ ? P : 0, 0.0);
  double spread = 0.0;
  for (std::size_t c = 1; c < n_checkpoints_; ++c) {
    for (std::size_t t = (c - 1) * kGranularity; t < std::min(T, c * kGranularity); ++t) {
      const std::vector<double>& a = model.step(t);
      for (std::size_t k = 0; k < K_; ++k) cls[k] += std::fabs(a[k]);
      if (K_ > 1) spread += *std::max_element(a.begin(), a.end()) - *std::min_element(a.begin(), a.end());
      if (pairs_)
        for (std::size_t l = 0; l < K_; ++l)
          for (std::size_t j = l + 1; j < K_; ++j) pair[pair_index(l, j, K_)] += std::fabs(a[l] - a[j]);
    }
    std::copy(cls.begin(), cls.end(), class_sum_.begin() + static_cast<std::ptrdiff_t>(c * K_));
    if (pairs_) std::copy(pair.begin(), pair.end(), pair_sum_.begin() + static_cast<std::ptrdiff_t>(c * P));
    if (K_ > 1) spread_sum_[c] = spread;
  }
}

// decided() needs P_lead - P_j > reach(j) for every j, so a spread above max_{j != lead} reach(j), at least
// min_l max_{j != l} reach_l(j); with per-class sums reach_l(j) = R_l + R_j, whose max over j != l is at
// least R_l + max_{j != l} R_j, and the least of those over l is max_k R_k + min_k R_k (l the smallest R).
double ExitBounds::needed(std::size_t s, const Range& r) const {
  const std::size_t c = s / kGranularity;
  if (K_ == 1) return class_sum_[r.end] - class_sum_[c];
  if (!pairs_) {
    double most = 0.0, least = std::numeric_limits<double>::infinity();
    for (std::size_t k = 0; k < K_; ++k) {
      const double R = class_sum_[r.end * K_ + k] - class_sum_[c * K_ + k];
      most = std::max(most, R);
      least = std::min(least, R);
    }
    return most + least;
  }
  const std::size_t n_pairs = K_ * (K_ - 1) / 2;
  double least = std::numeric_limits<double>::infinity();
  for (std::size_t l = 0; l < K_; ++l) {
    double most = 0.0;
    for (std::size_t j = 0; j < K_; ++j) {
      if (j == l) continue;
      const std::size_t p = l < j ? pair_index(l, j, K_) : pair_index(j, l, K_);
      most = std::max(most, pair_sum_[r.end * n_pairs + p] - pair_sum_[c * n_pairs + p]);
    }
    least = std::min(least, most);
  }
  return least;
}

// decided() needs P_lead - P_second > reach(second) >= the least reach of any pair (per-class sums: R_l +
// R_j >= the sum of the two smallest R_k). The same rounded values, so the bound holds in floating point.
double ExitBounds::needed_lead(std::size_t s, const Range& r) const {
  const std::size_t c = s / kGranularity;
  if (K_ == 1) return class_sum_[r.end] - class_sum_[c];
  if (!pairs_) {
    double least = std::numeric_limits<double>::infinity(), next = least;
    for (std::size_t k = 0; k < K_; ++k) {
      const double R = class_sum_[r.end * K_ + k] - class_sum_[c * K_ + k];
      next = std::min(next, std::max(least, R));
      least = std::min(least, R);
    }
    return least + next;
  }
  const std::size_t n_pairs = K_ * (K_ - 1) / 2;
  double least = std::numeric_limits<double>::infinity();
  for (std::size_t p = 0; p < n_pairs; ++p)
    least = std::min(least, pair_sum_[r.end * n_pairs + p] - pair_sum_[c * n_pairs + p]);
  return least;
}

ExitBounds::Range ExitBounds::range(std::size_t n) const {
  Range r;
  r.n = n;
  r.end = std::min((n + kGranularity - 1) / kGranularity, n_checkpoints_ - 1);
  r.margin_scale = static_cast<double>(n + 8) * std::ldexp(1.0, -50);
  const double* total = class_sum_.data() + r.end * K_;
  r.mass = 2.0 * *std::max_element(total, total + K_);
  return r;
}

ExitBounds::Leaders ExitBounds::leaders(const double* P, std::size_t stride, std::size_t K) {
  Leaders l;
  l.top = P[0];
  l.runner = P[stride];
  l.largest = std::max(std::fabs(P[0]), std::fabs(P[stride]));
  if (l.runner > l.top) {
    std::swap(l.top, l.runner);
    std::swap(l.lead, l.second);
  }
  for (std::size_t k = 2; k < K; ++k) {  // no data-dependent branch: the leader changes from row to row
    const double v = P[k * stride];
    l.largest = std::max(l.largest, std::fabs(v));
    const bool new_top = v > l.top, new_second = !new_top && v > l.runner;
    l.second = new_top ? l.lead : (new_second ? k : l.second);
    l.runner = new_top ? l.top : (new_second ? v : l.runner);
    l.lead = new_top ? k : l.lead;
    l.top = new_top ? v : l.top;
  }
  return l;
}

std::int32_t ExitBounds::decided_binary(double p, std::size_t s, const Range& r) const {
  const std::size_t c = s / kGranularity;
  const double remaining = class_sum_[r.end] - class_sum_[c];
  const double margin = r.margin_scale * (2.0 * std::fabs(p) + r.mass);
  if (p - remaining > margin) return 1;
  if (p + remaining < -margin) return 0;
  return -1;
}

std::int32_t ExitBounds::decided(const double* P, std::size_t stride, std::size_t s, const Range& r,
                                 const Leaders& l) const {
  if (K_ == 1) return decided_binary(P[0], s, r);
  const std::size_t c = s / kGranularity;
  const double margin = r.margin_scale * (2.0 * l.largest + r.mass);
  const double* cls_end = class_sum_.data() + r.end * K_;
  const double* cls_now = class_sum_.data() + c * K_;
  const std::size_t n_pairs = K_ * (K_ - 1) / 2;
  // How much the rest can still move P_lead - P_j.
  const auto reach = [&](std::size_t j) {
    if (!pairs_) return (cls_end[l.lead] - cls_now[l.lead]) + (cls_end[j] - cls_now[j]);
    const std::size_t p = l.lead < j ? pair_index(l.lead, j, K_) : pair_index(j, l.lead, K_);
    return pair_sum_[r.end * n_pairs + p] - pair_sum_[c * n_pairs + p];
  };
  // The runner-up first: it fails most often.
  if (!(l.top - l.runner > reach(l.second) + margin)) return -1;
  for (std::size_t j = 0; j < K_; ++j) {
    if (j == l.lead || j == l.second) continue;
    if (!(l.top - P[j * stride] > reach(j) + margin)) return -1;
  }
  return static_cast<std::int32_t>(l.lead);
}

}  // namespace rebelboost::predict
