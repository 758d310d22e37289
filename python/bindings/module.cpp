// rebelboost._core: creates the module, registers error translation, then one bind_<area>() per file.
#include <pybind11/pybind11.h>

#include "rebelboost/error.hpp"

namespace py = pybind11;

namespace rebelboost::bindings {
void bind_model(py::module_& m);
void bind_cascade(py::module_& m);
void bind_train(py::module_& m);
}  // namespace rebelboost::bindings

PYBIND11_MODULE(_core, m) {
  m.doc() = "rebelboost C++ engine (internal: use the rebelboost package)";
  m.attr("__version__") = REBELBOOST_VERSION_INFO;
  static py::exception<rebelboost::ModelFileError> model_file_error(m, "ModelFileError", PyExc_ValueError);
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const rebelboost::ModelFileError& e) {
      py::set_error(model_file_error, e.what());
    } catch (const rebelboost::InvalidArgument& e) {
      py::set_error(PyExc_ValueError, e.what());
    } catch (const rebelboost::IoError& e) {
      py::set_error(PyExc_OSError, e.what());
    }
  });
  rebelboost::bindings::bind_model(m);
  rebelboost::bindings::bind_cascade(m);
  rebelboost::bindings::bind_train(m);
}
