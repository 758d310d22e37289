// libFuzzer target for the model loader and the predictor: whatever bytes come in, loading either throws
// ModelFileError or gives a model that every prediction entry point uses without a crash, a sanitizer
// report, an allocation beyond the model's size or a non-finite score, and with the same bits on every path
// (plain and compiled, batch and one row, every kernel set, early exit), and finite TreeSHAP contributions.
//
// Each input is tried as it is (magic, version, framing and checksum are checked first), then with its
// header's payload size and checksum rewritten to match, so that mutations reach the payload parser and
// Model::validate instead of stopping at the checksum.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "predict/engine.hpp"
#include "predict/kernels.hpp"
#include "rebelboost/error.hpp"
#include "rebelboost/io.hpp"
#include "rebelboost/model.hpp"
#include "rebelboost/predict.hpp"

namespace {

using rebelboost::Model;

constexpr std::size_t kHeader = 24;  // magic, version, reserved, payload size

std::uint64_t fnv1a(const unsigned char* data, std::size_t n) {
  std::uint64_t h = 0xcbf29ce484222325ull;
  for (std::size_t i = 0; i < n; ++i) h = (h ^ data[i]) * 0x100000001b3ull;
  return h;
}

void put_u64(unsigned char* at, std::uint64_t v) {
  for (int i = 0; i < 8; ++i) at[i] = static_cast<unsigned char>(v >> (8 * i));
}

[[noreturn]] void finding(const char* what) {
  std::fprintf(stderr, "FINDING: %s\n", what);
  __builtin_trap();
}

// Feature values for prediction: 0, +-inf, NaN, and values from the input, so rows fall on both sides of
// thresholds. A model with many features reads every feature of a row from one value (column stride 0).
// Similarity models refuse NaN (InvalidArgument, documented): they get 0 in its place.
template <typename T>
std::vector<T> feature_values(const std::uint8_t* data, std::size_t size, std::size_t count, bool nan) {
  static const double kSpecial[] = {0.0, -0.0, 1.0, -1.0, 0.5, 1e30, -1e30, INFINITY, -INFINITY, NAN};
  std::vector<T> values(count);
  for (std::size_t i = 0; i < count; ++i) {
    const unsigned char b = size ? data[(i * 7919) % size] : 0;
    values[i] = b % 4 == 0 ? static_cast<T>(kSpecial[b % (nan ? 10 : 9)])
                           : static_cast<T>((static_cast<int>(b) - 128) / 16.0);
  }
  return values;
}

// The compiled Predictor uses the fastest kernels this CPU has; every other set (generic, AVX2 where the
// CPU runs it and it is not the fastest) must give the same scores, early-exit classes and cascade classes.
using Engines = std::vector<std::unique_ptr<const rebelboost::predict::Engine>>;

Engines other_kernel_sets(const Model& model) {
  namespace p = rebelboost::predict;
  Engines engines;
  if (model.learner != rebelboost::LearnerKind::kTree) return engines;
  for (const p::Kernels* kernels : {&p::generic_kernels(), p::avx2_kernels(), p::avx512_kernels()})
    if (kernels && kernels != &p::best_kernels()) engines.push_back(std::make_unique<const p::Engine>(model, *kernels));
  return engines;
}

template <typename T>
void check_kernel_sets(const Engines& engines, rebelboost::MatrixView<T> X, const std::vector<double>& scores,
                       const rebelboost::PredictOptions& early_exit, const std::vector<std::int32_t>& classes,
                       const std::vector<std::int32_t>& cascade) {
  for (const auto& engine : engines) {
    std::vector<double> got(scores.size());
    engine->decision_function(X, got.data(), rebelboost::kAllLearners, 1);
    if (std::memcmp(got.data(), scores.data(), got.size() * sizeof(double)) != 0) finding("kernel sets disagree");
    std::vector<std::int32_t> early(X.n_rows);
    engine->predict(X, early.data(), early_exit, nullptr);
    if (early != classes) finding("a kernel set's early exit changed a class");
    if (engine->model().cascade.empty()) continue;
    rebelboost::PredictOptions soft;
    soft.n_threads = 1;
    soft.cascade = true;
    engine->predict(X, early.data(), soft, nullptr);
    if (early != cascade) finding("kernel sets disagree on the cascade");
  }
}

// A regression model: one-row and other kernel sets' scores equal the batch's, the real learner outputs
// are each tree's leaf values, TreeSHAP is finite; class entry points refuse it.
template <typename T>
void check_regression(const Model& model, const rebelboost::Predictor& predictor, const Engines& engines,
                      rebelboost::MatrixView<T> X, const std::vector<double>& scores) {
  double row = 0.0;
  for (std::size_t r = 0; r < X.n_rows; ++r) {
    predictor.decision_row(X.data + static_cast<std::ptrdiff_t>(r) * X.row_stride, X.col_stride, &row);
    if (std::memcmp(&row, &scores[r], sizeof(double)) != 0) finding("one-row path disagrees");
  }
  for (const auto& engine : engines) {
    std::vector<double> got(scores.size());
    engine->decision_function(X, got.data(), rebelboost::kAllLearners, 1);
    if (std::memcmp(got.data(), scores.data(), got.size() * sizeof(double)) != 0) finding("kernel sets disagree");
  }
  const std::size_t T_all = model.n_learners();
  std::vector<double> outputs(X.n_rows * T_all);
  predictor.learner_outputs(X, outputs.data(), 1);
  for (std::size_t r = 0; r < X.n_rows; ++r)
    for (std::size_t t = 0; t < T_all; ++t) {
      const double f = model.trees[t].output_real(X.data + static_cast<std::ptrdiff_t>(r) * X.row_stride, X.col_stride);
      if (!std::isfinite(f) || f != outputs[r * T_all + t]) finding("regression learner outputs disagree");
    }
  if (X.n_rows * (model.n_features + 1) <= (1u << 20)) {
    std::vector<double> phi(X.n_rows * (model.n_features + 1));
    predictor.contributions(X, phi.data(), rebelboost::kAllLearners, 1);
    for (double v : phi)
      if (!std::isfinite(v)) finding("non-finite contribution");
  }
  std::vector<std::int32_t> classes(X.n_rows);
  try {
    predictor.predict(X, classes.data());
    finding("predict gave classes for a regression model");
  } catch (const rebelboost::InvalidArgument&) {
  }
}

template <typename T>
void predict_rows(const Model& model, const rebelboost::Predictor& predictor, const Engines& engines,
                  const std::uint8_t* data, std::size_t size, std::size_t n_rows) {
  const std::size_t d = model.n_features, K = model.n_outputs, T_all = model.n_learners();
  const bool dense = d <= 64;
  const bool nan = model.learner == rebelboost::LearnerKind::kTree;
  const std::vector<T> values = feature_values<T>(data, size, dense ? n_rows * d : n_rows, nan);
  const rebelboost::MatrixView<T> X = dense ? rebelboost::MatrixView<T>::row_major(values.data(), n_rows, d)
                                            : rebelboost::MatrixView<T>{values.data(), n_rows, d, 1, 0};
  std::vector<double> scores(n_rows * K), again(n_rows * K), row(K);
  rebelboost::decision_function(model, X, scores.data(), 1);  // n_rows >= 4: the compiled forest
  for (double s : scores)
    if (!std::isfinite(s)) finding("non-finite score");
  // One row at a time, decision_function walks the model's own nodes (no compiled forest): same bits.
  for (std::size_t r = 0; r < n_rows; ++r) {
    const rebelboost::MatrixView<T> x{X.data + static_cast<std::ptrdiff_t>(r) * X.row_stride, 1, d, X.row_stride,
                                      X.col_stride};
    rebelboost::decision_function(model, x, row.data(), 1);
    if (std::memcmp(row.data(), &scores[r * K], K * sizeof(double)) != 0)
      finding("node walk and compiled forest disagree");
  }
  // Every path promises the same bits: the compiled predictor, batch or one row at a time.
  predictor.decision_function(X, again.data(), rebelboost::kAllLearners, 1);
  if (std::memcmp(scores.data(), again.data(), scores.size() * sizeof(double)) != 0) finding("batch paths disagree");
  if (model.is_regression()) {  // no classes: the scores on every path, and the real leaves
    check_regression(model, predictor, engines, X, scores);
    return;
  }
  std::vector<std::int32_t> classes(n_rows), full(n_rows), early(n_rows);
  rebelboost::scores_to_classes(model, scores.data(), n_rows, classes.data());
  rebelboost::PredictOptions options;
  options.n_threads = 1;
  predictor.predict(X, full.data(), options);
  options.early_exit = true;  // exact: the class full evaluation gives, whatever the steps
  options.check_every = 1 + data[size / 2] % 16;
  predictor.predict(X, early.data(), options);
  std::vector<std::int32_t> cascade(n_rows, 0);  // the soft cascade may change classes, as calibrated
  if (!model.cascade.empty()) {
    rebelboost::PredictOptions soft;
    soft.n_threads = 1;
    soft.cascade = true;
    predictor.predict(X, cascade.data(), soft);
  }
  for (std::size_t r = 0; r < n_rows; ++r) {
    if (classes[r] < 0 || static_cast<std::size_t>(classes[r]) >= (K == 1 ? 2 : K)) finding("class index out of range");
    if (full[r] != classes[r]) finding("predict disagrees with the scores");
    if (early[r] != classes[r]) finding("early exit changed a class");
    if (cascade[r] < 0 || static_cast<std::size_t>(cascade[r]) >= (K == 1 ? 2 : K)) finding("cascade class out of range");
    const T* x = X.data + static_cast<std::ptrdiff_t>(r) * X.row_stride;
    predictor.decision_row(x, X.col_stride, row.data());
    if (std::memcmp(row.data(), &scores[r * K], K * sizeof(double)) != 0) finding("one-row path disagrees");
    if (predictor.predict_row(x, X.col_stride, row.data()) != classes[r]) finding("one-row class disagrees");
  }
  check_kernel_sets(engines, X, scores, options, classes, cascade);
  // (The caller owns the n x K x (d + 1) output: a valid file may declare millions of features, so the
  // harness bounds its own buffer, as it does for the importances.)
  if (model.learner == rebelboost::LearnerKind::kTree && model.has_covers() && n_rows * K * (d + 1) <= (1u << 20)) {
    // TreeSHAP: finite whatever the covers (each ratio is in [0, 1]); on 1 and 2 threads the same bits.
    std::vector<double> phi(n_rows * K * (d + 1)), phi2(phi.size());
    predictor.contributions(X, phi.data(), rebelboost::kAllLearners, 1);
    predictor.contributions(X, phi2.data(), rebelboost::kAllLearners, 2);
    for (double v : phi)
      if (!std::isfinite(v)) finding("non-finite contribution");
    if (std::memcmp(phi.data(), phi2.data(), phi.size() * sizeof(double)) != 0) finding("contributions depend on threads");
  }
  const std::size_t half = T_all / 2;
  rebelboost::decision_function(model, X, scores.data(), 1, half);
  std::vector<double> outputs(n_rows * (T_all - half));
  predictor.learner_outputs(X, outputs.data(), 1, half);
  const bool tree = model.learner == rebelboost::LearnerKind::kTree;
  for (double f : outputs)
    if (tree ? (f != 1.0 && f != -1.0) : !(f >= -1.0 && f <= 1.0)) finding("learner output out of range");
  if (tree) {
    std::vector<std::int8_t> signs(n_rows * (T_all - half));
    predictor.tree_outputs(X, signs.data(), 1, half);
    for (std::size_t i = 0; i < signs.size(); ++i)
      if (signs[i] != outputs[i]) finding("tree outputs disagree with learner outputs");
  }
}

void use(const Model& model, const std::uint8_t* data, std::size_t size) {
  const std::string bytes = rebelboost::serialize(model);  // a loaded model always saves and reloads
  if (rebelboost::serialize(rebelboost::deserialize(bytes.data(), bytes.size())) != bytes) finding("round trip");
  if (model.n_features <= (1u << 16)) {
    double total = 0.0;
    for (double v : model.feature_importances()) {
      if (!(v >= 0.0 && v <= 1.0)) finding("importance outside [0, 1]");
      total += v;
    }
    if (total != 0.0 && std::fabs(total - 1.0) > 1e-9) finding("importances do not sum to 1");
  }
  const rebelboost::Predictor predictor(model);
  const Engines engines = other_kernel_sets(model);
  predict_rows<double>(model, predictor, engines, data, size, 5);  // a few rows
  predict_rows<float>(model, predictor, engines, data, size, 43);  // several groups of rows, and a remainder
}

void try_load(const std::uint8_t* data, std::size_t size) {
  Model model;
  try {
    model = rebelboost::deserialize(data, size);
  } catch (const rebelboost::ModelFileError&) {
    return;
  }
  use(model, data, size);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try_load(data, size);
  if (size < kHeader + 8) return 0;
  std::vector<unsigned char> fixed(data, data + size);
  const std::size_t payload = size - kHeader - 8;
  put_u64(&fixed[16], payload);
  put_u64(&fixed[size - 8], fnv1a(&fixed[kHeader], payload));
  try_load(fixed.data(), fixed.size());
  return 0;
}
