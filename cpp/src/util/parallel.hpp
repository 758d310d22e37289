// The one parallel loop of the library: static OpenMP scheduling with an explicit thread count.
#pragma once

#include <omp.h>

#include <cstddef>
#include <exception>
#include <mutex>

namespace rebelboost::util {

// Threads per core beyond which a request is clamped: more only wait for cores, and asking the OpenMP
// runtime for thousands of threads crashes it. The Python layer warns before it clamps.
inline constexpr int kMaxThreadsPerCore = 4;

// <= 0 means every core OpenMP reports; more than kMaxThreadsPerCore per core is clamped to that.
inline int resolve_threads(int n_threads) {
  const int procs = omp_get_num_procs();
  const int cores = procs > 0 ? procs : 1;
  if (n_threads <= 0) return cores;
  return n_threads > kMaxThreadsPerCore * cores ? kMaxThreadsPerCore * cores : n_threads;
}

// Threads worth using for a region of `work` elementary steps (a histogram add, a weight update): one
// more thread per kWorkPerThread steps, at most n_threads. A region below 2 * kWorkPerThread (~30 us of
// work) runs on the calling thread alone: waking a sleeping thread costs ~50 us, and on a busy machine a
// region waits for its slowest thread to be scheduled again (milliseconds), which multiplied small fits'
// times many-fold. The answer depends on the amount of work only, never on timings; results never depend
// on it either.
inline constexpr std::size_t kWorkPerThread = std::size_t{1} << 16;
inline int threads_for(std::size_t work, int n_threads) {
  const int most = resolve_threads(n_threads);
  const std::size_t useful = work / kWorkPerThread;
  return useful < 2 ? 1 : static_cast<int>(useful < static_cast<std::size_t>(most) ? useful : static_cast<std::size_t>(most));
}

// Index of the calling thread inside parallel_for (0 outside): for per-thread scratch buffers, which must
// not change results.
inline int thread_index() { return omp_get_thread_num(); }

// Calls fn(i) for i in [0, n). Each i runs exactly once; callers must not depend on which thread runs
// which i (results are written to slots owned by i and reduced afterwards in index order).
// An exception thrown by fn never escapes an OpenMP region: the one from the smallest i is rethrown
// after the loop, so the error does not depend on the thread count either.
template <typename Fn>
void parallel_for(std::ptrdiff_t n, int n_threads, Fn&& fn, bool dynamic = false) {
  const int threads = resolve_threads(n_threads);
  if (threads == 1 || n <= 1) {
    for (std::ptrdiff_t i = 0; i < n; ++i) fn(i);
    return;
  }
  std::exception_ptr error;
  std::ptrdiff_t error_index = n;
  std::mutex error_mutex;
  auto guarded = [&](std::ptrdiff_t i) {
    try {
      fn(i);
    } catch (...) {
      std::lock_guard<std::mutex> lock(error_mutex);
      if (i < error_index) {
        error_index = i;
        error = std::current_exception();
      }
    }
  };
  if (dynamic) {
#pragma omp parallel for num_threads(threads) schedule(dynamic, 1)
    for (std::ptrdiff_t i = 0; i < n; ++i) guarded(i);
  } else {
#pragma omp parallel for num_threads(threads) schedule(static)
    for (std::ptrdiff_t i = 0; i < n; ++i) guarded(i);
  }
  if (error) std::rethrow_exception(error);
}

// Sum of values[0..n) in a fixed order that does not depend on the thread count: partial sums over fixed
// blocks of kBlock elements, then the block sums added in block order.
double deterministic_sum(const double* values, std::size_t n, int n_threads);

}  // namespace rebelboost::util
