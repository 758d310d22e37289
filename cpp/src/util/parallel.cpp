// Thread-count-independent reductions.
#include "util/parallel.hpp"

#include <cerrno>
#include <cstdlib>
#include <vector>

namespace rebelboost::util {

std::size_t work_per_thread() {
  static const std::size_t value = [] {
    const char* text = std::getenv("REBELBOOST_WORK_PER_THREAD");
    if (text == nullptr || *text == '\0') return kWorkPerThread;
    char* end = nullptr;
    errno = 0;
    const unsigned long long v = std::strtoull(text, &end, 10);
    // Anything but a plain positive integer (signs, junk, overflow) leaves the default.
    if (*end != '\0' || errno != 0 || v == 0 || text[0] < '0' || text[0] > '9') return kWorkPerThread;
    return static_cast<std::size_t>(v);
  }();
  return value;
}

double deterministic_sum(const double* values, std::size_t n, int n_threads) {
  constexpr std::size_t kBlock = 8192;
  const std::size_t n_blocks = (n + kBlock - 1) / kBlock;
  std::vector<double> partial(n_blocks, 0.0);
  parallel_for(static_cast<std::ptrdiff_t>(n_blocks), threads_for(n, n_threads), [&](std::ptrdiff_t b) {
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
