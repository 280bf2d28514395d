#include "bridge/guard.hpp"

namespace fedavg::bridge::detail {

namespace py = pybind11;

std::string describe(py::error_already_set& e) {
  try {
    py::module_ tb = py::module_::import("traceback");
    py::list lines = tb.attr("format_exception")(e.type(), e.value(), e.trace());
    // Put "Type: message" first so the one-line report says what happened; the traceback follows.
    py::list last_line = tb.attr("format_exception_only")(e.type(), e.value());
    std::string head = py::str(py::str("").attr("join")(last_line));
    while (!head.empty() && head.back() == '\n') head.pop_back();
    std::string body = py::str(py::str("").attr("join")(lines));
    while (!body.empty() && body.back() == '\n') body.pop_back();
    return head + "\n" + body;
  } catch (py::error_already_set&) {
    return e.what();
  }
}

py::module_ import_checked(const char* module, std::initializer_list<const char*> required) {
  py::module_ m = guarded(std::string("import ") + module, [&] { return py::module_::import(module); });
  std::string missing;
  for (const char* name : required) {
    if (!py::hasattr(m, name) || !PyCallable_Check(m.attr(name).ptr())) missing += (missing.empty() ? "" : ", ") + std::string(name);
  }
  if (!missing.empty()) {
    std::string file = py::hasattr(m, "__file__") ? std::string(py::str(m.attr("__file__"))) : module;
    throw PythonError(file + " lacks required function(s): " + missing);
  }
  return m;
}

}  // namespace fedavg::bridge::detail
