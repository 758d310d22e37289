// REBEL: cost-sensitive multi-class boosting with the exponential coupled sum (thesis §4.3, Eq. 4.5-4.11).
//
// Subcosts per sample (cost row c_n = C[y_n, :], zero diagonal):
//   c+_n = sqrt(K-1) / (2 ||c_n||) [c_n]^2,   c-_n = ||c_n|| / (2 sqrt(K-1)) delta_{y_n}
// weights w+_n = c+_n o exp[H_n], w-_n = c-_n o exp[-H_n] (w-_n lives in slot y_n only), normalised so
// that all of them sum to 1. For a tree f: s+ = sum_{f=+1} w+ + sum_{f=-1} w-, s- likewise (Eq. 4.8),
// a* = 1/2 (ln s- - ln s+) per class (Eq. 4.9, smoothed), L(f) = 2 sum_k sqrt(s+_k s-_k) (Eq. 4.10).
// Rows arrive sorted by class (the booster does it) so the root search can use class blocks.
#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "loss/exp_step.hpp"
#include "loss/loss.hpp"
#include "loss/multiclass_loss.hpp"
#include "rebelboost/error.hpp"
#include "util/fixed_point.hpp"
#include "util/parallel.hpp"
#include "util/reduce.hpp"

namespace rebelboost::loss {

namespace {

class RebelLoss final : public MulticlassLoss {
 public:
  RebelLoss(const std::int32_t* y, const double* sample_weight, std::size_t n, std::size_t K,
            const std::vector<double>& cost, double smoothing, int n_threads, Reducer* reducer)
      : MulticlassLoss(y, n, K, smoothing, n_threads, reducer), wplus_(n * K), wminus_(n),
        v_(n * K) {
    // Subcosts per class (they depend on the row only), scaled by the sample weight. Scaling C scales
    // every subcost by the same factor, which the normalised weights undo, so the costs are divided by
    // their largest entry first; each row's norm is taken relative to the row's largest entry and
    // c+ = sqrt(K-1)/2 c (c/||c||), so costs near 1e200 or 1e-200 neither overflow nor vanish.
    double cmax = 0.0;
    for (const double c : cost) cmax = std::max(cmax, c);
    std::vector<double> cplus(K * K), cminus(K), row(K);
    const double root_k1 = std::sqrt(static_cast<double>(K - 1));
    for (std::size_t c = 0; c < K; ++c) {
      double rmax = 0.0, rel2 = 0.0;
      for (std::size_t k = 0; k < K; ++k) rmax = std::max(rmax, row[k] = cost[c * K + k] / cmax);
      for (const double ck : row) rel2 += (ck / rmax) * (ck / rmax);
      const double norm = rmax * std::sqrt(rel2);
      for (std::size_t k = 0; k < K; ++k) cplus[c * K + k] = root_k1 / 2.0 * row[k] * (row[k] / norm);
      cminus[c] = norm / (2.0 * root_k1);
    }
    for (std::size_t i = 0; i < n; ++i) {
      const double s = sample_weight ? sample_weight[i] : 1.0;
      const auto c = static_cast<std::size_t>(y[i]);
      for (std::size_t k = 0; k < K; ++k) wplus_[i * K + k] = s * cplus[c * K + k];
      wminus_[i] = s * cminus[c];
    }
    const double total = weight_total();
    if (!(total > 0.0) || !std::isfinite(total))
      throw InvalidArgument("the cost matrix and sample weights leave no usable training weight (sum " +
                            std::to_string(total) + ")");
    for (double& v : wplus_) v /= total;
    for (double& v : wminus_) v /= total;
  }


  void start_at(const std::vector<double>& bias) override {
    const std::vector<std::int8_t> plus(n_, 1);
    update(plus.data(), bias, step(plus.data()));
  }

  const std::int64_t* root_vectors() override {
    // v_nk = w+_nk for k != y_n and w-_n in slot y_n (where w+ is 0 because c_yy = 0), fixed point.
    const double scale = util::kFixedPointScale;
    util::parallel_for(n_blocks(), pass_threads(), [&](std::ptrdiff_t b) {
      const std::size_t end = block_end(b);
      for (std::size_t i = block_begin(b); i < end; ++i) {
        for (std::size_t k = 0; k < K_; ++k) v_[i * K_ + k] = util::to_fixed_point(scale * wplus_[i * K_ + k]);
        v_[i * K_ + static_cast<std::size_t>(y_[i])] = util::to_fixed_point(scale * wminus_[i]);
      }
    });
    return v_.data();
  }

  const std::int64_t* split_values(int layer, const std::int8_t* f) override {
    if (layer == 0)
      throw InvalidArgument("internal error: REBEL's root split is multi-class (root_vectors), not scalar");
    // With a fixed: g_n = l_n(-1) - l_n(+1) = sum_k 2 sinh(a_k) (w-_nk - w+_nk), then fixed point with
    // sum |q| <= 2^52.
    const std::vector<double> a = step(f).step;
    std::vector<double> sh(K_);
    for (std::size_t k = 0; k < K_; ++k) sh[k] = 2.0 * std::sinh(a[k]);
    return layer_values(pass_threads(), [&](std::size_t i) {
      double v = sh[static_cast<std::size_t>(y_[i])] * wminus_[i];
      for (std::size_t k = 0; k < K_; ++k) v -= sh[k] * wplus_[i * K_ + k];
      return v;
    });
  }

  Step step(const std::int8_t* f) const override {
    // s+_k and s-_k (Eq. 4.8): exact sums (slots 0..K-1: s+, K..2K-1: s-), over every participant.
    std::vector<util::ExactSum> sums = util::block_sums(n_, 2 * K_, kBlock, pass_threads(), [&](std::size_t i, util::ExactSum* t) {
      const double* wp = &wplus_[i * K_];
      const std::size_t c = static_cast<std::size_t>(y_[i]), same = f[i] > 0 ? 0 : K_, other = K_ - same;
      for (std::size_t k = 0; k < K_; ++k) t[same + k].add(wp[k]);
      t[other + c].add(wminus_[i]);
    });
    const std::vector<double> totals = util::reduced_values(sums, reducer_);
    std::vector<double> sp(totals.begin(), totals.begin() + static_cast<std::ptrdiff_t>(K_));
    std::vector<double> sm(totals.begin() + static_cast<std::ptrdiff_t>(K_), totals.end());
    Step s;
    s.step.resize(K_);
    double total = 0.0, gap = 0.0;
    for (std::size_t k = 0; k < K_; ++k) total += sp[k] + sm[k];
    const double eps = smoothing_ * total;
    for (std::size_t k = 0; k < K_; ++k) {
      s.step[k] = 0.5 * std::log((sm[k] + eps) / (sp[k] + eps));
      gap = std::max(gap, std::fabs(sp[k] - sm[k]));
    }
    s.has_edge = gap > 1e-12 * total;
    // Perfect: every class's loss term sqrt(s+_k s-_k) is zero (the unsmoothed step would be infinite),
    // whichever side of the tree each class sits on. With K = 2 this is AdaBoost's zero weighted error.
    s.perfect_fit = true;
    for (std::size_t k = 0; k < K_; ++k) s.perfect_fit = s.perfect_fit && (sp[k] == 0.0 || sm[k] == 0.0);
    s.sum_pos = std::move(sp);
    s.sum_neg = std::move(sm);
    return s;
  }

  void update(const std::int8_t* f, const std::vector<double>& a, const Step& sums) override {
    // New total predicted from the sums: sum_k s+_k e^{a_k} + s-_k e^{-a_k}; every weight is rescaled by
    // it in the same pass, so the weights keep summing to 1 and nothing overflows.
    double total = 0.0;
    std::vector<double> up(K_), down(K_);
    for (std::size_t k = 0; k < K_; ++k) {
      up[k] = std::exp(a[k]);
      down[k] = std::exp(-a[k]);
      total += sums.sum_pos[k] * up[k] + sums.sum_neg[k] * down[k];
    }
    for (std::size_t k = 0; k < K_; ++k) {
      up[k] /= total;
      down[k] /= total;
    }
    util::parallel_for(n_blocks(), pass_threads(), [&](std::ptrdiff_t b) {
      const std::size_t end = block_end(b);
      for (std::size_t i = block_begin(b); i < end; ++i) {
        const bool plus = f[i] > 0;
        double* wp = &wplus_[i * K_];
        for (std::size_t k = 0; k < K_; ++k) wp[k] *= plus ? up[k] : down[k];  // w+ = c+ e^{H}
        const auto c = static_cast<std::size_t>(y_[i]);
        wminus_[i] *= plus ? down[c] : up[c];                                  // w- = c- e^{-H}
      }
    });
    z_ *= total;
  }

  double value() const override { return z_; }

  void signed_weights(double* out) const override {
    for (std::size_t i = 0; i < n_; ++i) {
      for (std::size_t k = 0; k < K_; ++k) out[i * K_ + k] = wplus_[i * K_ + k];
      out[i * K_ + static_cast<std::size_t>(y_[i])] = -wminus_[i];  // w+ is 0 there (c_yy = 0)
    }
  }

  Step step_real(const double* f) const override {
    // Per class k the loss along f is phi_k(a) = sum_n w+_nk e^{f_n a} + sum_{y_n = k} w-_n e^{-f_n a}.
    // Start from the minimiser of its convexity bound (e^{g a} <= (1+g)/2 e^a + (1-g)/2 e^-a), exact
    // for f in {+-1}.
    const ExpSums at_zero = sums_at_zero(f);
    double total = 0.0;
    for (double v : at_zero.value) total += v;
    const double eps = smoothing_ * total;
    std::vector<double> start(K_);
    double gap = 0.0;
    for (std::size_t k = 0; k < K_; ++k) {
      const double plus = 0.5 * (at_zero.value[k] + at_zero.slope[k]);  // sum c (1 + g) / 2
      const double minus = 0.5 * (at_zero.value[k] - at_zero.slope[k]);
      start[k] = 0.5 * std::log((std::max(minus, 0.0) + eps) / (std::max(plus, 0.0) + eps));
      gap = std::max(gap, std::fabs(at_zero.slope[k]));
    }
    Step s;
    s.has_edge = gap > 1e-12 * total;
    // Each class's minimiser is a 1-D problem of its own: the classes are solved side by side, each with
    // its own passes over the rows, its terms added in one fixed order (class_exp_sums), so its iterates and
    // bits are the same on any number of threads. One solve is about 4 passes of
    // an exponential (~10 ns, 20 steps) per row, hence 80 steps per row and class (a region of every
    // iteration of a real-valued learner: threads_for_repeated).
    s.step.resize(K_);
    const int threads = util::threads_for_repeated(80 * n_ * K_, n_threads_);
    util::parallel_for(static_cast<std::ptrdiff_t>(K_), threads, [&](std::ptrdiff_t c) {
      const auto k = static_cast<std::size_t>(c);
      s.step[k] = minimise_exp_sums({start[k]}, eps, kMaxRealStep,
                                    [&](const std::vector<double>& a, const std::vector<std::uint8_t>& /*active*/) {
                                      return class_exp_sums(f, k, a[0]);
                                    })[0];
    }, true);
    return s;
  }

  void update_real(const double* f, const std::vector<double>& a) override {
    // w+_nk *= e^{f_n a_k}, w-_n *= e^{-f_n a_{y_n}}, then every weight is divided by the new total
    // (summed per fixed block, blocks in order) so that they keep summing to 1.
    std::vector<double> block_total(static_cast<std::size_t>(n_blocks()));
    util::parallel_for(n_blocks(), pass_threads(), [&](std::ptrdiff_t b) {
      double acc = 0.0;
      const std::size_t end = block_end(b);
      for (std::size_t i = block_begin(b); i < end; ++i) {
        double* wp = &wplus_[i * K_];
        for (std::size_t k = 0; k < K_; ++k) acc += wp[k] *= std::exp(f[i] * a[k]);
        acc += wminus_[i] *= std::exp(-f[i] * a[static_cast<std::size_t>(y_[i])]);
      }
      block_total[static_cast<std::size_t>(b)] = acc;
    });
    double total = 0.0;
    for (double v : block_total) total += v;
    const double inverse = 1.0 / total;
    util::parallel_for(n_blocks(), pass_threads(), [&](std::ptrdiff_t b) {
      const std::size_t end = block_end(b);
      for (std::size_t i = block_begin(b); i < end; ++i) {
        for (std::size_t k = 0; k < K_; ++k) wplus_[i * K_ + k] *= inverse;
        wminus_[i] *= inverse;
      }
    });
    z_ *= total;
  }

  void sample_mass(double* out) const override {
    for (std::size_t i = 0; i < n_; ++i) {
      double m = wminus_[i];
      for (std::size_t k = 0; k < K_; ++k) m += wplus_[i * K_ + k];
      out[i] = m;
    }
  }

 private:
  double weight_total() const {
    return util::reduced_value(util::block_sums(n_, 1, kBlock, pass_threads(), [&](std::size_t i, util::ExactSum* t) {
                                 for (std::size_t k = 0; k < K_; ++k) t->add(wplus_[i * K_ + k]);
                                 t->add(wminus_[i]);
                               })[0],
                               reducer_);
  }

  // The unsmoothed sums of phi_k, phi_k', phi_k'' at a = 0 for every class (e^0 = 1: no exponentials): per
  // row its w+ terms, then its w- term, rows in order within fixed blocks, blocks added in order
  // (independent of the thread count).
  ExpSums sums_at_zero(const double* f) const {
    std::vector<ExpSums> partial(static_cast<std::size_t>(n_blocks()), ExpSums(K_));
    util::parallel_for(n_blocks(), pass_threads(), [&](std::ptrdiff_t b) {
      ExpSums& p = partial[static_cast<std::size_t>(b)];
      const std::size_t end = block_end(b);
      for (std::size_t i = block_begin(b); i < end; ++i) {
        const double fi = f[i];
        for (std::size_t k = 0; k < K_; ++k) {
          const double w = wplus_[i * K_ + k];
          if (w == 0.0) continue;
          p.value[k] += w;
          p.slope[k] += fi * w;
          p.curvature[k] += fi * fi * w;
        }
        const auto c = static_cast<std::size_t>(y_[i]);
        p.value[c] += wminus_[i];
        p.slope[c] -= fi * wminus_[i];
        p.curvature[c] += fi * fi * wminus_[i];
      }
    });
    ExpSums sums(K_);
    for (const ExpSums& p : partial)
      for (std::size_t k = 0; k < K_; ++k) {
        sums.value[k] += p.value[k];
        sums.slope[k] += p.slope[k];
        sums.curvature[k] += p.curvature[k];
      }
    return sums;
  }

  // The sums of phi_k, phi_k', phi_k'' of class k alone at a (ExpSums of one class), unsmoothed: per row its
  // w+ term (if any), then its w- term where y_n = k, rows in order within fixed blocks and blocks in
  // order, as sums_at_zero adds them.
  ExpSums class_exp_sums(const double* f, std::size_t k, double a) const {
    std::vector<ExpSums> partial(static_cast<std::size_t>(n_blocks()), ExpSums(1));
    util::parallel_for(n_blocks(), pass_threads(), [&](std::ptrdiff_t b) {
      double value = 0.0, slope = 0.0, curvature = 0.0;
      const std::size_t end = block_end(b);
      for (std::size_t i = block_begin(b); i < end; ++i) {
        const double fi = f[i], w = wplus_[i * K_ + k];
        if (w != 0.0) {
          const double e = w * std::exp(fi * a);
          value += e;
          slope += fi * e;
          curvature += fi * fi * e;
        }
        if (static_cast<std::size_t>(y_[i]) != k) continue;
        const double e = wminus_[i] * std::exp(-fi * a);
        value += e;
        slope -= fi * e;
        curvature += fi * fi * e;
      }
      ExpSums& p = partial[static_cast<std::size_t>(b)];
      p.value[0] = value;
      p.slope[0] = slope;
      p.curvature[0] = curvature;
    });
    ExpSums sums(1);
    for (const ExpSums& p : partial) {
      sums.value[0] += p.value[0];
      sums.slope[0] += p.slope[0];
      sums.curvature[0] += p.curvature[0];
    }
    return sums;
  }

  // Real steps stay within +-kMaxRealStep (e^40 ~ 2e17): reached only when a class is nearly separated
  // and the smoothing is tiny; the loss still falls there.
  static constexpr double kMaxRealStep = 40.0;

  int pass_threads() const { return util::threads_for(4 * n_ * K_, n_threads_); }  // a few ns per class

  std::vector<double> wplus_;   // n x K
  std::vector<double> wminus_;  // n (slot y_n)
  std::vector<std::int64_t> v_; // n x K root vectors
  double z_ = 1.0;
};

}  // namespace

std::unique_ptr<Loss> make_rebel(const std::int32_t* y, const double* sample_weight, std::size_t n, std::size_t K,
                                 const std::vector<double>& cost, double smoothing, int n_threads, Reducer* reducer) {
  return std::make_unique<RebelLoss>(y, sample_weight, n, K, cost, smoothing, n_threads, reducer);
}

}  // namespace rebelboost::loss
