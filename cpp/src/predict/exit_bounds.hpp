// Exact early exit: after s of n learners, is a row's class already certain whatever the rest adds?
//
// The full evaluation adds the learners' contributions c_t = f_t(x) a_t (|f_t| <= 1, so |c_tk| <= |a_tk|)
// to H = a_0 in learner order with rounded additions; P = the sum after s learners is exactly what the
// full evaluation holds at that point. Whatever f_s..f_{n-1} turn out to be:
//   - binary (K = 1): H >= P - R - e and H <= P + R + e, R = sum_{t >= s} |a_t|;
//   - K classes: H_l - H_j >= P_l - P_j - D_lj - e_l - e_j, D_lj = sum_{t >= s} |a_tl - a_tj| (tight for
//     +-1 learners whose outputs could all go against l; for K > kMaxPairClasses the looser
//     D_lj <= R_l + R_j is used, which keeps the tables small).
// e bounds the rounding: m = n - s further additions err by at most gamma_m (|P_k| + sum |c_tk|), gamma_m =
// m u / (1 - m u), u = 2^-53 (Higham, recursive summation); the tables' own prefix sums, the subtraction
// P_l - P_j and, for real-valued learners, the rounding of f_t a_t add a few u times the same magnitudes.
// All of it stays below margin = (n + 8) 2^-50 (2 max_k |P_k| + 2 max_k sum_{t < n} |a_tk|), so a row
// leaves with class l only when the leader l beats every other class by more than D_lj + margin: then
// H_l > H_j strictly in floating point too, and argmax (first on ties) or H > 0 gives l. No tie can be
// decided early, so the tie rule never matters.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "rebelboost/model.hpp"

namespace rebelboost::predict {

class ExitBounds {
 public:
  // Prefix sums are kept every kGranularity learners; checks happen at multiples of it.
  static constexpr std::size_t kGranularity = 4;
  // Above this many classes the per-pair sums (K (K - 1) / 2 per checkpoint) give way to per-class ones.
  static constexpr std::size_t kMaxPairClasses = 16;

  explicit ExitBounds(const Model& model);

  // What a call with n learners needs once: where the sums end and the rounding margin's scale.
  struct Range {
    std::size_t n = 0;      // learners the full evaluation uses
    std::size_t end = 0;    // checkpoint index ceil(n / kGranularity), capped at the last one
    double margin_scale = 0.0;  // (n + 8) 2^-50
    double mass = 0.0;          // 2 max_k sum_{t < end} |a_tk|
  };
  Range range(std::size_t n) const;

  // A row's leading class (first on ties), runner-up and largest |P_k| (K >= 2).
  struct Leaders {
    std::size_t lead = 0, second = 1;
    double top = 0.0, runner = 0.0, largest = 0.0;
  };
  static Leaders leaders(const double* P, std::size_t stride, std::size_t K);

  // The class of a row whose scores after s learners (s a multiple of kGranularity, s < n) are
  // P[k * stride], if no remaining learner can change it; -1 otherwise. K >= 2 needs the row's leaders.
  std::int32_t decided(const double* P, std::size_t stride, std::size_t s, const Range& r, const Leaders& l) const;
  std::int32_t decided_binary(double P, std::size_t s, const Range& r) const;
  // sum_{t >= s} |a_t| up to the range's end, as decided_binary uses it (binary models).
  void binary_remaining(std::size_t s, const Range& r, double& remaining) const {
    remaining = class_sum_[r.end] - class_sum_[s / kGranularity];
  }

  // Checkpoints that cannot decide a row, skipped unchecked. A row's spread is |P| (K = 1) or
  // max_k P_k - min_k P_k; decided() returns -1 at checkpoint s unless the spread exceeds needed(s), and
  // from learner t to s (t <= s) the spread grows by at most growth(t, s) = sum_{t <= u < s} (max_k a_uk -
  // min_k a_uk) (|a_u| for K = 1), both before rounding, which StopRule::next_possible allows for.
  double growth(std::size_t t, std::size_t s) const {
    const std::vector<double>& sum = K_ == 1 ? class_sum_ : spread_sum_;
    return sum[std::min((s + kGranularity - 1) / kGranularity, n_checkpoints_ - 1)] - sum[t / kGranularity];
  }
  double needed(std::size_t s, const Range& r) const;
  // decided() also returns -1 unless the lead (top - runner-up; |P| for K = 1) exceeds needed_lead(s), the
  // least reach of any pair (per-class sums: the two smallest R_k), and the lead grows by at most growth(t,
  // s) too. With many classes the lead is far below the spread, so this skips most checks.
  double needed_lead(std::size_t s, const Range& r) const;

 private:
  std::size_t K_ = 1, n_checkpoints_ = 1;
  bool pairs_ = false;
  std::vector<double> class_sum_;  // [c * K + k]: sum_{t < c kGranularity} |a_tk|
  std::vector<double> pair_sum_;   // [c * K (K - 1) / 2 + pair(l, j)]: sum_{t < c kGranularity} |a_tl - a_tj|
  std::vector<double> spread_sum_;  // [c] (K >= 2): sum_{t < c kGranularity} (max_k a_tk - min_k a_tk)
};

}  // namespace rebelboost::predict
