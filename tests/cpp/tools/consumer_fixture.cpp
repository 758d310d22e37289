// Writes MODEL.rbm, DATA.csv and EXPECTED.csv for tests/cmake/run_consumer_test.sh without Python.
//
// usage: rb_consumer_fixture MODEL.rbm DATA.csv EXPECTED.csv [adaboost|veb|rebel|similarity]
// (rebel: 3 classes, so every output line holds a class and 3 scores; similarity: the same with Localized
// Similarities as weak learners, and no NaN in the data, which similarities refuse)
// The CSV mixes the spellings predict_csv accepts (empty field and "nan" for NaN, exponents, spaces);
// EXPECTED.csv is what predict_csv must print: class index, then the score(s), with %.17g.
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "rebelboost/rebelboost.hpp"

int main(int argc, char** argv) {
  const std::string mode = argc == 5 ? argv[4] : "adaboost";
  const bool similarity = mode == "similarity";
  const std::string loss = similarity ? "rebel" : mode;
  if ((argc != 4 && argc != 5) || (loss != "adaboost" && loss != "veb" && loss != "rebel")) {
    std::fprintf(stderr, "usage: %s MODEL.rbm DATA.csv EXPECTED.csv [adaboost|veb|rebel|similarity]\n", argv[0]);
    return 2;
  }
  try {
    std::filesystem::create_directories(std::filesystem::path(argv[1]).parent_path());
    const std::size_t n = 400, d = 3;
    std::mt19937_64 rng(2024);
    std::normal_distribution<double> normal(0.0, 1.0);
    std::vector<double> X(n * d);
    std::vector<std::int32_t> y(n);
    for (std::size_t r = 0; r < n; ++r) {
      for (std::size_t c = 0; c < d; ++c) X[r * d + c] = (!similarity && rng() % 10 == 0) ? NAN : normal(rng);
      const double a = std::isnan(X[r * d]) ? 0.3 : X[r * d];
      const double b = std::isnan(X[r * d + 1]) ? 0.0 : X[r * d + 1];
      y[r] = loss == "rebel" ? (a > 0.5 ? 2 : (b > 0.0 ? 1 : 0)) : (a + 0.5 * b > 0.0 ? 1 : 0);
    }
    rebelboost::TrainParams params;
    params.n_estimators = 20;
    params.max_depth = 2;
    params.n_threads = 1;
    if (similarity) params.learner = rebelboost::LearnerKind::kSimilarity;
    params.loss = loss == "rebel" ? rebelboost::LossKind::kRebel
                                  : loss == "veb" ? rebelboost::LossKind::kVebBoost : rebelboost::LossKind::kAdaBoost;
    const std::size_t n_classes = loss == "rebel" ? 3 : 2;
    rebelboost::Model model =
        rebelboost::train(rebelboost::MatrixView<double>::row_major(X.data(), n, d), y.data(), nullptr, n_classes, params)
            .model;
    model.metadata = "{\"source\": \"rb_consumer_fixture\"}";
    rebelboost::save_model(model, argv[1]);

    // Probe rows: the first 50 training rows plus edge cases, written in varied spellings.
    std::FILE* csv = std::fopen(argv[2], "w");
    if (!csv) throw rebelboost::IoError(std::string("cannot write ") + argv[2]);
    std::vector<double> probe;
    for (std::size_t r = 0; r < 50; ++r) {
      for (std::size_t c = 0; c < d; ++c) {
        const double v = X[r * d + c];
        if (c) std::fputc(',', csv);
        if (std::isnan(v)) std::fputs(r % 2 ? "" : (r % 4 ? "nan" : "NaN"), csv);
        else if (r % 3 == 0) std::fprintf(csv, " %.17e ", v);
        else std::fprintf(csv, "%.17g", v);
        probe.push_back(v);
      }
      std::fputc('\n', csv);
    }
    if (!similarity) {
      std::fputs(",,\n", csv);
      probe.insert(probe.end(), {NAN, NAN, NAN});
    }
    std::fputs("1e300,-1e-300,0\n-0,+2.5,  7\n", csv);
    probe.insert(probe.end(), {1e300, -1e-300, 0.0, -0.0, 2.5, 7.0});
    std::fclose(csv);

    const std::size_t rows = probe.size() / d;
    std::vector<double> scores(rows * model.n_outputs);
    rebelboost::decision_function(model, rebelboost::MatrixView<double>::row_major(probe.data(), rows, d),
                                  scores.data(), 1);
    std::vector<std::int32_t> classes(rows);
    rebelboost::scores_to_classes(model, scores.data(), rows, classes.data());
    std::FILE* out = std::fopen(argv[3], "w");
    if (!out) throw rebelboost::IoError(std::string("cannot write ") + argv[3]);
    for (std::size_t r = 0; r < rows; ++r) {
      std::fprintf(out, "%d", classes[r]);
      for (std::size_t k = 0; k < model.n_outputs; ++k) std::fprintf(out, ",%.17g", scores[r * model.n_outputs + k]);
      std::fputc('\n', out);
    }
    std::fclose(out);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
  return 0;
}
