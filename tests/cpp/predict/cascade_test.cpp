// Soft cascades: calibration keeps its budget on its own rows, prediction follows the calibrated procedure on
// every path, thresholds round-trip through the model file and bad ones are refused.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "predict/cascade.hpp"
#include "predict/engine.hpp"
#include "predict/kernels.hpp"
#include "rebelboost/error.hpp"
#include "rebelboost/io.hpp"
#include "rebelboost/predict.hpp"
#include "rebelboost/train.hpp"
#include "test_util.hpp"

namespace rebelboost {
namespace {

using testing::Dense;
constexpr double kInf = std::numeric_limits<double>::infinity();

struct Problem {
  Model model;
  Dense<double> X;
  std::vector<std::int32_t> y;
};

// A noisy problem (so full evaluation makes mistakes), 2 or 3 classes, with NaN.
Problem problem(std::size_t n_classes, std::uint64_t seed) {
  Problem p;
  const Dense<double> X = testing::random_matrix(1600, 5, seed, 0.05).cast<float>().cast<double>();
  std::vector<std::int32_t> y = testing::noisy_labels(X, seed + 1, 0.15);
  if (n_classes == 3)
    for (std::size_t r = 0; r < y.size(); ++r)
      if (!std::isnan(X.at(r, 3)) && X.at(r, 3) > 0.6) y[r] = 2;
  TrainParams params;
  params.loss = n_classes == 3 ? LossKind::kRebel : LossKind::kAdaBoost;
  params.n_estimators = 120;
  params.max_depth = 2;
  params.n_threads = 2;
  p.model = train(X.c_view(), y.data(), nullptr, n_classes, params).model;
  p.X = testing::random_matrix(900, 5, seed + 7, 0.05);
  p.y = testing::noisy_labels(p.X, seed + 8, 0.15);
  if (n_classes == 3)
    for (std::size_t r = 0; r < p.y.size(); ++r)
      if (!std::isnan(p.X.at(r, 3)) && p.X.at(r, 3) > 0.6) p.y[r] = 2;
  return p;
}

std::size_t harm(CascadeTarget::Kind kind, const std::vector<std::int32_t>& got, const std::vector<std::int32_t>& full,
                 const std::vector<std::int32_t>& y) {
  std::size_t h = 0;
  for (std::size_t r = 0; r < y.size(); ++r) {
    if (kind == CascadeTarget::Kind::kAccuracyLoss) h += full[r] == y[r] && got[r] != y[r];
    if (kind == CascadeTarget::Kind::kDisagreement) h += got[r] != full[r];
    if (kind == CascadeTarget::Kind::kRecall) h += y[r] == 1 && full[r] == 1 && got[r] == 0;
  }
  return h;
}

TEST(Cascade, CalibrationStaysBelowItsTargetOnItsRows) {
  using Kind = CascadeTarget::Kind;
  std::size_t saved = 0;
  for (std::size_t n_classes : {std::size_t{2}, std::size_t{3}}) {
    const Problem p = problem(n_classes, 3 + n_classes);
    const Predictor plain(p.model);
    std::vector<std::int32_t> full(p.y.size());
    plain.predict(p.X.c_view(), full.data());
    for (Kind kind : {Kind::kAccuracyLoss, Kind::kDisagreement, Kind::kRecall}) {
      if (kind == Kind::kRecall && n_classes != 2) continue;
      for (double value : {0.05, 0.1}) {
        for (std::uint32_t every : {1u, 3u}) {
          CascadeTarget target;
          target.kind = kind;
          target.value = kind == Kind::kRecall ? 1.0 - value : value;
          target.every = every;
          Model m = p.model;
          CascadeReport report;
          m.cascade = plain.calibrate_cascade(p.X.c_view(), p.y.data(), target, 2, &report);
          ASSERT_NO_THROW(m.validate());
          const Predictor cascaded(m);
          PredictOptions options;
          options.cascade = true;
          std::vector<std::int32_t> got(p.y.size());
          std::vector<std::uint32_t> counts(p.y.size());
          cascaded.predict(p.X.c_view(), got.data(), options, counts.data());
          std::size_t positives = 0;
          for (std::size_t r = 0; r < p.y.size(); ++r) positives += p.y[r] == 1 && full[r] == 1;
          const double base = kind == Kind::kRecall ? static_cast<double>(positives) : static_cast<double>(p.y.size());
          // A candidate passes only when its Clopper-Pearson upper bound, above harm / base, is within the target.
          const std::size_t h = harm(kind, got, full, p.y);
          EXPECT_LT(static_cast<double>(h), value * base) << static_cast<int>(kind) << " " << value << " every " << every;
          EXPECT_EQ(report.harmful, h);
          EXPECT_EQ(report.n_rows, static_cast<std::size_t>(base));
          EXPECT_LE(report.harm_bound, value);
          for (std::size_t r = 0; r < p.y.size(); ++r) saved += m.trees.size() - counts[r];
        }
      }
    }
  }
  EXPECT_GT(saved, 0u);
}

TEST(Cascade, BinomialBoundsMatchClosedForms) {
  // P(X <= 0) = (1 - p)^n; the Clopper-Pearson upper bound for no success is 1 - tail^(1/n); the two-sided
  // bounds of 5 in 100 at 95 % are the Beta quantiles 0.01643 and 0.11283 (R's binom.test).
  EXPECT_NEAR(predict::binomial_cdf(0, 50, 0.1), std::pow(0.9, 50), 1e-15);
  EXPECT_NEAR(predict::binomial_cdf(2, 10, 0.5), 56.0 / 1024.0, 1e-14);
  EXPECT_EQ(predict::binomial_cdf(10, 10, 0.5), 1.0);
  EXPECT_NEAR(predict::clopper_pearson_upper(0, 100, 0.05), 1.0 - std::pow(0.05, 0.01), 1e-12);
  EXPECT_NEAR(predict::clopper_pearson_upper(5, 100, 0.025), 0.11283, 1e-5);
  EXPECT_NEAR(predict::clopper_pearson_lower(5, 100, 0.025), 0.01643, 1e-5);
  EXPECT_EQ(predict::clopper_pearson_lower(0, 100, 0.025), 0.0);
  // (1 - 0.01)^n <= 0.05 from n = 299 on.
  EXPECT_EQ(predict::min_certifying_rows(0.01, 0.05), 299u);
}

TEST(Cascade, UncertifiableTargetsAreRefused) {
  const Problem p = problem(2, 5);
  const Predictor plain(p.model);
  CascadeTarget target;
  target.value = 0.0;
  EXPECT_THROW(plain.calibrate_cascade(p.X.c_view(), p.y.data(), target), InvalidArgument);
  target.value = 0.001;  // needs log(0.05 / 3) / log(0.999) = 4 092 rows, there are 900
  EXPECT_THROW(plain.calibrate_cascade(p.X.c_view(), p.y.data(), target), InvalidArgument);
  target.value = 0.05;
  target.confidence = 1.0;
  EXPECT_THROW(plain.calibrate_cascade(p.X.c_view(), p.y.data(), target), InvalidArgument);
}

TEST(Cascade, EveryPathAndKernelSetFollowsTheCascade) {
  // Binary models are checked inside the kernels (every 1 and 2), multi-class ones outside.
  for (const std::size_t n_classes : {std::size_t{2}, std::size_t{3}})
    for (const std::uint32_t every : {1u, 2u}) {
      const Problem p = problem(n_classes, 11);
      CascadeTarget target;
      target.value = 0.02;
      target.every = every;
      Model m = p.model;
      m.cascade = Predictor(p.model).calibrate_cascade(p.X.c_view(), p.y.data(), target);
      PredictOptions options;
      options.cascade = true;
      std::vector<std::int32_t> want(p.y.size());
      std::vector<std::uint32_t> want_counts(p.y.size());
      predict::Engine(m, predict::generic_kernels()).predict(p.X.c_view(), want.data(), options, want_counts.data());
      for (const predict::Kernels* k : {predict::avx2_kernels(), predict::avx512_kernels()}) {
        if (!k) continue;
        std::vector<std::int32_t> got(p.y.size());
        std::vector<std::uint32_t> counts(p.y.size());
        predict::Engine(m, *k).predict(p.X.c_view(), got.data(), options, counts.data());
        EXPECT_EQ(got, want) << k->name << " classes " << n_classes << " every " << every;
        EXPECT_EQ(counts, want_counts) << k->name << " classes " << n_classes << " every " << every;
      }
      const Predictor predictor(m);
      std::vector<double> scratch(m.n_outputs);
      std::size_t early = 0;
      for (std::size_t r = 0; r < p.y.size(); ++r) {
        std::uint32_t count = 0;
        ASSERT_EQ(predictor.predict_row(&p.X.c_order[r * 5], 1, scratch.data(), options, &count), want[r]);
        ASSERT_EQ(count, want_counts[r]);
        early += count < m.trees.size();
      }
      EXPECT_GT(early, p.y.size() / 4) << "the cascade should stop many rows early";
    }
}

TEST(Cascade, InfiniteThresholdsAreTheExactExit) {
  const Problem p = problem(2, 13);
  Model m = p.model;
  m.cascade.every = 4;
  m.cascade.thresholds.assign(2 * ((m.trees.size() - 1) / 4), kInf);
  const Predictor predictor(m);
  PredictOptions cascade, exact;
  cascade.cascade = true;
  exact.early_exit = true;
  exact.check_every = 4;
  std::vector<std::int32_t> a(p.y.size()), b(p.y.size()), full(p.y.size());
  predictor.predict(p.X.c_view(), a.data(), cascade);
  predictor.predict(p.X.c_view(), b.data(), exact);
  predictor.predict(p.X.c_view(), full.data());
  EXPECT_EQ(a, full);
  EXPECT_EQ(b, full);
}

TEST(Cascade, RoundTripsThroughTheModelFile) {
  const Problem p = problem(2, 17);
  Model m = p.model;
  CascadeTarget target;
  target.value = 0.01;
  m.cascade = Predictor(m).calibrate_cascade(p.X.c_view(), p.y.data(), target);
  ASSERT_FALSE(m.cascade.empty());
  const Model back = deserialize(serialize(m).data(), serialize(m).size());
  EXPECT_EQ(back.cascade.every, m.cascade.every);
  EXPECT_EQ(back.cascade.thresholds, m.cascade.thresholds);
  PredictOptions options;
  options.cascade = true;
  EXPECT_THROW(Predictor(p.model).predict(p.X.c_view(), std::vector<std::int32_t>(900).data(), options),
               InvalidArgument);  // no cascade to follow
}

TEST(Cascade, BadThresholdsAreRefused) {
  const Problem p = problem(2, 19);
  const auto refused = [&](std::uint32_t every, std::vector<double> thresholds) {
    Model m = p.model;
    m.cascade.every = every;
    m.cascade.thresholds = std::move(thresholds);
    EXPECT_THROW(m.validate(), ModelFileError);
  };
  refused(0, {1.0, 1.0});
  refused(1, {1.0});                                        // not a multiple of 2 classes
  refused(1, {std::nan(""), 1.0});                          // NaN
  refused(1, {-kInf, kInf});                                // -inf
  refused(1, {-1.0, 0.5});                                  // theta_0 + theta_1 <= 0: both classes
  refused(60, {1.0, 1.0, 1.0, 1.0});                        // a checkpoint at learner 120 of 120
  Model ok = p.model;
  ok.cascade.every = 60;
  ok.cascade.thresholds = {1.0, 1.0};
  EXPECT_NO_THROW(ok.validate());
  ok.cascade.truncate(60, 2);  // truncating to 60 learners drops the checkpoint at 60
  EXPECT_TRUE(ok.cascade.empty());
}

}  // namespace
}  // namespace rebelboost
