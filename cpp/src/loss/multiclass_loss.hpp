// What REBEL's two multi-class losses share (rebel.cpp: the exponential g, with closed-form steps;
// coupled_sum.hpp: any g, with Newton steps; docs/guide/rebel.md): n rows x K classes of scores, the labels,
// the smoothing, and the fixed row blocks of their parallel passes. The blocks never depend on the thread
// count and per-block partials are reduced in block order, so the model does not either.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "loss/loss.hpp"
#include "util/exact_sum.hpp"
#include "util/fixed_point.hpp"
#include "util/reduce.hpp"

namespace rebelboost::loss {

class MulticlassLoss : public Loss {
 public:
  std::size_t n_outputs() const override { return K_; }
  std::size_t root_width() const override { return K_; }

  // The first step, from H = 0 with every row on the +1 side: the bias, to which the scores move.
  std::vector<double> init_bias() override {
    const std::vector<std::int8_t> plus(n_, 1);
    const Step first = step(plus.data());
    update(plus.data(), first.step, first);
    return first.step;
  }

 protected:
  MulticlassLoss(const std::int32_t* y, std::size_t n, std::size_t K, double smoothing, int n_threads,
                 Reducer* reducer)
      : n_(n), K_(K), n_threads_(n_threads), reducer_(reducer), smoothing_(smoothing), y_(y, y + n), q_(n) {}

  static constexpr std::size_t kBlock = 8192;
  std::ptrdiff_t n_blocks() const { return static_cast<std::ptrdiff_t>((n_ + kBlock - 1) / kBlock); }
  static std::size_t block_begin(std::ptrdiff_t b) { return static_cast<std::size_t>(b) * kBlock; }
  std::size_t block_end(std::ptrdiff_t b) const { return std::min(n_, block_begin(b) + kBlock); }

  // A deeper layer's split values with the step held fixed: g_n = change(n) = l_n(-1) - l_n(+1), in fixed
  // point with sum |q| scaled to 2^52 (the sum exact, so the scale is the same for every thread count).
  template <typename Change>
  const std::int64_t* layer_values(int n_threads, Change&& change) {
    std::vector<double> g(n_);
    const double total = util::reduced_value(
        util::block_sums(n_, 1, kBlock, n_threads, [&](std::size_t i, util::ExactSum* t) {
          g[i] = change(i);
          t->add(std::fabs(g[i]));
        })[0],
        reducer_);
    const double scale = total > 0.0 ? util::kFixedPointScale / total : 0.0;
    for (std::size_t i = 0; i < n_; ++i) q_[i] = util::to_fixed_point(scale * g[i]);
    return q_.data();
  }

  std::size_t n_;
  std::size_t K_;
  int n_threads_;
  Reducer* reducer_;  // null: a local fit
  double smoothing_;
  std::vector<std::int32_t> y_;
  std::vector<std::int64_t> q_;  // layer_values
};

}  // namespace rebelboost::loss
