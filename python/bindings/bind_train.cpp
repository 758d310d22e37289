// train(): numpy in, the fit on a worker thread (interruptible.hpp); the callback runs in the calling thread.
#include <pybind11/functional.h>
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <memory>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "convert.hpp"
#include "interruptible.hpp"
#include "py_model.hpp"
#include "data/bin_mapper.hpp"
#include "loss/cost_matrix.hpp"
#include "rebelboost/param_bounds.hpp"
#include "rebelboost/train.hpp"
#include "util/parallel.hpp"

namespace rebelboost::bindings {

namespace {

LearnerKind parse_learner(const std::string& name) {
  if (name == "tree") return LearnerKind::kTree;
  if (name == "similarity") return LearnerKind::kSimilarity;
  if (name == "hybrid") return LearnerKind::kHybrid;
  throw InvalidArgument("unknown weak learner '" + name + "' (expected 'tree', 'similarity' or 'hybrid')");
}

std::string step_rule_name(StepRule rule) { return rule == StepRule::kExact ? "exact" : "sign"; }

std::string scaling_name(int scaling) { return scaling == 0 ? "feature" : "global"; }

StepRule parse_step_rule(const std::string& name) {
  if (name == "exact") return StepRule::kExact;
  if (name == "sign") return StepRule::kSign;
  throw InvalidArgument("unknown similarity step rule '" + name + "' (expected 'exact' or 'sign')");
}

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
  d["replayed"] = info.replayed;
  d["eval_loss"] = info.eval_loss;
  d["candidates"] = info.candidates;
  d["learner"] = static_cast<int>(info.learner);  // 0 tree, 1 similarity
  return d;
}

using Array = py::array_t<double, py::array::c_style | py::array::forcecast>;
using Labels = py::array_t<std::int32_t, py::array::c_style | py::array::forcecast>;

// A (n_classes, n_classes) array (or None: empty, uniform costs) as TrainParams::cost_matrix's row-major
// entries; the entries themselves are checked by loss::checked_cost_matrix, the one check of them.
std::vector<double> cost_entries(const py::object& cost_matrix, std::size_t n_classes) {
  if (cost_matrix.is_none()) return {};
  auto c = Array::ensure(cost_matrix);
  if (!c || c.ndim() != 2) throw InvalidArgument("cost_matrix must be a 2-D array of numbers");
  if (static_cast<std::size_t>(c.shape(0)) != n_classes || static_cast<std::size_t>(c.shape(1)) != n_classes)
    throw InvalidArgument("cost_matrix has shape (" + std::to_string(c.shape(0)) + ", " + std::to_string(c.shape(1)) +
                          "); expected (" + std::to_string(n_classes) + ", " + std::to_string(n_classes) + ") for " +
                          std::to_string(n_classes) + " classes");
  return {c.data(), c.data() + c.size()};
}

// TrainParams' defaults under train()'s keywords: what Python reads instead of repeating them.
py::dict train_param_defaults() {
  const TrainParams d;
  py::dict out;
  out["n_estimators"] = d.n_estimators;
  out["max_depth"] = d.max_depth;
  out["n_bins"] = d.n_bins;
  out["learning_rate"] = d.learning_rate;
  out["n_threads"] = d.n_threads;
  out["smoothing"] = d.smoothing;
  out["bin_subsample"] = d.bin_subsample;
  out["bin_seed"] = d.bin_seed;
  out["quick"] = d.quick;
  out["criterion"] = d.criterion;
  out["weight_trim"] = d.weight_trim;
  out["subsample"] = d.subsample;
  out["feature_fraction"] = d.feature_fraction;
  out["seed"] = d.seed;
  out["veb_lambda"] = d.veb_lambda;
  out["min_samples_leaf"] = d.min_samples_leaf;
  out["tree_penalty"] = d.tree_penalty;
  out["rebel_loss"] = rebel_g_name(d.rebel_g);
  out["learner"] = learner_name(d.learner);
  out["step_rule"] = step_rule_name(d.similarity.step_rule);
  out["tau_ratio"] = d.similarity.tau_ratio;
  out["max_candidates"] = d.similarity.max_candidates;
  out["scaling"] = scaling_name(d.similarity.scaling);
  out["distance_cache_mb"] = d.similarity.distance_cache_mb;
  return out;
}

// kParamBounds as {name: (low, high, low_open, high_open, integral)}.
py::dict param_bounds() {
  py::dict out;
  for (const ParamBound& b : kParamBounds) out[b.name] = py::make_tuple(b.low, b.high, b.low_open, b.high_open, b.integral);
  return out;
}

TrainParams make_params(std::size_t n_classes, const std::string& loss, int n_estimators, int max_depth, int n_bins,
                        double learning_rate, int n_threads, double smoothing, std::size_t bin_subsample,
                        std::int64_t bin_seed, double veb_lambda, const py::object& cost_matrix, int quick,
                        int criterion, double weight_trim, double subsample, double feature_fraction,
                        std::int64_t seed, const std::string& learner, const std::string& step_rule, double tau_ratio,
                        int max_candidates, const std::string& scaling, double distance_cache_mb,
                        const std::string& rebel_loss, double tree_penalty) {
  TrainParams p;
  p.loss = parse_loss(loss);
  p.rebel_g = parse_rebel_g(rebel_loss);
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
  p.learner = parse_learner(learner);
  p.similarity.step_rule = parse_step_rule(step_rule);
  p.similarity.tau_ratio = tau_ratio;
  p.similarity.max_candidates = max_candidates;
  p.similarity.distance_cache_mb = distance_cache_mb;
  p.tree_penalty = tree_penalty;
  if (scaling != "feature" && scaling != "global")
    throw InvalidArgument("unknown similarity scaling '" + scaling + "' (expected 'feature' or 'global')");
  p.similarity.scaling = scaling == "global" ? 1 : 0;
  p.cost_matrix = cost_entries(cost_matrix, n_classes);
  return p;
}

// Optional 1-D weights with one entry per row (null when None); `keep` holds the converted array.
const double* weights_of(const py::object& sample_weight, std::size_t n_rows, Array& keep, const std::string& what) {
  if (sample_weight.is_none()) return nullptr;
  keep = Array::ensure(sample_weight);
  if (!keep || keep.ndim() != 1 || static_cast<std::size_t>(keep.shape(0)) != n_rows)
    throw InvalidArgument(what + " must be 1-D with one entry per sample");
  return keep.data();
}

// The arrays of the eval sets, converted and kept alive while the core reads them: class indices y for
// classifiers, real targets for the regressor.
struct EvalArrays {
  std::vector<py::array> X;
  std::vector<Labels> y;
  std::vector<Array> target;
  std::vector<Array> w;
  std::vector<const double*> w_data;
};

EvalArrays eval_arrays(const py::list& eval_sets, const py::array& X, bool regression = false) {
  EvalArrays a;
  for (const py::handle& item : eval_sets) {
    const py::tuple t = py::reinterpret_borrow<py::tuple>(item);
    if (t.size() != 3) throw InvalidArgument("every eval set must be a tuple (X, y, sample_weight or None)");
    py::array Xe = py::array::ensure(t[0]);
    if (!Xe || Xe.ndim() != 2 || !Xe.dtype().is(X.dtype()))
      throw InvalidArgument("an eval set's X must be a 2-D array of the training data's dtype");
    if (regression) {
      Array te = Array::ensure(t[1]);
      if (!te || te.ndim() != 1 || te.shape(0) != Xe.shape(0))
        throw InvalidArgument("an eval set's y must be 1-D with one target per row");
      a.target.push_back(te);
    }
    Labels ye = regression ? Labels(py::ssize_t{0}) : Labels::ensure(t[1]);
    if (!regression && (!ye || ye.ndim() != 1 || ye.shape(0) != Xe.shape(0)))
      throw InvalidArgument("an eval set's y must be 1-D with one label index per row");
    a.w.emplace_back();
    a.w_data.push_back(weights_of(py::reinterpret_borrow<py::object>(t[2]), static_cast<std::size_t>(Xe.shape(0)),
                                  a.w.back(), "an eval set's sample_weight"));
    a.X.push_back(Xe);
    a.y.push_back(ye);
  }
  return a;
}

// The per-iteration record for Python, with a copy of each eval set's scores ((n,) for K = 1, else (n, K)).
py::dict record_of(const IterationInfo& info, const EvalArrays& evals, std::size_t K) {
  py::dict d = info_to_dict(info);
  py::list scores;
  for (std::size_t e = 0; e < info.eval_scores.size(); ++e) {
    const auto n = static_cast<py::ssize_t>(evals.X[e].shape(0));
    Array copy = K == 1 ? Array({n}) : Array({n, static_cast<py::ssize_t>(K)});
    std::copy(info.eval_scores[e], info.eval_scores[e] + static_cast<std::size_t>(n) * K, copy.mutable_data());
    scores.append(copy);
  }
  d["eval_scores"] = scores;
  return d;
}

// A Reducer backed by a Python callable reduce(values: int64 array, op: "sum" | "max") -> int64 array of
// the same length (rebelboost.dask's all-reduce). Called from the training thread: it takes the GIL.
class PyReducer final : public Reducer {
 public:
  explicit PyReducer(py::object reduce) : reduce_(std::move(reduce)) {}
  ~PyReducer() override {
    py::gil_scoped_acquire acquire;
    reduce_ = py::object();
  }
  void sum(std::int64_t* data, std::size_t n) override { call(data, n, "sum"); }
  void max(std::int64_t* data, std::size_t n) override { call(data, n, "max"); }

 private:
  void call(std::int64_t* data, std::size_t n, const char* op) {
    py::gil_scoped_acquire acquire;
    try {
      py::array_t<std::int64_t> values(static_cast<py::ssize_t>(n));
      std::copy(data, data + n, values.mutable_data());
      auto out = py::array_t<std::int64_t, py::array::c_style | py::array::forcecast>::ensure(reduce_(values, op));
      if (!out || static_cast<std::size_t>(out.size()) != n)
        throw InvalidArgument("the reducer returned an array of the wrong length");
      std::copy(out.data(), out.data() + n, data);
    } catch (py::error_already_set& e) {  // raised again in the calling thread as RuntimeError
      throw std::runtime_error(std::string("distributed reduction failed: ") + e.what());
    }
  }
  py::object reduce_;
};

// The distributed part of a fit (null when reducer is None).
std::unique_ptr<DistributedPart> distributed_part(const py::object& reducer, const py::object& bin_edges,
                                                  const py::object& global_rows, std::size_t n_rows,
                                                  std::unique_ptr<PyReducer>& keep,
                                                  py::array_t<std::uint64_t, py::array::c_style | py::array::forcecast>& rows) {
  if (reducer.is_none()) return nullptr;
  auto part = std::make_unique<DistributedPart>();
  keep = std::make_unique<PyReducer>(reducer);
  part->reducer = keep.get();
  for (const py::handle& e : py::reinterpret_borrow<py::list>(bin_edges)) {
    const Array a = Array::ensure(e);
    if (!a || a.ndim() != 1) throw InvalidArgument("bin_edges must be a list of 1-D arrays");
    part->bin_edges.emplace_back(a.data(), a.data() + a.size());
  }
  rows = py::array_t<std::uint64_t, py::array::c_style | py::array::forcecast>::ensure(global_rows);
  if (!rows || rows.ndim() != 1 || static_cast<std::size_t>(rows.shape(0)) != n_rows)
    throw InvalidArgument("global_rows must be 1-D with one index per row of X");
  part->global_rows = rows.data();
  return part;
}

// train()'s and train_regressor()'s result: (Model, history, stop_reason, stop_message, error, stage_seconds).
py::tuple result_tuple(Interruptible& run) {
  py::list history;
  for (const IterationInfo& info : run.result.history) history.append(info_to_dict(info));
  py::dict wall, thread_cpu, process_cpu;
  for (const TrainResult::StageSeconds& s : run.result.stage_seconds) {
    wall[py::str(s.stage)] = s.wall;
    thread_cpu[py::str(s.stage)] = s.thread_cpu;
    process_cpu[py::str(s.stage)] = s.process_cpu;
  }
  py::dict stages;
  stages["wall"] = wall;
  stages["thread_cpu"] = thread_cpu;
  stages["process_cpu"] = process_cpu;
  return py::make_tuple(PyModel(std::move(run.result.model)), history, run.result.stop_reason, run.result.stop_message,
                        run.error, stages);
}

// The per-iteration relay to a Python callback (empty when callback is None).
IterationCallback python_callback(const py::object& callback, const EvalArrays& evals, std::size_t K) {
  if (callback.is_none()) return {};
  return [&callback, &evals, K](const IterationInfo& info) {
    const py::object r = callback(record_of(info, evals, K));
    return r.is_none() || r.cast<bool>();
  };
}

py::tuple train_py(const py::array& X, const Labels& y, const py::object& sample_weight, std::size_t n_classes,
                   const std::string& loss, int n_estimators, int max_depth, int n_bins, double learning_rate,
                   int n_threads, double smoothing, std::size_t bin_subsample, std::int64_t bin_seed,
                   const py::object& callback, double veb_lambda, const py::object& cost_matrix, int quick,
                   int criterion, double weight_trim, double subsample, double feature_fraction, std::int64_t seed,
                   const py::object& init_model, const py::list& eval_sets, const std::string& learner,
                   const std::string& step_rule, double tau_ratio, int max_candidates, const std::string& scaling,
                   double distance_cache_mb, const py::object& reducer, const py::object& bin_edges,
                   const py::object& global_rows, const std::string& rebel_loss, double tree_penalty) {
  const TrainParams p = make_params(n_classes, loss, n_estimators, max_depth, n_bins, learning_rate, n_threads,
                                    smoothing, bin_subsample, bin_seed, veb_lambda, cost_matrix, quick, criterion,
                                    weight_trim, subsample, feature_fraction, seed, learner, step_rule, tau_ratio,
                                    max_candidates, scaling, distance_cache_mb, rebel_loss, tree_penalty);
  if (y.ndim() != 1) throw InvalidArgument("y must be 1-D");
  const std::size_t n_rows = X.ndim() == 2 ? static_cast<std::size_t>(X.shape(0)) : 0;
  if (static_cast<std::size_t>(y.shape(0)) != n_rows)
    throw InvalidArgument("X has " + std::to_string(n_rows) + " samples but y has " + std::to_string(y.shape(0)));
  Array weights;
  const double* w = weights_of(sample_weight, n_rows, weights, "sample_weight");
  const Model* init = init_model.is_none() ? nullptr : &init_model.cast<const PyModel&>().model();
  const EvalArrays evals = eval_arrays(eval_sets, X);
  std::unique_ptr<PyReducer> py_reducer;
  py::array_t<std::uint64_t, py::array::c_style | py::array::forcecast> rows_kept;
  const std::unique_ptr<DistributedPart> part =
      distributed_part(reducer, bin_edges, global_rows, n_rows, py_reducer, rows_kept);
  const std::size_t K = p.loss == LossKind::kRebel ? n_classes : 1;
  const IterationCallback on_iteration = python_callback(callback, evals, K);
  const std::int32_t* labels = y.data();
  Interruptible run = with_view(X, [&](auto view) {
    using T = std::remove_cv_t<std::remove_pointer_t<decltype(view.data)>>;
    TrainOptions<T> options;
    options.init_model = init;
    options.distributed = part.get();
    for (std::size_t e = 0; e < evals.X.size(); ++e)
      options.eval_sets.push_back({view_2d<T>(evals.X[e]), evals.y[e].data(), evals.w_data[e]});
    return run_interruptible(
        [&](const IterationCallback& relay, const std::atomic<bool>* stop) {
          options.callback = relay;
          options.stop = stop;
          return train(view, labels, w, n_classes, p, options);
        },
        on_iteration);
  });
  return result_tuple(run);
}

py::tuple train_regressor_py(const py::array& X, const py::object& y, const py::object& sample_weight, int n_estimators,
                             int max_depth, int n_bins, double learning_rate, int n_threads, int min_samples_leaf,
                             double subsample, double feature_fraction, std::int64_t seed, std::size_t bin_subsample,
                             std::int64_t bin_seed, const py::object& callback, const py::object& init_model,
                             const py::list& eval_sets, int quick) {
  TrainParams p;
  p.loss = LossKind::kSquaredError;
  p.quick = quick;
  p.n_estimators = n_estimators;
  p.max_depth = max_depth;
  p.n_bins = n_bins;
  p.learning_rate = learning_rate;
  p.n_threads = n_threads;
  p.min_samples_leaf = min_samples_leaf;
  p.subsample = subsample;
  p.feature_fraction = feature_fraction;
  p.seed = seed;
  p.bin_subsample = bin_subsample;
  p.bin_seed = bin_seed;
  const std::size_t n_rows = X.ndim() == 2 ? static_cast<std::size_t>(X.shape(0)) : 0;
  Array targets = Array::ensure(y);
  if (!targets || targets.ndim() != 1 || static_cast<std::size_t>(targets.shape(0)) != n_rows)
    throw InvalidArgument("y must be 1-D with one target per row of X");
  Array weights;
  const double* w = weights_of(sample_weight, n_rows, weights, "sample_weight");
  const Model* init = init_model.is_none() ? nullptr : &init_model.cast<const PyModel&>().model();
  const EvalArrays evals = eval_arrays(eval_sets, X, /*regression=*/true);
  const IterationCallback on_iteration = python_callback(callback, evals, 1);
  const double* target = targets.data();
  Interruptible run = with_view(X, [&](auto view) {
    using T = std::remove_cv_t<std::remove_pointer_t<decltype(view.data)>>;
    TrainOptions<T> options;
    options.init_model = init;
    for (std::size_t e = 0; e < evals.X.size(); ++e) {
      EvalSet<T> set{view_2d<T>(evals.X[e]), nullptr, evals.w_data[e]};
      set.target = evals.target[e].data();
      options.eval_sets.push_back(set);
    }
    return run_interruptible(
        [&](const IterationCallback& relay, const std::atomic<bool>* stop) {
          options.callback = relay;
          options.stop = stop;
          return train_regressor(view, target, w, p, options);
        },
        on_iteration);
  });
  return result_tuple(run);
}

// The global rows whose values give the bin edges: what BinMapper::fit samples from n_rows rows.
py::array_t<std::uint64_t> bin_sample_rows(std::size_t n_rows, std::size_t subsample, std::int64_t seed) {
  if (subsample == 0) throw InvalidArgument("bin_subsample must be positive");
  if (std::min(n_rows, subsample) > static_cast<std::size_t>(UINT32_MAX))
    throw InvalidArgument("a bin sample of more than 2^32 - 1 rows (the row limit of a fit)");
  const std::vector<std::size_t> rows = data::subsample_rows(n_rows, subsample, seed);
  py::array_t<std::uint64_t> out(static_cast<py::ssize_t>(rows.size()));
  std::copy(rows.begin(), rows.end(), out.mutable_data());
  return out;
}

// The bin edges per feature that a fit finds on exactly these rows (the sampled rows of the whole data).
py::list bin_edges_of(const py::array& X, int n_bins, const py::object& sample_weight, int n_threads) {
  const std::size_t n_rows = X.ndim() == 2 ? static_cast<std::size_t>(X.shape(0)) : 0;
  Array weights;
  const double* w = weights_of(sample_weight, n_rows, weights, "sample_weight");
  data::BinMapper bins(n_bins, std::max<std::size_t>(n_rows, 1), -1);
  with_view(X, [&](auto view) {
    py::gil_scoped_release release;
    bins.fit(view, util::resolve_threads(n_threads), w);
    return 0;
  });
  py::list edges;
  for (std::size_t f = 0; f < bins.n_features(); ++f) {
    const std::vector<double>& e = bins.edges(f);
    Array a(static_cast<py::ssize_t>(e.size()));
    std::copy(e.begin(), e.end(), a.mutable_data());
    edges.append(a);
  }
  return edges;
}

}  // namespace

void bind_train(py::module_& m) {
  {
    const TrainParams d;  // keyword defaults: TrainParams' own (BoostingRegressor passes its own values)
    m.def("train_regressor", &train_regressor_py, py::arg("X"), py::arg("y"), py::arg("sample_weight"),
          py::arg("n_estimators") = d.n_estimators, py::arg("max_depth") = d.max_depth, py::arg("n_bins") = d.n_bins,
          py::arg("learning_rate") = d.learning_rate, py::arg("n_threads") = d.n_threads,
          py::arg("min_samples_leaf") = d.min_samples_leaf, py::arg("subsample") = d.subsample,
          py::arg("feature_fraction") = d.feature_fraction, py::arg("seed") = d.seed,
          py::arg("bin_subsample") = d.bin_subsample, py::arg("bin_seed") = d.bin_seed, py::arg("callback") = py::none(),
          py::arg("init_model") = py::none(), py::arg("eval_sets") = py::list(), py::arg("quick") = d.quick,
          "Fit a gradient-boosted regressor (squared error, regression trees); returns what train() returns. y: "
          "float64 targets; eval_sets: [(X, y, sample_weight or None)] with float64 targets.");
  }
  m.def("bin_sample_rows", &bin_sample_rows, py::arg("n_rows"), py::arg("bin_subsample") = TrainParams{}.bin_subsample,
        py::arg("bin_seed") = TrainParams{}.bin_seed,
        "The rows (ascending) whose values a fit of n_rows rows uses to find bin edges (rows with zero weight "
        "are then dropped).");
  m.def("bin_edges", &bin_edges_of, py::arg("X"), py::arg("n_bins"), py::arg("sample_weight") = py::none(),
        py::arg("n_threads") = 0,
        "Per feature, the bin edges a fit finds from exactly the rows of X (its bin sample).");
  m.attr("PARAM_BOUNDS") = param_bounds();
  m.def("train_param_defaults", &train_param_defaults,
        "TrainParams' defaults, keyed by train()'s keywords (docs/design/parameters.md).");
  m.def(
      "check_cost_matrix",
      [](const py::object& cost_matrix, std::size_t n_classes) {
        loss::checked_cost_matrix(cost_entries(cost_matrix, n_classes), n_classes);
      },
      py::arg("cost_matrix"), py::arg("n_classes"),
      "Raise ValueError unless cost_matrix is a valid (n_classes, n_classes) REBEL cost matrix (train's own check).");
  // Every default below is TrainParams' own (rebelboost/train.hpp), so the binding repeats none of them.
  const TrainParams d;
  m.def("train", &train_py, py::arg("X"), py::arg("y"), py::arg("sample_weight"), py::arg("n_classes"),
        py::arg("loss"), py::arg("n_estimators") = d.n_estimators, py::arg("max_depth") = d.max_depth,
        py::arg("n_bins") = d.n_bins, py::arg("learning_rate") = d.learning_rate, py::arg("n_threads") = d.n_threads,
        py::arg("smoothing") = d.smoothing, py::arg("bin_subsample") = d.bin_subsample, py::arg("bin_seed") = d.bin_seed,
        py::arg("callback") = py::none(), py::arg("veb_lambda") = d.veb_lambda, py::arg("cost_matrix") = py::none(),
        py::arg("quick") = d.quick, py::arg("criterion") = d.criterion, py::arg("weight_trim") = d.weight_trim,
        py::arg("subsample") = d.subsample, py::arg("feature_fraction") = d.feature_fraction, py::arg("seed") = d.seed,
        py::arg("init_model") = py::none(), py::arg("eval_sets") = py::list(),
        py::arg("learner") = std::string(learner_name(d.learner)), py::arg("step_rule") = step_rule_name(d.similarity.step_rule),
        py::arg("tau_ratio") = d.similarity.tau_ratio, py::arg("max_candidates") = d.similarity.max_candidates,
        py::arg("scaling") = scaling_name(d.similarity.scaling), py::arg("distance_cache_mb") = d.similarity.distance_cache_mb,
        py::arg("reducer") = py::none(), py::arg("bin_edges") = py::list(), py::arg("global_rows") = py::none(),
        py::arg("rebel_loss") = std::string(rebel_g_name(d.rebel_g)), py::arg("tree_penalty") = d.tree_penalty,
        "Fit a boosted ensemble; returns (Model, history, stop_reason, stop_message, error, stage_seconds). X float32/float64, y int32 class "
        "indices; eval_sets: [(X, y, sample_weight or None)]; init_model: a Model to continue (warm start); "
        "learner: 'tree', 'similarity' or 'hybrid' (step_rule, tau_ratio, max_candidates, scaling ('feature' or 'global'), "
        "distance_cache_mb: "
        "TrainParams::similarity); rebel_loss: REBEL's surrogate g ('exponential', 'logistic' or 'squared'; "
        "TrainParams::rebel_g); tree_penalty: hybrids' handicap on the tree candidate (TrainParams::tree_penalty). "
        "error: the Python exception (KeyboardInterrupt, or raised by the callback) that stopped training, for "
        "the caller to raise after keeping the finished iterations, else None. stage_seconds: {'wall' | 'thread_cpu' | "
        "'process_cpu': {stage: seconds}} of the whole fit (TrainResult::stage_seconds). "
        "reducer, bin_edges, global_rows: one participant of a distributed fit (rebelboost.dask): reducer(values, op) "
        "returns the element-wise 'sum' or 'max' of an int64 array over all participants, bin_edges the global "
        "edges per feature, global_rows the global index of each row of X.");
}

}  // namespace rebelboost::bindings
