// Per-class minimiser of a 1-D convex function by safeguarded Newton (docs/guide/rebel.md "The loss family", Steps).
//
// The step of REBEL's logistic and squared surrogates: per class k, phi_k(a) is convex in a (a sum of
// convex g's of affine functions of a, plus the smoothing terms). Each pass evaluates phi_k' and phi_k''
// of every unconverged class at the current iterate (one pass over the samples for all classes); a class
// moves by a Newton step while it stays strictly inside its bracket [lo, hi] (the signs of phi' seen so
// far keep the minimiser there), and to the bracket's midpoint otherwise, so the iterates never leave the
// region that holds the minimiser and phi_k never rises past it; a step is at most max(1, 2 |a|) long.
// The search stays in [-bound, bound]: a minimiser beyond it is replaced by the bound, which still lowers
// phi_k (convex, falling toward it).
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace rebelboost::loss {

// phi_k' and phi_k'' per class at one iterate (classes not asked for may be left 0).
struct SlopeCurvature {
  std::vector<double> slope, curvature;
  explicit SlopeCurvature(std::size_t K) : slope(K, 0.0), curvature(K, 0.0) {}
};

// How a solve moves, tuned to its functions. The coupled sum's g (logistic, squared) may saturate, so a
// step is at most max(1, 2 |a|) and a Newton step below the tolerance ends the solve even where it leaves
// the bracket; the exponential sums (exp_step.hpp) never flatten, so their steps are plain Newton and
// anything leaving the bracket is bisected.
struct NewtonRule {
  int max_passes = 100;
  double tolerance = 1e-14;      // relative to max(1, |a|)
  bool limit_reach = true;       // a step at most max(1, 2 |a|)
  bool bisect_tiny_steps = false;  // bisect even a step below the tolerance that leaves the bracket
};

// evaluate(a, active) -> SlopeCurvature at the K-vector a for the classes with active[k] != 0, starting
// from `a` (each entry within +-bound). Deterministic: the iterates depend only on the start, the rule and
// on what evaluate returns. Returns the minimiser per class.
template <typename Evaluate>
std::vector<double> newton_minimise(std::vector<double> a, double bound, Evaluate&& evaluate,
                                    const NewtonRule& rule = {}) {
  const std::size_t K = a.size();
  std::vector<double> lo(K, -bound), hi(K, bound);
  std::vector<std::uint8_t> active(K, 1);
  for (int pass = 0; pass < rule.max_passes; ++pass) {
    const SlopeCurvature d = evaluate(a, active);
    bool any = false;
    for (std::size_t k = 0; k < K; ++k) {
      if (!active[k]) continue;
      const double slope = d.slope[k], curvature = d.curvature[k];
      if (slope > 0.0) hi[k] = a[k];
      if (slope < 0.0) lo[k] = a[k];
      // A Newton step from a flat region can be huge: so a far minimiser is reached by doubling, not by
      // bisecting [-bound, bound]. Without curvature the step is infinite, which bisects.
      const double reach = rule.limit_reach ? std::fmax(1.0, 2.0 * std::fabs(a[k])) : HUGE_VAL;
      const double newton = curvature > 0.0 ? std::fmin(std::fmax(slope / curvature, -reach), reach) : reach;
      const double tolerance = rule.tolerance * std::fmax(1.0, std::fabs(a[k]));
      double next = a[k] - newton;  // converged when the Newton step itself is below the tolerance
      if (!(next > lo[k] && next < hi[k]) && (rule.bisect_tiny_steps || std::fabs(newton) > tolerance))
        next = 0.5 * (lo[k] + hi[k]);
      if (slope == 0.0 || std::fabs(next - a[k]) <= tolerance || hi[k] - lo[k] <= tolerance) {
        active[k] = 0;
        if (slope != 0.0) a[k] = next;
        continue;
      }
      a[k] = next;
      any = true;
    }
    if (!any) break;
  }
  return a;
}

}  // namespace rebelboost::loss
