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

namespace rebelboost {

void check_cascade_every(std::int64_t every, std::size_t n_learners) {
  const std::size_t most = n_learners > 1 ? n_learners - 1 : 1;
  if (every < 1 || static_cast<std::uint64_t>(every) > most)
    throw InvalidArgument("every must be None or an int in [1, " + std::to_string(most) +
                          "] (learners between checkpoints; the model has " + std::to_string(n_learners) + "), got " +
                          std::to_string(every));
}

}  // namespace rebelboost

namespace rebelboost::predict {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
// The family of candidate cascades (cascade.hpp): shapes, and scales per shape from lambda_0 down to
// lambda_0 x kScaleRange in kScales geometric steps.
constexpr double kShapes[] = {0.0, 0.25, 0.5};
constexpr std::size_t kNumShapes = sizeof(kShapes) / sizeof(kShapes[0]);
constexpr std::size_t kScales = 200;
constexpr double kScaleRange = 1e-4;
constexpr std::size_t kBlockRows = 512;  // rows walked in parallel before their counts are added up
// CascadeTarget::every = 0: the checkpoint spacings tried (multiples of the first), and the cost of a check
// in units of a learner's work for the choice between them (a check of a 16-row group compares about what
// two depth-2 trees do).
constexpr std::size_t kEveryChoices[] = {4, 8, 16};
constexpr double kCheckCost = 2.0;

// Fixed from the model before any row is seen: threshold(q, c) for candidate q = shape * kScales + scale.
struct Family {
  std::size_t every = 1;       // learners between checkpoints
  std::size_t C = 0;           // checkpoints
  std::vector<double> g;       // [shape * C + c]: (W(s_c) / W(0))^shape
  std::vector<double> lambda;  // [shape * kScales + i], decreasing in i
  double threshold(std::size_t q, std::size_t c) const { return lambda[q] * g[(q / kScales) * C + c]; }
};

Family make_family(const Model& model, std::size_t every, std::size_t C) {
  const std::size_t T = model.n_learners();
  std::vector<double> weight(T + 1, 0.0), reach(T + 1, 0.0);  // suffix sums from learner t on
  for (std::size_t t = T; t-- > 0;) {
    const std::vector<double>& a = model.step(t);
    const double r = a.size() == 1 ? std::fabs(a[0]) : *std::max_element(a.begin(), a.end()) - *std::min_element(a.begin(), a.end());
    weight[t] = weight[t + 1] + r * r;
    reach[t] = reach[t + 1] + r;
  }
  Family f;
  f.every = every;
  f.C = C;
  f.g.resize(kNumShapes * C);
  f.lambda.resize(kNumShapes * kScales);
  for (std::size_t j = 0; j < kNumShapes; ++j) {
    double top = 0.0;  // lambda_0 / 2: every threshold at least the reach of the rest (only exact exits)
    for (std::size_t c = 0; c < C; ++c) {
      const std::size_t s = (c + 1) * every;
      const double g = weight[0] > 0.0 ? std::pow(weight[s] / weight[0], kShapes[j]) : 1.0;
      f.g[j * C + c] = g;
      if (g > 0.0) top = std::max(top, reach[s] / g);
    }
    const double lambda0 = top > 0.0 ? 2.0 * top : 1.0;
    for (std::size_t i = 0; i < kScales; ++i)
      f.lambda[j * kScales + i] = lambda0 * std::pow(kScaleRange, static_cast<double>(i) / static_cast<double>(kScales - 1));
  }
  return f;
}

struct Harm {
  CascadeTarget::Kind kind;
  const std::int32_t* y;
  const std::int32_t* full;
  bool counted(std::size_t r) const { return kind != CascadeTarget::Kind::kRecall || (y[r] == 1 && full[r] == 1); }
  bool harmful(std::size_t r, std::int32_t leave_as) const {
    switch (kind) {
      case CascadeTarget::Kind::kAccuracyLoss: return full[r] == y[r] && leave_as != y[r];
      case CascadeTarget::Kind::kDisagreement: return leave_as != full[r];
      case CascadeTarget::Kind::kRecall: return y[r] == 1 && full[r] == 1 && leave_as == 0;
    }
    return true;
  }
};

void check_target(const Model& model, const CascadeTarget& target) {
  if (!(target.value >= 0.0 && target.value <= 1.0))
    throw InvalidArgument("cascade target value must be in [0, 1], got " + std::to_string(target.value));
  if (!(target.confidence > 0.0 && target.confidence < 1.0))
    throw InvalidArgument("cascade confidence must be in (0, 1), got " + std::to_string(target.confidence));
  if (target.every != 0) check_cascade_every(target.every, model.n_learners());
  if (target.kind == CascadeTarget::Kind::kRecall && model.n_outputs != 1)
    throw InvalidArgument("a recall target needs a binary model (positives are class 1)");
  const double harm = target.kind == CascadeTarget::Kind::kRecall ? 1.0 - target.value : target.value;
  if (!(harm > 0.0))
    throw InvalidArgument("a cascade with no harm at all cannot be certified from samples: use exact early exit "
                          "(it never changes a label), or allow some harm");
}

// The z with P(N(0, 1) <= z) = p, p in (0, 1), by bisection.
double normal_quantile(double p) {
  double lo = -40.0, hi = 40.0;
  for (int it = 0; it < 200; ++it) {
    const double mid = 0.5 * (lo + hi);
    (0.5 * std::erfc(-mid / std::sqrt(2.0)) < p ? lo : hi) = mid;
  }
  return 0.5 * (lo + hi);
}

}  // namespace

double binomial_cdf(std::size_t k, std::size_t n, double p) {
  if (k >= n || p <= 0.0) return 1.0;
  if (p >= 1.0) return 0.0;
  // log P(X = i), i = 0..k, by the ratio of consecutive terms; then a sum scaled by the largest.
  std::vector<double> term(k + 1);
  term[0] = static_cast<double>(n) * std::log1p(-p);
  const double odds = std::log(p) - std::log1p(-p);
  for (std::size_t i = 0; i < k; ++i)
    term[i + 1] = term[i] + std::log(static_cast<double>(n - i) / static_cast<double>(i + 1)) + odds;
  const double top = *std::max_element(term.begin(), term.end());
  double sum = 0.0;
  for (double v : term) sum += std::exp(v - top);
  return std::min(1.0, std::exp(top + std::log(sum)));
}

double clopper_pearson_upper(std::size_t k, std::size_t n, double tail) {
  if (k >= n) return 1.0;
  double lo = 0.0, hi = 1.0;  // binomial_cdf(k, n, p) falls as p grows
  for (int it = 0; it < 100; ++it) {
    const double mid = 0.5 * (lo + hi);
    (binomial_cdf(k, n, mid) > tail ? lo : hi) = mid;
  }
  return hi;
}

double clopper_pearson_lower(std::size_t k, std::size_t n, double tail) {
  if (k == 0) return 0.0;
  double lo = 0.0, hi = 1.0;  // P(X >= k) = 1 - binomial_cdf(k - 1, n, p) grows with p
  for (int it = 0; it < 100; ++it) {
    const double mid = 0.5 * (lo + hi);
    (1.0 - binomial_cdf(k - 1, n, mid) < tail ? lo : hi) = mid;
  }
  return lo;
}

std::size_t min_certifying_rows(double target, double tail) {
  if (target >= 1.0) return 1;
  return static_cast<std::size_t>(std::ceil(std::log(tail) / std::log1p(-target)));
}

template <typename Engine, typename T>
Cascade calibrate_cascade(const Engine& engine, MatrixView<T> X, const std::int32_t* y, const CascadeTarget& target,
                          int n_threads, CascadeReport* report) {
  const Model& model = engine.model();
  check_target(model, target);
  const std::size_t N = X.n_rows, K = model.n_outputs, n_classes = model.n_classes(), n_learn = model.n_learners();
  for (std::size_t r = 0; r < N; ++r)
    if (y[r] < 0 || static_cast<std::size_t>(y[r]) >= n_classes)
      throw InvalidArgument("class index " + std::to_string(y[r]) + " at row " + std::to_string(r) + " is outside [0, " +
                            std::to_string(n_classes) + ")");
  std::vector<std::int32_t> full(N);
  PredictOptions full_options;
  full_options.n_threads = n_threads;
  engine.predict(X, full.data(), full_options, nullptr);
  const Harm harm{target.kind, y, full.data()};
  const bool recall = target.kind == CascadeTarget::Kind::kRecall;
  const double alpha = recall ? 1.0 - target.value : target.value;
  std::size_t n = 0;
  for (std::size_t r = 0; r < N; ++r) n += harm.counted(r);
  // The checkpoint spacings tried: the one asked for, or (every = 0) kEveryChoices when the rows suffice for
  // the Bonferroni level over all their candidates, else the first alone. The choice depends on the number
  // of rows only, never on the harm they show, so the tests stay valid.
  const double delta = 1.0 - target.confidence;
  std::vector<std::size_t> spacings;
  const std::size_t n_choices = sizeof(kEveryChoices) / sizeof(kEveryChoices[0]);
  if (target.every)
    spacings.push_back(target.every);
  else if (n >= min_certifying_rows(alpha, delta / static_cast<double>(n_choices * kNumShapes)))
    spacings.assign(std::begin(kEveryChoices), std::end(kEveryChoices));
  else
    spacings.push_back(kEveryChoices[0]);
  const std::size_t F = spacings.size(), per_family = kNumShapes * kScales, Q = F * per_family;
  const double tail = delta / static_cast<double>(F * kNumShapes);
  const std::size_t min_rows = min_certifying_rows(alpha, tail);
  if (n < min_rows)
    throw InvalidArgument("the calibration set is too small for this target: certifying a harm rate of at most " +
                          std::to_string(alpha) + " with confidence " + std::to_string(target.confidence) +
                          " needs at least " + std::to_string(min_rows) + (recall ? " positives found by full evaluation" : " rows") +
                          ", got " + std::to_string(n) + " (give more rows, a larger target or a lower confidence)");

  std::vector<Family> families;
  std::size_t last = 0;  // the last checkpoint of any family
  for (std::size_t e : spacings) {
    families.push_back(make_family(model, e, n_learn == 0 ? 0 : (n_learn - 1) / e));
    last = std::max(last, families.back().C * e);
  }
  const std::size_t base = spacings[0];  // every spacing is a multiple of the first
  const ExitBounds& bounds = engine.stop_rule().bounds();
  const ExitBounds::Range range = bounds.range(n_learn);
  std::vector<std::uint64_t> harmful(Q, 0), learners(Q, 0);
  std::vector<double> learners_sq(Q, 0.0);
  std::vector<std::uint8_t> block_harm(kBlockRows * Q);
  std::vector<std::uint32_t> block_learners(kBlockRows * Q);
  for (std::size_t b0 = 0; b0 < N; b0 += kBlockRows) {
    const std::size_t rows = std::min(kBlockRows, N - b0);
    const int threads = rows * n_learn >= (std::size_t{1} << 16) ? n_threads : 1;  // the result never depends on it
    util::parallel_for(static_cast<std::ptrdiff_t>(rows), threads, [&](std::ptrdiff_t i) {
      const std::size_t r = b0 + static_cast<std::size_t>(i);
      const T* x = X.data + static_cast<std::ptrdiff_t>(r) * X.row_stride;
      std::vector<double> P(model.bias.begin(), model.bias.end());
      std::vector<std::uint32_t> exit_at(Q, static_cast<std::uint32_t>(n_learn));
      std::vector<std::int32_t> exit_as(Q, full[r]);
      // Per family and shape: candidates [0, open) have not left yet.
      std::vector<std::size_t> open(F * kNumShapes, kScales);
      std::size_t t = 0;
      for (std::size_t s = base; s <= last; s += base) {
        engine.advance_row(x, X.col_stride, P.data(), t, s);
        t = s;
        const ExitBounds::Leaders l = K == 1 ? ExitBounds::Leaders{} : ExitBounds::leaders(P.data(), 1, K);
        const std::int32_t exact = K == 1 ? bounds.decided_binary(P[0], s, range) : bounds.decided(P.data(), 1, s, range, l);
        // The row's margin and the class it would leave with (as cascade_decision with equal thresholds).
        double margin = 0.0;
        std::int32_t as = 0;
        if (K > 1) {
          margin = l.top - l.runner;
          as = static_cast<std::int32_t>(l.lead);
        } else if (recall) {
          margin = -P[0];
        } else {
          as = P[0] >= 0.0 ? 1 : 0;
          margin = as ? P[0] : -P[0];
        }
        bool all_left = true;
        for (std::size_t fi = 0; fi < F; ++fi) {
          const Family& fam = families[fi];
          const bool checkpoint = s % fam.every == 0 && s / fam.every <= fam.C;
          const std::size_t c = s / fam.every - 1;
          for (std::size_t j = 0; j < kNumShapes; ++j) {
            std::size_t& o = open[fi * kNumShapes + j];
            const std::size_t q0 = fi * per_family + j * kScales;
            while (checkpoint && o > 0 && (exact >= 0 || margin >= fam.threshold(j * kScales + o - 1, c))) {
              --o;
              exit_at[q0 + o] = static_cast<std::uint32_t>(s);
              exit_as[q0 + o] = exact >= 0 ? exact : as;
            }
            all_left &= o == 0;
          }
        }
        if (all_left) break;
      }
      for (std::size_t q = 0; q < Q; ++q) {
        block_harm[static_cast<std::size_t>(i) * Q + q] = harm.harmful(r, exit_as[q]);
        block_learners[static_cast<std::size_t>(i) * Q + q] = exit_at[q];
      }
    });
    for (std::size_t i = 0; i < rows; ++i)  // in row order: the sums never depend on the threads
      for (std::size_t q = 0; q < Q; ++q) {
        const std::uint32_t L = block_learners[i * Q + q];
        harmful[q] += block_harm[i * Q + q];
        learners[q] += L;
        learners_sq[q] += static_cast<double>(L) * static_cast<double>(L);
      }
  }
  // Fixed-sequence tests per family and shape, then the certified candidate of least estimated cost:
  // learners x (1 + kCheckCost / every), the checks one per `every` learners.
  std::size_t best = Q;
  double best_cost = 0.0;
  std::size_t tested = 0;
  for (std::size_t fi = 0; fi < F; ++fi)
    for (std::size_t j = 0; j < kNumShapes; ++j) {
      std::size_t pick = Q;
      for (std::size_t i = 0; i < kScales; ++i) {
        const std::size_t q = fi * per_family + j * kScales + i;
        ++tested;
        if (!(alpha >= 1.0 || binomial_cdf(harmful[q], n, alpha) <= tail)) break;
        pick = q;
      }
      if (pick == Q) continue;
      const double cost = static_cast<double>(learners[pick]) * (1.0 + kCheckCost / static_cast<double>(spacings[fi]));
      if (best == Q || cost < best_cost) best = pick, best_cost = cost;
    }
  if (best == Q) throw InvalidArgument("no cascade could be certified for this target on these rows");
  const Family& chosen = families[best / per_family];
  const std::size_t member = best % per_family;
  Cascade cascade;
  cascade.every = static_cast<std::uint32_t>(chosen.every);
  cascade.thresholds.resize(chosen.C * n_classes);
  for (std::size_t c = 0; c < chosen.C; ++c)
    for (std::size_t k = 0; k < n_classes; ++k)
      cascade.thresholds[c * n_classes + k] = recall && k == 1 ? kInf : chosen.threshold(member, c);
  if (cascade.thresholds.empty()) cascade.every = 0;
  if (report) {
    CascadeReport& rep = *report;
    const double two_sided = (1.0 - target.confidence) / 2.0;
    rep.n_rows = n;
    rep.min_rows = min_rows;
    rep.harmful = harmful[best];
    rep.target = alpha;
    rep.confidence = target.confidence;
    rep.harm = static_cast<double>(harmful[best]) / static_cast<double>(n);
    rep.harm_low = clopper_pearson_lower(harmful[best], n, two_sided);
    rep.harm_high = clopper_pearson_upper(harmful[best], n, two_sided);
    rep.harm_bound = clopper_pearson_upper(harmful[best], n, tail);
    const double mean = N ? static_cast<double>(learners[best]) / static_cast<double>(N) : 0.0;
    const double var = N > 1 ? std::max(0.0, (learners_sq[best] - static_cast<double>(N) * mean * mean) / static_cast<double>(N - 1)) : 0.0;
    const double half = normal_quantile(1.0 - two_sided) * std::sqrt(var / static_cast<double>(std::max<std::size_t>(N, 1)));
    rep.mean_learners = mean;
    rep.learners_low = std::max(0.0, mean - half);
    rep.learners_high = std::min(static_cast<double>(n_learn), mean + half);
    rep.n_learners = n_learn;
    rep.every = chosen.every;
    rep.shape = kShapes[member / kScales];
    rep.scale = chosen.lambda[member];
    rep.tested = tested;
  }
  return cascade;
}

#define REBELBOOST_CALIBRATE(E, T) \
  template Cascade calibrate_cascade<E, T>(const E&, MatrixView<T>, const std::int32_t*, const CascadeTarget&, int, \
                                          CascadeReport*);
REBELBOOST_CALIBRATE(Engine, float)
REBELBOOST_CALIBRATE(Engine, double)
REBELBOOST_CALIBRATE(SimilarityEngine, float)
REBELBOOST_CALIBRATE(SimilarityEngine, double)
#undef REBELBOOST_CALIBRATE

}  // namespace rebelboost::predict
