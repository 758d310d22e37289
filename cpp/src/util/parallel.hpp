// The one parallel loop of the library: static OpenMP scheduling with an explicit thread count.
#pragma once

#include <omp.h>

#include <cstddef>
#include <cstdint>
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

// Threads worth using for a region of `work` elementary steps (a histogram add, a weight update: about
// 0.5 ns each): one thread per kWorkPerThread steps (~0.5 ms), at most n_threads, so a region below
// 2 * kWorkPerThread runs on the calling thread alone. Every OpenMP region ends in a barrier that waits
// for all its threads; on a busy machine a thread that is not running (or a spinning one that the
// scheduler has put behind others) makes that wait milliseconds: measured, REBEL on digits (one 2-thread
// region per tree, ~1 ms of work) fitted in 3.1 s with default OpenMP settings against 0.29 s with
// OMP_WAIT_POLICY=passive on a loaded 2-core machine, and at this threshold in 0.22 s either way. The answer
// depends on the amount of work only, never on timings; results never depend on it either.
// The environment variable REBELBOOST_WORK_PER_THREAD (a positive integer, read once) replaces it: lower
// values parallelise smaller regions (the test suites use 64, so every parallel path runs on small data).
inline constexpr std::size_t kWorkPerThread = std::size_t{1} << 20;
std::size_t work_per_thread();
inline int threads_for(std::size_t work, int n_threads) {
  const int most = resolve_threads(n_threads);
  const std::size_t useful = work / work_per_thread();
  return useful < 2 ? 1 : static_cast<int>(useful < static_cast<std::size_t>(most) ? useful : static_cast<std::size_t>(most));
}

// Whether OpenMP's waiting threads spin: true unless OMP_WAIT_POLICY is "passive" (read once, as the
// runtime reads it).
bool waiting_threads_spin();

// threads_for for a region that runs several times in every boosting iteration (the similarity
// learner's measure pass and step). On a loaded machine a region's closing barrier waits for a thread that
// lost its core, and with OpenMP's default, spinning wait policy the threads that wait burn the cores
// the others need: measured on 2 busy cores, a similarity fit at 3 750 x 30 ran 13.8-25.1 ms per learner
// with 2 threads per region against 7.8-8.6 ms with 1 (6.1-7.5 ms with 2 threads and
// OMP_WAIT_POLICY=passive; docs/guide/similarity.md "Speed"). So with spinning threads such a region
// needs twice the work per thread; with passive ones, threads_for's.
inline int threads_for_repeated(std::size_t work, int n_threads) {
  return threads_for(waiting_threads_spin() ? work / 2 : work, n_threads);
}

// Index of the calling thread inside parallel_for (0 outside): for per-thread scratch buffers, which must
// not change results.
inline int thread_index() { return omp_get_thread_num(); }

// The exception of a parallel loop that a serial run would meet first: each call runs under a position (the
// loop index, in serial order), and the one from the smallest position is kept, so the error does not depend
// on the thread count. An exception never escapes an OpenMP region.
class FirstError {
 public:
  template <typename Fn>
  void run(std::ptrdiff_t at, Fn&& fn) {
    try {
      fn();
    } catch (...) {
      std::lock_guard<std::mutex> lock(mutex_);
      failed_ = true;
      if (at < at_) {
        at_ = at;
        error_ = std::current_exception();
      }
    }
  }
  // Only between the loops' barriers: no call of run in progress.
  bool failed() const { return failed_; }
  void rethrow() const {
    if (error_) std::rethrow_exception(error_);
  }

 private:
  bool failed_ = false;
  std::ptrdiff_t at_ = PTRDIFF_MAX;
  std::exception_ptr error_;
  std::mutex mutex_;
};

// Calls fn(i) for i in [0, n). Each i runs exactly once; callers must not depend on which thread runs
// which i (results are written to slots owned by i and reduced afterwards in index order).
// An exception thrown by fn never escapes an OpenMP region: the one from the smallest i is rethrown
// after the loop, so the error does not depend on the thread count either.
// dynamic: the i go to whichever thread is free, one at a time (for many equal pieces of work: a thread that
// the region's start woke late takes fewer of them instead of ending last).
template <typename Fn>
void parallel_for(std::ptrdiff_t n, int n_threads, Fn&& fn, bool dynamic = false) {
  const int threads = resolve_threads(n_threads);
  if (threads == 1 || n <= 1) {
    for (std::ptrdiff_t i = 0; i < n; ++i) fn(i);
    return;
  }
  FirstError error;
  if (dynamic) {
#pragma omp parallel for num_threads(threads) schedule(dynamic, 1)
    for (std::ptrdiff_t i = 0; i < n; ++i) error.run(i, [&] { fn(i); });
  } else {
#pragma omp parallel for num_threads(threads) schedule(static)
    for (std::ptrdiff_t i = 0; i < n; ++i) error.run(i, [&] { fn(i); });
  }
  error.rethrow();
}

// first(i) for every i in [0, n), then between() once, then second(i) for every i: two dynamic parallel_for
// loops with a serial step between them, in one OpenMP region (docs/design/determinism.md, section 3). With
// OMP_WAIT_POLICY=passive every region's start wakes the sleeping threads (a scheduler's latency each time),
// so one region instead of two saves a wake-up; the loops' barriers still order the phases. The same contract
// as parallel_for; an exception stops the phases after its own, and the first one in serial order is rethrown.
template <typename First, typename Between, typename Second>
void parallel_phases(std::ptrdiff_t n, int n_threads, First&& first, Between&& between, Second&& second) {
  const int threads = resolve_threads(n_threads);
  if (threads == 1 || n <= 1) {
    for (std::ptrdiff_t i = 0; i < n; ++i) first(i);
    between();
    for (std::ptrdiff_t i = 0; i < n; ++i) second(i);
    return;
  }
  FirstError error;
  bool go = false;  // first and between ran without an exception: set by the single, read after its barrier
#pragma omp parallel num_threads(threads)
  {
#pragma omp for schedule(dynamic, 1)
    for (std::ptrdiff_t i = 0; i < n; ++i) error.run(i, [&] { first(i); });
#pragma omp single
    {
      if (!error.failed()) error.run(n, between);
      go = !error.failed();
    }
#pragma omp for schedule(dynamic, 1)
    for (std::ptrdiff_t i = 0; i < n; ++i)
      if (go) error.run(n + 1 + i, [&] { second(i); });
  }
  error.rethrow();
}

}  // namespace rebelboost::util
