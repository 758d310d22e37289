// Tests of the selection of §5.4 against brute force: the score is Eq. 5.3 for +-1 outputs and an upper
// bound of the exactly minimised loss for real ones; the isolated point and the whole of steps 0-6 agree
// with a direct re-implementation on exact distances; the thread count changes nothing.
// Eigen single-threaded, as in the library (cpp/CMakeLists.txt): its own OpenMP threads would block the
// products differently from the library's.
#define EIGEN_DONT_PARALLELIZE

#include "learner/similarity_select.hpp"

#include <Eigen/Core>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "learner/binarize.hpp"
#include "model/similarity_function.hpp"
#include "test_util.hpp"

namespace rebelboost::learner {
namespace {

using testing::random_points;

// REBEL's closed-form loss of +-1 outputs from the definitions (Eq. 5.2-5.3): per class, s+ gathers the
// weights multiplied by e^{+a} (sign(s_nk) f_n > 0), s- the others; L = 2 sum_k sqrt(s+_k s-_k).
double closed_form_loss(const std::vector<double>& s, std::size_t n, std::size_t K, const std::vector<double>& f) {
  double loss = 0.0;
  for (std::size_t k = 0; k < K; ++k) {
    double plus = 0.0, minus = 0.0;
    for (std::size_t m = 0; m < n; ++m) {
      const double v = s[m * K + k];
      ((v > 0) == (f[m] > 0) ? plus : minus) += std::fabs(v);
    }
    loss += 2.0 * std::sqrt(plus * minus);
  }
  return loss;
}

// min over a of sum_n |s_nk| exp(sign(s_nk) f_n a), per class, by golden-section search.
double minimised_loss(const std::vector<double>& s, std::size_t n, std::size_t K, const std::vector<double>& f) {
  double total = 0.0;
  for (std::size_t k = 0; k < K; ++k) {
    auto phi = [&](double a) {
      double v = 0.0;
      for (std::size_t m = 0; m < n; ++m) v += std::fabs(s[m * K + k]) * std::exp((s[m * K + k] > 0 ? 1 : -1) * f[m] * a);
      return v;
    };
    double lo = -30.0, hi = 30.0;
    const double g = (std::sqrt(5.0) - 1.0) / 2.0;
    for (int it = 0; it < 200; ++it) {
      const double a = hi - g * (hi - lo), b = lo + g * (hi - lo);
      (phi(a) < phi(b) ? hi : lo) = phi(a) < phi(b) ? b : a;
    }
    total += phi(0.5 * (lo + hi));
  }
  return total;
}

TEST(SimilarityScore, IsEq53ForSignsAndBoundsTheExactLossForRealOutputs) {
  const std::size_t n = 60, K = 4;
  const auto s = testing::random_signed_weights(n, K, 21);
  std::mt19937_64 rng(4);
  std::uniform_real_distribution<double> unit(-1.0, 1.0);
  for (int trial = 0; trial < 20; ++trial) {
    std::vector<double> f(n), sign(n);
    for (std::size_t m = 0; m < n; ++m) {
      f[m] = unit(rng);
      sign[m] = f[m] >= 0 ? 1.0 : -1.0;
    }
    const double eq53 = closed_form_loss(s, n, K, sign);
    EXPECT_NEAR(similarity_score(s.data(), n, K, sign.data(), StepRule::kExact, 1), eq53, 1e-12 * eq53);
    EXPECT_NEAR(similarity_score(s.data(), n, K, f.data(), StepRule::kSign, 1), eq53, 1e-12 * eq53);
    const double bound = similarity_score(s.data(), n, K, f.data(), StepRule::kExact, 1);
    EXPECT_GE(bound, minimised_loss(s, n, K, f) * (1 - 1e-9));
  }
}

TEST(SimilaritySelect, IsolatedPointEqualsBruteForce) {
  for (std::uint64_t seed = 1; seed <= 6; ++seed) {
    const std::size_t n = 30 + 10 * seed, K = 2 + seed % 4, d = 3;
    auto x = random_points(n, d, seed);
    // A pair of coincident points in half the trials: they can only be isolated together.
    if (seed % 2) std::copy(x.begin(), x.begin() + d, x.begin() + 5 * d);
    const PointSet points(x, n, d, 1);
    const auto s = testing::random_signed_weights(n, K, seed + 100);
    std::size_t best = n;
    double best_loss = std::numeric_limits<double>::infinity();
    for (std::size_t i = 0; i < n; ++i) {
      if (points.group(i) != i) continue;
      std::vector<double> f(n);
      for (std::size_t m = 0; m < n; ++m) f[m] = points.group(m) == i ? 1.0 : -1.0;
      const double loss = closed_form_loss(s, n, K, f);
      if (loss < best_loss) best_loss = loss, best = i;
    }
    EXPECT_EQ(best_isolated_point(points, s.data(), K), best) << "seed " << seed;
  }
}

// Steps 0-6 re-implemented directly: exact distances, full sorts, no buffers.
SimilarityCandidate reference_select(const std::vector<double>& x, std::size_t n, std::size_t d, std::size_t K,
                                     const std::vector<double>& s, double tau_ratio, int* candidates) {
  auto dist = [&](std::size_t a, std::size_t b) { return similarity::squared_distance(&x[a * d], &x[b * d], d); };
  auto score = [&](const std::vector<double>& f) { return similarity_score(s.data(), n, K, f.data(), StepRule::kExact, 1); };
  SimilarityCandidate best;
  best.outputs.assign(n, 1.0);
  best.score = score(best.outputs);
  auto keep = [&](Similarity::Kind kind, std::size_t i, std::size_t j, double tau, const std::vector<double>& f) {
    const double v = score(f);
    if (v < best.score) best = {kind, static_cast<std::uint32_t>(i), static_cast<std::uint32_t>(j), tau, v, f};
  };
  const PointSet points(x, n, d, 1);
  const std::size_t i = best_isolated_point(points, s.data(), K);
  double nearest = std::numeric_limits<double>::infinity();
  for (std::size_t m = 0; m < n; ++m)
    if (m != i) nearest = std::min(nearest, dist(i, m));
  std::vector<double> f(n);
  for (std::size_t m = 0; m < n; ++m) f[m] = similarity::one_point(tau_ratio * nearest, dist(i, m));
  keep(Similarity::Kind::kOnePoint, i, 0, tau_ratio * nearest, f);
  const Binarization b = binarize(s.data(), n, K, 1);
  std::vector<std::size_t> other;
  for (std::size_t m = 0; m < n; ++m)
    if (b.side[m] != b.side[i]) other.push_back(m);
  std::vector<bool> removed(n, false);
  *candidates = 0;
  while (true) {
    std::size_t j = n;
    for (const std::size_t m : other)
      if (!removed[m] && (j == n || dist(i, m) < dist(i, j))) j = m;
    if (j == n) break;
    ++*candidates;
    const double q = dist(i, j) / 4;
    for (std::size_t m = 0; m < n; ++m) f[m] = similarity::two_point(q, dist(i, m), dist(j, m));
    keep(Similarity::Kind::kTwoPoint, i, j, 0.0, f);
    for (std::size_t m = 0; m < n; ++m)
      if (f[m] <= f[j] / 2) removed[m] = true;
  }
  return best;
}

// Signed weights whose labels follow the first coordinate (K bands) in most rows, random in the rest.
std::vector<double> banded_weights(const std::vector<double>& x, std::size_t n, std::size_t d, std::size_t K,
                                   std::uint64_t seed, bool structured) {
  auto s = testing::random_signed_weights(n, K, seed, 1.0 + 0.5 * static_cast<double>(seed % 3));
  if (!structured) return s;
  std::mt19937_64 rng(seed);
  for (std::size_t m = 0; m < n; ++m) {
    const double band = std::floor((std::erf(x[m * d] / std::sqrt(2.0)) + 1.0) / 2.0 * static_cast<double>(K));
    const std::size_t y = rng() % 5 == 0 ? rng() % K : std::min(K - 1, static_cast<std::size_t>(band));
    for (std::size_t k = 0; k < K; ++k) s[m * K + k] = (k == y ? -1.0 : 1.0) * std::fabs(s[m * K + k]);
  }
  return s;
}

TEST(SimilaritySelect, StepsZeroToSixEqualADirectImplementation) {
  int two_point_wins = 0;
  for (std::uint64_t seed = 1; seed <= 12; ++seed) {
    const std::size_t n = 50 + 20 * (seed % 8), K = 2 + seed % 4, d = 1 + seed % 5;
    const auto x = random_points(n, d, seed);
    const auto s = banded_weights(x, n, d, K, seed + 50, seed % 3 != 0);
    const PointSet points(x, n, d, 1);
    SimilarityParams params;
    SimilaritySelector selector(points, K, params, 1);
    const SimilaritySelection got = selector.select(s.data());
    int candidates = 0;
    const SimilarityCandidate want = reference_select(x, n, d, K, s, params.tau_ratio, &candidates);
    EXPECT_EQ(got.best.kind, want.kind) << "seed " << seed;
    EXPECT_EQ(got.best.i, want.i);
    EXPECT_EQ(got.best.j, want.j);
    EXPECT_EQ(got.best.tau, want.tau);
    EXPECT_NEAR(got.best.score, want.score, 1e-12 * want.score);
    EXPECT_EQ(got.candidates, candidates);
    for (std::size_t m = 0; m < n; ++m) ASSERT_NEAR(got.best.outputs[m], want.outputs[m], 1e-12);
    two_point_wins += got.best.kind == Similarity::Kind::kTwoPoint;
  }
  EXPECT_GT(two_point_wins, 0);  // the comparison exercised the two-point path
}

TEST(SimilaritySelect, EqualsADirectImplementationOverSeveralRowBlocksAndBatches) {
  // Row blocks of 327 points at d = 100: the removal masks of a batch are filled block by block, and the
  // points a visited candidate removes are removed once per batch of kBatch candidates.
  for (std::uint64_t seed = 1; seed <= 2; ++seed) {
    const std::size_t n = 700, K = 3 + seed, d = 100;
    const auto x = random_points(n, d, seed + 20);
    const auto s = banded_weights(x, n, d, K, seed + 70, true);
    const PointSet points(x, n, d, 2);
    ASSERT_GE(points.n_blocks(), 3);
    SimilarityParams params;
    params.max_candidates = 0;  // the thesis's procedure, which the reference implements
    SimilaritySelector selector(points, K, params, 2);
    const SimilaritySelection got = selector.select(s.data());
    int candidates = 0;
    const SimilarityCandidate want = reference_select(x, n, d, K, s, params.tau_ratio, &candidates);
    EXPECT_GT(candidates, static_cast<int>(SimilaritySelector::kBatch)) << "seed " << seed;
    EXPECT_EQ(got.candidates, candidates);
    EXPECT_EQ(got.best.kind, want.kind);
    EXPECT_EQ(got.best.i, want.i);
    EXPECT_EQ(got.best.j, want.j);
    for (std::size_t m = 0; m < n; ++m) ASSERT_NEAR(got.best.outputs[m], want.outputs[m], 1e-12);
  }
}

TEST(SimilaritySelect, MaxCandidatesStopsTheLoop) {
  const std::size_t n = 200, K = 3, d = 2;
  const auto x = random_points(n, d, 3);
  const auto s = testing::random_signed_weights(n, K, 4);
  const PointSet points(x, n, d, 1);
  SimilarityParams params;
  params.max_candidates = 2;
  SimilaritySelector selector(points, K, params, 1);
  EXPECT_EQ(selector.select(s.data()).candidates, 2);
}

TEST(SimilaritySelect, BlockEdgesAreTheSumsInOneOrderWhateverTheColumnsAround) {
  // measure() hands block_edges the columns of a task (a range of column_chunks of a batch); a column's
  // edges must be the same bits whatever the batch and range around it (so the thread count and the batch
  // cut change nothing), close to the exact sums, and summed in the stated order.
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  for (const std::size_t K : {1, 2, 3, 5, 10, 26})
    for (const std::size_t rows : {1, 3, 4, 64, 327, 1092}) {
      const std::size_t stride = rows + 7;  // st's classes lie `stride` apart, as in the whole selection
      std::vector<double> st(K * stride), f(rows * 9);
      for (double& v : st) v = u(rng);
      for (double& v : f) v = u(rng);
      std::vector<double> alone(9 * K);  // each column by itself
      for (std::size_t c = 0; c < 9; ++c) block_edges(st.data(), stride, K, &f[c * rows], rows, 1, &alone[c * K]);
      for (std::size_t c = 0; c < 9; ++c)
        for (std::size_t k = 0; k < K; ++k) {
          double s[4] = {0.0, 0.0, 0.0, 0.0}, e = 0.0;  // the stated order
          long double exact = 0.0L;
          const std::size_t body = rows - rows % 4;
          for (std::size_t r = 0; r < rows; ++r) {
            const double p = st[k * stride + r] * f[c * rows + r];
            if (r < body) s[r % 4] += p;
            exact += static_cast<long double>(st[k * stride + r]) * f[c * rows + r];
          }
          e = (s[0] + s[1]) + (s[2] + s[3]);
          for (std::size_t r = body; r < rows; ++r) e += st[k * stride + r] * f[c * rows + r];
          ASSERT_EQ(alone[c * K + k], e) << "K " << K << " rows " << rows;
          ASSERT_NEAR(alone[c * K + k], static_cast<double>(exact), 1e-12 * static_cast<double>(rows));
        }
      for (std::size_t count = 1; count <= 9; ++count)
        for (std::size_t first = 0; first + count <= 9; ++first) {
          std::vector<double> together(count * K);
          block_edges(st.data(), stride, K, &f[first * rows], rows, count, together.data());
          ASSERT_EQ(std::memcmp(together.data(), &alone[first * K], sizeof(double) * together.size()), 0)
              << "K " << K << " rows " << rows << " count " << count << " first " << first;
        }
    }
}

TEST(SimilaritySelect, ColumnChunksCoverTheBatchInRangesOfKChunk) {
  for (std::size_t count = 1; count <= SimilaritySelector::kBatch; ++count) {
    const std::vector<std::size_t> c = column_chunks(count);
    ASSERT_EQ(c.front(), 0u);
    ASSERT_EQ(c.back(), count);
    for (std::size_t t = 0; t + 1 < c.size(); ++t) {
      ASSERT_LT(c[t], c[t + 1]);
      ASSERT_LE(c[t + 1] - c[t], kChunk);
      if (t + 2 < c.size()) {
        ASSERT_EQ(c[t + 1] - c[t], kChunk);
      }
    }
  }
}

TEST(SimilaritySelect, SameLearnerForEveryThreadCount) {
  const std::size_t n = 3000, K = 5, d = 50;  // 5 row blocks, threaded (REBELBOOST_WORK_PER_THREAD=64)
  const auto x = random_points(n, d, 8);
  const auto s = testing::random_signed_weights(n, K, 9);
  std::vector<SimilaritySelection> results;
  for (const int threads : {1, 2, 3}) {
    const PointSet points(x, n, d, threads);
    SimilarityParams params;
    params.max_candidates = 20;
    SimilaritySelector selector(points, K, params, threads);
    results.push_back(selector.select(s.data()));
  }
  for (const auto& r : results) {
    EXPECT_EQ(r.best.kind, results[0].best.kind);
    EXPECT_EQ(r.best.i, results[0].best.i);
    EXPECT_EQ(r.best.j, results[0].best.j);
    EXPECT_EQ(r.best.score, results[0].best.score);
    EXPECT_EQ(std::memcmp(r.best.outputs.data(), results[0].best.outputs.data(), n * sizeof(double)), 0);
  }
}

}  // namespace
}  // namespace rebelboost::learner
