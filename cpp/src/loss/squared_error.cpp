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
// Rows whose outputs update_and_residuals takes at a time (on the stack).
constexpr std::size_t kRun = 1024;
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
    blockwise_error([&](std::size_t begin, std::size_t end) {
      BlockSums sums;
      for (std::size_t i = begin; i < end; ++i) add_error(i, sums);
      return sums;
    });
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
      FixedPointSums sums;  // a local: out's stores cannot alias it, so it stays in registers
      for (std::size_t i = static_cast<std::size_t>(b) * kBlock, e = std::min(n, i + kBlock); i < e; ++i)
        add_fixed_point(i, scale, out, sums);
      part[static_cast<std::size_t>(b)] = sums;
    }, true);  // dynamic: many equal blocks
    return total_of(part);
  }

  // H_n += f_n a: the product rounded, then added, as prediction adds a leaf's f * a (predict/flat_forest.hpp).
  void update_real(const double* f, const std::vector<double>& a) override {
    const double step = a[0];
    blockwise_error([&](std::size_t begin, std::size_t end) {
      BlockSums sums;
      for (std::size_t i = begin; i < end; ++i) {
        H_[i] += f[i] * step;
        add_error(i, sums);
      }
      return sums;
    });
  }

  // update_real's and fixed_point_residuals' rows in one pass, each block's outputs taken in runs.
  FixedPointSums update_and_residuals(const RowOutputs& outputs, const std::vector<double>& a, double scale,
                                      std::int64_t* out) override {
    const double step = a[0];
    return blockwise_error([&](std::size_t begin, std::size_t end) {
      BlockSums sums;
      double scratch[kRun];
      for (std::size_t run = begin; run < end; run += kRun) {
        const std::size_t run_end = std::min(end, run + kRun);
        const double* f = outputs.run(run, run_end, scratch);
        for (std::size_t i = run; i < run_end; ++i) {
          H_[i] += f[i - run] * step;
          add_error(i, sums);
          add_fixed_point(i, scale, out, sums.fixed);
        }
      }
      return sums;
    });
  }

  // The +-1 learners' interface does not apply to regression trees.
  const std::int64_t* split_values(int, const std::int8_t*) override { unsupported(); }
  Step step(const std::int8_t*) const override { unsupported(); }
  void update(const std::int8_t*, const std::vector<double>&, const Step&) override { unsupported(); }

 private:
  double weight(std::size_t i) const { return w_.empty() ? 1.0 : w_[i]; }

  struct BlockSums {
    double error = 0.0, largest = 0.0;  // sum w r^2 and max |w r| over the block's rows, in row order
    FixedPointSums fixed;
  };
  void add_error(std::size_t i, BlockSums& sums) const {
    const double r = y_[i] - H_[i];
    sums.error += weight(i) * r * r;
    sums.largest = std::max(sums.largest, std::fabs(weight(i) * r));
  }
  // out[i] = w r scale in fixed point, added to the sums.
  void add_fixed_point(std::size_t i, double scale, std::int64_t* out, FixedPointSums& sums) const {
    const std::int64_t v = out[i] = util::to_fixed_point(weight(i) * (y_[i] - H_[i]) * scale);
    sums.sum += v;
    sums.abs_sum += v < 0 ? -v : v;
  }
  static void add_to(FixedPointSums& total, const FixedPointSums& part) {
    total.sum += part.sum;
    total.abs_sum += part.abs_sum;
  }
  static FixedPointSums total_of(const std::vector<FixedPointSums>& part) {
    FixedPointSums total;
    for (const FixedPointSums& p : part) add_to(total, p);
    return total;
  }

  // Runs `rows(begin, end)` on each fixed block of rows (it returns the block's sums, kept in a local: the
  // rows' stores cannot alias a local, so the sums stay in registers), then sets value_ = sum w (y - H)^2 / sum w and
  // largest_ = max |w (y - H)| from the blocks' sums, added in block order (the same bits for every thread
  // count). Returns the total of the blocks' fixed-point sums.
  template <typename Rows>
  FixedPointSums blockwise_error(const Rows& rows) {
    const std::size_t n = y_.size(), blocks = (n + kBlock - 1) / kBlock;
    std::vector<BlockSums> part(blocks);
    util::parallel_for(static_cast<std::ptrdiff_t>(blocks), util::threads_for(kRowWork * n, n_threads_), [&](std::ptrdiff_t b) {
      const std::size_t begin = static_cast<std::size_t>(b) * kBlock;
      part[static_cast<std::size_t>(b)] = rows(begin, std::min(n, begin + kBlock));
    }, true);  // dynamic: many equal blocks
    double total = 0.0;
    largest_ = 0.0;
    FixedPointSums fixed;
    for (const BlockSums& p : part) {
      total += p.error;
      largest_ = std::max(largest_, p.largest);
      add_to(fixed, p.fixed);
    }
    value_ = total / weight_total_;
    return fixed;
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
