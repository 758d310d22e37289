// Tests of the regressor's loss pass (loss/squared_error.cpp): fixed_point_residuals writes
// to_fixed_point(w (y - H) scale) per row and returns the exact sums of those values and of their magnitudes,
// the same for any thread count; update_and_residuals gives the bits of update_real then fixed_point_residuals.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "loss/loss.hpp"
#include "util/fixed_point.hpp"

namespace rebelboost::loss {
namespace {

TEST(SquaredError, FixedPointResidualsReturnTheirExactSums) {
  const std::size_t n = 20011;
  std::mt19937_64 rng(5);
  std::normal_distribution<double> normal(0.0, 3.0);
  std::uniform_real_distribution<double> uniform(0.0, 2.0);
  std::vector<double> y(n), w(n);
  for (std::size_t i = 0; i < n; ++i) {
    y[i] = normal(rng);
    w[i] = uniform(rng);
  }
  const double bias = 0.75, scale = 1048576.0;
  for (const bool weighted : {false, true})
    for (const int threads : {1, 3}) {
      const auto loss = make_squared_error(y.data(), weighted ? w.data() : nullptr, n, threads);
      loss->start_at({bias});
      std::vector<std::int64_t> out(n);
      const Loss::FixedPointSums sums = loss->fixed_point_residuals(scale, out.data());
      std::int64_t sum = 0, abs_sum = 0;
      for (std::size_t i = 0; i < n; ++i) {
        const std::int64_t want = util::to_fixed_point((weighted ? w[i] : 1.0) * (y[i] - bias) * scale);
        ASSERT_EQ(out[i], want) << i;
        sum += want;
        abs_sum += want < 0 ? -want : want;
      }
      EXPECT_EQ(sums.sum, sum) << weighted << " " << threads;
      EXPECT_EQ(sums.abs_sum, abs_sum) << weighted << " " << threads;
    }
}

// Outputs from a table by row, handed over in runs.
class TableOutputs final : public Loss::RowOutputs {
 public:
  explicit TableOutputs(const std::vector<double>& f) : f_(f) {}
  const double* run(std::size_t begin, std::size_t end, double* scratch) const override {
    if (begin % 3 == 0) return f_.data() + begin;  // both ways (runs start at multiples of 1024)
    for (std::size_t i = begin; i < end; ++i) scratch[i - begin] = f_[i];
    return scratch;
  }

 private:
  const std::vector<double>& f_;
};

bool same_bits(double a, double b) { return std::memcmp(&a, &b, sizeof(double)) == 0; }

TEST(SquaredError, UpdateAndResidualsEqualsTheTwoPasses) {
  const std::size_t n = 20011;
  std::mt19937_64 rng(7);
  std::normal_distribution<double> normal(0.0, 3.0);
  std::uniform_real_distribution<double> uniform(0.0, 2.0);
  std::vector<double> y(n), w(n), f(n);
  for (std::size_t i = 0; i < n; ++i) {
    y[i] = normal(rng);
    w[i] = uniform(rng);
    f[i] = normal(rng) / 7.0;
  }
  const std::vector<double> a{0.1};
  const double scale = 1048576.0;
  for (const bool weighted : {false, true})
    for (const int threads : {1, 3}) {
      const auto two = make_squared_error(y.data(), weighted ? w.data() : nullptr, n, threads);
      const auto one = make_squared_error(y.data(), weighted ? w.data() : nullptr, n, threads);
      two->start_at({0.75});
      one->start_at({0.75});
      for (int round = 0; round < 3; ++round) {  // scores that moved before
        std::vector<std::int64_t> want(n), got(n);
        two->update_real(f.data(), a);
        const Loss::FixedPointSums want_sums = two->fixed_point_residuals(scale, want.data());
        const Loss::FixedPointSums got_sums = one->update_and_residuals(TableOutputs(f), a, scale, got.data());
        ASSERT_EQ(got, want) << weighted << " " << threads << " " << round;
        EXPECT_EQ(got_sums.sum, want_sums.sum);
        EXPECT_EQ(got_sums.abs_sum, want_sums.abs_sum);
        EXPECT_TRUE(same_bits(one->value(), two->value()));
        EXPECT_TRUE(same_bits(one->largest_weighted_residual(), two->largest_weighted_residual()));
      }
    }
}

}  // namespace
}  // namespace rebelboost::loss
