// The prediction engine: a model's compiled forest and the paths that evaluate it (row groups, one row).
#pragma once

#include <cstddef>
#include <algorithm>
#include <cstdint>

#include "predict/stop_rule.hpp"
#include "predict/flat_forest.hpp"
#include "predict/gather.hpp"
#include "predict/kernels.hpp"
#include "rebelboost/matrix_view.hpp"
#include "rebelboost/model.hpp"
#include "rebelboost/predict.hpp"

namespace rebelboost::predict {

// Class of one row from its K scores s[k * stride]: s > 0 for K = 1, else the first largest.
std::int32_t class_of(const double* s, std::size_t K, std::size_t stride = 1);

// Throws InvalidArgument unless X has the model's n_features columns (every prediction path checks this).
void check_columns(std::size_t n_cols, std::size_t n_features);

// Compiles `model`, which must outlive the engine and stay unchanged. Predictor and the free functions of
// rebelboost/predict.hpp are thin wrappers around it.
class Engine {
 public:
  explicit Engine(const Model& model);
  Engine(const Model& model, const Kernels& kernels);  // a given instruction set (tests)

  // Fewer rows than this are evaluated one by one (the 16-lane groups would mostly carry padding).
  static constexpr std::size_t kMinGroupRows = 4;
  // Exact exit: rows in the pilot (the first ones of a batch) always stop early; the rest only if the pilot's
  // rows used at most kExitPays of the learners on average (the path with checks costs more per learner).
  // The pilot is one chunk of the stopping path, run on the calling thread: no parallel region of its own,
  // whose wake-up a busy machine can delay (docs/cascades.md).
  static constexpr std::size_t kExitPilotRows = 256;
  static constexpr double kExitPays = 0.4;
  // The copies are scanned for NaN (to run the kernels' cheaper compares where there is none) only when the
  // model uses at most this many features per split: the scan costs per copied value, the NaN-aware
  // compares per split evaluated (docs/cascades.md).
  static constexpr double kScanSlotsPerSplit = 0.1;

  template <typename T>
  void decision_function(MatrixView<T> X, double* out, std::size_t n_trees, int n_threads, bool check_inf = false) const;
  template <typename T>
  void predict(MatrixView<T> X, std::int32_t* classes, const PredictOptions& options, std::uint32_t* n_learners) const;
  template <typename T>
  void tree_outputs(MatrixView<T> X, std::int8_t* out, int n_threads, std::size_t first_tree, std::size_t n_trees) const;
  template <typename T>
  void decision_row(const T* x, std::ptrdiff_t stride, double* scores, std::size_t n_trees) const;
  template <typename T>
  std::int32_t predict_row(const T* x, std::ptrdiff_t stride, double* scores, const PredictOptions& options,
                           std::uint32_t* n_learners) const;

  // Adds the learners [t_begin, t_end) to one row's scores (cascade calibration walks rows this way).
  template <typename T>
  void advance_row(const T* x, std::ptrdiff_t stride, double* scores, std::size_t t_begin, std::size_t t_end) const;
  const StopRule& stop_rule() const { return stop_; }
  const Model& model() const { return model_; }

 private:
  std::size_t used(std::size_t n_trees) const;
  // Throws InvalidArgument for a regression model (`what` asks for classes).
  void check_classifier(const char* what) const;
  // 16 consecutive rows r0 .. r0 + n_lanes (fewer at the end) in the kernels' layout, with their scores
  // scores[k * 16 + lane] (scratch owned by the chunk).
  template <typename T>
  struct Group {
    const T* Xt;
    bool has_nan;
    std::size_t r0, n_lanes;
    double* scores;
  };
  template <typename T, typename Fn>
  void for_each_group(const MatrixView<T>& X, int n_threads, Fn&& fn, bool check_inf = false) const;
  template <typename T>
  void start(const Group<T>& g) const;
  template <typename T>
  void add(const Group<T>& g, std::size_t t_begin, std::size_t t_end) const;

  // Every row through all n learners; with check_inf each 16-row group is refused if one of its rows holds
  // +-inf (reject_inf.hpp), read just before its columns are copied.
  template <typename T>
  void predict_full(const MatrixView<T>& X, std::size_t n, int n_threads, bool check_inf, std::int32_t* classes,
                    std::uint32_t* n_learners) const;
  // Rows that may stop early (engine_stopping.cpp): groups advance from checkpoint to checkpoint, decided
  // rows leave, and the rows still running are packed into fewer groups when that saves more than it costs.
  // With check_inf each chunk's rows are refused if one holds +-inf (reject_inf.hpp), read while in cache.
  template <typename T>
  void predict_stopping(const MatrixView<T>& X, std::size_t n, const StopRule::Stops& st, int n_threads,
                        bool check_inf, std::int32_t* classes, std::uint32_t* n_learners) const;
  // Binary models: advances the open lanes of a group (lane j holding row rows[j]) from t_begin to t_end
  // through the checkpoints `stops`; writes the classes and learner counts of the lanes that leave; returns
  // the lanes still open.
  template <typename T>
  std::uint32_t advance_binary(const Group<T>& g, std::size_t t_begin, std::size_t t_end, const BinaryStops& stops,
                               std::uint32_t open, const std::size_t* rows, std::int32_t* classes,
                               std::uint32_t* n_learners) const;
  // K >= 2 classes: decides the open lanes of a group (scores[k * 16 + lane], lane j holding row rows[j])
  // after t learners: writes their classes and learner counts; returns the lanes still open and raises
  // `margins` to the largest StopRule::margins among them.
  std::uint32_t decide_lanes(const double* scores, const std::size_t* rows, std::uint32_t open, std::size_t t,
                             const StopRule::Stops& st, std::int32_t* classes, std::uint32_t* n_learners,
                             StopRule::Margins& margins) const;
  // Work of one tree for one group, in the units of copying one value (the repacking decision).
  double group_tree_cost() const { return group_tree_cost_; }
  // Whether `n_rows` rows of X are read in address order before their columns are copied (stream_rows in
  // gather.hpp): row-major X, wide rows whose used features fill enough of their lines, and a block that
  // stays in cache.
  template <typename T>
  bool streams(const MatrixView<T>& X, std::size_t n_rows) const {
    return X.col_stride == 1 && (sizeof(T) == 4 ? stream_f32_ : stream_f64_) &&
           n_rows * X.n_cols * sizeof(T) <= kStreamBytes;
  }

  const Model& model_;
  FlatForest forest_;
  StopRule stop_;
  const Kernels& kernels_;
  double group_tree_cost_ = 0.0;
  bool stream_f32_ = false, stream_f64_ = false;
  bool scan_nan_ = true;
};

}  // namespace rebelboost::predict
