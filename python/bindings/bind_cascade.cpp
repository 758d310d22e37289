// Soft cascades on _core.Model: calibration on validation rows (GIL released) and the stored thresholds.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <string>
#include <utility>

#include "convert.hpp"
#include "py_model.hpp"
#include "rebelboost/model.hpp"
#include "rebelboost/predict.hpp"

namespace rebelboost::bindings {

namespace {

CascadeTarget::Kind parse_kind(const std::string& kind) {
  if (kind == "accuracy_loss") return CascadeTarget::Kind::kAccuracyLoss;
  if (kind == "disagreement") return CascadeTarget::Kind::kDisagreement;
  if (kind == "recall") return CascadeTarget::Kind::kRecall;
  throw InvalidArgument("unknown cascade target '" + kind + "' (accuracy_loss, disagreement or recall)");
}

// A copy of the model with `cascade`, validated like a loaded file.
PyModel with(const PyModel& pm, Cascade cascade) {
  Model out = pm.model();
  out.cascade = std::move(cascade);
  out.validate();
  return PyModel(std::move(out));
}

// (the calibrated copy, the CascadeReport as a dict).
py::tuple calibrate(const PyModel& pm, const py::array& X, const py::array_t<std::int32_t, py::array::c_style>& y,
                    const std::string& kind, double value, const py::object& every, double confidence, int n_threads) {
  const std::shared_ptr<const Predictor> predictor = pm.predictor();
  if (y.ndim() != 1 || (X.ndim() == 2 && y.shape(0) != X.shape(0)))
    throw InvalidArgument("y must be 1-D with one class index per row of X");
  CascadeTarget target;
  target.kind = parse_kind(kind);
  target.value = value;
  if (!every.is_none()) {  // None: the calibration tries 4, 8 and 16 (CascadeTarget::every = 0)
    const auto spacing = every.cast<std::int64_t>();
    check_cascade_every(spacing, pm.model().n_learners());
    target.every = static_cast<std::uint32_t>(spacing);
  }
  target.confidence = confidence;
  const std::int32_t* labels = y.data();
  CascadeReport rep;
  Cascade cascade = with_view(X, [&](auto view) {
    py::gil_scoped_release release;
    return predictor->calibrate_cascade(view, labels, target, n_threads, &rep);
  });
  py::dict report;
  report["n_rows"] = rep.n_rows;
  report["min_rows"] = rep.min_rows;
  report["harmful"] = rep.harmful;
  report["target"] = rep.target;
  report["confidence"] = rep.confidence;
  report["harm"] = rep.harm;
  report["harm_interval"] = py::make_tuple(rep.harm_low, rep.harm_high);
  report["harm_bound"] = rep.harm_bound;
  report["mean_learners"] = rep.mean_learners;
  report["learners_interval"] = py::make_tuple(rep.learners_low, rep.learners_high);
  report["n_learners"] = rep.n_learners;
  report["every"] = rep.every;
  report["shape"] = rep.shape;
  report["scale"] = rep.scale;
  report["tested"] = rep.tested;
  return py::make_tuple(with(pm, std::move(cascade)), report);
}

py::object cascade_of(const PyModel& pm) {
  const Cascade& c = pm.model().cascade;
  if (c.empty()) return py::none();
  const auto C = static_cast<py::ssize_t>(pm.model().n_classes());
  py::array_t<double> thresholds({static_cast<py::ssize_t>(c.thresholds.size()) / C, C});
  std::copy(c.thresholds.begin(), c.thresholds.end(), thresholds.mutable_data());
  return py::make_tuple(c.every, thresholds);
}

PyModel with_thresholds(const PyModel& pm, std::uint32_t every,
                        const py::array_t<double, py::array::c_style | py::array::forcecast>& thresholds) {
  Cascade cascade;
  cascade.every = every;
  cascade.thresholds.assign(thresholds.data(), thresholds.data() + thresholds.size());
  if (cascade.thresholds.empty()) cascade.every = 0;
  return with(pm, std::move(cascade));
}

}  // namespace

void bind_cascade(py::module_& m) {
  auto model = py::reinterpret_borrow<py::class_<PyModel>>(m.attr("Model"));
  model.def_property_readonly("cascade", &cascade_of,
                              "None, or (every, thresholds) with thresholds (n_checkpoints, n_classes): the soft cascade.")
      .def("with_cascade", &with_thresholds, py::arg("every"), py::arg("thresholds"),
           "A copy with these cascade thresholds (validated; an empty array removes the cascade).")
      .def("calibrate_cascade", &calibrate, py::arg("X"), py::arg("y"), py::arg("kind"), py::arg("value"),
           py::arg("every") = py::none(), py::arg("confidence") = CascadeTarget{}.confidence,
           py::arg("n_threads") = 0,
           "(a copy with a soft cascade calibrated on (X, y class indices), its report as a dict) for a target: "
           "kind 'accuracy_loss', 'disagreement' or 'recall' with its value in [0, 1], certified on new rows with "
           "`confidence`; checkpoints every `every` learners (None: chosen among 4, 8 and 16; an int is checked by "
           "check_cascade_every).");
}

}  // namespace rebelboost::bindings
