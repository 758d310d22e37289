// REBEL's coupled sum for a surrogate g without closed-form steps (thesis §4.3; docs/guide/rebel.md,
// "The loss family").
//
// Per sample n (class y_n, sample weight s_n) and class k, one term: alpha_nk g(sigma_nk H_nk) with
// sigma = +1, alpha = s c+_{y k} for k != y and sigma = -1, alpha = s c-_y for k = y (subcosts.hpp), all
// alphas scaled so the loss at H = 0 is 1 (g(0) = 1 for every g here). Along a tree f with step a, term
// (n, k) is alpha g(sigma (H + f a)). Every total is an exact sum (util/exact_sum.hpp), so the model does
// not depend on the thread count nor, in a distributed fit, on how rows are split.
//   root split: the Newton gain sum_k D_k^2 / h_k of the joint step (tree/newton_root.hpp), from the
//     per-sample gradients G_nk = alpha sigma g'(sigma H) and curvatures h_nk = alpha g''(sigma H);
//   deeper layers (a held fixed): q_n = l_n(-1) - l_n(+1), exact for any g;
//   step: per class the minimiser of phi_k(a) = sum_n term(a) + eps (g(a) + g(-a)) by safeguarded
//     Newton (newton_step.hpp), eps = smoothing x the current loss (the exponential loss's rule).
// G supplies static value/d1/d2 (g, g', g'') and pair_min_inverse (subcosts.hpp).
#pragma once

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "loss/loss.hpp"
#include "loss/multiclass_loss.hpp"
#include "loss/newton_step.hpp"
#include "loss/subcosts.hpp"
#include "rebelboost/error.hpp"
#include "util/fixed_point.hpp"
#include "util/parallel.hpp"
#include "util/reduce.hpp"

namespace rebelboost::loss {

template <typename G>
class CoupledSumLoss final : public MulticlassLoss {
 public:
  CoupledSumLoss(const std::int32_t* y, const double* sample_weight, std::size_t n, std::size_t K,
                 const std::vector<double>& cost, double smoothing, int n_threads, Reducer* reducer)
      : MulticlassLoss(y, n, K, smoothing, n_threads, reducer), alpha_(n * K),
        H_(n * K, 0.0), gradient_(n * K), curvature_(n * K) {
    double cmax = 0.0;
    for (const double c : cost) cmax = std::max(cmax, c);
    std::vector<double> scaled(cost);
    for (double& c : scaled) c /= cmax;
    const Subcosts sub = coupled_subcosts(scaled, K, &G::pair_min_inverse);
    for (std::size_t i = 0; i < n; ++i) {
      const double s = sample_weight ? sample_weight[i] : 1.0;
      const auto c = static_cast<std::size_t>(y[i]);
      for (std::size_t k = 0; k < K; ++k) alpha_[i * K + k] = s * (k == c ? sub.minus[c] : sub.plus[c * K + k]);
    }
    const double total = sum_terms([](double alpha, double, std::size_t) { return alpha; });
    if (!(total > 0.0) || !std::isfinite(total))
      throw InvalidArgument("the cost matrix and sample weights leave no usable training weight (sum " +
                            std::to_string(total) + ")");
    for (double& v : alpha_) v /= total;
  }


  void start_at(const std::vector<double>& bias) override {
    const std::vector<std::int8_t> plus(n_, 1);
    update(plus.data(), bias, Step{});
  }

  // G_nk in fixed point (sum |G| scaled to 2^52); the curvatures separately (their scale only scales
  // every Newton gain alike).
  const std::int64_t* root_vectors() override {
    fill_fixed_point(gradient_, [](double alpha, double x, double sigma) { return alpha * sigma * G::d1(x); });
    return gradient_.data();
  }
  bool root_is_newton() const override { return true; }
  const std::int64_t* root_curvatures() override {
    fill_fixed_point(curvature_, [](double alpha, double x, double) { return alpha * G::d2(x); });
    return curvature_.data();
  }

  // The step of the tree so far is held fixed; each layer's Newton solve starts from the previous layer's
  // step of the same tree (the layers differ only on the rows of the leaves just split), the first from 0.
  const std::int64_t* split_values(int layer, const std::int8_t* f) override {
    if (layer == 0) throw InvalidArgument("internal error: REBEL's root split is multi-class, not scalar");
    if (layer == 1) layer_step_.assign(K_, 0.0);
    layer_step_ = solve(f, layer_step_).step;
    const std::vector<double>& a = layer_step_;
    return layer_values(pass_threads(), [&](std::size_t i) {
      double v = 0.0;
      for (std::size_t k = 0; k < K_; ++k) {
        const double alpha = alpha_[i * K_ + k];
        if (alpha == 0.0) continue;
        const double sigma = sign(i, k), x = sigma * H_[i * K_ + k], da = sigma * a[k];
        v += alpha * (G::value(x - da) - G::value(x + da));
      }
      return v;
    });
  }

  Step step(const std::int8_t* f) const override { return solve(f, std::vector<double>(K_, 0.0)); }

  // update() needs only f and a: no Newton solve for eval sets.
  Step sums_for_update(const std::int8_t* /*f*/) const override { return Step{}; }

  void update(const std::int8_t* f, const std::vector<double>& a, const Step& /*sums*/) override {
    util::parallel_for(n_blocks(), pass_threads(), [&](std::ptrdiff_t b) {
      const std::size_t end = block_end(b);
      for (std::size_t i = block_begin(b); i < end; ++i)
        for (std::size_t k = 0; k < K_; ++k) H_[i * K_ + k] += f[i] * a[k];
    });
    z_ = sum_terms([](double alpha, double x, std::size_t) { return alpha * G::value(x); });
  }

  double value() const override { return z_; }

  // A sample's share for weight trimming: sum_k |G_nk|, its gradient's size (for the exponential g, its
  // share of the loss).
  void sample_mass(double* out) const override {
    for (std::size_t i = 0; i < n_; ++i) {
      double m = 0.0;
      for (std::size_t k = 0; k < K_; ++k) m += alpha_[i * K_ + k] * std::fabs(G::d1(sign(i, k) * H_[i * K_ + k]));
      out[i] = m;
    }
  }

 private:
  // The smoothed per-class minimiser along f, by Newton from `start`; has_edge from the slopes at 0 (the
  // start of step(); a warm start measures them at its own start, which only split_values uses).
  Step solve(const std::int8_t* f, std::vector<double> start) const {
    const double eps = smoothing_ * z_;
    Step s;
    double steepest = 0.0;
    bool first = true;
    auto evaluate = [&](const std::vector<double>& a, const std::vector<std::uint8_t>& active) {
      SlopeCurvature d = derivatives(f, a, active);
      for (std::size_t k = 0; k < K_; ++k) {
        if (first) steepest = std::max(steepest, std::fabs(d.slope[k]));
        d.slope[k] += eps * (G::d1(a[k]) - G::d1(-a[k]));
        d.curvature[k] += eps * (G::d2(a[k]) + G::d2(-a[k]));
      }
      first = false;
      return d;
    };
    s.step = newton_minimise(std::move(start), kMaxStep, evaluate);
    s.has_edge = steepest > 1e-12 * z_;
    return s;
  }

  double sign(std::size_t i, std::size_t k) const { return static_cast<std::size_t>(y_[i]) == k ? -1.0 : 1.0; }

  // Exact total over every participant of term(alpha_nk, sigma_nk H_nk, k).
  template <typename Term>
  double sum_terms(Term&& term) const {
    return util::reduced_value(util::block_sums(n_, 1, kBlock, pass_threads(), [&](std::size_t i, util::ExactSum* t) {
                                 for (std::size_t k = 0; k < K_; ++k) {
                                   const double alpha = alpha_[i * K_ + k];
                                   if (alpha != 0.0) t->add(term(alpha, sign(i, k) * H_[i * K_ + k], k));
                                 }
                               })[0],
                               reducer_);
  }

  // out_nk = fixed point of value(alpha, sigma H, sigma), scaled so that sum |value| is 2^52.
  template <typename Value>
  void fill_fixed_point(std::vector<std::int64_t>& out, Value&& value) {
    std::vector<double> v(n_ * K_, 0.0);
    const double total = util::reduced_value(
        util::block_sums(n_, 1, kBlock, pass_threads(), [&](std::size_t i, util::ExactSum* t) {
          for (std::size_t k = 0; k < K_; ++k) {
            const double alpha = alpha_[i * K_ + k], sigma = sign(i, k);
            if (alpha == 0.0) continue;
            v[i * K_ + k] = value(alpha, sigma * H_[i * K_ + k], sigma);
            t->add(std::fabs(v[i * K_ + k]));
          }
        })[0],
        reducer_);
    const double scale = total > 0.0 ? util::kFixedPointScale / total : 0.0;
    util::parallel_for(n_blocks(), pass_threads(), [&](std::ptrdiff_t b) {
      const std::size_t end = block_end(b);
      for (std::size_t j = block_begin(b) * K_; j < end * K_; ++j) out[j] = util::to_fixed_point(scale * v[j]);
    });
  }

  // phi_k'(a) and phi_k''(a) without the smoothing, exact sums: slot k the slope, K + k the curvature.
  SlopeCurvature derivatives(const std::int8_t* f, const std::vector<double>& a,
                             const std::vector<std::uint8_t>& active) const {
    std::vector<util::ExactSum> sums =
        util::block_sums(n_, 2 * K_, kBlock, pass_threads(), [&](std::size_t i, util::ExactSum* t) {
          const double fi = f[i];
          for (std::size_t k = 0; k < K_; ++k) {
            const double alpha = alpha_[i * K_ + k];
            if (!active[k] || alpha == 0.0) continue;
            const double sigma = sign(i, k), x = sigma * (H_[i * K_ + k] + fi * a[k]);
            double first = 0.0, second = 0.0;
            G::derivatives(x, first, second);
            t[k].add(alpha * sigma * fi * first);
            t[K_ + k].add(alpha * second);
          }
        });
    const std::vector<double> totals = util::reduced_values(sums, reducer_);
    SlopeCurvature d(K_);
    for (std::size_t k = 0; k < K_; ++k) {
      d.slope[k] = totals[k];
      d.curvature[k] = totals[K_ + k];
    }
    return d;
  }

  // Steps stay within +-kMaxStep: reached only when a class is nearly separated and the smoothing is 0.
  static constexpr double kMaxStep = 40.0;

  int pass_threads() const { return util::threads_for(16 * n_ * K_, n_threads_); }  // g', g'' per class

  std::vector<double> alpha_;  // n x K subcost x sample weight, normalised
  std::vector<double> H_;      // n x K scores
  std::vector<std::int64_t> gradient_, curvature_;
  std::vector<double> layer_step_;  // the step split_values held fixed for the last layer of this tree
  double z_ = 1.0;             // current loss (1 at H = 0)
};

}  // namespace rebelboost::loss
