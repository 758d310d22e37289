// Calibration of soft-cascade thresholds on validation rows (see cascade.hpp).
#include "predict/cascade.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "predict/engine.hpp"
#include "predict/similarity_engine.hpp"
#include "rebelboost/error.hpp"
#include "util/parallel.hpp"

namespace rebelboost::predict {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr std::size_t kMinParallelWork = 1 << 14;  // row x learner steps per checkpoint

// The rows that could leave with one class at a checkpoint, by margin (descending), and where the harmful
// ones stand: with a units of harm allowed, the rows above the (a + 1)-th harmful margin leave.
struct ClassCandidates {
  std::vector<double> margin;     // sorted descending
  std::vector<std::size_t> harm;  // positions of the harmful rows in `margin`

  // Rows leaving when `a` harmful rows may: those with a margin above the (a + 1)-th harmful one.
  std::size_t exits(std::size_t a) const {
    if (a >= harm.size()) return margin.size();
    const double m = margin[harm[a]];
    return static_cast<std::size_t>(std::find_if(margin.begin(), margin.end(), [m](double v) { return v <= m; }) -
                                    margin.begin());
  }
  // The threshold that lets exactly exits(a) rows leave: halfway to the next margin, never at a harmful one.
  double threshold(std::size_t a) const {
    const std::size_t e = exits(a);
    if (e == 0) return kInf;
    if (a >= harm.size()) return margin[e - 1];
    const double low = margin[harm[a]], high = margin[e - 1];
    const double mid = low + (high - low) / 2;
    return mid > low ? mid : high;
  }
};

struct Calibration {
  std::size_t K = 1, C = 2;
  CascadeTarget target;
  const std::int32_t* y = nullptr;
  std::vector<std::int32_t> full;  // full-evaluation classes

  bool harmful(std::size_t r, std::int32_t leave_as) const {
    switch (target.kind) {
      case CascadeTarget::Kind::kAccuracyLoss: return full[r] == y[r] && leave_as != y[r];
      case CascadeTarget::Kind::kDisagreement: return leave_as != full[r];
      case CascadeTarget::Kind::kRecall: return y[r] == 1 && full[r] == 1 && leave_as == 0;
    }
    return true;
  }

  std::size_t budget() const {
    std::size_t base = full.size();
    if (target.kind == CascadeTarget::Kind::kRecall) {
      base = 0;
      for (std::size_t r = 0; r < full.size(); ++r) base += y[r] == 1 && full[r] == 1;
      return static_cast<std::size_t>(std::floor((1.0 - target.value) * static_cast<double>(base)));
    }
    return static_cast<std::size_t>(std::floor(target.value * static_cast<double>(base)));
  }

  // (class it could leave with, margin) of a row; class -1 if it cannot leave at all.
  std::pair<std::int32_t, double> candidacy(const double* P, int side) const {
    if (K == 1) {
      if (target.kind == CascadeTarget::Kind::kRecall) return side == 0 ? std::make_pair(0, -P[0]) : std::make_pair(-1, 0.0);
      const std::int32_t lead = P[0] > 0.0 ? 1 : 0;
      return side == lead ? std::make_pair(lead, lead ? P[0] : -P[0]) : std::make_pair(-1, 0.0);
    }
    const ExitBounds::Leaders l = ExitBounds::leaders(P, 1, K);
    return side == static_cast<int>(l.lead) ? std::make_pair(static_cast<std::int32_t>(l.lead), l.top - l.runner)
                                             : std::make_pair(-1, 0.0);
  }
};

// Splits `units` of harm between the classes, one at a time to the class that lets the most extra rows leave.
std::vector<std::size_t> allocate(const std::vector<ClassCandidates>& classes, std::size_t units) {
  std::vector<std::size_t> a(classes.size(), 0);
  for (; units > 0; --units) {
    std::size_t best = classes.size(), best_gain = 0;
    for (std::size_t k = 0; k < classes.size(); ++k) {
      const std::size_t gain = classes[k].exits(a[k] + 1) - classes[k].exits(a[k]);
      if (gain > best_gain) best = k, best_gain = gain;
    }
    if (best == classes.size()) break;
    ++a[best];
  }
  return a;
}

void check_target(const Model& model, const CascadeTarget& target) {
  if (!(target.value >= 0.0 && target.value <= 1.0))
    throw InvalidArgument("cascade target value must be in [0, 1], got " + std::to_string(target.value));
  if (target.every == 0) throw InvalidArgument("a cascade must be checked every 1 or more learners");
  if (!(target.spend >= 0.0 && std::isfinite(target.spend)))
    throw InvalidArgument("cascade budget schedule exponent must be finite and >= 0");
  if (target.kind == CascadeTarget::Kind::kRecall && model.n_outputs != 1)
    throw InvalidArgument("a recall target needs a binary model (positives are class 1)");
}

}  // namespace

template <typename Engine, typename T>
Cascade calibrate_cascade(const Engine& engine, MatrixView<T> X, const std::int32_t* y, const CascadeTarget& target,
                          int n_threads) {
  const Model& model = engine.model();
  check_target(model, target);
  Calibration cal;
  cal.K = model.n_outputs;
  cal.C = model.n_classes();
  cal.target = target;
  cal.y = y;
  const std::size_t N = X.n_rows, K = cal.K, C = cal.C, n_learners = model.n_learners();
  for (std::size_t r = 0; r < N; ++r)
    if (y[r] < 0 || static_cast<std::size_t>(y[r]) >= C)
      throw InvalidArgument("class index " + std::to_string(y[r]) + " at row " + std::to_string(r) + " is outside [0, " +
                            std::to_string(C) + ")");
  cal.full.resize(N);
  PredictOptions full_options;
  full_options.n_threads = n_threads;
  engine.predict(X, cal.full.data(), full_options, nullptr);

  Cascade cascade;
  cascade.every = target.every;
  const std::size_t n_checkpoints = n_learners == 0 ? 0 : (n_learners - 1) / target.every;
  const std::size_t budget = cal.budget();
  const ExitBounds::Range range = engine.stop_rule().bounds().range(n_learners);
  std::vector<double> scores(N * K);
  for (std::size_t r = 0; r < N; ++r)
    for (std::size_t k = 0; k < K; ++k) scores[r * K + k] = model.bias[k];
  std::vector<std::size_t> alive(N);
  for (std::size_t r = 0; r < N; ++r) alive[r] = r;
  std::size_t spent = 0, t = 0;
  for (std::size_t c = 0; c < n_checkpoints && !alive.empty(); ++c) {
    const std::size_t s = (c + 1) * target.every;
    // Threads only for enough work (every row's sum is its own, so the result never depends on them).
    const int threads = alive.size() * target.every >= kMinParallelWork ? n_threads : 1;
    util::parallel_for(static_cast<std::ptrdiff_t>(alive.size()), threads, [&](std::ptrdiff_t i) {
      const std::size_t r = alive[static_cast<std::size_t>(i)];
      engine.advance_row(X.data + static_cast<std::ptrdiff_t>(r) * X.row_stride, X.col_stride, &scores[r * K], t, s);
    });
    t = s;
    // Rows the exact bound decides leave for free (prediction checks it first too).
    alive.erase(std::remove_if(alive.begin(), alive.end(), [&](std::size_t r) {
                  const double* P = &scores[r * K];
                  return (K == 1 ? engine.stop_rule().bounds().decided_binary(P[0], s, range)
                                 : engine.stop_rule().bounds().decided(P, 1, s, range, ExitBounds::leaders(P, 1, K))) >= 0;
                }),
                alive.end());
    std::vector<ClassCandidates> classes(C);
    for (std::size_t k = 0; k < C; ++k) {
      std::vector<std::pair<double, bool>> rows;
      for (std::size_t r : alive) {
        const auto [as, margin] = cal.candidacy(&scores[r * K], static_cast<int>(k));
        if (as >= 0) rows.emplace_back(margin, cal.harmful(r, as));
      }
      std::sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
      for (std::size_t i = 0; i < rows.size(); ++i) {
        classes[k].margin.push_back(rows[i].first);
        if (rows[i].second) classes[k].harm.push_back(i);
      }
    }
    const auto share = static_cast<std::size_t>(
        std::floor(static_cast<double>(budget) * std::pow(static_cast<double>(c + 1) / static_cast<double>(n_checkpoints), target.spend)));
    const std::vector<std::size_t> a = allocate(classes, share > spent ? share - spent : 0);
    for (std::size_t k = 0; k < C; ++k) cascade.thresholds.push_back(classes[k].threshold(a[k]));
    if (K == 1 && target.kind == CascadeTarget::Kind::kRecall) cascade.thresholds.back() = kInf;
    ExitBounds::Leaders none;
    alive.erase(std::remove_if(alive.begin(), alive.end(), [&](std::size_t r) {
                  const double* P = &scores[r * K];
                  const std::int32_t as =
                      cascade_decision(cascade, c, K, P[0], K == 1 ? none : ExitBounds::leaders(P, 1, K));
                  if (as < 0) return false;
                  spent += cal.harmful(r, as);
                  return true;
                }),
                alive.end());
  }
  // Checkpoints after every validation row left would hold +inf: drop them (nothing was learned there).
  while (!cascade.thresholds.empty() &&
         std::all_of(cascade.thresholds.end() - static_cast<std::ptrdiff_t>(C), cascade.thresholds.end(),
                     [](double v) { return v == kInf; }))
    cascade.thresholds.resize(cascade.thresholds.size() - C);
  if (cascade.thresholds.empty()) cascade.every = 0;
  return cascade;
}

#define REBELBOOST_CALIBRATE(E, T) \
  template Cascade calibrate_cascade<E, T>(const E&, MatrixView<T>, const std::int32_t*, const CascadeTarget&, int);
REBELBOOST_CALIBRATE(Engine, float)
REBELBOOST_CALIBRATE(Engine, double)
REBELBOOST_CALIBRATE(SimilarityEngine, float)
REBELBOOST_CALIBRATE(SimilarityEngine, double)
#undef REBELBOOST_CALIBRATE

}  // namespace rebelboost::predict
