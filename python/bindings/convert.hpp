// numpy <-> core views shared by the binding files.
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <string>
#include <utility>

#include "rebelboost/error.hpp"
#include "rebelboost/matrix_view.hpp"
#include "rebelboost/model.hpp"

namespace rebelboost::bindings {

namespace py = pybind11;

// A strided view of a 2-D float32/float64 numpy array (no copy). The array must outlive the view.
template <typename T>
MatrixView<T> view_2d(const py::array& a) {
  if (a.ndim() != 2) throw InvalidArgument("X must be 2-D, got " + std::to_string(a.ndim()) + " dimensions");
  const auto item = static_cast<py::ssize_t>(sizeof(T));
  if (a.strides(0) % item != 0 || a.strides(1) % item != 0) throw InvalidArgument("X has unaligned strides");
  MatrixView<T> v;
  v.data = static_cast<const T*>(a.data());
  v.n_rows = static_cast<std::size_t>(a.shape(0));
  v.n_cols = static_cast<std::size_t>(a.shape(1));
  v.row_stride = a.strides(0) / item;
  v.col_stride = a.strides(1) / item;
  return v;
}

// Calls fn(view) with the view typed after X's dtype (float32 or float64).
template <typename Fn>
auto with_view(const py::array& X, Fn&& fn) {
  if (py::isinstance<py::array_t<float>>(X)) return fn(view_2d<float>(X));
  if (py::isinstance<py::array_t<double>>(X)) return fn(view_2d<double>(X));
  throw InvalidArgument("X must have dtype float32 or float64 in native byte order, got " + std::string(py::str(X.dtype())));
}

// The Python layer's name of each loss ("adaboost", "veb", "rebel"): train() takes it, Model.loss_key gives it.
inline constexpr std::pair<const char*, LossKind> kLossKeys[] = {
    {"adaboost", LossKind::kAdaBoost}, {"veb", LossKind::kVebBoost}, {"rebel", LossKind::kRebel},
    {"squared_error", LossKind::kSquaredError}};

inline LossKind parse_loss(const std::string& key) {
  for (const auto& [name, kind] : kLossKeys)
    if (key == name) return kind;
  throw InvalidArgument("unknown loss '" + key + "'");
}

inline std::string loss_key(LossKind loss) {
  for (const auto& [name, kind] : kLossKeys)
    if (loss == kind) return name;
  return "unknown";
}

// REBEL's surrogate by the name REBELClassifier's `loss` gives it (rebel_g_name's names).
inline RebelG parse_rebel_g(const std::string& name) {
  for (const RebelG g : {RebelG::kExponential, RebelG::kLogistic, RebelG::kSquared})
    if (name == rebel_g_name(g)) return g;
  throw InvalidArgument("unknown REBEL loss '" + name + "' (expected 'exponential', 'logistic' or 'squared')");
}

}  // namespace rebelboost::bindings
