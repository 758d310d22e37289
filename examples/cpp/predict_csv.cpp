// Loads a rebelboost model and writes, for every row of a CSV file, the class index and the score(s).
//
//   predict_csv MODEL.rbm DATA.csv [OUT.csv] [--early-exit | --cascade]
//
// DATA.csv: one row per line, no header, comma-separated numbers; an empty field or "nan" (any case)
// is a missing value. Output (OUT.csv or stdout): "class,score[,score...]" per row, scores printed
// with %.17g so they read back as the same doubles. With --early-exit (exact early exit) or --cascade (the
// model's calibrated soft cascade) rows may stop early, so their scores are partial: the output is then
// "class,learners" per row, learners being how many each row evaluated. A regression model
// (BoostingRegressor) writes its prediction per row, %.17g, and takes neither option.
// Exit codes: 0 success; 1 rebelboost or I/O error ("error: ..." on stderr); 2 usage or malformed CSV.
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <limits>
#include <string>
#include <vector>

#include "rebelboost/rebelboost.hpp"

namespace {

// A malformed CSV row: reported with its line number, exit code 2.
struct CsvError {
  std::string message;
};

std::string trim(const std::string& s) {
  const char* ws = " \t\r";
  const std::size_t b = s.find_first_not_of(ws);
  if (b == std::string::npos) return {};
  return s.substr(b, s.find_last_not_of(ws) - b + 1);
}

bool is_nan_word(const std::string& s) {
  if (s.size() != 3) return false;
  for (std::size_t i = 0; i < 3; ++i)
    if (std::tolower(static_cast<unsigned char>(s[i])) != "nan"[i]) return false;
  return true;
}

double parse_field(const std::string& raw, std::size_t line, std::size_t column) {
  const std::string field = trim(raw);
  if (field.empty() || is_nan_word(field)) return std::numeric_limits<double>::quiet_NaN();
  errno = 0;
  char* end = nullptr;
  const double v = std::strtod(field.c_str(), &end);
  // strtod accepts hex floats and "inf"; it must consume the whole field. Overflow (ERANGE with a huge
  // result) is an error; underflow to a subnormal or zero is accepted as the nearest double.
  if (end != field.c_str() + field.size() || (errno == ERANGE && std::abs(v) > 1.0))
    throw CsvError{"line " + std::to_string(line) + ", column " + std::to_string(column) + ": '" + field +
                   "' is not a number"};
  return v;
}

// Reads every line as one row of exactly n_columns fields into `values` (row-major).
std::size_t read_csv(std::istream& in, std::size_t n_columns, std::vector<double>& values) {
  std::string line;
  std::size_t n_rows = 0;
  for (std::size_t line_no = 1; std::getline(in, line); ++line_no) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    std::size_t n_fields = 0;
    std::size_t start = 0;
    for (;;) {
      const std::size_t comma = line.find(',', start);
      const std::string field = line.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
      ++n_fields;
      if (n_fields <= n_columns) values.push_back(parse_field(field, line_no, n_fields));
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
    if (n_fields != n_columns)
      throw CsvError{"line " + std::to_string(line_no) + ": expected " + std::to_string(n_columns) +
                     " comma-separated values (the model's n_features), found " + std::to_string(n_fields)};
    ++n_rows;
  }
  if (in.bad()) throw rebelboost::IoError("read error");
  return n_rows;
}

}  // namespace

int main(int argc, char** argv) {
  rebelboost::PredictOptions options;
  while (argc > 3 && (std::strcmp(argv[argc - 1], "--early-exit") == 0 || std::strcmp(argv[argc - 1], "--cascade") == 0)) {
    (std::strcmp(argv[argc - 1], "--cascade") == 0 ? options.cascade : options.early_exit) = true;
    --argc;
  }
  if (argc < 3 || argc > 4 || (options.cascade && options.early_exit)) {
    std::fprintf(stderr, "usage: %s MODEL.rbm DATA.csv [OUT.csv] [--early-exit | --cascade]\n",
                 argc > 0 ? argv[0] : "predict_csv");
    return 2;
  }
  const bool stops_early = options.cascade || options.early_exit;
  const std::string data_path = argv[2];
  try {
    const rebelboost::Predictor predictor(rebelboost::load_model(argv[1]));
    const rebelboost::Model& model = predictor.model();
    const std::size_t n_features = model.n_features;
    const std::size_t K = model.n_outputs;

    std::ifstream data(data_path);
    if (!data) throw rebelboost::IoError("cannot open '" + data_path + "': " + std::strerror(errno));
    std::vector<double> X;
    std::size_t n_rows = 0;
    try {
      n_rows = read_csv(data, n_features, X);
    } catch (const CsvError& e) {
      std::fprintf(stderr, "error: %s: %s\n", data_path.c_str(), e.message.c_str());
      return 2;
    }

    std::vector<double> scores(n_rows * K);
    std::vector<std::int32_t> classes(n_rows);
    std::vector<std::uint32_t> learners(n_rows);
    const bool regression = model.is_regression();
    if (regression && stops_early) {
      std::fprintf(stderr, "error: --early-exit and --cascade choose classes; this model is a regressor\n");
      return 2;
    }
    if (n_rows > 0) {
      const auto view = rebelboost::MatrixView<double>::row_major(X.data(), n_rows, n_features);
      if (!stops_early) predictor.decision_function(view, scores.data());
      if (!regression) predictor.predict(view, classes.data(), options, learners.data());
    }

    std::FILE* out = stdout;
    if (argc == 4) {
      out = std::fopen(argv[3], "w");
      if (!out) throw rebelboost::IoError(std::string("cannot write '") + argv[3] + "': " + std::strerror(errno));
    }
    for (std::size_t r = 0; r < n_rows && regression; ++r) std::fprintf(out, "%.17g\n", scores[r]);
    for (std::size_t r = 0; r < n_rows && !regression; ++r) {
      std::fprintf(out, "%d", static_cast<int>(classes[r]));
      if (stops_early) std::fprintf(out, ",%u", static_cast<unsigned>(learners[r]));
      for (std::size_t k = 0; k < K && !stops_early; ++k) std::fprintf(out, ",%.17g", scores[r * K + k]);
      std::fputc('\n', out);
    }
    const bool write_failed = std::ferror(out) != 0;
    if ((out != stdout ? std::fclose(out) : std::fflush(out)) != 0 || write_failed)
      throw rebelboost::IoError("cannot write the predictions");
  } catch (const rebelboost::Error& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  } catch (const std::exception& e) {  // e.g. std::bad_alloc: still a clean message, not an abort
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
  return 0;
}
