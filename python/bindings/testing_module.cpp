// _rebelboost_testing: internal stages of the core bound for the Python tests only (python/CMakeLists.txt);
// never part of rebelboost._core or of a wheel.
#include <pybind11/pybind11.h>

#include "rebelboost/error.hpp"

namespace py = pybind11;

namespace rebelboost::bindings {
void bind_similarity_stages(py::module_& m);
}  // namespace rebelboost::bindings

PYBIND11_MODULE(_rebelboost_testing, m) {
  m.doc() = "Internal stages of the rebelboost engine, for its tests (not installed)";
  py::register_local_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const rebelboost::InvalidArgument& e) {
      py::set_error(PyExc_ValueError, e.what());
    }
  });
  rebelboost::bindings::bind_similarity_stages(m);
}
