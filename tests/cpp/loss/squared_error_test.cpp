// Tests of the regressor's loss pass (loss/squared_error.cpp): fixed_point_residuals writes
// to_fixed_point(w (y - H) scale) per row and returns the exact sums of those values and of their magnitudes,
// the same for any thread count.
#include <gtest/gtest.h>

#include <cstdint>
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

}  // namespace
}  // namespace rebelboost::loss
