// Selection of one Localized Similarity per boosting iteration (thesis §5.4, steps 0-6).
//
//   0. the homogeneous learner f = 1
//   1. binarize the classes (binarize.hpp)
//   2. the point x_i whose ideal isolation (+1 at x_i, -1 elsewhere) lowers the loss most, as the
//      one-point learner with tau = tau_ratio * (squared distance to x_i's nearest distinct point)
//   3. keep the better of 0 and 2
//   4. x_j = the nearest point to x_i of the other binarized class not yet removed
//   5. the two-point learner (x_i, x_j); keep it if better
//   6. remove every point with f_ij(x_n) <= f_ij(x_j) / 2 (footnote 3); back to 4 until none is left
// Each two-point candidate costs one column of squared distances (O(N d)) and one score (O(N K)); the
// columns are kept across iterations in a DistanceCache (params.distance_cache_mb), so a candidate whose
// column is stored costs O(N K) only. Candidates are measured kBatch at a time (the next kBatch not yet
// removed, in order; the measuring stops once max_candidates are visited): their columns come from the
// cache, then one pass over fixed row blocks computes their outputs (held one block at a time, in cache),
// per point a mask of the candidates that would remove it, and their edges (block_edges, one summation
// order per column); the pass runs as tasks of one row block and one range of kChunk candidates (threads
// share the work even when N makes few blocks), and the edges do not depend on the thread count. A
// candidate that a candidate before it in its batch removes is dropped before the pass (it would be
// skipped unvisited); the others are visited in order, and the points they remove are removed in one pass
// per batch. The candidates visited are those of the one-at-a-time procedure.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "learner/distance_cache.hpp"
#include "learner/point_set.hpp"
#include "rebelboost/model.hpp"
#include "rebelboost/train.hpp"

namespace rebelboost::learner {

struct SimilarityCandidate {
  Similarity::Kind kind = Similarity::Kind::kConstant;
  std::uint32_t i = 0;          // anchor rows in the PointSet (kOnePoint, kTwoPoint)
  std::uint32_t j = 0;          // kTwoPoint
  double tau = 0.0;             // kOnePoint
  double score = 0.0;           // similarity_score of the outputs (smaller is better)
  std::vector<double> outputs;  // f(x_n) on the training points
};

struct SimilaritySelection {
  SimilarityCandidate best;
  int candidates = 0;  // two-point candidates visited (steps 4-6)
};

// The criterion: sum_k sqrt(S_k^2 - r_k^2) with S_k = sum_n |s_nk|, r_k = sum_n s_nk g_n, g = f (kExact)
// or sign(f) (kSign, 0 counts as +1). For +-1 outputs it is REBEL's optimal loss 2 sum_k sqrt(s+_k s-_k)
// (Eq. 5.3); for real outputs in [-1, 1] it bounds the loss after the exact step from above
// (e^{g a} <= (1+g)/2 e^a + (1-g)/2 e^-a). Sums over fixed blocks, independent of n_threads.
double similarity_score(const double* signed_weights, std::size_t n, std::size_t K, const double* f, StepRule rule,
                        int n_threads);

// Step 2: the point whose group of coincident points, ideally isolated (+1 on the group, -1 elsewhere),
// has the smallest Eq. 5.3 loss; the group's smallest index, the smallest such index on ties. Returns
// points.size() when all points coincide (nothing to isolate). O(N K).
std::size_t best_isolated_point(const PointSet& points, const double* signed_weights, std::size_t K);

// The edges of a row block's candidates: out[c * K + k] = sum_r st[k * stride + r] * f[c * rows + r] for
// the `count` output columns of f (rows each; st holds the signed weights class by class, stride apart).
// Each column's sum has one order wherever the column stands in a batch: four running sums over the rows
// r = 0, 4, 8, ... (sum j takes the rows r + j), added as (s0 + s1) + (s2 + s3), then the last rows % 4
// rows in order; so the edges, the visited candidates and the winner do not depend on how a batch is cut
// into tasks, nor on the thread count. Four columns share each load of the weights. (It replaced an Eigen
// product, which the baseline x86-64 build runs two lanes wide and without FMA: 3.5 ns per point and
// candidate at K = 10 against about 1.5; docs/guide/similarity.md "Speed".)
void block_edges(const double* st, std::size_t stride, std::size_t K, const double* f, std::size_t rows,
                 std::size_t count, double* out);

// The column ranges [c[t], c[t + 1]) of a batch of `count` candidates that measure() hands to separate
// tasks: kChunk columns each (a multiple of block_edges' 4), the last range taking the rest.
inline constexpr std::size_t kChunk = 8;
std::vector<std::size_t> column_chunks(std::size_t count);

// Runs steps 0-6 on the loss's signed weights s_nk = y_nk w_nk (n x K row-major). Reuses its buffers
// across calls; not thread-safe itself, and its result does not depend on n_threads.
class SimilaritySelector {
 public:
  using Mask = std::uint64_t;                 // bit c: candidate c of a range of kChunk candidates
  static constexpr std::size_t kBatch = 128;  // candidates measured per pass

  // The work of one measure pass over n_rows rows and n_candidates candidates in util::threads_for's steps:
  // (K + 14) / 3 per row and candidate, 8 (4 ns) at K = 10 as measured on one core at N = 3 750, d = 30
  // (3.8 ns, docs/guide/similarity.md "Speed"). The one count for the pass's own threads and for the
  // hybrid's choice to fit its two candidates at once.
  static std::size_t measure_work(std::size_t n_rows, std::size_t n_candidates, std::size_t K) {
    return n_rows * n_candidates * (K + 14) / 3;
  }

  SimilaritySelector(const PointSet& points, std::size_t K, const SimilarityParams& params, int n_threads);

  SimilaritySelection select(const double* signed_weights);

  // Polled between batches of candidates: once true, select() returns what it has (the caller drops it).
  void set_stop_flag(const std::atomic<bool>* stop) { stop_ = stop; }

  const DistanceCache& cache() const { return cache_; }

 private:
  // Scores the outputs in f_ and keeps them as the best if strictly better.
  void consider(SimilaritySelection& selection, const double* signed_weights, Similarity::Kind kind, std::uint32_t i,
                std::uint32_t j, double tau);

  // Steps 4-6 for the point i (its distances in d_i_, other-class points in order_).
  void visit_two_point(SimilaritySelection& selection, const double* signed_weights, std::uint32_t i);

  // Fetches the columns of the batch (the next candidates not yet removed, in order) and keeps those that
  // no kept candidate before them removes (footnote 3: they would be skipped unvisited): batch, batch_d_j_,
  // batch_q_ and half_f_j_ then hold the candidates this batch visits, all of them.
  void keep_unremoved(std::uint32_t i, std::vector<std::uint32_t>& batch);

  // The edges r = S^T f (or sign(f)) of the two-point learners (i, batch[b]), b < count, into batch_edges_
  // (column b, K each), and for every point m the candidates of the batch that would remove it (bit
  // b % kChunk of remover_[(b / kChunk) n + m]); the outputs themselves live one block of rows at a time,
  // and the chosen learner's are recomputed.
  void measure(std::size_t count);

  // One task of measure(): the candidates [first, last) of the batch (one range of column_chunks) on row
  // block blk, their removal bits (b - first) into remover (n entries, this range's own) and their edges
  // into columns [first, last) of partial (K x batch size, column-major: the block's share of the edges).
  void measure_part(std::size_t blk, std::size_t first, std::size_t last, Mask* remover, double* partial) const;

  // Sorts order_ (by distance to x_i, index on ties) through position end: [sorted_, end) gets the nearest
  // of the rest, in order. The visit sorts as it goes, so its order is the full sort's.
  void sort_order_to(std::size_t end);

  const PointSet& points_;
  std::size_t K_;
  SimilarityParams params_;
  int n_threads_;
  const std::atomic<bool>* stop_ = nullptr;
  DistanceCache cache_;                   // columns D(x_j, .) of anchors and candidates
  std::vector<double> f_;                 // outputs of the homogeneous and one-point candidates
  std::vector<double> d_i_;               // squared distances to x_i
  std::vector<double> by_class_;          // s_nk class by class (K x n), for the edges
  std::vector<double> batch_q_;           // q of each candidate of the batch
  std::vector<double> half_f_j_;          // f_ij(x_j) / 2: x_j removes the points whose output is below it
  std::vector<double> gathered_;          // keep_unremoved: the batch's distances among its candidates
  std::vector<std::size_t> kept_from_;    // keep_unremoved: the batch position of each kept candidate
  std::vector<const double*> batch_d_j_;  // its distance column
  std::vector<double> batch_edges_;       // K x kBatch edges, column-major
  std::vector<Mask> remover_;             // per range of kChunk candidates, n masks: who would remove m
  std::vector<std::uint32_t> order_;      // other-class points by distance to x_i, sorted up to sorted_
  std::size_t sorted_ = 0;
  std::vector<std::uint8_t> removed_;
};

}  // namespace rebelboost::learner
