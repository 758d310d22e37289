// Model: prediction (GIL released), introspection, bytes and file round trips.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "convert.hpp"
#include "rebelboost/io.hpp"
#include "rebelboost/model.hpp"
#include "rebelboost/predict.hpp"

namespace rebelboost::bindings {

namespace {

py::array_t<double> decision(const Model& model, const py::array& X, int n_threads, long n_trees) {
  const std::size_t n_rows = X.ndim() == 2 ? static_cast<std::size_t>(X.shape(0)) : 0;
  const std::size_t K = model.n_outputs;
  py::array_t<double> out = K == 1 ? py::array_t<double>({static_cast<py::ssize_t>(n_rows)})
                                   : py::array_t<double>({static_cast<py::ssize_t>(n_rows), static_cast<py::ssize_t>(K)});
  double* dst = out.mutable_data();
  const std::size_t used = n_trees < 0 ? model.trees.size() : static_cast<std::size_t>(n_trees);
  with_view(X, [&](auto view) {
    py::gil_scoped_release release;
    decision_function(model, view, dst, n_threads, used);
    return 0;
  });
  return out;
}

py::array_t<std::int8_t> outputs(const Model& model, const py::array& X, int n_threads, std::size_t first_tree,
                                 long n_trees) {
  const std::size_t n_rows = X.ndim() == 2 ? static_cast<std::size_t>(X.shape(0)) : 0;
  const std::size_t first = std::min(first_tree, model.trees.size());
  const std::size_t left = model.trees.size() - first;
  const std::size_t used = n_trees < 0 ? left : std::min(left, static_cast<std::size_t>(n_trees));
  py::array_t<std::int8_t> out({static_cast<py::ssize_t>(n_rows), static_cast<py::ssize_t>(used)});
  std::int8_t* dst = out.mutable_data();
  with_view(X, [&](auto view) {
    py::gil_scoped_release release;
    tree_outputs(model, view, dst, n_threads, first, used);
    return 0;
  });
  return out;
}

// Trees as plain arrays (for tests, plotting and the JSON export).
py::list trees_as_dicts(const Model& model) {
  py::list out;
  for (const Tree& tree : model.trees) {
    const auto n = static_cast<py::ssize_t>(tree.nodes.size());
    py::array_t<std::int32_t> feature(n), left(n), right(n);
    py::array_t<double> threshold(n), gain(n);
    py::array_t<std::int8_t> value(n);
    py::array_t<bool> nan_left(n);
    for (py::ssize_t i = 0; i < n; ++i) {
      const Node& node = tree.nodes[static_cast<std::size_t>(i)];
      feature.mutable_at(i) = node.feature;
      left.mutable_at(i) = static_cast<std::int32_t>(node.left);
      right.mutable_at(i) = static_cast<std::int32_t>(node.right);
      threshold.mutable_at(i) = node.threshold;
      gain.mutable_at(i) = node.gain;
      value.mutable_at(i) = node.value;
      nan_left.mutable_at(i) = node.nan_left != 0;
    }
    py::dict d;
    d["feature"] = feature;
    d["threshold"] = threshold;
    d["nan_left"] = nan_left;
    d["left"] = left;
    d["right"] = right;
    d["value"] = value;
    d["gain"] = gain;
    d["step"] = py::array_t<double>(static_cast<py::ssize_t>(tree.step.size()), tree.step.data());
    out.append(d);
  }
  return out;
}

Model from_bytes(const py::bytes& data) {
  char* buffer = nullptr;
  py::ssize_t length = 0;
  if (PYBIND11_BYTES_AS_STRING_AND_SIZE(data.ptr(), &buffer, &length) != 0) throw py::error_already_set();
  return deserialize(buffer, static_cast<std::size_t>(length));
}

}  // namespace

void bind_model(py::module_& m) {
  // The model limits (rebelboost/model.hpp), for the Python layer's messages and checks.
  m.attr("MAX_TREES") = kMaxTrees;
  m.attr("MAX_TREE_NODES") = kMaxTreeNodes;
  m.attr("MAX_FEATURES") = kMaxFeatures;
  m.attr("MAX_CLASSES") = kMaxClasses;
  m.attr("MAX_METADATA_BYTES") = kMaxMetadataBytes;
  m.attr("MAX_ABS_SCORE") = kMaxAbsScore;
  py::class_<Model>(m, "Model")
      .def_property_readonly("loss", [](const Model& mo) { return std::string(loss_name(mo.loss)); })
      .def_property_readonly("loss_key", [](const Model& mo) { return loss_key(mo.loss); },
                             "The loss as train() names it: 'adaboost', 'veb' or 'rebel'.")
      .def_property_readonly("n_features", [](const Model& mo) { return mo.n_features; })
      .def_property_readonly("n_outputs", [](const Model& mo) { return mo.n_outputs; })
      .def_property_readonly("n_trees", [](const Model& mo) { return mo.trees.size(); })
      .def_property_readonly("bias", [](const Model& mo) {
        return py::array_t<double>(static_cast<py::ssize_t>(mo.bias.size()), mo.bias.data());
      })
      .def_property("metadata", [](const Model& mo) { return py::bytes(mo.metadata); },
                    [](Model& mo, const py::bytes& b) { mo.metadata = std::string(b); })
      .def("trees", &trees_as_dicts)
      .def("truncated", [](const Model& mo, std::size_t n_trees) {
        Model out = mo;
        if (n_trees < out.trees.size()) out.trees.resize(n_trees);
        return out;
      }, py::arg("n_trees"), "A copy keeping the first n_trees trees.")
      .def("feature_importances", [](const Model& mo) {
        const std::vector<double> v = mo.feature_importances();
        return py::array_t<double>(static_cast<py::ssize_t>(v.size()), v.data());
      })
      .def("decision_function", &decision, py::arg("X"), py::arg("n_threads") = 0, py::arg("n_trees") = -1,
           "Scores H(x) (n,) for binary models, (n, K) otherwise; X float32/float64, any strides.")
      .def("tree_outputs", &outputs, py::arg("X"), py::arg("n_threads") = 0, py::arg("first_tree") = 0,
           py::arg("n_trees") = -1,
           "f_t(x) in {+1,-1} for trees first_tree, ... (n_trees of them; -1: to the end) as an (n, n_used) int8 array.")
      .def("to_bytes", [](const Model& mo) { return py::bytes(serialize(mo)); })
      .def_static("from_bytes", &from_bytes)
      .def("save", [](const Model& mo, const std::string& path) {
        py::gil_scoped_release release;
        save_model(mo, path);
      })
      .def_static("load", [](const std::string& path) {
        py::gil_scoped_release release;
        return load_model(path);
      });
}

}  // namespace rebelboost::bindings
