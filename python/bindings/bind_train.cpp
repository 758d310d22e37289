// train(): numpy in, GIL released for the whole fit; the per-iteration callback re-acquires it.
#include <pybind11/functional.h>
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <string>

#include "convert.hpp"
#include "rebelboost/train.hpp"

namespace rebelboost::bindings {

namespace {

py::dict info_to_dict(const IterationInfo& info) {
  py::dict d;
  d["iteration"] = info.iteration;
  d["train_loss"] = info.train_loss;
  d["weighted_error"] = info.weighted_error;
  d["tree_depth"] = info.tree_depth;
  d["bin_accumulations"] = info.bin_accumulations;
  d["quick_nodes"] = info.quick_nodes;
  d["full_nodes"] = info.full_nodes;
  d["features_pruned"] = info.features_pruned;
  d["heavy_rebuilds"] = info.heavy_rebuilds;
  d["mass90_fraction"] = info.mass90_fraction;
  return d;
}

py::tuple train_py(const py::array& X, const py::array_t<std::int32_t, py::array::c_style | py::array::forcecast>& y,
                   const py::object& sample_weight, std::size_t n_classes, const std::string& loss,
                   int n_estimators, int max_depth, int n_bins, double learning_rate, int n_threads,
                   double smoothing, std::size_t bin_subsample, std::int64_t bin_seed,
                   const py::object& callback, double veb_lambda, const py::object& cost_matrix, int quick, int criterion, double weight_trim,
                   double subsample, double feature_fraction, std::int64_t seed) {
  TrainParams p;
  p.loss = parse_loss(loss);
  p.n_estimators = n_estimators;
  p.max_depth = max_depth;
  p.n_bins = n_bins;
  p.learning_rate = learning_rate;
  p.n_threads = n_threads;
  p.smoothing = smoothing;
  p.bin_subsample = bin_subsample;
  p.bin_seed = bin_seed;
  p.veb_lambda = veb_lambda;
  p.quick = quick;
  p.criterion = criterion;
  p.weight_trim = weight_trim;
  p.subsample = subsample;
  p.feature_fraction = feature_fraction;
  p.seed = seed;
  if (!cost_matrix.is_none()) {
    auto c = py::array_t<double, py::array::c_style | py::array::forcecast>::ensure(cost_matrix);
    if (!c || c.ndim() != 2) throw InvalidArgument("cost_matrix must be a 2-D array of numbers");
    if (static_cast<std::size_t>(c.shape(0)) != n_classes || static_cast<std::size_t>(c.shape(1)) != n_classes)
      throw InvalidArgument("cost_matrix has shape (" + std::to_string(c.shape(0)) + ", " + std::to_string(c.shape(1)) +
                            "); expected (" + std::to_string(n_classes) + ", " + std::to_string(n_classes) + ")");
    p.cost_matrix.assign(c.data(), c.data() + c.size());
  }
  if (y.ndim() != 1) throw InvalidArgument("y must be 1-D");
  const std::size_t n_rows = X.ndim() == 2 ? static_cast<std::size_t>(X.shape(0)) : 0;
  if (static_cast<std::size_t>(y.shape(0)) != n_rows)
    throw InvalidArgument("X has " + std::to_string(n_rows) + " samples but y has " + std::to_string(y.shape(0)));
  py::array_t<double, py::array::c_style | py::array::forcecast> weights;
  const double* w = nullptr;
  if (!sample_weight.is_none()) {
    weights = py::array_t<double, py::array::c_style | py::array::forcecast>::ensure(sample_weight);
    if (!weights || weights.ndim() != 1 || static_cast<std::size_t>(weights.shape(0)) != n_rows)
      throw InvalidArgument("sample_weight must be 1-D with one entry per sample");
    w = weights.data();
  }
  IterationCallback cb;
  if (!callback.is_none()) {
    cb = [&callback](const IterationInfo& info) {
      py::gil_scoped_acquire acquire;
      py::object r = callback(info_to_dict(info));
      return r.is_none() || r.cast<bool>();
    };
  }
  const std::int32_t* labels = y.data();
  TrainResult result = with_view(X, [&](auto view) {
    py::gil_scoped_release release;
    return train(view, labels, w, n_classes, p, cb);
  });
  py::list history;
  for (const IterationInfo& info : result.history) history.append(info_to_dict(info));
  return py::make_tuple(std::move(result.model), history, result.stop_reason, result.stop_message);
}

}  // namespace

void bind_train(py::module_& m) {
  m.def("train", &train_py, py::arg("X"), py::arg("y"), py::arg("sample_weight"), py::arg("n_classes"),
        py::arg("loss"), py::arg("n_estimators"), py::arg("max_depth"), py::arg("n_bins"),
        py::arg("learning_rate"), py::arg("n_threads"), py::arg("smoothing") = -1.0,
        py::arg("bin_subsample") = 200000, py::arg("bin_seed") = -1, py::arg("callback") = py::none(), py::arg("veb_lambda") = 0.5,
        py::arg("cost_matrix") = py::none(), py::arg("quick") = 2, py::arg("criterion") = 0,
        py::arg("weight_trim") = 1.0, py::arg("subsample") = 1.0, py::arg("feature_fraction") = 1.0,
        py::arg("seed") = 0,
        "Fit a boosted ensemble; returns (Model, history, stop_reason, stop_message). X float32/float64, y int32 class indices.");
}

}  // namespace rebelboost::bindings
