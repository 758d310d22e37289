// The regressor's loss: weighted squared error on real targets (docs/guide/regression.md).
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "loss/loss.hpp"
#include "rebelboost/error.hpp"
#include "util/exact_sum.hpp"
#include "util/fixed_point.hpp"
#include "util/parallel.hpp"

namespace rebelboost::loss {

namespace {

// Sums over rows in fixed blocks added in block order: the same bits for every thread count.
constexpr std::size_t kBlock = 4096;
// Elementary steps (util::threads_for) per row of a pass over y, H (and w): loads, a store, the arithmetic.
constexpr std::size_t kRowWork = 4;

class SquaredError final : public Loss {
 public:
  SquaredError(const double* y, const double* w, std::size_t n, int n_threads)
      : y_(y, y + n), w_(w ? std::vector<double>(w, w + n) : std::vector<double>()), H_(n, 0.0), n_threads_(n_threads) {
    util::ExactSum total;
    for (std::size_t i = 0; i < n; ++i) total.add(weight(i));
    weight_total_ = total.value();
  }

  std::size_t n_outputs() const override { return 1; }

  std::vector<double> init_bias() override {
    util::ExactSum sum;
    for (std::size_t i = 0; i < y_.size(); ++i) sum.add(weight(i) * y_[i]);
    const std::vector<double> bias{sum.value() / weight_total_};
    start_at(bias);
    return bias;
  }

  void start_at(const std::vector<double>& bias) override {
    std::fill(H_.begin(), H_.end(), bias[0]);
    blockwise_error([](std::size_t) {});
  }

  // Kept up to date by start_at and update_real (one pass each), so the booster's checks cost nothing.
  double value() const override { return value_; }

  void sample_mass(double* out) const override {
    for (std::size_t i = 0; i < y_.size(); ++i) out[i] = weight(i);
  }

  double largest_weighted_residual() const override { return largest_; }

  // The sums are of integers: exact in any order.
  FixedPointSums fixed_point_residuals(double scale, std::int64_t* out) const override {
    const std::size_t n = y_.size(), blocks = (n + kBlock - 1) / kBlock;
    std::vector<FixedPointSums> part(blocks);
    util::parallel_for(static_cast<std::ptrdiff_t>(blocks), util::threads_for(kRowWork * n, n_threads_), [&](std::ptrdiff_t b) {
      std::int64_t sum = 0, abs_sum = 0;
      for (std::size_t i = static_cast<std::size_t>(b) * kBlock, e = std::min(n, i + kBlock); i < e; ++i) {
        const std::int64_t v = out[i] = util::to_fixed_point(weight(i) * (y_[i] - H_[i]) * scale);
        sum += v;
        abs_sum += v < 0 ? -v : v;
      }
      part[static_cast<std::size_t>(b)] = {sum, abs_sum};
    });
    FixedPointSums total;
    for (const FixedPointSums& p : part) {
      total.sum += p.sum;
      total.abs_sum += p.abs_sum;
    }
    return total;
  }

  // H_n += f_n a: the product rounded, then added, as prediction adds a leaf's f * a (predict/flat_forest.hpp).
  void update_real(const double* f, const std::vector<double>& a) override {
    const double step = a[0];
    blockwise_error([&](std::size_t i) { H_[i] += f[i] * step; });
  }

  // The +-1 learners' interface does not apply to regression trees.
  const std::int64_t* split_values(int, const std::int8_t*) override { unsupported(); }
  Step step(const std::int8_t*) const override { unsupported(); }
  void update(const std::int8_t*, const std::vector<double>&, const Step&) override { unsupported(); }

 private:
  double weight(std::size_t i) const { return w_.empty() ? 1.0 : w_[i]; }

  // Applies `change(i)` to each row i, then sets value_ = sum w (y - H)^2 / sum w and largest_ = max |w (y - H)|:
  // per fixed block of rows, blocks added in order (the same bits for every thread count).
  template <typename Change>
  void blockwise_error(const Change& change) {
    const std::size_t n = y_.size(), blocks = (n + kBlock - 1) / kBlock;
    std::vector<double> part(blocks, 0.0), part_max(blocks, 0.0);
    util::parallel_for(static_cast<std::ptrdiff_t>(blocks), util::threads_for(kRowWork * n, n_threads_), [&](std::ptrdiff_t b) {
      double sum = 0.0, largest = 0.0;
      for (std::size_t i = static_cast<std::size_t>(b) * kBlock, e = std::min(n, i + kBlock); i < e; ++i) {
        change(i);
        const double r = y_[i] - H_[i];
        sum += weight(i) * r * r;
        largest = std::max(largest, std::fabs(weight(i) * r));
      }
      part[static_cast<std::size_t>(b)] = sum;
      part_max[static_cast<std::size_t>(b)] = largest;
    });
    double total = 0.0;
    for (double p : part) total += p;
    value_ = total / weight_total_;
    largest_ = part_max.empty() ? 0.0 : *std::max_element(part_max.begin(), part_max.end());
  }
  [[noreturn]] static void unsupported() {
    throw InvalidArgument("the squared-error loss trains regression trees (real leaves), not +-1 learners");
  }

  std::vector<double> y_, w_, H_;
  double weight_total_ = 0.0;
  double value_ = 0.0;    // the current value()
  double largest_ = 0.0;  // the current largest_weighted_residual()
  int n_threads_;
};

}  // namespace

std::unique_ptr<Loss> make_squared_error(const double* y, const double* sample_weight, std::size_t n, int n_threads) {
  return std::make_unique<SquaredError>(y, sample_weight, n, n_threads);
}

}  // namespace rebelboost::loss
