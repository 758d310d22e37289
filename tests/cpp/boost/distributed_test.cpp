// Distributed training in one process: participants on threads, each with its own rows, reduced through an
// in-memory Reducer. Every participant's model equals the local fit of all rows, bit for bit.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include "data/bin_mapper.hpp"
#include "rebelboost/error.hpp"
#include "rebelboost/io.hpp"
#include "rebelboost/train.hpp"
#include "test_util.hpp"

namespace rebelboost {
namespace {

// All participants deposit their array; the last to arrive combines them; everyone leaves with the result.
class ThreadReducer {
 public:
  explicit ThreadReducer(std::size_t n) : n_(n) {}

  void combine(std::int64_t* data, std::size_t size, bool is_max) {
    std::unique_lock<std::mutex> lock(mutex_);
    const std::uint64_t round = round_;
    if (arrived_ == 0) result_.assign(data, data + size);
    else if (size != result_.size()) std::abort();  // participants out of step: a bug in the engine
    else
      for (std::size_t i = 0; i < size; ++i) result_[i] = is_max ? std::max(result_[i], data[i]) : result_[i] + data[i];
    if (++arrived_ == n_) {
      done_ = result_;
      arrived_ = 0;
      ++round_;
      cv_.notify_all();
    } else {
      cv_.wait(lock, [&] { return round_ != round; });
    }
    std::copy(done_.begin(), done_.end(), data);
  }

 private:
  std::size_t n_;
  std::mutex mutex_;
  std::condition_variable cv_;
  std::size_t arrived_ = 0;
  std::uint64_t round_ = 0;
  std::vector<std::int64_t> result_, done_;
};

class Participant final : public Reducer {
 public:
  explicit Participant(ThreadReducer& shared) : shared_(shared) {}
  void sum(std::int64_t* data, std::size_t n) override { shared_.combine(data, n, false); }
  void max(std::int64_t* data, std::size_t n) override { shared_.combine(data, n, true); }

 private:
  ThreadReducer& shared_;
};

// The local fit's bin edges, from the same rows a local fit samples.
std::vector<std::vector<double>> global_edges(const testing::Dense<double>& X, const TrainParams& p, const double* w) {
  data::BinMapper bins(p.n_bins, p.bin_subsample, p.bin_seed);
  bins.fit(X.c_view(), 1, w);
  std::vector<std::vector<double>> edges;
  for (std::size_t f = 0; f < X.n_cols; ++f) edges.push_back(bins.edges(f));
  return edges;
}

// Trains with the rows cut at `cuts` (participant k holds rows [cuts[k], cuts[k+1])); every participant's
// result.
std::vector<TrainResult> train_parts(const testing::Dense<double>& X, const std::vector<std::int32_t>& y,
                                     const std::vector<double>* w, std::size_t K, const TrainParams& p,
                                     const std::vector<std::size_t>& cuts) {
  const std::size_t parts = cuts.size() - 1;
  ThreadReducer shared(parts);
  std::vector<TrainResult> results(parts);
  std::vector<std::exception_ptr> errors(parts);
  const auto edges = global_edges(X, p, w ? w->data() : nullptr);
  std::vector<std::thread> threads;
  for (std::size_t k = 0; k < parts; ++k) {
    threads.emplace_back([&, k] {
      try {
        const std::size_t begin = cuts[k], n = cuts[k + 1] - cuts[k];
        Participant reducer(shared);
        std::vector<std::uint64_t> rows(n);
        for (std::size_t i = 0; i < n; ++i) rows[i] = begin + i;
        DistributedPart part;
        part.reducer = &reducer;
        part.bin_edges = edges;
        part.global_rows = rows.data();
        TrainOptions<double> options;
        options.distributed = &part;
        const auto view = MatrixView<double>::row_major(X.c_order.data() + begin * X.n_cols, n, X.n_cols);
        results[k] = train(view, y.data() + begin, w ? w->data() + begin : nullptr, K, p, options);
      } catch (...) {
        errors[k] = std::current_exception();
      }
    });
  }
  for (std::thread& t : threads) t.join();
  for (const std::exception_ptr& e : errors)
    if (e) std::rethrow_exception(e);
  return results;
}

// Every participant's serialized model.
std::vector<std::string> train_split(const testing::Dense<double>& X, const std::vector<std::int32_t>& y,
                                     const std::vector<double>* w, std::size_t K, const TrainParams& p,
                                     const std::vector<std::size_t>& cuts) {
  std::vector<std::string> models;
  for (const TrainResult& r : train_parts(X, y, w, K, p, cuts)) models.push_back(serialize(r.model));
  return models;
}

TEST(Distributed, EveryParticipantGrowsTheLocalModelForEveryLossAndSplit) {
  const auto X = testing::random_matrix(1200, 7, 21, 0.08);  // 8 % NaN
  for (LossKind loss : {LossKind::kAdaBoost, LossKind::kVebBoost, LossKind::kRebel}) {
    for (int criterion : {0, 1}) {
      if (criterion == 1 && loss == LossKind::kRebel) continue;  // Gini is binary only
      const std::size_t K = loss == LossKind::kRebel ? 4 : 2;
      auto y = testing::noisy_labels(X, 3, 0.15);
      if (K == 4)
        for (std::size_t i = 0; i < X.n_rows; ++i) y[i] += X.at(i, 2) > 0.5 ? 2 : 0;
      std::vector<double> w(X.n_rows);
      for (std::size_t i = 0; i < w.size(); ++i) w[i] = (i % 7 == 0) ? 0.0 : 0.5 + static_cast<double>(i % 5);
      TrainParams p;
      p.loss = loss;
      p.criterion = criterion;
      p.n_estimators = 12;
      p.max_depth = 4;
      p.n_threads = 2;
      p.subsample = 0.7;
      p.feature_fraction = 0.6;
      p.seed = 3;
      for (const std::vector<double>* weights : std::vector<const std::vector<double>*>{&w, nullptr}) {
        const std::string local = serialize(train(X.c_view(), y.data(), weights ? weights->data() : nullptr, K, p).model);
        for (const std::vector<std::size_t>& cuts :
             {std::vector<std::size_t>{0, 1200}, {0, 600, 1200}, {0, 0, 37, 1200}, {0, 900, 901, 1200}, {0, 1200, 1200}}) {
          for (const std::string& model : train_split(X, y, weights, K, p, cuts))
            EXPECT_EQ(model, local) << loss_name(loss) << " criterion " << criterion << " parts " << cuts.size() - 1
                                    << (weights ? " weighted" : "");
        }
      }
    }
  }
}

// The pruned pass of a distributed layer (quick on): the participants' bounds prune features, and the
// trees are still the local fit's, for each loss, with NaN, weights, row and feature sampling, and
// participants without rows.
TEST(Distributed, PruningAcrossParticipantsKeepsTheLocalModel) {
  const auto X = testing::random_matrix(3000, 12, 5, 0.05);
  for (LossKind loss : {LossKind::kAdaBoost, LossKind::kVebBoost, LossKind::kRebel}) {
    const std::size_t K = loss == LossKind::kRebel ? 3 : 2;
    auto y = testing::noisy_labels(X, 2, 0.1);
    if (K == 3)
      for (std::size_t i = 0; i < X.n_rows; ++i) y[i] += X.at(i, 4) > 0.7 ? 1 : 0;
    std::vector<double> w(X.n_rows);
    for (std::size_t i = 0; i < w.size(); ++i) w[i] = 0.25 + static_cast<double>(i % 4);
    for (int depth : {1, 3, 5}) {
      TrainParams p;
      p.loss = loss;
      p.n_estimators = 15;
      p.max_depth = depth;
      p.n_threads = 2;
      p.quick = 1;
      p.feature_fraction = depth == 3 ? 0.7 : 1.0;
      p.subsample = depth == 5 ? 0.8 : 1.0;
      p.seed = 9;
      const TrainResult local = train(X.c_view(), y.data(), w.data(), K, p);
      int pruned = 0;
      for (const IterationInfo& it : local.history) pruned += it.features_pruned;
      const std::string expected = serialize(local.model);
      for (const auto& [quick, cuts] : {std::pair<int, std::vector<std::size_t>>{1, {0, 0, 999, 2000, 3000}}, {2, {0, 1400, 3000}}}) {
        p.quick = quick;
        for (const std::string& model : train_split(X, y, &w, K, p, cuts))
          EXPECT_EQ(model, expected) << loss_name(loss) << " depth " << depth << " quick " << quick << " parts "
                                     << cuts.size() - 1;
      }
      if (loss != LossKind::kRebel || depth > 1) {
        EXPECT_GT(pruned, 0) << loss_name(loss) << " depth " << depth;
      }
    }
  }
}

// Clean labels: the mass soon sits on a few rows near the boundary, so the participants bound from their
// heavy rows and build only the surviving histograms (with noisy labels above, they build every histogram
// and send only the survivors). The same model either way.
TEST(Distributed, PruningFromHeavyRowsKeepsTheLocalModel) {
  const auto X = testing::random_matrix(6000, 10, 31, 0.03);
  for (LossKind loss : {LossKind::kAdaBoost, LossKind::kRebel}) {
    auto y = testing::noisy_labels(X, 6, 0.0);
    if (loss == LossKind::kRebel)
      for (std::size_t i = 0; i < X.n_rows; ++i) y[i] += X.at(i, 3) > 0.8 ? 1 : 0;
    TrainParams p;
    p.loss = loss;
    p.n_estimators = 30;
    p.max_depth = 3;
    p.n_threads = 2;
    p.quick = 1;
    const std::size_t K = loss == LossKind::kRebel ? 3 : 2;
    const std::string expected = serialize(train(X.c_view(), y.data(), nullptr, K, p).model);
    for (const std::string& model : train_split(X, y, nullptr, K, p, {0, 2500, 2500, 6000}))
      EXPECT_EQ(model, expected) << loss_name(loss);
  }
}

// The distributed pruned pass prunes too: a participant's history counts the features it skipped.
TEST(Distributed, ParticipantsSkipFeaturesTheBoundsPrune) {
  const auto X = testing::random_matrix(4000, 16, 8, 0.0);
  const auto y = testing::noisy_labels(X, 1, 0.05);  // one informative feature: the rest lose
  TrainParams p;
  p.n_estimators = 10;
  p.max_depth = 2;
  p.quick = 1;
  p.n_threads = 1;
  const std::vector<IterationInfo> history = train_parts(X, y, nullptr, 2, p, {0, 2000, 4000})[0].history;
  int pruned = 0, quick_nodes = 0;
  for (const IterationInfo& it : history) {
    pruned += it.features_pruned;
    quick_nodes += it.quick_nodes;
  }
  EXPECT_GT(quick_nodes, 0);
  EXPECT_EQ(quick_nodes, 30);
  EXPECT_GT(pruned, quick_nodes * 5);  // a third of the 15 features that cannot win, and more (283 when written)
}

// quick auto on layers large enough to choose: every participant makes the same choice each layer (else
// their reductions would differ in size and the in-memory reducer aborts), the pruned pass is probed once
// the mass concentrates, and the model is still the local one.
TEST(Distributed, AutoChoosesTheSamePassOnEveryParticipant) {
  const auto X = testing::random_matrix(100000, 11, 12, 0.0);
  const auto y = testing::noisy_labels(X, 4, 0.0);  // clean labels: the mass concentrates on the boundary
  TrainParams p;
  p.n_estimators = 40;
  p.max_depth = 3;
  p.n_threads = 1;
  const std::string expected = serialize(train(X.c_view(), y.data(), nullptr, 2, p).model);
  for (const TrainResult& r : train_parts(X, y, nullptr, 2, p, {0, 30000, 30000, 100000})) {
    EXPECT_EQ(serialize(r.model), expected);
    int quick_nodes = 0;
    for (const IterationInfo& it : r.history) quick_nodes += it.quick_nodes;
    EXPECT_GT(quick_nodes, 0);
  }
}

TEST(Distributed, AnEmptyFitIsRefusedEverywhere) {
  const auto X = testing::random_matrix(10, 3, 1, 0.0);
  const auto y = testing::noisy_labels(X, 1, 0.0);
  TrainParams p;
  EXPECT_THROW(train_split(X, y, nullptr, 2, p, {0, 0, 0}), InvalidArgument);
}

}  // namespace
}  // namespace rebelboost
