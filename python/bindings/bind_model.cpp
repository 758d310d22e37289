// Model: prediction through its compiled Predictor (GIL released), introspection, bytes and file round trips.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "convert.hpp"
#include "py_model.hpp"
#include "rebelboost/io.hpp"
#include "rebelboost/model.hpp"
#include "rebelboost/predict.hpp"
#include "predict/reject_inf.hpp"
#include "util/parallel.hpp"

namespace rebelboost::bindings {

namespace {

// Runs fn(view) on X's view without the GIL, after refusing +-inf when check_inf (every prediction entry).
template <typename Fn>
void predict_released(const py::array& X, bool check_inf, int n_threads, Fn&& fn) {
  with_view(X, [&](auto view) {
    py::gil_scoped_release release;
    if (check_inf) predict::reject_inf(view, n_threads);
    fn(view);
    return 0;
  });
}

std::size_t n_rows_of(const py::array& X) { return X.ndim() == 2 ? static_cast<std::size_t>(X.shape(0)) : 0; }

std::size_t learners(long n_trees) { return n_trees < 0 ? kAllLearners : static_cast<std::size_t>(n_trees); }

py::array_t<double> decision(const PyModel& pm, const py::array& X, int n_threads, long n_trees, bool check_inf) {
  const std::shared_ptr<const Predictor> predictor = pm.predictor();
  const std::size_t n_rows = n_rows_of(X), K = pm.model().n_outputs;
  py::array_t<double> out = K == 1 ? py::array_t<double>({static_cast<py::ssize_t>(n_rows)})
                                   : py::array_t<double>({static_cast<py::ssize_t>(n_rows), static_cast<py::ssize_t>(K)});
  double* dst = out.mutable_data();
  // The engine checks for +-inf as it reads X (a tree model's batch: once, block by block).
  predict_released(X, false, n_threads, [&](auto view) {
    predictor->decision_function(view, dst, learners(n_trees), n_threads, check_inf);
  });
  return out;
}

// Per-feature contributions (n, K, n_features + 1): TreeSHAP, the expected value last.
py::array_t<double> contributions(const PyModel& pm, const py::array& X, int n_threads, long n_trees, bool check_inf) {
  const std::shared_ptr<const Predictor> predictor = pm.predictor();
  const Model& model = pm.model();
  const auto shape = {static_cast<py::ssize_t>(n_rows_of(X)), static_cast<py::ssize_t>(model.n_outputs),
                      static_cast<py::ssize_t>(model.n_features) + 1};
  py::array_t<double> out(shape);
  double* dst = out.mutable_data();
  predict_released(X, check_inf, n_threads,
                   [&](auto view) { predictor->contributions(view, dst, learners(n_trees), n_threads); });
  return out;
}

py::object predict(const PyModel& pm, const py::array& X, int n_threads, long n_trees, bool return_n_learners,
                   bool check_inf, bool early_exit, std::size_t check_every, bool cascade) {
  const std::shared_ptr<const Predictor> predictor = pm.predictor();
  const auto n_rows = static_cast<py::ssize_t>(n_rows_of(X));
  py::array_t<std::int32_t> classes(n_rows);
  py::array_t<std::uint32_t> counts(return_n_learners ? n_rows : 0);
  std::int32_t* dst = classes.mutable_data();
  std::uint32_t* n_learners = return_n_learners ? counts.mutable_data() : nullptr;
  PredictOptions options;
  options.n_trees = learners(n_trees);
  options.n_threads = n_threads;
  options.early_exit = early_exit;
  options.check_every = check_every;
  options.cascade = cascade;
  options.reject_inf = check_inf;  // checked by the engine, chunk by chunk where it can (PredictOptions)
  predict_released(X, false, n_threads, [&](auto view) { predictor->predict(view, dst, options, n_learners); });
  if (return_n_learners) return py::make_tuple(classes, counts);
  return std::move(classes);
}

py::array_t<std::int8_t> outputs(const PyModel& pm, const py::array& X, int n_threads, std::size_t first_tree,
                                 long n_trees) {
  const std::shared_ptr<const Predictor> predictor = pm.predictor();
  const std::size_t first = std::min(first_tree, pm.model().trees.size());
  const std::size_t left = pm.model().trees.size() - first;
  const std::size_t used = n_trees < 0 ? left : std::min(left, static_cast<std::size_t>(n_trees));
  py::array_t<std::int8_t> out({static_cast<py::ssize_t>(n_rows_of(X)), static_cast<py::ssize_t>(used)});
  std::int8_t* dst = out.mutable_data();
  with_view(X, [&](auto view) {
    py::gil_scoped_release release;
    predictor->tree_outputs(view, dst, n_threads, first, used);
    return 0;
  });
  return out;
}

// f_t(x) of learners first, ... (n of them; -1: to the end): int8 +-1 for trees, float64 for similarities
// and regression trees.
py::array learner_outputs_py(const PyModel& pm, const py::array& X, int n_threads, std::size_t first_learner, long n) {
  const Model& model = pm.model();
  if (model.learner == LearnerKind::kTree && !model.is_regression()) return outputs(pm, X, n_threads, first_learner, n);
  const std::shared_ptr<const Predictor> predictor = pm.predictor();
  const std::size_t first = std::min(first_learner, model.n_learners());
  const std::size_t left = model.n_learners() - first;
  const std::size_t used = n < 0 ? left : std::min(left, static_cast<std::size_t>(n));
  py::array_t<double> out({static_cast<py::ssize_t>(n_rows_of(X)), static_cast<py::ssize_t>(used)});
  double* dst = out.mutable_data();
  with_view(X, [&](auto view) {
    py::gil_scoped_release release;
    predictor->learner_outputs(view, dst, n_threads, first, used);
    return 0;
  });
  return out;
}

// Step vectors of every learner as a (n_learners, K) array.
py::array_t<double> steps(const PyModel& pm) {
  const Model& model = pm.model();
  const std::size_t T = model.n_learners(), K = model.n_outputs;
  py::array_t<double> out({static_cast<py::ssize_t>(T), static_cast<py::ssize_t>(K)});
  double* dst = out.mutable_data();
  for (std::size_t t = 0; t < T; ++t)
    for (std::size_t k = 0; k < K; ++k) dst[t * K + k] = model.step(t)[k];
  return out;
}

template <typename U>
py::array_t<U> vector_array(const std::vector<U>& v) {
  return py::array_t<U>(static_cast<py::ssize_t>(v.size()), v.data());
}

// A similarity model's members as arrays: per learner its kind (0 constant, 1 one-point, 2 two-point),
// anchor indices (-1 unused) and tau (NaN unless one-point); the anchors (standardised) and their
// training rows; the standardisation.
py::dict similarities_as_dict(const PyModel& pm) {
  const Model& model = pm.model();
  if (model.learner == LearnerKind::kTree) throw InvalidArgument("not a similarity or hybrid model");
  const auto T = static_cast<py::ssize_t>(model.similarities.size());
  py::array_t<std::int32_t> kind(T);
  py::array_t<std::int64_t> anchors({T, static_cast<py::ssize_t>(2)});
  py::array_t<double> tau(T);
  for (py::ssize_t t = 0; t < T; ++t) {
    const Similarity& s = model.similarities[static_cast<std::size_t>(t)];
    kind.mutable_at(t) = static_cast<std::int32_t>(s.kind);
    anchors.mutable_at(t, 0) = s.kind == Similarity::Kind::kConstant ? -1 : static_cast<std::int64_t>(s.anchor_i);
    anchors.mutable_at(t, 1) = s.kind == Similarity::Kind::kTwoPoint ? static_cast<std::int64_t>(s.anchor_j) : -1;
    tau.mutable_at(t) = s.kind == Similarity::Kind::kOnePoint ? s.tau : std::nan("");
  }
  const auto A = static_cast<py::ssize_t>(model.anchor_rows.size());
  py::array_t<double> points({A, static_cast<py::ssize_t>(model.n_features)});
  std::copy(model.anchors.begin(), model.anchors.end(), points.mutable_data());
  py::dict d;
  d["kind"] = kind;
  d["anchor"] = anchors;
  d["tau"] = tau;
  d["anchors"] = points;
  d["anchor_rows"] = vector_array(model.anchor_rows);
  d["feature_mean"] = vector_array(model.feature_mean);
  d["feature_scale"] = vector_array(model.feature_scale);
  return d;
}

// Trees first, ... (count of them; -1: to the end) as plain arrays (for tests, plotting and the JSON export,
// which asks for a chunk at a time: a million trees as dicts of arrays took gigabytes).
py::list trees_as_dicts(const PyModel& pm, std::size_t first, long count) {
  const Model& model = pm.model();
  const std::size_t begin = std::min(first, model.trees.size());
  const std::size_t left = model.trees.size() - begin;
  const std::size_t end = begin + (count < 0 ? left : std::min(left, static_cast<std::size_t>(count)));
  py::list out;
  for (std::size_t t = begin; t < end; ++t) {
    const Tree& tree = model.trees[t];
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
    if (!tree.cover.empty())  // absent for trees from files older than format version 5
      d["cover"] = py::array_t<double>(static_cast<py::ssize_t>(tree.cover.size()), tree.cover.data());
    if (!tree.leaf_value.empty())  // regression trees only
      d["leaf_value"] = py::array_t<double>(static_cast<py::ssize_t>(tree.leaf_value.size()), tree.leaf_value.data());
    out.append(d);
  }
  return out;
}

template <typename U>
using Column = py::array_t<U, py::array::c_style | py::array::forcecast>;

template <typename U>
std::vector<U> column(const py::dict& d, const char* key, std::size_t n, const std::string& where) {
  const Column<U> a = d[key].cast<Column<U>>();
  if (a.ndim() != 1 || static_cast<std::size_t>(a.shape(0)) != n)
    throw ModelFileError(where + "'" + key + "' has " + std::to_string(a.size()) + " entries, expected " + std::to_string(n));
  return std::vector<U>(a.data(), a.data() + n);
}

// A tree model from its arrays (rebelboost.from_json; the Python layer checks types and ranges first):
// each tree a dict of equally long node arrays plus its step and (optional) covers, no cascade (add it with
// Model.with_cascade). Model::validate then
// checks every index, size and value as the file loader does (ModelFileError).
PyModel from_trees(const std::string& loss_key, std::uint32_t n_features, const Column<double>& bias,
                   const py::list& trees, const py::bytes& metadata) {
  Model m;
  m.loss = loss_key == "adaboost" ? LossKind::kAdaBoost : loss_key == "veb" ? LossKind::kVebBoost
           : loss_key == "rebel" ? LossKind::kRebel : loss_key == "squared_error" ? LossKind::kSquaredError
           : throw ModelFileError("unknown loss '" + loss_key + "'");
  m.n_features = n_features;
  m.n_outputs = static_cast<std::uint32_t>(bias.size());
  if (m.n_outputs == 0 || m.n_outputs > kMaxClasses) throw ModelFileError("bias must hold 1 to kMaxClasses entries");
  if (static_cast<std::size_t>(trees.size()) > kMaxTrees) throw ModelFileError("more trees than the limit kMaxTrees");
  m.bias.assign(bias.data(), bias.data() + bias.size());
  m.metadata = std::string(metadata);
  for (const py::handle item : trees) {
    const py::dict d = item.cast<py::dict>();
    const std::string where = "tree " + std::to_string(m.trees.size()) + ": ";
    const auto n = static_cast<std::size_t>(py::len(d["feature"]));
    if (n == 0 || n > kMaxTreeNodes) throw ModelFileError(where + std::to_string(n) + " nodes (1 to kMaxTreeNodes)");
    Tree t;
    const auto feature = column<std::int32_t>(d, "feature", n, where);
    const auto nan_left = column<std::uint8_t>(d, "nan_left", n, where);
    const auto value = column<std::int8_t>(d, "value", n, where);
    const auto left = column<std::uint32_t>(d, "left", n, where), right = column<std::uint32_t>(d, "right", n, where);
    const auto threshold = column<double>(d, "threshold", n, where), gain = column<double>(d, "gain", n, where);
    t.nodes.resize(n);
    for (std::size_t i = 0; i < n; ++i)
      t.nodes[i] = Node{feature[i], nan_left[i], value[i], left[i], right[i], threshold[i], gain[i]};
    t.step = column<double>(d, "step", m.n_outputs, where);
    if (d.contains("cover") && !d["cover"].is_none()) t.cover = column<double>(d, "cover", n, where);
    if (d.contains("leaf_value") && !d["leaf_value"].is_none()) t.leaf_value = column<double>(d, "leaf_value", n, where);
    m.trees.push_back(std::move(t));
  }
  m.validate();
  return PyModel(std::move(m));
}

PyModel from_bytes(const py::bytes& data) {
  char* buffer = nullptr;
  py::ssize_t length = 0;
  if (PYBIND11_BYTES_AS_STRING_AND_SIZE(data.ptr(), &buffer, &length) != 0) throw py::error_already_set();
  return PyModel(deserialize(buffer, static_cast<std::size_t>(length)));
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
  m.attr("MAX_ABS_TARGET") = kMaxAbsTarget;
  py::class_<PyModel>(m, "Model")
      .def_property_readonly("loss", [](const PyModel& pm) { return std::string(loss_name(pm.model().loss)); })
      .def_property_readonly("loss_key", [](const PyModel& pm) { return loss_key(pm.model().loss); },
                             "The loss as train() names it: 'adaboost', 'veb' or 'rebel'.")
      .def_property_readonly("rebel_loss", [](const PyModel& pm) { return std::string(rebel_g_name(pm.model().g)); },
                             "REBEL's surrogate g: 'exponential', 'logistic' or 'squared' ('exponential' for the "
                             "binary losses).")
      .def_property_readonly("n_features", [](const PyModel& pm) { return pm.model().n_features; })
      .def_property_readonly("n_outputs", [](const PyModel& pm) { return pm.model().n_outputs; })
      .def_property_readonly("learner", [](const PyModel& pm) { return std::string(learner_name(pm.model().learner)); },
                             "The weak-learner family: 'tree', 'similarity' or 'hybrid'.")
      .def_property_readonly("n_trees", [](const PyModel& pm) { return pm.model().trees.size(); })
      .def_property_readonly("n_learners", [](const PyModel& pm) { return pm.model().n_learners(); })
      .def_property_readonly("bias", [](const PyModel& pm) {
        return py::array_t<double>(static_cast<py::ssize_t>(pm.model().bias.size()), pm.model().bias.data());
      })
      .def_property("metadata", [](const PyModel& pm) { return py::bytes(pm.model().metadata); },
                    [](PyModel& pm, const py::bytes& b) { pm.set_metadata(std::string(b)); })
      .def("trees", &trees_as_dicts, py::arg("first") = 0, py::arg("count") = -1,
           "Trees first, ... (count of them; -1: to the end) as dicts of arrays.")
      .def("steps", &steps, "Step vectors a_t of every learner, (n_learners, K).")
      .def("learner_kinds", [](const PyModel& pm) {
        const Model& model = pm.model();
        py::array_t<std::int8_t> kinds(static_cast<py::ssize_t>(model.n_learners()));
        for (std::size_t t = 0; t < model.n_learners(); ++t)
          kinds.mutable_at(static_cast<py::ssize_t>(t)) = static_cast<std::int8_t>(model.ref(t).kind);
        return kinds;
      }, "Each learner's kind in order, (n_learners,) int8: 0 tree, 1 similarity (hybrid models mix them).")
      .def("similarities", &similarities_as_dict, "A similarity model's learners, anchors and standardisation.")
      .def("truncated", [](const PyModel& pm, std::size_t n_trees) {
        Model out = pm.model();
        out.truncate(n_trees);
        return PyModel(std::move(out));
      }, py::arg("n_trees"), "A copy keeping the first n_trees learners (trees or similarities).")
      .def("feature_importances", [](const PyModel& pm) {
        const std::vector<double> v = pm.model().feature_importances();
        return py::array_t<double>(static_cast<py::ssize_t>(v.size()), v.data());
      })
      .def("decision_function", &decision, py::arg("X"), py::arg("n_threads") = 0, py::arg("n_trees") = -1,
           py::arg("check_inf") = false,
           "Scores H(x) (n,) for binary models, (n, K) otherwise; X float32/float64, any strides.")
      .def("contributions", &contributions, py::arg("X"), py::arg("n_threads") = 0, py::arg("n_trees") = -1,
           py::arg("check_inf") = false,
           "Per-feature contributions (n, K, n_features + 1) by path-dependent TreeSHAP, the expected value last; "
           "each row's K sums are decision_function's scores. Tree models with covers only.")
      .def_property_readonly("has_covers", [](const PyModel& pm) { return pm.model().has_covers(); },
                             "Whether the trees hold their node covers (files from format version 5 on).")
      .def("predict", &predict, py::arg("X"), py::arg("n_threads") = 0, py::arg("n_trees") = -1,
           py::arg("return_n_learners") = false, py::arg("check_inf") = false, py::arg("early_exit") = false,
           py::arg("check_every") = 0, py::arg("cascade") = false,
           "Class indices (n,) int32; with return_n_learners also the learners evaluated per row (uint32). "
           "early_exit: exact early exit (same classes), rows checked every check_every learners (0: default); "
           "cascade: the calibrated soft cascade.")
      .def("tree_outputs", &outputs, py::arg("X"), py::arg("n_threads") = 0, py::arg("first_tree") = 0,
           py::arg("n_trees") = -1,
           "f_t(x) in {+1,-1} for trees first_tree, ... (n_trees of them; -1: to the end) as an (n, n_used) int8 array.")
      .def("learner_outputs", &learner_outputs_py, py::arg("X"), py::arg("n_threads") = 0, py::arg("first") = 0,
           py::arg("n") = -1,
           "f_t(x) for learners first, ... (n of them; -1: to the end) as an (n_rows, n_used) array: int8 +-1 for "
           "trees, float64 in [-1, 1] for similarities, float64 leaf values for regression trees.")
      .def("to_bytes", [](const PyModel& pm) { return py::bytes(serialize(pm.model())); })
      .def_static("from_bytes", &from_bytes)
      .def_static("from_trees", &from_trees, py::arg("loss"), py::arg("n_features"), py::arg("bias"), py::arg("trees"),
                  py::arg("metadata"),
                  "A tree model from its arrays (rebelboost.from_json), validated as the file loader validates; "
                  "add a soft cascade with with_cascade.")
      .def("save", [](const PyModel& pm, const std::string& path) {
        py::gil_scoped_release release;
        save_model(pm.model(), path);
      })
      .def_static("load", [](const std::string& path) {
        py::gil_scoped_release release;
        return PyModel(load_model(path));
      });
}

}  // namespace rebelboost::bindings
