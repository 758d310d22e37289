// REBEL's subcosts for any surrogate g (thesis §4.3, Eq. 4.3; docs/guide/rebel.md "The loss family", Subcosts).
//
// For class y with cost row c (c_y = 0): c-_y = theta (slot y only), c+_k = 0 at k = y and otherwise the
// smallest value that satisfies Eq. 4.3 for class k, which with c+_y = c-_k = 0 reads
//   pair_min(c+_k / theta) theta = c_k,   pair_min(r) = min_h { r g(h) + g(-h) }   (c*_k = 0 since min g = 0)
// so c+_k = theta r(c_k / theta) with r the inverse of pair_min. theta is the thesis's choice for the
// exponential g applied to any g: the mean of the c+_k over k != y (1 = mean_k r(c_k / theta)), which
// the exponential's closed form theta = ||c|| / (2 sqrt(K-1)) solves. Uniform costs give c+ = c- = 1/2
// for every g with pair_min(1) = 2 (the three here).
#pragma once

#include <cstddef>
#include <vector>

namespace rebelboost::loss {

struct Subcosts {
  std::vector<double> plus;   // K x K: row y = c+ of class y (zero at y)
  std::vector<double> minus;  // K: c- of class y, in slot y
};

// r(x): the r >= 0 with pair_min(r) = x, +inf where pair_min never reaches x (e.g. x >= 4 for (1 + x)^2).
using PairMinInverse = double (*)(double x);

// cost: K x K row-major (zero diagonal, >= 0, no zero row; validated by the caller), scaled so its
// largest entry is 1 (the loss is normalised afterwards, so the scale of C does not matter).
Subcosts coupled_subcosts(const std::vector<double>& cost, std::size_t K, PairMinInverse r_of);

}  // namespace rebelboost::loss
