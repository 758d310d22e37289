// The completed-prefix bound of Gini and entropy (see impurity_bound.hpp).
#include "tree/impurity_bound.hpp"

#include <algorithm>
#include <limits>

#include "tree/histogram.hpp"

namespace rebelboost::tree {

namespace {

// The least of the 4 corners for sides (a, b) and (c, d) (signed sum, mass): the unread positives (+p, +p)
// and negatives (-n, +n) both left, both right, positives left and negatives right, or the reverse.
template <ClassImpurity kind>
inline double least_corner(double a, double b, double c, double d, double p, double n) {
  const double both_left = side_error<kind>(a + p - n, b + p + n) + side_error<kind>(c, d);
  const double both_right = side_error<kind>(a, b) + side_error<kind>(c + p - n, d + p + n);
  const double pos_left = side_error<kind>(a + p, b + p) + side_error<kind>(c - n, d + n);
  const double neg_left = side_error<kind>(a - n, b + n) + side_error<kind>(c + p, d + p);
  const double either = both_left < both_right ? both_left : both_right;  // values, not std::min's references:
  const double split = pos_left < neg_left ? pos_left : neg_left;        // selects that vectorise
  return either < split ? either : split;
}

// Each candidate's least corner into `out` (one or two per position; returns how many): a loop without
// branches, so the divisions vectorise (inlined into each instruction set's clone below).
template <ClassImpurity kind>
__attribute__((always_inline)) inline int corner_errors(const PrefixCandidates& c, double p, double n, double* out) {
  const double vs = c.values_s, vt = c.values_t, ms = c.missing_s, mt = c.missing_t;
  for (int i = 0; i < c.n_positions; ++i)  // NaN right
    out[i] = least_corner<kind>(c.left_s[i], c.left_t[i], vs - c.left_s[i] + ms, vt - c.left_t[i] + mt, p, n);
  if (ms == 0.0 && mt == 0.0) return c.n_positions;  // NaN left is the same candidate on these rows
  double* nan_left = out + c.n_positions;
  for (int i = 0; i < c.n_positions; ++i)
    nan_left[i] = least_corner<kind>(c.left_s[i] + ms, c.left_t[i] + mt, vs - c.left_s[i], vt - c.left_t[i], p, n);
  return 2 * c.n_positions;
}

}  // namespace

__attribute__((target_clones("avx2", "default")))
double completed_lower_bound(ClassImpurity kind, const PrefixCandidates& c, double rest_pos, double rest_neg) {
  double errors[2 * (kHistBins + 1)];
  const int n = kind == ClassImpurity::kGini ? corner_errors<ClassImpurity::kGini>(c, rest_pos, rest_neg, errors)
                                             : corner_errors<ClassImpurity::kEntropy>(c, rest_pos, rest_neg, errors);
  double least = std::numeric_limits<double>::infinity();
  for (int i = 0; i < n; ++i) least = errors[i] < least ? errors[i] : least;
  return least;
}

}  // namespace rebelboost::tree
