// _rebelboost_testing.similarity_*: the stages of the similarity selection on numpy arrays, for tests that
// check them against independent numpy computations (binarization against numpy.linalg.eigh).
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <string>
#include <vector>

#include "learner/binarize.hpp"
#include "learner/point_set.hpp"
#include "learner/similarity_select.hpp"
#include "rebelboost/error.hpp"

namespace rebelboost::bindings {

namespace py = pybind11;

namespace {

using Array = py::array_t<double, py::array::c_style | py::array::forcecast>;

void check_2d(const Array& a, const char* name) {
  if (a.ndim() != 2 || a.shape(0) == 0 || a.shape(1) == 0)
    throw InvalidArgument(std::string(name) + " must be a non-empty 2-D array");
}

py::tuple binarize_py(const Array& s) {
  check_2d(s, "signed_weights");
  const auto n = static_cast<std::size_t>(s.shape(0)), K = static_cast<std::size_t>(s.shape(1));
  const learner::Binarization b = learner::binarize(s.data(), n, K, 1);
  py::array_t<std::int8_t> side(static_cast<py::ssize_t>(n));
  std::copy(b.side.begin(), b.side.end(), side.mutable_data());
  return py::make_tuple(side, b.eigenvalue);
}

learner::PointSet points_of(const Array& X) {
  check_2d(X, "points");
  return {std::vector<double>(X.data(), X.data() + X.size()), static_cast<std::size_t>(X.shape(0)),
          static_cast<std::size_t>(X.shape(1)), 1};
}

void check_rows(const Array& X, const Array& s) {
  check_2d(s, "signed_weights");
  if (X.shape(0) != s.shape(0)) throw InvalidArgument("points and signed_weights need the same number of rows");
}

std::size_t isolated_py(const Array& X, const Array& s) {
  check_rows(X, s);
  return learner::best_isolated_point(points_of(X), s.data(), static_cast<std::size_t>(s.shape(1)));
}

py::dict select_py(const Array& X, const Array& s, double tau_ratio) {
  check_rows(X, s);
  const learner::PointSet points = points_of(X);
  SimilarityParams params;
  params.tau_ratio = tau_ratio;
  learner::SimilaritySelector selector(points, static_cast<std::size_t>(s.shape(1)), params, 1);
  const learner::SimilaritySelection r = selector.select(s.data());
  py::dict d;
  d["kind"] = static_cast<int>(r.best.kind);
  d["i"] = r.best.i;
  d["j"] = r.best.j;
  d["tau"] = r.best.tau;
  d["score"] = r.best.score;
  d["outputs"] = py::array_t<double>(static_cast<py::ssize_t>(r.best.outputs.size()), r.best.outputs.data());
  d["candidates"] = r.candidates;
  return d;
}

}  // namespace

void bind_similarity_stages(py::module_& m) {
  m.def("similarity_binarize", &binarize_py, py::arg("signed_weights"),
        "(side int8 (n,), top eigenvalue of U^T U) for signed weights s_nk (n, K) (thesis §5.3; for tests).");
  m.def("similarity_isolated_point", &isolated_py, py::arg("points"), py::arg("signed_weights"),
        "Step 2 of §5.4: the point whose ideal isolation has the smallest Eq. 5.3 loss (for tests).");
  m.def("similarity_select", &select_py, py::arg("points"), py::arg("signed_weights"), py::arg("tau_ratio") = 0.5,
        "Steps 0-6 of §5.4 (exact rule): the chosen learner's kind (0 constant, 1 one-point, 2 two-point), "
        "anchors i, j, tau, score, outputs on the points, and the two-point candidates visited (for tests).");
}

}  // namespace rebelboost::bindings
