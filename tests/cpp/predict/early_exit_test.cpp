// Exact early exit: classes identical to full evaluation on every row, for random models built to be hard
// (ties between classes, steps of wildly different magnitudes, sums that cancel to a few ulps).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "predict/engine.hpp"
#include "predict/exit_bounds.hpp"
#include "predict/kernels.hpp"
#include "predict/random_models.hpp"
#include "rebelboost/predict.hpp"
#include "test_util.hpp"

namespace rebelboost {
namespace {

using testing::Dense;

// Steps from 2^-40 to 2^40 (rounding matters), classes 0 and 1 of K > 2 always equal (exact ties), and
// inexact decimals that cancel (0.1 + 0.2 - 0.3).
Model hard_model(std::uint64_t seed, std::size_t K, int max_depth, int n_trees) {
  Model m = testing::uneven_model(seed, 5, K, n_trees);
  std::mt19937_64 rng(seed + 100);
  const double decimals[] = {0.1, 0.2, -0.3, 0.7, -0.6, 1e-3};
  for (std::size_t t = 0; t < m.trees.size(); ++t) {
    for (double& a : m.trees[t].step) {
      const int kind = static_cast<int>(rng() % 4);
      if (kind == 0) {  // two draws in a fixed order (the order of a call's arguments is unspecified)
        const double sign = rng() % 2 ? 1.0 : -1.0;
        a = std::ldexp(sign, static_cast<int>(rng() % 81) - 40);
      }
      if (kind == 1) a = decimals[rng() % 6];
      if (kind == 2) a = 0.0;
    }
    if (K > 2) m.trees[t].step[1] = m.trees[t].step[0];
  }
  if (K > 2) m.bias[1] = m.bias[0];
  if (K == 1) m.bias[0] = 0.0;
  // Cap the depth: uneven_model goes to 9.
  for (Tree& tree : m.trees)
    if (tree.depth() > max_depth) tree.nodes.resize(1), tree.nodes[0] = Node{}, tree.nodes[0].value = 1;
  m.validate();
  return m;
}

Dense<double> rows(std::size_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  Dense<double> X{n, 5, std::vector<double>(n * 5)};
  const double special[] = {std::numeric_limits<double>::quiet_NaN(), INFINITY, -INFINITY, 0.0, -0.0};
  for (double& v : X.c_order)
    v = rng() % 6 == 0 ? special[rng() % 5] : static_cast<double>(static_cast<int>(rng() % 21) - 10) * 0.25;
  return X;
}

TEST(EarlyExit, SameClassesAsFullEvaluationOnHardModels) {
  std::size_t decided_early = 0, total = 0;
  for (std::size_t K : {std::size_t{1}, std::size_t{2}, std::size_t{3}, std::size_t{7}, std::size_t{20}})
    for (int depth = 1; depth <= 6; ++depth)
      for (std::uint64_t seed = 1; seed <= 3; ++seed) {
        const Model m = hard_model(seed * 31 + K, K, depth, 90);
        const Dense<double> X = rows(150, seed);
        const Predictor predictor(m);
        for (std::size_t n_trees : {std::size_t{37}, kAllLearners}) {
          PredictOptions full;
          full.n_trees = n_trees;
          std::vector<std::int32_t> want(X.n_rows), got(X.n_rows);
          predictor.predict(X.c_view(), want.data(), full);
          for (std::size_t every : {std::size_t{4}, std::size_t{8}, std::size_t{12}}) {
            PredictOptions exit = full;
            exit.early_exit = true;
            exit.check_every = every;
            std::vector<std::uint32_t> counts(X.n_rows);
            predictor.predict(X.c_view(), got.data(), exit, counts.data());
            ASSERT_EQ(got, want) << "K " << K << " depth " << depth << " seed " << seed << " every " << every;
            std::vector<double> scratch(K);
            for (std::size_t r = 0; r < X.n_rows; ++r) {
              std::uint32_t count = 0;
              ASSERT_EQ(predictor.predict_row(&X.c_order[r * 5], 1, scratch.data(), exit, &count), want[r]);
              ASSERT_EQ(count, counts[r]);  // a row needs the same learners alone or in a group
              ASSERT_LE(count, std::min(n_trees, m.trees.size()));
              decided_early += count < std::min(n_trees, m.trees.size());
              ++total;
            }
          }
        }
      }
  // The bound must bite somewhere, or the test would pass with early exit switched off.
  EXPECT_GT(decided_early, total / 20);
}

TEST(EarlyExit, EveryKernelSetAndTies) {
  // Classes 0 and 1 always tie exactly: argmax takes 0, and no checkpoint may decide between them.
  const Model m = hard_model(5, 3, 3, 120);
  // Every row through the stopping kernels (a larger batch may evaluate the rows after its pilot in full),
  // the last group partial.
  const Dense<double> X = rows(predict::Engine::kExitPilotRows - 6, 6);
  std::vector<std::int32_t> want(X.n_rows), got(X.n_rows);
  predict::Engine(m).predict(X.c_view(), want.data(), PredictOptions{}, nullptr);
  for (std::int32_t c : want) ASSERT_NE(c, 1);
  PredictOptions exit;
  exit.early_exit = true;
  for (const predict::Kernels* k : {&predict::generic_kernels(), predict::avx2_kernels(), predict::avx512_kernels()}) {
    if (!k) continue;
    predict::Engine(m, *k).predict(X.c_view(), got.data(), exit, nullptr);
    EXPECT_EQ(got, want) << k->name;
  }
  // Binary models decide inside the kernels: same classes and learner counts in every set as row by row.
  const Model b = hard_model(9, 1, 2, 200);
  predict::Engine(b).predict(X.c_view(), want.data(), PredictOptions{}, nullptr);
  const Predictor predictor(b);
  for (const std::size_t every : {std::size_t{4}, std::size_t{8}}) {
    exit.check_every = every;
    std::vector<std::uint32_t> want_counts(X.n_rows), counts(X.n_rows);
    double scratch = 0.0;
    for (std::size_t r = 0; r < X.n_rows; ++r)
      ASSERT_EQ(predictor.predict_row(&X.c_order[r * 5], 1, &scratch, exit, &want_counts[r]), want[r]);
    for (const predict::Kernels* k : {&predict::generic_kernels(), predict::avx2_kernels(), predict::avx512_kernels()}) {
      if (!k) continue;
      predict::Engine(b, *k).predict(X.c_view(), got.data(), exit, counts.data());
      EXPECT_EQ(got, want) << k->name;
      EXPECT_EQ(counts, want_counts) << k->name << " every " << every;
    }
  }
}

// Two classes whose scores end within an ulp or two of each other after long cancelling sums: the
// rounding margin must keep every such row undecided until the end.
TEST(EarlyExit, NearTiesFromRoundingStayUndecided) {
  Model m;
  m.loss = LossKind::kAdaBoost;
  m.n_features = 1;
  m.n_outputs = 1;
  m.bias = {0.0};
  const double steps[] = {0.1, 0.2, -0.3, 1e16, -1e16, 0.7, -0.6, -0.1};
  for (int t = 0; t < 64; ++t) {
    Tree tree;
    tree.step.assign(1, steps[t % 8]);
    Node root;  // x0 <= t / 64 goes left (+1), else right (-1)
    root.feature = 0;
    root.threshold = t / 64.0;
    root.left = 1;
    root.right = 2;
    Node left, right;
    left.value = 1;
    right.value = -1;
    tree.nodes = {root, left, right};
    m.trees.push_back(tree);
  }
  Dense<double> X{129, 1, std::vector<double>(129)};
  for (std::size_t r = 0; r < 129; ++r) X.c_order[r] = (static_cast<double>(r) - 0.5) / 128.0;
  std::vector<double> scores(129);
  std::vector<std::int32_t> want(129), got(129);
  const Predictor predictor(m);
  predictor.decision_function(X.c_view(), scores.data());
  scores_to_classes(m, scores.data(), 129, want.data());
  PredictOptions exit;
  exit.early_exit = true;
  exit.check_every = 4;
  predictor.predict(X.c_view(), got.data(), exit);
  EXPECT_EQ(got, want);
}

// After 4 learners P = 2^53 + 2; the two left add -1 then -2^53, R = 2^53 + 1 rounds to 2^53, so
// P - R looks like +2, but the full evaluation rounds 2^53 + 1 to 2^53 and ends at exactly 0: class 0.
// Without the rounding margin the check would leave with class 1.
TEST(EarlyExit, RoundingMarginKeepsACaseThatRoundingDecides) {
  Model m;
  m.loss = LossKind::kAdaBoost;
  m.n_features = 1;
  m.n_outputs = 1;
  m.bias = {std::ldexp(1.0, 53) + 2.0};
  const double steps[] = {0.0, 0.0, 0.0, 0.0, 1.0, std::ldexp(1.0, 53)};
  for (double a : steps) {
    Tree leaf;
    leaf.step.assign(1, a);
    Node only;
    only.value = -1;
    leaf.nodes = {only};
    m.trees.push_back(leaf);
  }
  m.validate();
  const Predictor predictor(m);
  const std::vector<double> X(20, 0.5);
  std::vector<double> scores(20);
  predictor.decision_function(MatrixView<double>::row_major(X.data(), 20, 1), scores.data());
  ASSERT_EQ(scores[0], 0.0);
  PredictOptions exit;
  exit.early_exit = true;
  exit.check_every = 4;
  std::vector<std::int32_t> got(20, -1);
  std::vector<std::uint32_t> counts(20);
  predictor.predict(MatrixView<double>::row_major(X.data(), 20, 1), got.data(), exit, counts.data());
  EXPECT_EQ(got, std::vector<std::int32_t>(20, 0));
  EXPECT_EQ(counts, std::vector<std::uint32_t>(20, 6));
}

TEST(ExitBounds, PairSumsMatchADirectSum) {
  const Model m = hard_model(9, 4, 2, 50);
  const predict::ExitBounds bounds(m);
  // A row whose scores lead by exactly the remaining pair sum plus the margin is undecided; a little more
  // and it is decided.
  const std::size_t s = 20, n = m.trees.size();
  double reach = 0.0, mass = 0.0;
  std::vector<double> cls(4, 0.0);
  for (std::size_t t = 0; t < n; ++t)
    for (std::size_t k = 0; k < 4; ++k) cls[k] += std::fabs(m.trees[t].step[k]);
  for (double v : cls) mass = std::max(mass, 2.0 * v);
  for (std::size_t t = s; t < n; ++t) reach = std::max(reach, 0.0) + std::fabs(m.trees[t].step[3] - m.trees[t].step[2]);
  const auto range = bounds.range(n);
  EXPECT_EQ(range.mass, mass);
  // Classes 0 and 1 trail by more than any pair sum (at most mass), so only the pair (2, 3) decides.
  const double far = -4.0 * mass - 1.0;
  std::vector<double> P = {far, far, 0.0, 0.0};
  const double margin = range.margin_scale * (2.0 * std::fabs(far) + mass);
  P[3] = reach + margin * 0.5;
  EXPECT_EQ(bounds.decided(P.data(), 1, s, range, predict::ExitBounds::leaders(P.data(), 1, 4)), -1);
  P[3] = reach * (1 + 1e-9) + margin * 2.0 + 1e-9;
  EXPECT_EQ(bounds.decided(P.data(), 1, s, range, predict::ExitBounds::leaders(P.data(), 1, 4)), 3);
}

// needed(s) is the spread, needed_lead(s) the lead, below which decided() returns -1 (StopRule skips those
// rows' checks). Scores near
// the boundary, per-pair sums (K <= kMaxPairClasses) and per-class sums (K = 20): a decided row's spread
// always exceeds needed, and the bound is tight enough that some rows just above it are decided.
TEST(ExitBounds, NeededNeverHidesADecision) {
  for (const std::size_t K : {std::size_t{3}, std::size_t{7}, std::size_t{20}}) {
    const Model m = testing::uneven_model(K + 5, 5, K, 60);
    const predict::ExitBounds bounds(m);
    const auto range = bounds.range(m.trees.size());
    std::mt19937_64 rng(K);
    std::size_t decided = 0;
    for (std::size_t s = 4; s < m.trees.size(); s += 4) {
      const double needed = bounds.needed(s, range);
      for (int trial = 0; trial < 200; ++trial) {
        std::vector<double> P(K);
        for (double& v : P) v = std::ldexp(static_cast<double>(rng() % 1000), -12) * needed;
        P[rng() % K] += std::ldexp(static_cast<double>(rng() % 1000), -8) * needed;  // a lead near needed
        const auto l = predict::ExitBounds::leaders(P.data(), 1, K);
        const double spread = *std::max_element(P.begin(), P.end()) - *std::min_element(P.begin(), P.end());
        if (bounds.decided(P.data(), 1, s, range, l) >= 0) {
          EXPECT_GT(spread, needed) << "K " << K << " s " << s;
          EXPECT_GT(l.top - l.runner, bounds.needed_lead(s, range)) << "K " << K << " s " << s;
          ++decided;
        }
      }
    }
    EXPECT_GT(decided, 0u) << "K " << K;
    // The tightest pair, from a direct sum: a lead just above its reach is decided, so needed_lead is
    // exactly the least reach (a larger one would hide this decision).
    const std::size_t T = m.trees.size(), s = 8;
    double best = std::numeric_limits<double>::infinity();
    std::size_t bl = 0, bj = 1;
    for (std::size_t l = 0; l < K; ++l)
      for (std::size_t j = l + 1; j < K; ++j) {
        double reach = 0.0, Rl = 0.0, Rj = 0.0;
        for (std::size_t t = s; t < T; ++t) {
          reach += std::fabs(m.trees[t].step[l] - m.trees[t].step[j]);
          Rl += std::fabs(m.trees[t].step[l]);
          Rj += std::fabs(m.trees[t].step[j]);
        }
        if (K > predict::ExitBounds::kMaxPairClasses) reach = Rl + Rj;
        if (reach < best) best = reach, bl = l, bj = j;
      }
    double total = 0.0;
    for (const Tree& tree : m.trees)
      for (double a : tree.step) total += std::fabs(a);
    std::vector<double> P(K, -3.0 * total - 1.0);  // the other classes out of reach
    const double margin = range.margin_scale * (2.0 * (3.0 * total + 1.0) + range.mass);
    P[bl] = 0.0;
    P[bj] = -best * (1.0 + 1e-9) - 2.0 * margin;
    const auto l = predict::ExitBounds::leaders(P.data(), 1, K);
    EXPECT_EQ(bounds.decided(P.data(), 1, s, range, l), static_cast<std::int32_t>(bl)) << "K " << K;
    EXPECT_GT(l.top - l.runner, bounds.needed_lead(s, range)) << "K " << K;
  }
}

// Skipping checkpoints (StopRule::next_possible, in batches and row by row) must not change when a row
// leaves: the reference checks every checkpoint up to the rule's last (the tail that leaves fewer than
// n / kExitTailShare learners to save is never checked) of every row, scores from decision_row on the first s
// learners (the same additions in the same order) and the rule's decide().
TEST(EarlyExit, LearnerCountsAreTheFirstDecidingCheckpoint) {
  for (const std::size_t K : {std::size_t{1}, std::size_t{2}, std::size_t{7}, std::size_t{20}}) {
    Model m = hard_model(K + 40, K, 3, 160);  // K > 2: classes 0 and 1 tie, others can lead
    // The last half's steps scaled by 2^-30 (exactly): rows can leave before the tail that is never checked.
    for (std::size_t t = 80; t < m.trees.size(); ++t)
      for (double& a : m.trees[t].step) a = std::ldexp(a, -30);
    m.validate();
    const Dense<double> X = rows(200, K + 1);
    const predict::Engine engine(m);
    PredictOptions exit;
    exit.early_exit = true;
    exit.check_every = 4;
    const std::size_t n = m.trees.size();
    const predict::StopRule::Stops st = engine.stop_rule().stops(exit, n);
    std::vector<std::int32_t> got(X.n_rows);
    std::vector<std::uint32_t> counts(X.n_rows);
    engine.predict(X.c_view(), got.data(), exit, counts.data());
    std::vector<double> scores(K);
    std::size_t early = 0;
    for (std::size_t r = 0; r < X.n_rows; ++r) {
      std::size_t want = n;
      for (std::size_t s = st.every; s < n && s <= st.last && want == n; s += st.every) {
        engine.decision_row(&X.c_order[r * 5], 1, scores.data(), s);
        if (engine.stop_rule().decide(scores.data(), 1, s, st) >= 0) want = s;
      }
      ASSERT_EQ(counts[r], want) << "K " << K << " row " << r;
      std::uint32_t alone = 0;
      engine.predict_row(&X.c_order[r * 5], 1, scores.data(), exit, &alone);
      ASSERT_EQ(alone, want) << "K " << K << " row " << r;
      early += want < n;
    }
    EXPECT_GT(early, 0u) << "K " << K;
  }
}

// Batches above Engine::kExitPilotRows: the pilot rows stop early; the rest do only where those used at most
// kExitPays of the learners, else they run through all of them. Labels are full evaluation's either way.
TEST(EarlyExit, LargeBatchesStopEarlyOnlyWhereThePilotDid) {
  for (const bool pays : {true, false}) {
    Model m = testing::uneven_model(21, 5, 1, 200);
    m.bias[0] = 0.0;
    for (std::size_t t = 0; t < m.trees.size(); ++t) m.trees[t].step[0] = pays && t == 0 ? 1000.0 : 1e-3 * static_cast<double>(t % 7 + 1);
    m.validate();
    const Dense<double> X = rows(3000, 9);
    const predict::Engine engine(m);
    std::vector<std::int32_t> full(3000), got(3000);
    std::vector<std::uint32_t> counts(3000);
    PredictOptions options;
    engine.predict(X.c_view(), full.data(), options, nullptr);
    options.early_exit = true;
    engine.predict(X.c_view(), got.data(), options, counts.data());
    EXPECT_EQ(got, full) << pays;
    std::vector<double> scratch(1);
    for (std::size_t r = 0; r < 3000; r += 7) {
      std::uint32_t one = 0;
      const std::int32_t c = engine.predict_row(&X.c_order[r * 5], 1, scratch.data(), options, &one);
      EXPECT_EQ(c, full[r]);
      if (pays || r < predict::Engine::kExitPilotRows) {
        EXPECT_EQ(one, counts[r]) << pays << " row " << r;
      }
    }
    for (std::size_t r = predict::Engine::kExitPilotRows; r < 3000; ++r)
      ASSERT_EQ(counts[r], pays ? predict::StopRule::kDefaultCheckEvery : 200u) << pays << " row " << r;
  }
}

}  // namespace
}  // namespace rebelboost
