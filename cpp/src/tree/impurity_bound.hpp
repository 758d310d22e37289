// The bound QuickBoost prunes Gini and entropy features with (docs/quickboost.md, "Completing the prefix"):
// a feature's candidate splits on the rows read so far, each completed by the rows not read yet in the way
// that costs least.
//
// The rows not read yet are unknown row by row, but their class masses are known: the node's minus the
// rows read. For a fixed candidate, the side error e(P, N) (class masses P, N of a side) is concave, so the
// split's error, as a function of how much of each class the unread rows put on the left, is concave on
// the box [0, rest_pos] x [0, rest_neg] and lowest at one of its 4 corners (each class wholly on one side).
// The least corner over every candidate therefore bounds the feature's error on the whole node from
// below, and it is far tighter than the rows read alone: the unread mass counts at the rate a side's
// impurity grows when a class joins the side it already dominates, not at zero.
#pragma once

namespace rebelboost::tree {

// The side errors of the bound, in the units of quick_impurity.hpp (T = P + N, S = P - N, u = S / T):
//   Gini:     T - S^2 / T = T (1 - u^2), exactly;
//   entropy:  T (ln 2 - (u^2 + u^4 / 6 + c u^6) / 2), c = 2 ln 2 - 7/6, at most the entropy T H(P / T) in
//             nats (its series ln 2 - sum_k u^2k / (2k (2k - 1)) with every term past u^6 raised to u^6;
//             equal at u = 0 and |u| = 1). One division, no logarithm.
enum class ClassImpurity { kGini, kEntropy };

inline constexpr double kLn2 = 0.693147180559945309417;
inline constexpr double kEntropySixth = 2.0 * kLn2 - 7.0 / 6.0;  // c above: sum over k >= 3 of 1 / (k (2k - 1))

template <ClassImpurity kind>
inline double side_error(double S, double T) {
  const double u = S / (T > 1.0 ? T : 1.0);  // an empty side (T = 0) has S = 0
  const double u2 = u * u;
  if constexpr (kind == ClassImpurity::kGini) return T - S * u;
  return T * (kLn2 - 0.5 * u2 * (1.0 + u2 * (1.0 / 6.0 + kEntropySixth * u2)));
}

// One feature's candidates on the rows read so far: position i (0 <= i < n_positions) has the first i
// non-empty value bins on the left, with sums left_s[i], left_t[i] (left_s[0] = left_t[0] = 0); the value
// bins total (values_s, values_t) and the missing bin holds (missing_s, missing_t). Each position is the
// candidate "NaN right" and, when the rows read hold NaN, "NaN left".
struct PrefixCandidates {
  const double* left_s;
  const double* left_t;
  int n_positions;
  double values_s, values_t, missing_s, missing_t;
};

// The least error over the candidates, each completed by unread rows of class masses rest_pos and rest_neg
// in each of the 4 corner ways: at most the error of every split of the feature on the whole node (for any
// rows the node holds beyond those read). Doubles: rounding to about 1e-15 of the node's mass.
double completed_lower_bound(ClassImpurity kind, const PrefixCandidates& c, double rest_pos, double rest_neg);

}  // namespace rebelboost::tree
