// Outputs of a similarity model's learners for rows of raw features: standardise the row, squared
// distances to the anchors in use, then every learner from its anchors' distances (similarity_function).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "model/similarity_function.hpp"
#include "rebelboost/error.hpp"
#include "rebelboost/matrix_view.hpp"
#include "rebelboost/model.hpp"
#include "util/parallel.hpp"

namespace rebelboost::similarity {

class SimilarityEvaluator {
 public:
  // Evaluates the learners [first, first + n) of `model` (a similarity model); keeps a reference to it.
  SimilarityEvaluator(const Model& model, std::size_t first, std::size_t n)
      : model_(model), first_(first), n_learners_(n), q_(n) {
    const std::size_t d = model.n_features;
    for (std::size_t i = 0; i < n; ++i) {
      const Similarity& s = model.similarities[first + i];
      if (s.kind == Similarity::Kind::kConstant) continue;
      used_.push_back(s.anchor_i);
      if (s.kind != Similarity::Kind::kTwoPoint) continue;
      used_.push_back(s.anchor_j);
      q_[i] = 0.25 * squared_distance(&model.anchors[s.anchor_i * d], &model.anchors[s.anchor_j * d], d);
    }
    std::sort(used_.begin(), used_.end());
    used_.erase(std::unique(used_.begin(), used_.end()), used_.end());
    n_anchors_ = used_.empty() ? 0 : std::size_t{used_.back()} + 1;
  }

  std::size_t n_features() const { return model_.n_features; }
  // Size of the distance scratch: one more than the largest anchor index in use.
  std::size_t n_anchors() const { return n_anchors_; }

  // f_t(x) for the learners t in [first, first + n) into out[t - first], for the row whose feature j is at
  // x[j * stride]; z (n_features) and distance (n_anchors) are scratch, of which only the anchors these
  // learners use are written: a range of a few learners costs a few distances, not one per anchor of the
  // model (eval sets advance one learner at a time). Throws InvalidArgument naming `row` if x holds NaN.
  template <typename T>
  void outputs(const T* x, std::ptrdiff_t stride, std::size_t row, double* z, double* distance, double* out) const {
    standardize(x, stride, row, z);
    const std::size_t d = model_.n_features;
    for (const std::uint32_t a : used_) distance[a] = squared_distance(z, &model_.anchors[std::size_t{a} * d], d);
    for (std::size_t i = 0; i < n_learners_; ++i) out[i] = output(i, distance);
  }

  // z = the row standardised (the first step of outputs); throws InvalidArgument naming `row` on NaN.
  template <typename T>
  void standardize(const T* x, std::ptrdiff_t stride, std::size_t row, double* z) const {
    for (std::size_t c = 0; c < model_.n_features; ++c) {
      const double v = static_cast<double>(x[static_cast<std::ptrdiff_t>(c) * stride]);
      if (std::isnan(v))
        throw InvalidArgument("X contains NaN at row " + std::to_string(row) + ", feature " + std::to_string(c) +
                              "; similarity models compare whole rows, so impute missing values first");
      z[c] = (v - model_.feature_mean[c]) / model_.feature_scale[c];
    }
  }

  // f of learner first + i from its anchors' squared distances; with `known`, the distances it needs are
  // computed from z on first use (known[a] marks those already in distance), for rows that stop early.
  // Either way the same bits as outputs().
  double output(std::size_t i, const double* distance) const {
    const Similarity& s = model_.similarities[first_ + i];
    switch (s.kind) {
      case Similarity::Kind::kConstant: return 1.0;
      case Similarity::Kind::kOnePoint: return one_point(s.tau, distance[s.anchor_i]);
      case Similarity::Kind::kTwoPoint: return two_point(q_[i], distance[s.anchor_i], distance[s.anchor_j]);
    }
    return 0.0;
  }
  double output(std::size_t i, const double* z, double* distance, std::uint8_t* known) const {
    const Similarity& s = model_.similarities[first_ + i];
    if (s.kind != Similarity::Kind::kConstant) fill_distance(s.anchor_i, z, distance, known);
    if (s.kind == Similarity::Kind::kTwoPoint) fill_distance(s.anchor_j, z, distance, known);
    return output(i, distance);
  }

 private:
  void fill_distance(std::size_t a, const double* z, double* distance, std::uint8_t* known) const {
    if (known[a]) return;
    const std::size_t d = model_.n_features;
    distance[a] = squared_distance(z, &model_.anchors[a * d], d);
    known[a] = 1;
  }

  const Model& model_;
  std::size_t first_;
  std::size_t n_learners_;
  std::size_t n_anchors_ = 0;
  std::vector<std::uint32_t> used_;  // the anchors of these learners, ascending, each once
  std::vector<double> q_;  // ||a_i - a_j||^2 / 4 of the two-point learners
};

// Calls start(begin, end) for each block of rows, then visit(t, r, f_t(x_r)) for every learner t in
// [first, first + n_learners) of every row of the block, rows in parallel blocks of `block` rows.
template <typename T, typename Start, typename Visit>
void for_each_similarity_output(const Model& model, const MatrixView<T>& X, std::size_t first, std::size_t n_learners,
                                int n_threads, std::size_t block, Start&& start, Visit&& visit) {
  const SimilarityEvaluator evaluator(model, first, n_learners);
  const auto n_blocks = static_cast<std::ptrdiff_t>((X.n_rows + block - 1) / block);
  util::parallel_for(n_blocks, n_threads, [&](std::ptrdiff_t b) {
    const std::size_t begin = static_cast<std::size_t>(b) * block;
    const std::size_t end = std::min(X.n_rows, begin + block);
    std::vector<double> z(evaluator.n_features()), distance(evaluator.n_anchors()), f(n_learners);
    start(begin, end);
    for (std::size_t r = begin; r < end; ++r) {
      evaluator.outputs(X.data + static_cast<std::ptrdiff_t>(r) * X.row_stride, X.col_stride, r, z.data(),
                        distance.data(), f.data());
      for (std::size_t i = 0; i < n_learners; ++i) visit(first + i, r, f[i]);
    }
  });
}

}  // namespace rebelboost::similarity
