// Thread-count-independent reductions.
#include "util/parallel.hpp"

#include <vector>

namespace rebelboost::util {

double deterministic_sum(const double* values, std::size_t n, int n_threads) {
  constexpr std::size_t kBlock = 8192;
  const std::size_t n_blocks = (n + kBlock - 1) / kBlock;
  std::vector<double> partial(n_blocks, 0.0);
  parallel_for(static_cast<std::ptrdiff_t>(n_blocks), n_blocks > 4 ? n_threads : 1, [&](std::ptrdiff_t b) {
    const std::size_t begin = static_cast<std::size_t>(b) * kBlock;
    const std::size_t end = begin + kBlock < n ? begin + kBlock : n;
    double s = 0.0;
    for (std::size_t i = begin; i < end; ++i) s += values[i];
    partial[static_cast<std::size_t>(b)] = s;
  });
  double total = 0.0;
  for (double s : partial) total += s;
  return total;
}

}  // namespace rebelboost::util
