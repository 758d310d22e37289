// Steps 0-6 of §5.4: homogeneous, best isolating one-point, then two-point learners toward x_i.
#include "learner/similarity_select.hpp"

#include <Eigen/Core>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>

#include "learner/binarize.hpp"
#include "model/similarity_function.hpp"
#include "util/parallel.hpp"

namespace rebelboost::learner {

namespace {

using RowMatrix = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
constexpr std::size_t kBlock = 4096;

// sum_k sqrt(S_k^2 - r_k^2) = sum_k sqrt((S_k - r_k)(S_k + r_k)), clamped at 0 (rounding).
double bound_from_edges(const double* total, const double* edge, std::size_t K) {
  double loss = 0.0;
  for (std::size_t k = 0; k < K; ++k) loss += std::sqrt(std::max(0.0, (total[k] - edge[k]) * (total[k] + edge[k])));
  return loss;
}

// r = S^T g over fixed blocks of rows, added in block order.
Eigen::VectorXd edges(const double* signed_weights, std::size_t n, std::size_t K, const double* g, int n_threads) {
  const auto k = static_cast<Eigen::Index>(K);
  const Eigen::Map<const RowMatrix> S(signed_weights, static_cast<Eigen::Index>(n), k);
  const auto n_blocks = static_cast<std::ptrdiff_t>((n + kBlock - 1) / kBlock);
  std::vector<Eigen::VectorXd> partial(static_cast<std::size_t>(n_blocks));
  util::parallel_for(n_blocks, util::threads_for(n * K, n_threads), [&](std::ptrdiff_t b) {
    const auto begin = static_cast<Eigen::Index>(static_cast<std::size_t>(b) * kBlock);
    const auto len = std::min<Eigen::Index>(static_cast<Eigen::Index>(kBlock), static_cast<Eigen::Index>(n) - begin);
    const Eigen::Map<const Eigen::VectorXd> gb(g + begin, len);
    partial[static_cast<std::size_t>(b)] = S.middleRows(begin, len).transpose() * gb;
  });
  Eigen::VectorXd r = Eigen::VectorXd::Zero(k);
  for (const Eigen::VectorXd& p : partial) r += p;
  return r;
}

// similarity::two_point on rows [0, rows) of two distance columns, written without branches so that the
// compiler vectorises it: the same operations in the same order, so the same bits (a row where two_point
// returns its 0 for an infinite distance or denominator gets 0 here too). This file is compiled with
// -fno-trapping-math (cpp/CMakeLists.txt), without which the comparisons keep the loop scalar. The AVX2
// clone (chosen at load time where the CPU has it) runs 4 rows per instruction instead of SSE2's 2: the
// same IEEE operations, and no fused multiply-adds (AVX2 does not include FMA), so the same bits
// (docs/guide/similarity.md "Speed").
inline double two_point_output(double a, double b, double q, double scale, double q4q) {
  const double along = 0.25 * (b - a);
  const double half_sum = 0.5 * (a + b) - q;
  const double m2 = 0.0 < half_sum ? half_sum : 0.0;  // std::max(0.0, half_sum)
  const double denominator = q4q + m2 * m2;
  double f = scale * (along / denominator);
  f = f < -1.0 ? -1.0 : f;  // std::clamp(f, -1.0, 1.0)
  f = 1.0 < f ? 1.0 : f;
  const bool finite = (a < HUGE_VAL) & (b < HUGE_VAL) & (denominator < HUGE_VAL) & (denominator > 0.0);
  return finite ? f : 0.0;
}

// two_point_output for one point (the removal tests of keep_unremoved): the bits of the column loops'.
inline double two_point_at(double q, double d_i, double d_j) {
  return two_point_output(d_i, d_j, q, similarity::kTwoPointScale * q, 4.0 * q * q);
}

__attribute__((target_clones("avx2", "default")))
void two_point_column(double q, const double* d_i, const double* d_j, std::size_t rows, double* out) {
  const double scale = similarity::kTwoPointScale * q, q4q = 4.0 * q * q;
  for (std::size_t r = 0; r < rows; ++r) out[r] = two_point_output(d_i[r], d_j[r], q, scale, q4q);
}

// two_point_column, and in the same pass `bit` set in remover[r] where out[r] <= limit (footnote 3).
__attribute__((target_clones("avx2", "default")))
void two_point_column_removing(double q, const double* d_i, const double* d_j, std::size_t rows, double limit,
                               SimilaritySelector::Mask bit, double* out, SimilaritySelector::Mask* remover) {
  const double scale = similarity::kTwoPointScale * q, q4q = 4.0 * q * q;
  for (std::size_t r = 0; r < rows; ++r) {
    const double f = two_point_output(d_i[r], d_j[r], q, scale, q4q);
    out[r] = f;
    remover[r] |= f <= limit ? bit : SimilaritySelector::Mask{0};
  }
}

Eigen::VectorXd absolute_totals(const double* signed_weights, std::size_t n, std::size_t K) {
  Eigen::VectorXd total = Eigen::VectorXd::Zero(static_cast<Eigen::Index>(K));
  for (std::size_t m = 0; m < n; ++m)
    for (std::size_t k = 0; k < K; ++k) total[static_cast<Eigen::Index>(k)] += std::fabs(signed_weights[m * K + k]);
  return total;
}

}  // namespace

// Products and sums, never fused (this file is compiled with -ffp-contract=off), so the AVX2 clone (one
// 4-lane instruction for the four sums) and the baseline (two 2-lane ones) give the same bits.
using Lanes = double __attribute__((vector_size(32)));

__attribute__((target_clones("avx2", "default")))
void block_edges(const double* st, std::size_t stride, std::size_t K, const double* f, std::size_t rows,
                 std::size_t count, double* out) {
  const std::size_t body = rows - rows % 4;
  for (std::size_t c0 = 0; c0 < count; c0 += 4) {
    const std::size_t width = std::min<std::size_t>(4, count - c0);
    const double* col[4];  // a missing column repeats the last one (computed, not stored)
    for (std::size_t j = 0; j < 4; ++j) col[j] = f + (c0 + std::min(j, width - 1)) * rows;
    const double *f0 = col[0], *f1 = col[1], *f2 = col[2], *f3 = col[3];
    for (std::size_t k = 0; k < K; ++k) {
      const double* s = st + k * stride;
      Lanes s0 = {}, s1 = {}, s2 = {}, s3 = {}, w, x0, x1, x2, x3;
      for (std::size_t r = 0; r < body; r += 4) {  // unaligned loads
        std::memcpy(&w, s + r, sizeof w);
        std::memcpy(&x0, f0 + r, sizeof w);
        std::memcpy(&x1, f1 + r, sizeof w);
        std::memcpy(&x2, f2 + r, sizeof w);
        std::memcpy(&x3, f3 + r, sizeof w);
        s0 += w * x0;
        s1 += w * x1;
        s2 += w * x2;
        s3 += w * x3;
      }
      const Lanes sums[4] = {s0, s1, s2, s3};
      for (std::size_t j = 0; j < width; ++j) {
        double e = (sums[j][0] + sums[j][1]) + (sums[j][2] + sums[j][3]);
        for (std::size_t r = body; r < rows; ++r) e += s[r] * col[j][r];
        out[(c0 + j) * K + k] = e;
      }
    }
  }
}

std::vector<std::size_t> column_chunks(std::size_t count) {
  std::vector<std::size_t> bounds{0};
  for (std::size_t c = kChunk; c < count; c += kChunk) bounds.push_back(c);
  bounds.push_back(count);
  return bounds;
}

double similarity_score(const double* signed_weights, std::size_t n, std::size_t K, const double* f, StepRule rule,
                        int n_threads) {
  std::vector<double> sign;
  const double* g = f;
  if (rule == StepRule::kSign) {
    sign.resize(n);
    for (std::size_t m = 0; m < n; ++m) sign[m] = f[m] >= 0.0 ? 1.0 : -1.0;
    g = sign.data();
  }
  const Eigen::VectorXd total = absolute_totals(signed_weights, n, K);
  const Eigen::VectorXd edge = edges(signed_weights, n, K, g, n_threads);
  return bound_from_edges(total.data(), edge.data(), K);
}

std::size_t best_isolated_point(const PointSet& points, const double* signed_weights, std::size_t K) {
  const std::size_t n = points.size();
  if (points.n_groups() < 2) return n;
  const auto k = static_cast<Eigen::Index>(K);
  const Eigen::VectorXd total = absolute_totals(signed_weights, n, K);
  // Group sums G_k (in the slot of the group's smallest index) and R_k = sum_n s_nk; the ideal isolation
  // of group G has edge r_k = 2 G_k - R_k.
  std::vector<double> group_sum(signed_weights, signed_weights + n * K);
  Eigen::VectorXd all = Eigen::VectorXd::Zero(k);
  for (std::size_t m = 0; m < n; ++m) {
    const std::size_t g = points.group(m);
    for (std::size_t c = 0; c < K; ++c) {
      all[static_cast<Eigen::Index>(c)] += signed_weights[m * K + c];
      if (g != m) group_sum[g * K + c] += signed_weights[m * K + c];
    }
  }
  std::size_t best = n;
  double best_loss = std::numeric_limits<double>::infinity();
  Eigen::VectorXd edge(k);
  for (std::size_t m = 0; m < n; ++m) {
    if (points.group(m) != m) continue;
    for (Eigen::Index c = 0; c < k; ++c) edge[c] = 2.0 * group_sum[m * K + static_cast<std::size_t>(c)] - all[c];
    const double loss = bound_from_edges(total.data(), edge.data(), K);
    if (loss < best_loss) {
      best_loss = loss;
      best = m;
    }
  }
  return best;
}

SimilaritySelector::SimilaritySelector(const PointSet& points, std::size_t K, const SimilarityParams& params,
                                       int n_threads)
    : points_(points), K_(K), params_(params), n_threads_(n_threads), cache_(points, params.distance_cache_mb),
      f_(points.size()), d_i_(points.size()),
      batch_edges_(K * kBatch), remover_(points.size()), removed_(points.size()) {}

void SimilaritySelector::consider(SimilaritySelection& selection, const double* signed_weights,
                                  Similarity::Kind kind, std::uint32_t i, std::uint32_t j, double tau) {
  const double score = similarity_score(signed_weights, points_.size(), K_, f_.data(), params_.step_rule, n_threads_);
  SimilarityCandidate& best = selection.best;
  if (!(score < best.score)) return;
  best.kind = kind;
  best.i = i;
  best.j = j;
  best.tau = tau;
  best.score = score;
  best.outputs = f_;
}

SimilaritySelection SimilaritySelector::select(const double* signed_weights) {
  const std::size_t n = points_.size();
  SimilaritySelection out;
  // Step 0: the homogeneous learner.
  std::fill(f_.begin(), f_.end(), 1.0);
  out.best.score = std::numeric_limits<double>::infinity();
  consider(out, signed_weights, Similarity::Kind::kConstant, 0, 0, 0.0);

  // Steps 1-3: binarize, isolate the best point.
  const Binarization binary = binarize(signed_weights, n, K_, n_threads_);
  const std::size_t i = best_isolated_point(points_, signed_weights, K_);
  if (i == n) return out;
  const auto anchor_i = static_cast<std::uint32_t>(i);
  const double* column = cache_.columns(&anchor_i, 1).front();
  std::copy(column, column + n, d_i_.begin());
  const double tau = params_.tau_ratio * points_.nearest_distinct(i, d_i_.data());
  for (std::size_t m = 0; m < n; ++m) f_[m] = similarity::one_point(tau, d_i_[m]);
  consider(out, signed_weights, Similarity::Kind::kOnePoint, anchor_i, 0, tau);

  // Steps 4-6: the other binarized class by distance to x_i (index on ties), nearest first.
  order_.clear();
  for (std::size_t m = 0; m < n; ++m)
    if (binary.side[m] != binary.side[i] && points_.group(m) != points_.group(i))
      order_.push_back(static_cast<std::uint32_t>(m));
  sorted_ = 0;  // sorted as the visit reaches them (sort_order_to): with the cap, a few hundred of thousands
  visit_two_point(out, signed_weights, anchor_i);
  return out;
}

void SimilaritySelector::visit_two_point(SimilaritySelection& selection, const double* signed_weights,
                                         std::uint32_t i) {
  const std::size_t n = points_.size();
  const Eigen::VectorXd total = absolute_totals(signed_weights, n, K_);
  by_class_.resize(n * K_);  // the weights class by class, for block_edges
  for (std::size_t m = 0; m < n; ++m)
    for (std::size_t k = 0; k < K_; ++k) by_class_[k * n + m] = signed_weights[m * K_ + k];
  std::fill(removed_.begin(), removed_.end(), 0);
  std::vector<std::uint32_t> batch;
  std::size_t next = 0;
  while (true) {
    // At most as many as may still be visited: a candidate measured beyond the cap would be wasted work (a
    // column's edges do not depend on the batch around it, so the cut changes nothing else).
    std::size_t size = kBatch;
    if (params_.max_candidates > 0)
      size = std::min(size, static_cast<std::size_t>(params_.max_candidates - selection.candidates));
    batch.clear();
    for (; next < order_.size() && batch.size() < size; ++next) {
      if (next == sorted_) sort_order_to(next + 4 * kBatch);
      if (!removed_[order_[next]]) batch.push_back(order_[next]);
    }
    if (batch.empty() || (stop_ != nullptr && stop_->load(std::memory_order_relaxed))) return;
    keep_unremoved(i, batch);
    measure(batch.size());
    for (std::size_t b = 0; b < batch.size(); ++b) {  // every kept candidate is visited
      ++selection.candidates;
      const double score = bound_from_edges(total.data(), &batch_edges_[b * K_], K_);
      if (score < selection.best.score) {
        selection.best = {Similarity::Kind::kTwoPoint, i, batch[b], 0.0, score, std::vector<double>(n)};
        two_point_column(batch_q_[b], d_i_.data(), batch_d_j_[b], n, selection.best.outputs.data());
      }
    }
    const std::size_t n_chunks = (batch.size() + kChunk - 1) / kChunk;
    for (std::size_t m = 0; m < n; ++m) {
      Mask any = 0;
      for (std::size_t c = 0; c < n_chunks; ++c) any |= remover_[c * n + m];
      removed_[m] |= static_cast<std::uint8_t>(any != 0);
    }
  }
}

void SimilaritySelector::keep_unremoved(std::uint32_t i, std::vector<std::uint32_t>& batch) {
  const std::vector<const double*>& columns = cache_.columns(batch.data(), batch.size());  // until the next batch
  batch_d_j_.clear();
  batch_q_.clear();
  half_f_j_.clear();
  // The tests read candidate j's row of the columns before it: gathered first, one column at a time (loads
  // that do not wait on each other; read one by one inside the tests below, each waited on a cache miss).
  const std::size_t count = batch.size();
  gathered_.resize(count * count);  // gathered_[a * count + b] = D(x_batch[a], x_batch[b]) for a < b
  for (std::size_t a = 0; a < count; ++a)
    for (std::size_t b = a + 1; b < count; ++b) gathered_[a * count + b] = columns[a][batch[b]];
  kept_from_.clear();  // the batch position of each kept candidate
  std::size_t kept = 0;
  for (std::size_t b = 0; b < count; ++b) {
    const std::uint32_t j = batch[b];
    bool removed = false;  // by a kept candidate before it: the test measure_part's masks make, the same bits
    for (std::size_t a = 0; a < kept && !removed; ++a)
      removed = two_point_at(batch_q_[a], d_i_[j], gathered_[kept_from_[a] * count + b]) <= half_f_j_[a];
    if (removed) continue;
    kept_from_.push_back(b);
    const double q = 0.25 * points_.exact_squared_distance(i, j);
    batch[kept++] = j;
    batch_d_j_.push_back(columns[b]);
    batch_q_.push_back(q);
    // footnote 3: x_j removes the points with f_ij(x_n) <= f_ij(x_j) / 2
    half_f_j_.push_back(0.5 * two_point_at(q, d_i_[j], columns[b][j]));
  }
  batch.resize(kept);
}

void SimilaritySelector::sort_order_to(std::size_t end) {
  end = std::min(end, order_.size());
  const auto closer = [&](std::uint32_t a, std::uint32_t b) { return d_i_[a] != d_i_[b] ? d_i_[a] < d_i_[b] : a < b; };
  const auto first = order_.begin() + static_cast<std::ptrdiff_t>(sorted_);
  const auto stop = order_.begin() + static_cast<std::ptrdiff_t>(end);
  if (stop != order_.end()) std::nth_element(first, stop, order_.end(), closer);  // the nearest before stop
  std::sort(first, stop, closer);
  sorted_ = end;
}

void SimilaritySelector::measure(std::size_t count) {
  const std::size_t n = points_.size();
  const std::ptrdiff_t n_blocks = points_.n_blocks();
  const std::vector<std::size_t> chunks = column_chunks(count);
  const auto n_chunks = static_cast<std::ptrdiff_t>(chunks.size() - 1);
  remover_.resize(static_cast<std::size_t>(n_chunks) * n);
  std::vector<double> partial(static_cast<std::size_t>(n_blocks) * K_ * count);  // K x count per block
  // A region of every learner (measure_work): a full batch of 128 candidates gets 2 threads from N = 2 048
  // with OMP_WAIT_POLICY=passive, from N = 4 096 with OpenMP's spinning default (threads_for_repeated);
  // REBELBOOST_WORK_PER_THREAD reaches it like every other region.
  const std::size_t work = measure_work(n, count, K_);
  util::parallel_for(n_blocks * n_chunks, util::threads_for_repeated(work, n_threads_), [&](std::ptrdiff_t task) {
    const auto blk = static_cast<std::size_t>(task / n_chunks), c = static_cast<std::size_t>(task % n_chunks);
    measure_part(blk, chunks[c], chunks[c + 1], &remover_[c * n], &partial[blk * K_ * count]);
  }, true);
  Eigen::Map<Eigen::MatrixXd> edges_out(batch_edges_.data(), static_cast<Eigen::Index>(K_), static_cast<Eigen::Index>(count));
  edges_out.setZero();
  for (std::ptrdiff_t blk = 0; blk < n_blocks; ++blk)
    edges_out += Eigen::Map<const Eigen::MatrixXd>(&partial[static_cast<std::size_t>(blk) * K_ * count],
                                                   static_cast<Eigen::Index>(K_), static_cast<Eigen::Index>(count));
}

void SimilaritySelector::measure_part(std::size_t blk, std::size_t first, std::size_t last, Mask* remover,
                                      double* partial) const {
  const std::size_t n = points_.size(), block_rows = points_.block_rows();
  const std::size_t begin = blk * block_rows, end = std::min(n, begin + block_rows), rows = end - begin;
  const std::unique_ptr<double[]> f(new double[rows * (last - first)]);  // the outputs, column by column
  remover += begin;
  std::fill(remover, remover + rows, Mask{0});
  for (std::size_t b = first; b < last; ++b) {
    double* column = &f[(b - first) * rows];
    two_point_column_removing(batch_q_[b], &d_i_[begin], batch_d_j_[b] + begin, rows, half_f_j_[b],
                              Mask{1} << (b - first), column, remover);
    if (params_.step_rule == StepRule::kSign)
      for (std::size_t r = 0; r < rows; ++r) column[r] = column[r] >= 0.0 ? 1.0 : -1.0;
  }
  block_edges(&by_class_[begin], n, K_, f.get(), rows, last - first, partial + first * K_);  // K x (last - first)
}

}  // namespace rebelboost::learner
